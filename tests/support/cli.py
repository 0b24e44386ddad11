"""The real ``fisk-ai`` process, as the CLI tests run it: ``run`` (exit code checked) and ``js``
(``knowledge ... --json``, one JSON object read back)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run(
    cwd: Path, *args: str, env: dict[str, str] | None = None, ok: int | None = 0
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if ok is not None:
        assert proc.returncode == ok, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def js(cwd: Path, *args: str, ok: int | None = 0) -> dict[str, Any]:
    proc = run(cwd, "knowledge", *args, "--json", ok=ok)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, proc.stdout
    obj: dict[str, Any] = json.loads(lines[0])
    return obj


def knowledge(root: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``fisk-ai knowledge ARGS`` in ``root``, its stores under ``tmp_path/stores``, no stdin;
    the exit code is the caller's to check."""
    env = {k: v for k, v in os.environ.items() if k != "FISK_AI_STORE_DIR"}
    env["FISK_AI_STORE_DIR"] = str(tmp_path / "stores")
    return subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
