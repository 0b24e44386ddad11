"""Speed and memory of the core on the shared corpora, measured side by side in one run.

    python bench/speed.py [--quick] > speed.json

Cold lexical index against the FTS5 insert floor (bench/floor.py, alternated), no-change
re-index, one changed file (a full run and the editor's per-file path), lexical and hybrid
search latency (hybrid with an instant in-process embedder, so the figure is our own cost),
peak RSS of a cold index run (a separate process), and growth with corpus size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset_questions import CORPORA_DIR as CORPORA
from floor import floor

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index,
    resolve_settings,
    update_paths,
)

PS = CORPORA / "windows-powershell-docs"
OTEL = CORPORA / "opentelemetry-io"

QUERIES = [
    "get the ip address of a network adapter",
    "Get-NetAdapter",
    "how do I restart a service remotely",
    "dns client cache clear",
    "configure firewall rule for inbound port",
    "what does -WhatIf do",
    "BitLocker recovery key backup",
    "schedule a task to run at logon",
    "Hyper-V virtual switch external",
    "set execution policy",
    "list installed windows features",
    "storage pool create virtual disk",
    "Active Directory user password reset",
    "disable SMB1",
    "export certificate with private key",
    "how to find which process uses a port",
    "Get-WinEvent filter by id",
    "remote desktop session host collection",
    "printer driver install",
    "iSCSI target",
    "trace",
    "the",
    "how does it work",
    "C",
    "pipeline input ByPropertyName",
]


def pct(values: Sequence[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(p * len(s)) - 1))]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def settings_for(root: Path, base: Path) -> Settings:
    return resolve_settings(cwd=root, store_base=base)


def latency(fn: Callable[[str], Any], queries: Sequence[str], rounds: int) -> dict[str, float]:
    for q in queries:
        fn(q)  # warm the page cache and statement cache
    lat = []
    for _ in range(rounds):
        for q in queries:
            t = time.perf_counter()
            fn(q)
            lat.append(time.perf_counter() - t)
    return {
        "p50_ms": round(statistics.median(lat) * 1000, 2),
        "p95_ms": round(pct(lat, 0.95) * 1000, 2),
        "n": len(lat),
    }


class InstantEmbedder:
    """Deterministic hashed bag-of-words unit vectors computed in-process (no server, no
    model); unit length because every provider normalises (vectors/space.py)."""

    model = "instant-hash"
    query_prefix = ""
    document_prefix = ""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def _vec(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        for tok in text.lower().split()[:256]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=4).digest(), "little")
            v[h % self.dim] += 1.0 if h & 0x80000000 else -1.0
        if not any(v):
            v[0] = 1.0
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v]

    def probe_dimension(self) -> int:
        return self.dim

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


def cold_vs_floor(corpus: Path, work: Path, rounds: int) -> dict[str, Any]:
    ours, floors = [], []
    stats = None
    for r in range(rounds):
        base = work / f"cold{r}"
        fl = floor(corpus, work / f"floor{r}")
        floors.append(fl["seconds"])
        s = settings_for(corpus, base)
        sec, stats = timed(lambda s=s: index(s))
        ours.append(sec)
        shutil.rmtree(work / f"floor{r}", ignore_errors=True)
        if r < rounds - 1:
            shutil.rmtree(base, ignore_errors=True)
    assert stats is not None
    return {
        "files": stats.files,
        "chunks": stats.chunks,
        "floor_s": round(min(floors), 2),
        "floor_chunks": fl["chunks"],
        "cold_index_s": round(min(ours), 2),
        "ratio": round(min(ours) / min(floors), 2),
        "all_cold_s": [round(x, 2) for x in ours],
        "all_floor_s": [round(x, 2) for x in floors],
        "store": str(work / f"cold{rounds - 1}"),
    }


def rss_of_cold_index(corpus: Path, work: Path) -> dict[str, Any]:
    env = {**os.environ, "FISK_AI_STORE_DIR": str(work / "rss")}
    code = (
        "import resource, sys; from pathlib import Path; "
        "from fisk_ls.knowledge import index, resolve_settings; "
        f"index(resolve_settings(cwd=Path({str(corpus)!r}))); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    main_kb, child_kb = map(int, out.stdout.split())
    shutil.rmtree(work / "rss", ignore_errors=True)
    return {
        "main_peak_rss_mb": round(main_kb / 1024, 1),
        "worker_peak_rss_mb": round(child_kb / 1024, 1),
    }


def one_file_change(corpus: Path, settings: Settings, work: Path) -> dict[str, Any]:
    """Copy the corpus? No: change a scratch copy of one ~20 KB file placed in a shadow root."""
    # The corpus is read-only; measure on a writable copy of one sub-tree plus one 20 KB file.
    shadow = work / "shadow"
    shutil.copytree(
        corpus / "docset" / "winserver2025-ps" / "NetTCPIP", shadow / "NetTCPIP", dirs_exist_ok=True
    )
    target = max((p for p in shadow.rglob("*.md")), key=lambda p: -abs(p.stat().st_size - 20_000))
    s = settings_for(shadow, work / "shadow-store")
    index(s)
    original = target.read_text()
    runs_full, runs_path = [], []
    for i in range(5):
        target.write_text(original + f"\n\nEdit number {i} adds a sentence.\n")
        runs_full.append(timed(lambda: index(s))[0])
        target.write_text(original + f"\n\nSecond edit {i} changes it again.\n")
        runs_path.append(timed(lambda: update_paths(s, [target]))[0])
    noop = [timed(lambda: index(settings))[0] for _ in range(3)]
    return {
        "file_bytes": target.stat().st_size,
        "one_file_update_paths_ms": round(statistics.median(runs_path) * 1000, 1),
        "one_file_full_run_small_tree_ms": round(statistics.median(runs_full) * 1000, 1),
        "no_change_reindex_s": round(min(noop), 3),
    }


def scaling(corpus: Path, work: Path, sizes: Sequence[int]) -> list[dict[str, Any]]:
    files = sorted(p for p in corpus.rglob("*.md"))
    random.Random(7).shuffle(files)
    out = []
    for want in sizes:
        root = work / f"scale-{want}"
        picked = 0
        chunks = 0
        from fisk_ls.knowledge.index.chunker import chunk_document

        for p in files:
            if chunks >= want:
                break
            text = p.read_text(encoding="utf-8", errors="replace")
            dest = root / p.relative_to(corpus)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            chunks += len(chunk_document(text).chunks)
            picked += 1
        s = settings_for(root, work / f"scale-store-{want}")
        sec, stats = timed(lambda s=s: index(s))
        kb = Knowledge(s)
        lat = latency(lambda q, kb=kb: kb.search(SearchRequest(q)), QUERIES, 3)
        kb.close()
        out.append({"chunks": stats.chunks, "files": picked, "cold_index_s": round(sec, 2), **lat})
        shutil.rmtree(root, ignore_errors=True)
    return out


def hybrid_latency(corpus: Path, work: Path, dim: int) -> dict[str, Any]:
    s = settings_for(corpus, work / f"hybrid-{dim}")
    from fisk_ls.knowledge.config import EmbeddingsConfig

    s = s.with_overrides(
        embeddings=EmbeddingsConfig(base_url="http://127.0.0.1:9/v1", model="instant-hash")
    )
    emb = InstantEmbedder(dim)
    sec, stats = timed(lambda: index(s, embedder=emb))
    kb = Knowledge(s, embedder=emb)
    lat = latency(lambda q: kb.search(SearchRequest(q)), QUERIES, 3)
    kb.close()
    shutil.rmtree(work / f"hybrid-{dim}", ignore_errors=True)
    return {"dim": dim, "chunks": stats.chunks, "build_s": round(sec, 1), **lat}


def machine() -> dict[str, Any]:
    import platform

    import apsw

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(mem, 1),
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "os": platform.platform(),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one round, smaller scaling sizes")
    args = ap.parse_args()
    if not PS.is_dir():
        sys.exit(f"corpus not found: {PS}")
    work = Path(tempfile.mkdtemp(prefix="fisk-bench-"))
    try:
        result: dict[str, Any] = {"machine": machine()}
        cold = cold_vs_floor(PS, work, 1 if args.quick else 2)
        result["powershell_cold"] = cold
        s = settings_for(PS, Path(cold["store"]))
        result["powershell_incremental"] = one_file_change(PS, s, work)
        kb = Knowledge(s)
        result["powershell_lexical_search"] = latency(
            lambda q: kb.search(SearchRequest(q)), QUERIES, 5 if not args.quick else 2
        )
        long_q = [" ".join(QUERIES) * 3]  # ~190 words, like ArguAna's queries
        result["powershell_long_query"] = latency(lambda q: kb.search(SearchRequest(q)), long_q, 20)
        kb.close()
        result["powershell_rss"] = rss_of_cold_index(PS, work)
        if OTEL.is_dir():
            o = cold_vs_floor(OTEL / "content", work / "otel", 1)
            result["otel_cold"] = o
        result["scaling"] = scaling(
            PS, work, [1_000, 10_000] if args.quick else [1_000, 10_000, 90_000]
        )
        result["hybrid"] = [hybrid_latency(PS, work, d) for d in (64, 384)]
        result["rusage_self_peak_mb"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        )
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
