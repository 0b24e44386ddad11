"""The first hour with vectors, as a new user meets it in the terminal: the one-line setting,
a lexical index that gains vectors in place, a missing runtime, a damaged model file, the
model files doctor and stats name, progress without a terminal, watch --json, rm exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.builtin_model import model_files
from tests.support.cli import js, run
from tests.support.waiting import HANG_GUARD


@pytest.fixture
def cli_project(project: Path, store_base: Path) -> Path:
    return project


def real_model(tmp_path: Path) -> Path:
    """A model directory holding copies of the packaged files (so a test may damage them)."""
    found = model_files()
    if isinstance(found, str):
        pytest.skip(f"real-model test skipped: {found}")
    onnx, tokenizer = found
    target = tmp_path / "model"
    target.mkdir()
    shutil.copyfile(onnx, target / "model.onnx")
    shutil.copyfile(tokenizer, target / "tokenizer.json")
    return target


def one_line_config(root: Path, model: Path) -> None:
    """The README's one line (plus model_path, so nothing is downloaded), no `enabled`."""
    (root / "agent.yaml").write_text(
        f"harness:\n  knowledge:\n    embeddings: {{provider: builtin, model_path: {model}}}\n"
    )


def test_vectors_on_a_lexical_index_are_an_addition(cli_project: Path, tmp_path: Path) -> None:
    model = real_model(tmp_path)
    js(cli_project, "index")  # lexical
    one_line_config(cli_project, model)
    res = js(cli_project, "search", "backpressure")  # at once, before any index run
    assert res["status"] == "ok" and res["results"] and not res["degraded"]
    stats = js(cli_project, "stats")
    assert stats["vectors"] == 0 and f"0 of {stats['chunks']} chunks have vectors" in res["tier"]
    assert str(model / "model.onnx") in stats["model_files"]
    assert "embeddings.model_path" in stats["model_files"]
    text = run(cli_project, "knowledge", "search", "backpressure")
    assert "0 of" in text.stderr and "Traceback" not in text.stderr
    idx = js(cli_project, "index")  # plain index, no --reindex
    assert idx["embeddings"] == idx["chunks"] and idx["backlog"] == 0
    assert idx["tier"].startswith("hybrid") and "dim 384" in idx["tier"]
    doctor = js(cli_project, "doctor")  # the same vector-space comparison as search and index
    checks = {c["name"]: c for c in doctor["checks"]}
    assert doctor["ok"] and checks["vector space"]["ok"], checks["vector space"]
    assert str(model / "model.onnx") in checks["model files"]["detail"]


def test_a_damaged_model_file_degrades_search_and_doctor_names_it(
    cli_project: Path, tmp_path: Path
) -> None:
    model = real_model(tmp_path)
    one_line_config(cli_project, model)
    js(cli_project, "index")
    onnx = model / "model.onnx"
    for damage in (b"", onnx.read_bytes()[:4096], os.urandom(4096)):  # empty, truncated, random
        onnx.write_bytes(damage)
        res = js(cli_project, "search", "backpressure")
        assert res["status"] == "ok" and res["results"] and res["degraded"], res
        assert str(onnx) in res["reason"] and "--reindex" not in res["reason"]
        doctor = js(cli_project, "doctor")
        bad = [c for c in doctor["checks"] if not c["ok"]]
        assert [c["name"] for c in bad] == ["embeddings reachable"], bad
        assert str(onnx) in bad[0]["detail"]


def test_a_missing_runtime_is_one_line_naming_the_extra(cli_project: Path, tmp_path: Path) -> None:
    model = real_model(tmp_path)
    one_line_config(cli_project, model)
    js(cli_project, "index")  # hybrid, with the runtime
    blocker = tmp_path / "no-onnxruntime" / "onnxruntime"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        "raise ImportError(\"No module named 'onnxruntime'\", name='onnxruntime')\n"
    )
    env = {"PYTHONPATH": os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])}
    search = run(cli_project, "knowledge", "search", "backpressure", env=env)
    assert "Traceback" not in search.stderr and search.stdout.strip()
    tier = search.stderr.strip().splitlines()
    assert len(tier) == 1 and "onnxruntime is missing" in tier[0] and "embed extra" in tier[0]
    (cli_project / "new.md").write_text("# New\n\nplatypus facts\n")
    index = run(cli_project, "knowledge", "index", env=env, ok=1)
    assert "Traceback" not in index.stderr
    errors = [line for line in index.stderr.splitlines() if "onnxruntime" in line]
    assert len(errors) == 1 and "embed extra" in errors[0]
    found = js(cli_project, "search", "platypus")  # written before embedding failed
    assert found["results"][0]["path"] == "new.md"


