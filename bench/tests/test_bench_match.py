"""bench/report.py's match-location table (from the JSON bench/match_speed.py prints)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import report

BENCH = Path(__file__).resolve().parents[2] / "bench"


def result(match_p50: float) -> dict[str, Any]:
    return {
        "corpus": "windows-powershell-docs",
        "chunks": 148457,
        "queries": 25,
        "rounds": 10,
        "top_k": 10,
        "search_p50_ms": 21.7,
        "search_p95_ms": 40.1,
        "match_p50_ms": match_p50,
        "match_p95_ms": 3.26,
        "loadavg": [1.8, 2.0, 2.1],
    }


@pytest.mark.parametrize(("p50", "met"), [(1.2, "yes"), (2.18, "**no**"), (2.0, "**no**")])
def test_the_match_table_says_whether_the_goal_is_met(p50: float, met: str) -> None:
    text = "\n".join(report.match_section(result(p50)))
    assert f"| added by match location p50 / p95 | {p50} / 3.26 ms | p50 < 2 ms | {met} |" in text
    assert "148457 chunks, 25 queries × 10 rounds" in text
    assert "load average at the end 1.80, 2.00, 2.10" in text


def test_the_report_includes_the_match_table_when_its_json_is_there(tmp_path: Path) -> None:
    (tmp_path / "match.json").write_text(json.dumps(result(1.2)))
    out = subprocess.run(
        [sys.executable, str(BENCH / "report.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "## Match location" in out and "| yes |" in out
