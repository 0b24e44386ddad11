"""`fisk-ai knowledge search` lands on the part that matched: lines, heading, snippet, and the
matched words in bold on a terminal only."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.waiting import HANG_GUARD

DOC = """# Operations

## Restarts

The service keeps a small amount of state in memory and on disk.

Operators normally never need to touch it during daily work.

Logs rotate every night and are kept for two weeks by default.

To drain a node \x1b[31mbefore\x1b[0m a restart, cordon it and wait for the queue to empty.

Afterwards the node rejoins the cluster on its own.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ops.md").write_text(DOC)
    env = cli_env(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    return root


def cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FISK_AI_STORE_DIR")}
    env["FISK_AI_STORE_DIR"] = str(tmp_path / "stores")
    return env


def test_json_carries_match_lines_and_highlights(project: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "search", "drain a node", "--json"],
        cwd=project,
        env=cli_env(tmp_path),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    top = json.loads(out)["results"][0]
    assert top["match_lines"] == [11, 11]
    assert top["match_section"] == "Operations > Restarts"
    assert {top["snippet"][a:b] for a, b in top["highlights"]} == {"drain", "node"}
    assert "\x1b" not in top["snippet"]


def test_piped_output_has_no_escape_codes(project: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "search", "drain a node"],
        cwd=project,
        env=cli_env(tmp_path),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "\x1b" not in out
    assert "(lines 11-11" in out
    assert "To drain a node before a restart" in out


def test_a_terminal_shows_matched_words_in_bold_and_nothing_else(
    project: Path, tmp_path: Path
) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "search", "drain a node"],
        cwd=project,
        env=cli_env(tmp_path),
        stdout=follower,
        stderr=subprocess.DEVNULL,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=HANG_GUARD)
    os.close(leader)
    out = b"".join(chunks).decode()
    assert "\x1b[1mdrain\x1b[22m" in out and "\x1b[1mnode\x1b[22m" in out
    stripped = out.replace("\x1b[1m", "").replace("\x1b[22m", "")
    assert "\x1b" not in stripped  # the document's own escape codes never reach the terminal
