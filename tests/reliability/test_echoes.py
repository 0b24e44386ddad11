"""No error message echoes an unbounded piece of input: a 10 MB value in every argument of every
language-server command and of the agent tool, and the longest value the OS passes on a command
line (128 KiB a string on Linux) in every CLI option that takes one, gets a short answer (under
2 KB) that names what is wrong. MCP: tests/agent/mcp/test_echoes.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.agent.tool import KnowledgeTool, ToolInputError
from fisk_ls.knowledge import KnowledgeError, Settings, index_project
from fisk_ls.knowledge.sanitize import bounded
from tests.support.raw_lsp import RawClient, command

BIG = "x" * 10_000_000
"""What a client can send in one message (the server's frame limit is 16 MiB)."""
ARGV_BIG = "x" * 100_000
"""Under Linux's limit on one command-line string (MAX_ARG_STRLEN, 128 KiB)."""
SHORT = 2048


def _short(text: str) -> None:
    assert len(text.encode()) < SHORT, f"{len(text):,} characters: {text[:300]}..."


LSP_CASES: list[tuple[str, Any, str]] = [
    ("fisk.knowledge.search", {"query": BIG}, "query"),
    ("fisk.knowledge.search", {"query": "x", "topK": BIG}, "topK"),
    ("fisk.knowledge.search", {"query": "x", "also": BIG}, "also"),
    ("fisk.knowledge.search", {"query": "x", "also": [BIG]}, "also"),
    ("fisk.knowledge.search", {"query": "x", "paths": BIG}, "paths"),
    ("fisk.knowledge.search", {"query": "x", "paths": [BIG]}, "paths"),
    ("fisk.knowledge.search", {"query": "x", "paths": ["/" + "x" * 999]}, "paths"),
    ("fisk.knowledge.search", {"query": "x", "tags": BIG}, "tags"),
    ("fisk.knowledge.search", {"query": "x", "tags": [BIG]}, "tags"),
    ("fisk.knowledge.search", {"query": "x", BIG: 1}, "unknown argument"),
    ("fisk.knowledge.search", [BIG], "expected one object"),
    ("fisk.knowledge.show", {"citation": BIG}, "citation"),
    ("fisk.knowledge.show", {"citation": BIG + "#1"}, "citation"),
    ("fisk.knowledge.show", {"citation": "../" + BIG + "#1"}, "citation"),
    ("fisk.knowledge.show", {"citation": "docs/design.md#0", "context": BIG}, "context"),
    ("fisk.knowledge.show", {BIG: 1}, "unknown argument"),
    ("fisk.knowledge.reindex", {"rebuild": BIG}, "rebuild"),
    ("fisk.knowledge.reindex", {BIG: 1}, "unknown argument"),
    ("fisk.knowledge.status", {BIG: 1}, "unknown argument"),
    ("fisk.knowledge.status", [BIG], "expected one object"),
]


def test_every_language_server_command_answers_a_10_mb_argument_briefly(
    project: Path, store_base: Path
) -> None:
    client = RawClient(project, {**os.environ, "FISK_AI_STORE_DIR": str(store_base)})
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": project.as_uri(),
                "capabilities": {},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init, init
        client.notify("initialized", {})
        for name, args, named in LSP_CASES:
            params = {"command": name, "arguments": args if isinstance(args, list) else [args]}
            reply = client.request("workspace/executeCommand", params, timeout=120)
            shown = json.dumps(reply)
            _short(shown)
            assert "error" in reply, (name, shown)
            message = reply["error"]["message"]
            assert named in message and "\n" not in message, (name, message)
        ok = command(client, "fisk.knowledge.search", {"query": "backpressure"})
        assert "result" in ok, ok
    finally:
        client.close()


def test_the_agent_tool_answers_a_10_mb_argument_briefly(settings: Settings) -> None:
    index_project(settings)
    tool = KnowledgeTool(settings)
    try:
        for raw in (
            {"query": BIG},
            {"query": "x", "top_k": BIG},
            {"query": "x", "also": [BIG]},
            {"query": "x", "also": BIG},
            {"query": "x", "paths": [BIG]},
            {"query": "x", "paths": ["/" + "x" * 999]},
            {"query": "x", "tags": [BIG]},
            {"query": "x", "context": BIG},
            {"query": "x", BIG: 1},
            json.dumps({"query": BIG})[:-1],  # JSON cut short
        ):
            with pytest.raises((ToolInputError, KnowledgeError)) as caught:
                tool.call(raw)
            _short(str(caught.value))
    finally:
        tool.close()


CLI_CASES: list[tuple[str, ...]] = [
    ("knowledge", "search", ARGV_BIG),
    ("knowledge", "search", "x", "--top-k", ARGV_BIG),
    ("knowledge", "search", "x", "--also", ARGV_BIG),
    ("knowledge", "search", "x", "--path", ARGV_BIG),
    ("knowledge", "search", "x", "--path", "/" + ARGV_BIG),
    ("knowledge", "search", "x", "--exclude", ARGV_BIG),
    ("knowledge", "search", "x", "--tag", ARGV_BIG),
    ("knowledge", "--config", ARGV_BIG, "stats"),
    ("knowledge", "--store-dir", ARGV_BIG, "stats"),
    ("knowledge", "--store-dir", "/" + ARGV_BIG, "stats"),
    ("knowledge", "show", ARGV_BIG),
    ("knowledge", "show", ARGV_BIG + "#1"),
    ("knowledge", "show", "docs/design.md#0", "--context", ARGV_BIG),
    ("knowledge", "index", ARGV_BIG),
    ("knowledge", "rm", ARGV_BIG),
    ("knowledge", "watch", "--debounce", ARGV_BIG),
    ("lsp", "--tcp", ARGV_BIG),
    ("lsp", "--log-file", "/" + ARGV_BIG),
    ("mcp", "--port", ARGV_BIG),
    ("mcp", "--http", "--host", ARGV_BIG),
    ("mcp", "--http", "--token-env", ARGV_BIG),
    ("mcp", "--config", ARGV_BIG),
]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_every_cli_option_answers_a_huge_value_briefly(settings: Settings, as_json: bool) -> None:
    index_project(settings)
    env = {**os.environ, "FISK_AI_STORE_DIR": str(settings.store_dir.parent)}
    for args in CLI_CASES:
        if as_json and args[0] != "knowledge":
            continue  # only knowledge commands speak JSON
        argv = [*args, "--json"] if as_json else list(args)
        out = subprocess.run(
            [sys.executable, "-m", "fisk_ls.cli", *argv],
            cwd=settings.project_root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        shown = args[:4] if len(args) < 5 else args[:3]
        assert out.returncode != 0, (shown, out.stdout[:300])
        assert "Traceback" not in out.stderr, (shown, out.stderr[-2000:])
        _short(out.stderr)
        if as_json and args[1] == "rm":  # data, not a message: the paths asked for, exactly
            assert json.loads(out.stdout)["missing"] == [ARGV_BIG]
            continue
        _short(out.stdout)
        if as_json:
            assert json.loads(out.stdout)["error"], shown


def test_bounded_keeps_a_message_whole_or_its_start_and_end() -> None:
    assert bounded("expected 1 to 20, got 'x'") == "expected 1 to 20, got 'x'"
    long_path = "/tmp/" + "a" * 250 + "/knowledge.db"
    assert bounded(f"cannot open {long_path}; fix it") == f"cannot open {long_path}; fix it"
    huge = bounded(f"no such file: {'y' * 10_000_000}; run `fisk-ai knowledge index`")
    assert "(10,000,001 characters) run" in huge and huge.endswith("`fisk-ai knowledge index`")
    words = bounded("word " * 1_000_000 + "the fix")
    assert len(words) <= 1000 and words.startswith("word") and words.endswith("the fix")