def test_progress_lines_without_a_terminal(cli_project: Path, tmp_path: Path) -> None:
    """stderr is a pipe here: the embedding progress comes as lines (the last one at least;
    tests/cli/test_messages.py covers the every-few-seconds rhythm with an injected clock)."""
    model = real_model(tmp_path)
    one_line_config(cli_project, model)
    out = run(cli_project, "knowledge", "index")
    lines = out.stderr.splitlines()
    assert "embedded 3 of 3 chunks" in lines, lines
    assert not any("dim 0" in line for line in lines), lines
    assert any(line.startswith("adding vectors:") for line in lines)
    again = run(cli_project, "knowledge", "index", "--reindex")  # from cached vectors
    assert not any(line.startswith("adding vectors:") for line in again.stderr.splitlines())


def test_progress_line_every_few_seconds_with_rate_and_time_left() -> None:
    import io

    from fisk_ls.cli.progress import IndexProgress

    now = [100.0]
    out = io.StringIO()
    progress = IndexProgress(stream=out, clock=lambda: now[0], every=5.0)
    with progress:  # not a terminal: lines, no bar
        progress.on_embed(192, 6_628)  # the first round: the clock starts
        for done in range(384, 1_393, 192):  # ~1 s per round, 14/s
            now[0] += 13.7
            progress.on_embed(done, 6_628)
        now[0] += 1.0
        progress.on_embed(1_400, 6_628)  # within 5 s of the last line: quiet
    lines = out.getvalue().splitlines()
    assert len(lines) == 6
    assert lines[-1] == "embedded 1,344 of 6,628 chunks, 14/s, about 6 min left"


def test_file_progress_is_a_line_every_few_seconds_when_not_a_terminal() -> None:
    """`index` into a log or CI: the files read so far every 5 s (and the last count after
    such a line), not silence until the summary; a run shorter than that prints none."""
    import io

    from fisk_ls.cli.progress import IndexProgress

    now = [0.0]
    out = io.StringIO()
    with IndexProgress(stream=out, clock=lambda: now[0], every=5.0) as progress:
        progress.on_plan(1_090)
        for done in range(1, 1_091):
            now[0] = done * 0.25  # 4 files/s
            progress.on_file(done, f"doc{done}.md")
    lines = out.getvalue().splitlines()
    assert lines[0] == "indexed 21 of 1,090 files, 4/s"
    assert lines[-1] == "indexed 1,090 of 1,090 files, 4/s"
    assert len(lines) == 55  # every 5 s (20 files), and the last count
    quick = io.StringIO()
    with IndexProgress(stream=quick, clock=lambda: now[0], every=5.0) as progress:
        progress.on_plan(3)
        for done in (1, 2, 3):
            progress.on_file(done, "a.md")
    assert quick.getvalue() == ""


def test_watch_json_prints_one_object_per_line(cli_project: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "watch", "--json"],
        cwd=cli_project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first["event"] == "watching" and first["tier"].startswith("lexical")
        indexed = json.loads(proc.stdout.readline())
        assert indexed["event"] == "indexed" and indexed["added"] == 3
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=HANG_GUARD)
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1] == {"event": "stopped"}


def test_rm_of_a_path_that_is_not_indexed_exits_1(cli_project: Path) -> None:
    js(cli_project, "index")
    missing = run(cli_project, "knowledge", "rm", "nope/missing.md", ok=1)
    assert "not indexed: nope/missing.md" in missing.stderr
    both = js(cli_project, "rm", "notes.txt", "nope/missing.md", ok=1)
    assert both["removed"] == ["notes.txt"] and both["missing"] == ["nope/missing.md"]
    assert js(cli_project, "rm", "docs/design.md")["removed"] == ["docs/design.md"]
