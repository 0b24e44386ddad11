"""bench/run.sh's ``measure``: a step's result replaces its file only when the step succeeds,
stamped with the commit it was measured at; a failed step keeps the last result and is named;
files of steps not run are left alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def function(name: str) -> str:
    text = (ROOT / "bench" / "run.sh").read_text()
    found = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", text, re.M | re.S)
    assert found, f"bench/run.sh defines {name}()"
    return found.group(0)


def measure_function() -> str:
    return function("measure")


def test_a_step_replaces_only_its_own_file_and_only_when_it_succeeds(tmp_path: Path) -> None:
    out, stage = tmp_path / "results", tmp_path / "stage"
    (stage / "new").mkdir(parents=True)
    out.mkdir()
    for name in ("good.json", "bad.json", "empty.json", "untouched.json"):
        (out / name).write_text(f'{{"old": "{name}"}}\n')
    script = f"""
set -euo pipefail
cd {ROOT}; PY={sys.executable}
OUT={out}; STAGE={stage}; FAILED=(); STEPS=(); declare -A STEP_OF
{measure_function()}
good() {{ echo '{{"new": 1}}' > "$1"; }}
bad() {{ echo '{{"half": ' > "$1"; false; }}
empty() {{ : > "$1"; }}
measure good.json good
measure bad.json bad
measure empty.json empty
echo "failed: ${{FAILED[*]}}"
echo "steps: ${{#STEPS[@]}} ${{STEP_OF[good.json]}}"
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert "failed: bad.json empty.json" in done.stdout
    assert "steps: 3 good" in done.stdout
    good = json.loads((out / "good.json").read_text())
    assert good["new"] == 1
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    assert good["measured"]["commit"] == head.stdout.strip()
    assert (out / "bad.json").read_text() == '{"old": "bad.json"}\n'
    assert (out / "empty.json").read_text() == '{"old": "empty.json"}\n'
    assert (out / "untouched.json").read_text() == '{"old": "untouched.json"}\n'
    assert "FAILED: bad.json (exit 1); the last recorded result is kept" in done.stderr


def test_the_script_parses_and_deletes_no_result_file() -> None:
    subprocess.run(["bash", "-n", str(ROOT / "bench" / "run.sh")], check=True)
    text = (ROOT / "bench" / "run.sh").read_text()
    assert not re.search(r"rm -f[^\n]*\$OUT", text)


def test_without_embeddings_a_result_with_vector_figures_is_kept(tmp_path: Path) -> None:
    out, stage = tmp_path / "results", tmp_path / "stage"
    (stage / "new").mkdir(parents=True)
    out.mkdir()
    (out / "devset.json").write_text('{"runs": {"hybrid": 1}}\n')
    (out / "beir.json").write_text('{"lexical": 1}\n')
    script = f"""
set -euo pipefail
cd {ROOT}; PY={sys.executable}
OUT={out}; STAGE={stage}; FAILED=(); STEPS=(); EMBED_ARGS=(); declare -A STEP_OF
{function("measure")}
{function("measure_quality")}
lexical() {{ echo '{{"lexical": 2}}' > "$1"; }}
measure_quality devset.json lexical
measure_quality beir.json lexical
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert (out / "devset.json").read_text() == '{"runs": {"hybrid": 1}}\n'
    assert json.loads((out / "beir.json").read_text())["lexical"] == 2
    assert "devset.json: kept" in done.stderr


def test_a_step_measured_again_is_recorded_from_its_repeat(tmp_path: Path) -> None:
    out, stage = tmp_path / "results", tmp_path / "stage"
    (stage / "repeat").mkdir(parents=True)
    out.mkdir()
    for name in ("again.json", "failed.json"):
        (out / name).write_text(f'{{"pass": "first {name}"}}\n')
    (stage / "repeat" / "again.json").write_text('{"pass": "repeat"}\n')
    script = f"""
set -euo pipefail
cd {ROOT}; PY={sys.executable}
OUT={out}; STAGE={stage}
{function("record_repeat")}
record_repeat again.json
record_repeat failed.json
"""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    again = json.loads((out / "again.json").read_text())
    assert again["pass"] == "repeat"
    assert again["measured"]["commit"]
    assert not (stage / "repeat" / "again.json").exists()
    assert (out / "failed.json").read_text() == '{"pass": "first failed.json"}\n'
    assert "again.json: the repeat is recorded" in done.stderr
    assert "failed.json: the repeat failed; the first pass is recorded" in done.stderr


def test_the_repeats_are_recorded_after_the_regression_lines_compare_both_passes() -> None:
    text = (ROOT / "bench" / "run.sh").read_text()
    compare = text.index('bench/regress.py "$STAGE/before" "$OUT" --repeat')
    record = text.index('record_repeat "$file"')
    report = text.index("bench/report.py")
    assert compare < record < report
