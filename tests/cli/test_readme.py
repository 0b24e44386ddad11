"""Every command in README.md's shell code blocks runs as written (the README is part of the
product). Commands that need the network, an editor, root or minutes of CI are skipped, each
with its reason; everything else runs in a sandbox with `fisk-ai` from this checkout on PATH."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DOCS, REPO, write_docs

README = REPO / "README.md"

SKIP: dict[str, str] = {
    "./scripts/demo.sh": "installs .venv from PyPI (network); scripts/wheel.sh runs it in CI",
    "./scripts/test.sh": "the whole CI job (network, root for apt, editors); it runs this test",
    "pipx install": "installs from PyPI (network)",
    "pip install": "installs from PyPI (network)",
    "python3 -m build": "downloads the build backend (network); scripts/wheel.sh runs it in CI",
    "python3 -m pip wheel": "downloads the build backend (network); scripts/wheel.sh builds one",
    "python3 -m venv ~/.local": "the install into your home folder (network for its pip)",
    "~/.local/share/fisk-ls/bin/pip": "installs from PyPI (network) into your home folder",
    "mkdir -p ~/.local/bin": "links into your home folder's ~/.local/bin",
    "code --install-extension": "needs VS Code and a built .vsix",
    "bash bench/run.sh": "minutes of benchmarks over the shared corpora",
    "bash bench/install_peers.sh": "installs qmd and Node 22 from npm, ripgrep from apt (network)",
    ".venv/bin/python bench/peers.py": "minutes of benchmarks beside qmd over the shared corpora",
    "fisk-ai mcp --http": "a long-running server; tests/agent/mcp/test_http.py runs it",
    "export FISK_MCP_TOKEN": "only feeds the skipped MCP server line after it",
    "claude mcp add": "needs Claude Code; tests/agent/mcp runs the server it registers",
    "codex mcp add": "needs the Codex CLI; tests/agent/mcp runs the server it registers",
    "bash scripts/bootstrap.sh": "installs .venv from PyPI (network); scripts/test.sh runs it",
    ".venv/bin/pytest": "the test suite this test is part of",
    ".venv/bin/ruff": "the lint step of scripts/test.sh",
}


def shell_blocks(text: str) -> list[tuple[int, list[str]]]:
    """(line number, lines) of every ```sh / ```bash block."""
    blocks = []
    for m in re.finditer(r"^```(?:sh|bash|shell)\n(.*?)^```", text, re.M | re.S):
        blocks.append((text[: m.start()].count("\n") + 2, m.group(1).splitlines()))
    return blocks


def command_of(line: str) -> str:
    """The command part of a README line (a trailing `# comment` dropped)."""
    return re.sub(r"\s+#\s.*$", "", line).strip()


def skip_reason(command: str) -> str | None:
    return next((why for prefix, why in SKIP.items() if command.startswith(prefix)), None)


BLOCKS = shell_blocks(README.read_text(encoding="utf-8"))


def test_the_readme_has_runnable_blocks() -> None:
    commands = [command_of(ln) for _, lines in BLOCKS for ln in lines if command_of(ln)]
    assert sum(1 for c in commands if c.startswith(("fisk-ai", "cd "))) >= 5
    assert all(skip_reason(c) is None for c in commands if c.startswith("fisk-ai knowledge"))


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding `my-project` (a git repository with docs) and PATH with this checkout's
    fisk-ai; the README's `cd my-project` lands there."""
    project = tmp_path / "my-project"
    project.mkdir()
    write_docs(project, DOCS)
    (project / ".git").mkdir()  # discovery only needs the marker
    bin_dir = Path(sys.executable).parent
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FISK_AI_STORE_DIR", str(tmp_path / "stores"))
    return tmp_path


@pytest.mark.parametrize(
    ("start", "lines"), [pytest.param(s, ls, id=f"README.md:{s}") for s, ls in BLOCKS]
)
def test_readme_block_runs_as_written(sandbox: Path, start: int, lines: list[str]) -> None:
    script: list[str] = ["set -euo pipefail"]
    ran = 0
    for offset, line in enumerate(lines):
        command = command_of(line)
        if not command:
            continue
        reason = skip_reason(command)
        if reason is not None:
            script.append(": " + shlex.quote(f"skipped README.md:{start + offset}: {reason}"))
            continue
        script.append(command)
        ran += 1
    if ran == 0:
        pytest.skip("every command in this block is skipped: " + "; ".join(script[1:]))
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=sandbox,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (start, proc.stdout[-2000:], proc.stderr[-2000:])
