"""The peers harness (bench/peers.py, bench/report.py's Peers table): the pieces that need no
qmd, no corpus and no network."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import peers
import peers_proc
import peers_tools
import pytest
import report
from hypothesis import given
from hypothesis import strategies as st


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=50))
def test_pct_returns_a_member_between_min_and_max(values: list[float]) -> None:
    for p in (0.5, 0.95, 1.0):
        v = peers_proc.pct(values, p)
        assert v in values
        assert min(values) <= v <= max(values)
    assert peers_proc.pct(values, 1.0) == max(values)


def test_rg_args_are_fixed_string_alternatives_of_every_word() -> None:
    args = peers_tools.rg_args("  remove a  printer-driver ")
    assert args[:5] == ["-l", "-i", "-F", "--glob", "*.md"]
    assert args[5:] == ["-e", "remove", "-e", "a", "-e", "printer-driver"]


def test_changing_a_mirrored_file_never_writes_the_original(tmp_path: Path) -> None:
    original = tmp_path / "corpus" / "a.md"
    original.parent.mkdir()
    original.write_text("shared text\n")
    mirrored = tmp_path / "mirror" / "a.md"
    mirrored.parent.mkdir()
    os.link(original, mirrored)
    peers.replace_text(mirrored, "edited\n")
    assert original.read_text() == "shared text\n"
    assert mirrored.read_text() == "edited\n"
    assert os.stat(mirrored).st_ino != os.stat(original).st_ino
    peers.restore_link(mirrored, original)
    assert os.stat(mirrored).st_ino == os.stat(original).st_ino
    assert sorted(p.name for p in mirrored.parent.iterdir()) == ["a.md"]


def test_run_reports_output_time_and_rss_and_raises_on_failure() -> None:
    code = "import sys; b = bytearray(30 * 1024 * 1024); sys.stdout.write('hi')"
    r = peers_proc.run([sys.executable, "-c", code], sample=True)
    assert r.stdout == "hi"
    assert r.seconds > 0
    assert r.max_single_rss_mb >= 30
    with pytest.raises(RuntimeError, match="exited 3"):
        peers_proc.run([sys.executable, "-c", "import sys; sys.exit(3)"])


def _corpus(fisk: float, qmd: float) -> dict[str, Any]:
    timing = {"median_s": fisk, "p95_s": fisk}
    return {
        "corpus": "docs",
        "md_files": 2,
        "bytes": 2_000_000,
        "queries": ["q"],
        "load_avg_at_start": [1.0, 1.0, 1.0],
        "fisk_index": {"files": 2, "chunks": 3},
        "cold": {
            "fisk": {"median_s": fisk, "tree_peak_rss_mb": 60.0, "max_single_rss_mb": 40.0},
            "qmd": {"median_s": qmd, "tree_peak_rss_mb": 600.0, "max_single_rss_mb": 500.0},
            "floor": {"median_s": 1.0, "tree_peak_rss_mb": 20.0, "max_single_rss_mb": 20.0},
        },
        "no_change": {"fisk": {"median_s": fisk}, "qmd": {"median_s": qmd}},
        "one_file": {"file_bytes": 20_000, "fisk": {"median_s": fisk}, "qmd": {"median_s": qmd}},
        "search_process": {
            "fisk": {**timing, "n": 15},
            "qmd": {"median_s": qmd, "p95_s": qmd, "n": 15},
            "rg": {"median_s": 0.1, "p95_s": 0.2, "n": 15},
        },
        "search_in_process": {
            "fisk": {"p50_ms": 5.0, "p95_ms": 9.0, "n": 100, "slowest_query": "q", "slowest_ms": 9},
            "qmd": {
                "p50_ms": 15.0,
                "p95_ms": 30.0,
                "n": 100,
                "slowest_query": "q",
                "slowest_ms": 30,
            },
        },
        "size_bytes": {"fisk": 100_000_000, "qmd": 250_000_000, "floor": 90_000_000},
    }


def test_peers_table_shows_ratios_and_whether_3x_is_met() -> None:
    p = {
        "machine": {
            "cpu": "cpu",
            "cores": 2,
            "python": "3.11",
            "sqlite": "3.x",
            "load_avg_at_start": [1.0, 1.0, 1.0],
            "date": "today",
        },
        "tools": {"qmd": "qmd 2.8.3", "node": "v22", "rg": "ripgrep 13", "missing": []},
        "runs": 3,
        "top_k": 10,
        "load_avg_at_end": [1.0, 1.0, 1.0],
        "corpora": {"docs": _corpus(2.0, 7.0), "gone": {"skipped": "corpus not found: /x"}},
        "startup": {
            "fisk-ai --help": {"median_s": 0.1},
            "imports of `search` (-X importtime)": {
                "modules": 150,
                "self_ms_median": 40.0,
                "forbidden": [],
            },
        },
    }
    text = "\n".join(report.peers_section(p))
    assert "| `fisk-ai --help` | 0.1 |" in text
    assert "150 modules, 40.0 ms of import time" in text and "imported: none." in text
    assert "| cold index | 2.0 s | 7.0 s | 3.50x | 3x: yes | 1.0 s | - |" in text
    assert "| search in-process p50 (100 calls) | 5.0 ms | 15.0 ms | 3.00x | 3x: yes |" in text
    assert "yes (goal < 250 MB)" in text
    assert "| index size on disk | 100 MB | 250 MB | 2.50x |" in text
    assert "gone: corpus not found: /x" in text
    slow = _corpus(2.0, 3.0)
    p["corpora"] = {"docs": slow}
    assert "| cold index | 2.0 s | 3.0 s | 1.50x | 3x: **no** |" in "\n".join(
        report.peers_section(p)
    )
    p["corpora"] = {"powershell": _corpus(2.0, 7.0)}  # the absolute goals set for this corpus
    text = "\n".join(report.peers_section(p))
    assert "| cold index | 2.0 s | 7.0 s | 3.50x | ≤ 10.0 s: yes | 1.0 s | - |" in text
    assert (
        "| search in-process p50 (100 calls) | 5.0 ms | 15.0 ms | 3.00x | ≤ 5.0 ms: yes |" in text
    )
    assert "| 100 MB | 250 MB | 2.50x | ≤ 120 MB: yes |" in text
