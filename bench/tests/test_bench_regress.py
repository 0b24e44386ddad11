"""bench/regress.py: which side-by-side ratios got worse than the last recorded run, and whether
a repeat confirmed it; bench/report.py refuses a rendering that drops a section."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import regress
import report
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def peers(cold_fisk: float, cold_qmd: float, floor: float) -> dict[str, object]:
    return {
        "corpora": {
            "powershell": {
                "cold": {
                    "fisk": {"median_s": cold_fisk},
                    "qmd": {"median_s": cold_qmd},
                    "floor": {"median_s": floor},
                },
                "no_change": {"fisk": {"median_s": 0.3}, "qmd": {"median_s": 2.1}},
            }
        }
    }


def write(folder: Path, name: str, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data))
    return folder


def test_the_checked_in_results_have_ratios_for_every_reader() -> None:
    found = regress.ratios(BENCH / "results")
    files = {f for f, _ in found}
    assert {"peers.json", "speed.json", "agent-latency-powershell.json"} <= files
    key = ("peers.json", "powershell: cold index, qmd ÷ fisk-ls")
    assert found[key].higher and found[key].value > 1


def test_a_ratio_worse_by_more_than_the_threshold_is_named_with_both_values(tmp_path: Path) -> None:
    before = regress.ratios(write(tmp_path / "a", "peers.json", peers(10, 30, 8)))
    after = regress.ratios(write(tmp_path / "b", "peers.json", peers(20, 30, 8)))
    verdicts = regress.compare(before, after)
    names = {v.after.name for v in verdicts}
    # qmd ÷ fisk-ls went 3.0 -> 1.5 and cold ÷ floor 1.25 -> 2.5; no-change did not move
    assert names == {"powershell: cold index, qmd ÷ fisk-ls", "powershell: cold index ÷ floor"}
    line = next(v for v in verdicts if "qmd" in v.after.name).line(0.15)
    assert line.startswith("WORSE by more than 15%") and "3.00 -> 1.50" in line
    assert "not repeated" in line


def test_a_ratio_that_recovers_on_the_repeat_is_noise(tmp_path: Path) -> None:
    before = regress.ratios(write(tmp_path / "a", "peers.json", peers(10, 30, 8)))
    after = regress.ratios(write(tmp_path / "b", "peers.json", peers(20, 30, 8)))
    repeat = regress.ratios(write(tmp_path / "c", "peers.json", peers(10.5, 30, 8)))
    lines = [v.line(0.15) for v in regress.compare(before, after, repeat)]
    assert lines and all(line.startswith("noise:") for line in lines)


def test_better_and_small_moves_are_not_reported(tmp_path: Path) -> None:
    before = regress.ratios(write(tmp_path / "a", "peers.json", peers(10, 30, 8)))
    after = regress.ratios(write(tmp_path / "b", "peers.json", peers(8, 32, 8)))
    assert regress.compare(before, after) == []


@given(
    st.floats(0.05, 50),
    st.floats(0.05, 50),
    st.booleans(),
    st.floats(0.01, 0.5),
)
def test_worse_means_the_wrong_direction_past_the_threshold(
    b: float, a: float, higher: bool, threshold: float
) -> None:
    before = {("f", "r"): regress.Ratio("f", "r", b, higher)}
    after = {("f", "r"): regress.Ratio("f", "r", a, higher)}
    flagged = bool(regress.compare(before, after, threshold=threshold))
    wrong_way = a < b if higher else a > b
    if flagged:
        assert wrong_way
    change = a / b if higher else b / a  # below 1 when worse
    if change < 1 - threshold - 1e-9 and higher:
        assert flagged
    if not higher and a / b > 1 + threshold + 1e-9:
        assert flagged


def test_the_command_line_lists_what_to_measure_again_and_prints_the_verdicts(
    tmp_path: Path,
) -> None:
    write(tmp_path / "a", "peers.json", peers(10, 30, 8))
    write(tmp_path / "a", "topk.json", {"p50_ratio": 0.9})
    write(tmp_path / "b", "peers.json", peers(20, 30, 8))
    write(tmp_path / "b", "topk.json", {"p50_ratio": 0.9})
    cmd = [sys.executable, str(BENCH / "regress.py"), str(tmp_path / "a"), str(tmp_path / "b")]
    files = subprocess.run([*cmd, "--files"], capture_output=True, text=True, check=True)
    assert files.stdout.split() == ["peers.json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert out.count("WORSE by more than 15%") == 2
    assert "ratios compared with the last recorded run: 2 worse" in out


def test_a_rendering_that_drops_a_section_is_refused(tmp_path: Path) -> None:
    (tmp_path / "lsp.json").write_text((BENCH / "results" / "lsp.json").read_text())
    (tmp_path / "topk.json").write_text((BENCH / "results" / "topk.json").read_text())
    old = tmp_path / "BENCHMARKS.md"
    old.write_text(report.render(tmp_path))
    cmd = [sys.executable, str(BENCH / "report.py"), str(tmp_path), "--keep-sections-of", str(old)]
    kept = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert kept.stdout == old.read_text()
    (tmp_path / "topk.json").unlink()
    refused = subprocess.run(cmd, capture_output=True, text=True)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "drops ## Exact top-k BM25" in refused.stderr
    assert report.dropped_sections("## A\n## B\n", "## B\n") == ["## A"]
