"""agent.yaml edge cases: every one is a one-line error naming the file and the key, never a
traceback, and no error echoes a huge input back whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAD = "harness:\n  knowledge:\n    enabled: true\n"


def _deep_map(levels: int) -> str:
    lines = [HEAD.rstrip("\n"), "    embeddings:"]
    lines += [" " * (6 + 2 * i) + f"k{i}:" for i in range(levels)]
    return "\n".join(lines) + " 1\n"


CASES = {
    "deep map": (_deep_map(1000), "harness.knowledge.embeddings.k0.k1"),
    "deep list": (HEAD + "    paths: " + "[" * 10_000 + "]" * 10_000 + "\n", "paths[0][0]"),
    "deep flow map": (HEAD + "    top_k: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n", "top_k.a.a"),
    "NUL in directory": (HEAD + '    directory: "st\\0re"\n', "harness.knowledge.directory"),
    "NUL in a path": (HEAD + '    paths: ["docs\\0"]\n', "harness.knowledge.paths"),
    "NUL in exclude": (HEAD + '    exclude: ["a\\0"]\n', "harness.knowledge.exclude"),
    "huge value": (HEAD + "    top_k: " + "9" * 200_000 + "\n", "harness.knowledge.top_k"),
    "huge string": (HEAD + "    enabled: " + "x" * 1_000_000 + "\n", "harness.knowledge.enabled"),
    "huge list": (HEAD + "    top_k: [" + "1, " * 100_000 + "1]\n", "harness.knowledge.top_k"),
    "threads over the limit": (
        HEAD + "    embeddings:\n      provider: builtin\n      threads: 10000\n",
        "harness.knowledge.embeddings.threads",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_agent_yaml_is_one_line_naming_file_and_key(
    tmp_path: Path, store_base: Path, case: str
) -> None:
    text, key = CASES[case]
    project = tmp_path / "p"
    project.mkdir()
    (project / "agent.yaml").write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "search", "x", "--json"],
        cwd=project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1, (proc.stdout[:500], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    (line,) = proc.stdout.strip().splitlines()
    error = json.loads(line)["error"]
    assert "agent.yaml" in error and key in error, error
    assert len(error) < 1000, error[:300]
