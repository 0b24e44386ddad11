"""How the index grows: synthetic corpora made from the PowerShell docs at 150k, 500k and 1M chunks.

    python bench/scale.py [--sizes 150000,500000,1000000] [--hybrid-max 150000]
                          [--work DIR] > scale.json

Each size is a corpus of renamed, perturbed copies of the PowerShell docs, generated under
``--work`` (default: a temporary folder, removed at the end; never inside the repository):
copy ``k`` puts every file under ``copy-k/`` with a new name, and replaces one word in seven of
its body text by another word of the corpus (seeded by the copy and the file), so no copy's
chunk shares its body with another's (bodies are stored once, schema.py) and the vocabulary
stays the corpus's. The last copy takes only as many files as the size needs (chunks are
counted by the chunker on the originals).

Per size: cold index, no-change re-index and one changed file (whole ``fisk-ai knowledge
index`` processes; the cold one's peak RSS of the process tree, sampled from /proc: the
largest process as ``wait4`` reports it is this script's own size, which the forked child has
before it runs the command), store size, lexical search p50 / p95 in process (bench/speed.py's queries, 3 rounds),
and up to ``--hybrid-max`` chunks hybrid search with quantized vectors from bench/speed.py's
instant embedder (dimension 384; its index time is the embedder's and is not reported as
ours), and the index's pack (``fisk-ai knowledge pack``, plain and gzip: size and the whole
process's time).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers_proc import dir_bytes, run
from speed import PS, QUERIES, InstantEmbedder, latency, machine, settings_for

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.index.chunker import chunk_document

REPO = Path(__file__).resolve().parent.parent
WORD = re.compile(r"[A-Za-z]{4,}")
FRONT = re.compile(r"\A---\n.*?\n---\n", re.S)


def sources(corpus: Path) -> list[tuple[Path, str, int]]:
    """(path, text, chunks) of every markdown file, in a fixed order."""
    out = []
    for p in sorted(corpus.rglob("*.md")):
        text = p.read_text(encoding="utf-8", errors="replace")
        out.append((p, text, len(chunk_document(text).chunks)))
    return out


def perturb(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    """One word in seven of the body (front matter kept) replaced by a corpus word."""
    m = FRONT.match(text)
    head, body = (text[: m.end()], text[m.end() :]) if m else ("", text)

    def swap(w: re.Match[str]) -> str:
        return rng.choice(vocabulary) if rng.random() < 1 / 7 else w.group(0)

    return head + WORD.sub(swap, body)


def generate(
    src: list[tuple[Path, str, int]], corpus: Path, dest: Path, want: int
) -> dict[str, int]:
    rng0 = random.Random(11)
    vocabulary = sorted({w for _, text, _ in src[:2000] for w in WORD.findall(text)})
    chunks = files = copy = 0
    while chunks < want:
        for path, text, n in src:
            if chunks >= want:
                break
            rel = path.relative_to(corpus)
            target = dest / f"copy-{copy}" / rel.parent / f"{rel.stem}-c{copy}{rel.suffix}"
            target.parent.mkdir(parents=True, exist_ok=True)
            rng = random.Random(f"{copy}:{rel}:{rng0.random()}")
            target.write_text(perturb(text, rng, vocabulary), encoding="utf-8")
            chunks += n
            files += 1
        copy += 1
    subprocess.run(["git", "init", "-q", str(dest)], check=True)  # a project of its own
    return {"files": files, "copies": copy, "chunks_estimated": chunks}


def measure(root: Path, store: Path, hybrid: bool) -> dict[str, Any]:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(store), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index", "--json"]
    cold = run(cmd, cwd=root, env=env, sample=True)
    stats = json.loads(cold.stdout)
    noop = [run(cmd, cwd=root, env=env).seconds for _ in range(3)]
    target = min(root.rglob("*.md"), key=lambda p: (abs(p.stat().st_size - 20_000), str(p)))
    original = target.read_text(encoding="utf-8")
    one = []
    for i in range(3):
        target.write_text(original + f"\n\nScale edit {i} adds a sentence.\n", encoding="utf-8")
        one.append(run(cmd, cwd=root, env=env).seconds)
    out: dict[str, Any] = {
        "chunks": stats.get("chunks"),
        "files": stats.get("files"),
        "cold_index_s": round(cold.seconds, 2),
        "cold_tree_peak_rss_mb": cold.tree_peak_rss_mb,
        "no_change_s": round(min(noop), 3),
        "one_file_s": round(sorted(one)[1], 3),
        "store_mb": round(dir_bytes(store) / 2**20, 1),
        "load_avg_after_index": [round(x, 2) for x in os.getloadavg()],
    }
    for suffix in ("", ".gz"):
        out_file = store.parent / f"index.pack{suffix}"
        packed = run([*cmd[:-2], "pack", str(out_file)], cwd=root, env=env)
        out[f"pack{suffix.replace('.', '_')}_mb"] = round(out_file.stat().st_size / 2**20, 1)
        out[f"pack{suffix.replace('.', '_')}_s"] = round(packed.seconds, 2)
        out_file.unlink()
    s = settings_for(root, store)
    kb = Knowledge(s)
    out["lexical"] = latency(lambda q: kb.search(SearchRequest(q)), QUERIES, 3)
    kb.close()
    if hybrid:
        emb = InstantEmbedder(384)
        h = settings_for(root, store.parent / "hybrid").with_overrides(
            embeddings=EmbeddingsConfig(base_url="http://127.0.0.1:9/v1", model="instant-hash")
        )
        t = time.perf_counter()
        index_project(h, embedder=emb)
        built = time.perf_counter() - t
        kb = Knowledge(h, embedder=emb)
        out["hybrid_384"] = {
            **latency(lambda q: kb.search(SearchRequest(q)), QUERIES, 3),
            "build_with_instant_embedder_s": round(built, 1),
        }
        kb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="150000,500000,1000000")
    ap.add_argument("--hybrid-max", type=int, default=150_000)
    ap.add_argument("--work", type=Path)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="fisk-scale-"))
    result: dict[str, Any] = {"machine": machine(), "sizes": []}
    try:
        src = sources(PS)
        for want in (int(x) for x in args.sizes.split(",")):
            root = work / f"corpus-{want}"
            shutil.rmtree(root, ignore_errors=True)
            t = time.perf_counter()
            made = generate(src, PS, root, want)
            print(f"{want}: generated {made} in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            store = work / f"store-{want}" / "cli"
            got = measure(root, store, want <= args.hybrid_max)
            print(f"{want}: {got}", file=sys.stderr)
            result["sizes"].append({"target_chunks": want, **made, **got})
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(work / f"store-{want}", ignore_errors=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
