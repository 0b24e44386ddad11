"""`fisk-ai knowledge search QUERY --also TEXT`: extra strings fused with the question, the
limits as usage errors, and each hit's ``found_by`` in --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agent_strings import ALSO, QUESTION, write_site
from tests.support.cli import knowledge as cli


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = write_site(tmp_path / "site")
    assert cli(root, tmp_path, "index").returncode == 0
    return root


def test_also_changes_what_a_paraphrase_finds(site: Path, tmp_path: Path) -> None:
    plain = json.loads(cli(site, tmp_path, "search", QUESTION, "--json").stdout)
    assert plain["results"][0]["path"] == "docs/display.md"
    assert plain["results"][0]["found_by"] == ["query"]
    args = [arg for text in ALSO for arg in ("--also", text)]
    out = cli(site, tmp_path, "search", QUESTION, *args, "--json")
    assert out.returncode == 0, out.stderr
    helped = json.loads(out.stdout)
    first = helped["results"][0]
    assert first["path"] == "docs/naming.md"
    assert "also[0]" in first["found_by"] and "also[0].lexical" in first["retrievers"]
    text = cli(site, tmp_path, "search", QUESTION, *args)
    assert text.returncode == 0 and text.stdout.startswith("docs/naming.md#")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--also", "a"] * 5, "at most 4 strings, got 5"),
        (["--also", "x" * 2001], "at most 2,000 characters"),
    ],
)
def test_limits_are_usage_errors(site: Path, tmp_path: Path, args: list[str], message: str) -> None:
    out = cli(site, tmp_path, "search", QUESTION, *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    as_json = cli(site, tmp_path, "search", QUESTION, *args, "--json")
    assert as_json.returncode == 2 and message in json.loads(as_json.stdout)["error"]
