"""`fisk-ai knowledge search QUERY --expand`: the chat server configured in agent.yaml writes
extra strings for a weak question; --json shows them; a failing or silent server keeps the plain
results with the reason; no expander configured is a usage error naming the setting."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent_strings import ALSO, QUESTION, write_site
from tests.support.cli import knowledge as cli
from tests.support.fake_chat_server import FakeChatServer


@pytest.fixture
def chat() -> Iterator[FakeChatServer]:
    server = FakeChatServer({QUESTION: ALSO})
    server.start()
    yield server
    server.stop()


def configure(root: Path, url: str, timeout: str = "10s") -> None:
    (root / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    expansion:\n"
        f"      base_url: {url}\n      model: fake-chat\n      timeout: {timeout}\n",
        encoding="utf-8",
    )


@pytest.fixture
def site(tmp_path: Path, chat: FakeChatServer) -> Path:
    root = write_site(tmp_path / "site")
    configure(root, chat.url)
    assert cli(root, tmp_path, "index").returncode == 0
    return root


def test_expand_fuses_the_models_strings(site: Path, tmp_path: Path, chat: FakeChatServer) -> None:
    proc = cli(site, tmp_path, "search", QUESTION, "--expand", "--json", "--top-k", "1")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["expansion"] == "used" and out["expansion_strings"] == ALSO
    assert out["results"][0]["citation"].startswith("docs/naming.md#")
    text = cli(site, tmp_path, "search", QUESTION, "--expand", "--top-k", "1")
    assert "expansion: used" in text.stderr and f"+ {ALSO[0]}" in text.stderr
    assert text.stdout.startswith("docs/naming.md#")
    plain = json.loads(cli(site, tmp_path, "search", QUESTION, "--json", "--top-k", "1").stdout)
    assert "expansion" not in plain and plain["results"][0]["citation"].startswith("docs/display")
    assert chat.calls == 2  # one process each: the cache lives in a process


@pytest.mark.parametrize("mode", ["status", "malformed", "hang"])
def test_a_failing_chat_server_keeps_the_plain_results(
    site: Path, tmp_path: Path, chat: FakeChatServer, mode: str
) -> None:
    chat.set_mode(mode)
    configure(site, chat.url, timeout="1s")
    proc = cli(site, tmp_path, "search", QUESTION, "--expand", "--json", "--top-k", "1")
    chat.release()
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["expansion"].startswith("failed: ") and out["expansion_strings"] == []
    assert out["results"][0]["citation"].startswith("docs/display.md#")


def test_expand_without_an_expander_names_the_setting(tmp_path: Path) -> None:
    root = write_site(tmp_path / "plain")
    (root / ".git").mkdir()
    proc = cli(root, tmp_path, "search", QUESTION, "--expand")
    assert proc.returncode == 2
    assert "harness.knowledge.expansion" in proc.stderr and "base_url" in proc.stderr
