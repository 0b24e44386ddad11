"""bench/report.py's exact top-k table (from the JSON bench/topk.py prints)."""

from __future__ import annotations

import json
from pathlib import Path

import report

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_topk_table_shows_both_ways_and_any_difference() -> None:
    r = json.loads((BENCH / "results" / "topk.json").read_text())
    r["results_that_differ"] = ["a query"]
    text = "\n".join(report.topk_section(r))
    assert f"| p50 | {r['plain_p50_ms']} ms | {r['topk_p50_ms']} ms | {r['p50_ratio']} |" in text
    assert "| results that differ (ids or scores) | - | 1 | - |" in text
    assert f"{r['queries']} queries" in text
