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

from fisk_ls.knowledge import ConfigError, index, resolve_settings
from fisk_ls.knowledge.regular import NotRegular
from fisk_ls.knowledge.vectors.models import check_model_dir, file_sha256

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
    index(settings)
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
