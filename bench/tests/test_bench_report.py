"""bench/report.py renders BENCHMARKS.md from bench/results/ alone (no corpus, no benchmark run)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import report

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def changes_left_out(text: str) -> str:
    """``text`` with each stale mark's list of changed paths left out: the list grows with every
    later change, the mark itself (which table, measured at which commit) does not."""
    return re.sub(r"(before changes to ).*", r"\1...", text)


def test_the_checked_in_benchmarks_file_is_what_report_renders_from_the_checked_in_results() -> (
    None
):
    """Also fails when a change makes a table stale (or a new measurement makes one fresh) and
    BENCHMARKS.md does not say so yet."""
    rendered = report.render(BENCH / "results")
    assert changes_left_out(rendered) == changes_left_out((ROOT / "BENCHMARKS.md").read_text()), (
        "BENCHMARKS.md is out of date: python bench/report.py bench/results > BENCHMARKS.md"
    )


def test_the_command_line_prints_the_same_text(tmp_path: Path) -> None:
    (tmp_path / "match.json").write_text((BENCH / "results" / "match.json").read_text())
    out = subprocess.run(
        [sys.executable, str(BENCH / "report.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == report.render(tmp_path)


def test_every_section_has_a_renderer_and_a_missing_result_leaves_it_out(tmp_path: Path) -> None:
    assert report.render(tmp_path) == "\n".join(report.HEADER) + "\n"
    (tmp_path / "topk.json").write_text((BENCH / "results" / "topk.json").read_text())
    text = report.render(tmp_path)
    assert "## Exact top-k BM25" in text and "## Match location" not in text
    assert report.NOTES_HEADING not in text


def test_the_hand_written_notes_come_last_under_their_own_heading(tmp_path: Path) -> None:
    (tmp_path / "lsp.json").write_text((BENCH / "results" / "lsp.json").read_text())
    (tmp_path / "notes.md").write_text("Why a goal is missed.\n")
    text = report.render(tmp_path)
    generated, notes = text.split(f"\n---\n\n{report.NOTES_HEADING}\n\n")
    assert "## Language server" in generated and "Why a goal is missed." not in generated
    assert notes == "Why a goal is missed.\n"


def test_a_corpus_of_one_language_gets_no_language_row() -> None:
    d = json.loads((BENCH / "results" / "devset.json").read_text())
    text = "\n".join(report.devset_section(d))
    assert "| powershell | lexical | overall |" in text
    assert "| powershell | lexical | lang en |" not in text
    assert "| otel | lexical | lang ja |" in text
