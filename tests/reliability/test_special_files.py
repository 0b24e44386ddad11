"""A FIFO, device or link to one where the product expects a regular file hangs nothing: the
store's id file and lock file, ignore files, agent.yaml and model files are opened without
blocking and refused (or skipped) unless they are regular files. A cloned repository can carry
a ``.gitignore`` linked to ``/dev/stdin`` into an editor's language server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fisk_ls.knowledge import ConfigError, SearchRequest, resolve_settings
from fisk_ls.knowledge.regular import NotRegular
from fisk_ls.knowledge.vectors.models import check_model_dir, file_sha256
from tests.support.hybrid import index_project, reader

TIMEOUT = 60
"""Generous: a hang is what fails, not a slow machine."""


def cli(cwd: Path, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """Run ``fisk-ai knowledge ARGS --json`` with a stdin pipe that stays open and silent (as a
    language server's is), so anything that reads /dev/stdin would block."""
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args, "--json"],
            cwd=cwd,
            env=dict(os.environ),
            stdin=subprocess.PIPE,
            stdout=o,
            stderr=e,
        )
        try:
            code = proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"`knowledge {' '.join(args)}` hung")
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
    return code, out.read_text(), err.read_text()


def _one_line_error(code: int, out: str, err: str) -> str:
    assert code == 1 and "Traceback" not in err, (code, out, err)
    (line,) = out.strip().splitlines()
    error: str = json.loads(line)["error"]
    return error


@pytest.mark.parametrize("name", ["knowledge.id", "knowledge.lock"])
def test_fifo_in_the_store_hangs_no_command(
    project: Path, store_base: Path, tmp_path: Path, name: str
) -> None:
    """A FIFO at knowledge.id hung search, index and doctor; one at knowledge.lock hung doctor."""
    settings = resolve_settings(cwd=project, store_base=store_base)
    index_project(settings)
    (settings.store_dir / name).unlink()
    os.mkfifo(settings.store_dir / name)
    for command in (("search", "backpressure"), ("index",), ("doctor",), ("stats",)):
        code, out, err = cli(project, tmp_path, *command)
        assert "Traceback" not in err, (command, err)
        if command == ("doctor",):
            report = json.loads(out)
            assert name in json.dumps(report) and "FIFO" in json.dumps(report)
        elif name == "knowledge.id" or command == ("index",):
            error = _one_line_error(code, out, err)
            assert name in error and "FIFO" in error and "remove it" in error


@pytest.mark.parametrize(
    "name, target",
    [(".gitignore", "/dev/stdin"), (".fiskignore", "/proc/self/fd/0"), (".gitignore", "fifo")],
)
def test_ignore_file_that_is_a_fifo_or_links_to_stdin_hangs_nothing(
    project: Path, store_base: Path, tmp_path: Path, name: str, target: str
) -> None:
    (project / ".git").mkdir()
    if target == "fifo":
        os.mkfifo(project / "docs" / name)
    else:
        (project / "docs" / name).symlink_to(target)
    code, out, err = cli(project, tmp_path, "index")
    assert code == 0, (out, err)
    assert json.loads(out)["added"] == 3


def test_agent_yaml_that_is_a_fifo_is_refused(project: Path, tmp_path: Path) -> None:
    os.mkfifo(project / "agent.yaml")
    code, out, err = cli(project, tmp_path, "search", "x", "--config", "agent.yaml")
    error = _one_line_error(code, out, err)
    assert "agent.yaml" in error
    with pytest.raises(ConfigError, match="FIFO"):
        resolve_settings(project / "agent.yaml")


def test_model_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer.json").write_text("{}")
    os.mkfifo(model / "model.onnx")
    with pytest.raises(ConfigError, match=r"model\.onnx: it is a FIFO"):
        check_model_dir(model)
    keep = os.open(model / "model.onnx", os.O_RDWR | os.O_NONBLOCK)  # so no open blocks
    try:
        os.write(keep, b"not a model")
        with pytest.raises(NotRegular):
            file_sha256(model / "model.onnx")
    finally:
        os.close(keep)


def test_a_model_file_swapped_for_a_fifo_after_its_check_degrades_search(
    project: Path, store_base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model file passes ``check_model_dir`` and is then replaced by a FIFO before it is
    hashed: the hash's refusal is a model-load fault, so search answers lexically with the
    reason and doctor names the file, as for a damaged file (not a traceback, not a switch)."""
    from fisk_ls.knowledge.doctor import run_checks
    from fisk_ls.knowledge.vectors import builtin
    from fisk_ls.knowledge.vectors.providers import make_embedder
    from tests.cli.test_first_hour import one_line_config, real_model

    model = real_model(tmp_path)
    onnx = model / "model.onnx"
    weights = onnx.read_bytes()
    one_line_config(project, model)
    settings = resolve_settings(cwd=project, store_base=store_base)
    index_project(settings)  # hybrid, with the good file
    real_check = check_model_dir  # what builtin imported

    def check_then_swap(path: Path) -> Path:
        onnx.unlink(missing_ok=True)
        onnx.write_bytes(weights)
        checked = real_check(path)
        onnx.unlink()
        os.mkfifo(onnx)
        return checked

    monkeypatch.setattr(builtin, "check_model_dir", check_then_swap)
    kb = reader(settings)
    try:
        found = kb.search(SearchRequest("backpressure"))
    finally:
        kb.close()
    assert found.status == "ok" and found.hits and found.degraded
    assert found.reason is not None and str(onnx) in found.reason and "FIFO" in found.reason
    embedder = make_embedder(settings)
    assert embedder is not None
    try:
        checks = run_checks(settings, embedder)
    finally:
        embedder.close()
    bad = [c for c in checks if not c.ok]
    assert [c.name for c in bad] == ["embeddings reachable"] and str(onnx) in bad[0].detail
    assert not any(c.broken for c in checks)
