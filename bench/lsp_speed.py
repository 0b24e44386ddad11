"""The language server on the PowerShell corpus: search round trip, save-to-searchable, RSS.

A writable copy of the corpus goes to a temporary folder (saves must change files); the server
indexes it in the background (zero-config, lexical), then:
- `fisk.knowledge.search` round trips over stdio (p50/p95);
- save-to-searchable: append a unique word to a file, send didSave, poll search until it hits;
- RSS after indexing, and after 10,000 searches and 1,000 saves.

    python bench/lsp_speed.py > lsp.json
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from speed import PS, QUERIES, pct

from tests.reliability.test_lsp_robustness import RawClient, command


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="fisk-lsp-bench-"))
    try:
        root = work / "corpus"
        shutil.copytree(PS, root)
        env = {**os.environ, "FISK_AI_STORE_DIR": str(work / "store")}
        client = RawClient(root, env)
        t0 = time.perf_counter()
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": {"watch": False},
            },
        )
        client.notify("initialized", {})
        while True:
            status = command(client, "fisk.knowledge.status")["result"]
            if not status["indexing"] and status["roots"] and status["roots"][0]["documents"]:
                break
            time.sleep(0.2)
        index_s = time.perf_counter() - t0
        chunks = status["roots"][0]["chunks"]
        rss_indexed = client.rss_mb()
        for q in QUERIES:
            command(client, "fisk.knowledge.search", {"query": q})
        lat = []
        for _ in range(20):
            for q in QUERIES:
                t = time.perf_counter()
                command(client, "fisk.knowledge.search", {"query": q})
                lat.append(time.perf_counter() - t)
        target = next(root.rglob("Get-NetIPAddress.md"))
        uri = target.as_uri()
        original = target.read_text()
        save_lat = []
        for i in range(30):
            word = f"zyxsave{i}marker"
            target.write_text(original + f"\n\n{word}\n")
            t = time.perf_counter()
            client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
            while not command(client, "fisk.knowledge.search", {"query": word})["result"][
                "results"
            ]:
                time.sleep(0.005)
            save_lat.append(time.perf_counter() - t)
        for i in range(10_000):
            command(client, "fisk.knowledge.search", {"query": QUERIES[i % len(QUERIES)]})
            if i % 10 == 0:
                target.write_text(original + f"\n\nsoak {i}\n")
                client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        time.sleep(1)
        rss_after = client.rss_mb()
        client.close()
        out: dict[str, Any] = {
            "chunks": chunks,
            "initial_index_s": round(index_s, 1),
            "search_round_trip_ms_p50": round(statistics.median(lat) * 1000, 2),
            "search_round_trip_ms_p95": round(pct(lat, 0.95) * 1000, 2),
            "save_to_searchable_ms_p50": round(statistics.median(save_lat) * 1000, 1),
            "save_to_searchable_ms_p95": round(pct(save_lat, 0.95) * 1000, 1),
            "rss_after_index_mb": round(rss_indexed, 1),
            "rss_after_soak_mb": round(rss_after, 1),
        }
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
