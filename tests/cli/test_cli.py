"""The real `fisk-ai` process: every command, --json, exit codes, escapes stripped."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.cli import js, run
from tests.support.waiting import HANG_GUARD

COMMANDS = ["index", "watch", "search", "show", "sources", "doctor", "stats", "rm", "reset"]


@pytest.fixture
def cli_project(project: Path, store_base: Path) -> Path:
    return project


def test_every_command_has_help(tmp_path: Path) -> None:
    for cmd in COMMANDS:
        out = run(tmp_path, "knowledge", cmd, "--help").stdout
        assert "--json" in out and "Usage" in out
    assert "knowledge" in run(tmp_path, "rag", "--help").stdout.lower()


def test_full_flow_json(cli_project: Path) -> None:
    assert js(cli_project, "search", "queue")["status"] == "index_not_built"
    assert js(cli_project, "sources")["status"] == "index_not_built"
    idx = js(cli_project, "index")
    assert idx["added"] == 3 and idx["tier"].startswith("lexical")
    res = js(cli_project, "search", "how does backpressure work?", "--top-k", "2")
    assert res["status"] == "ok" and not res["degraded"] and res["reason"] is None
    hit = res["results"][0]
    assert set(hit) >= {
        "citation",
        "path",
        "ordinal",
        "section",
        "start_line",
        "end_line",
        "score",
        "content",
    }
    assert hit["path"] == "docs/design.md" and len(res["results"]) <= 2
    shown = js(cli_project, "show", hit["citation"])
    assert shown["content"] == hit["content"] and shown["stale"] is False
    srcs = js(cli_project, "sources")["sources"]
    assert [s["path"] for s in srcs] == ["docs/design.md", "docs/ops/runbook.md", "notes.txt"]
    stats = js(cli_project, "stats")
    assert stats["documents"] == 3 and stats["built"]
    doc = js(cli_project, "doctor")
    assert doc["ok"] is True
    assert js(cli_project, "index", "--dry-run")["skipped"] == 3
    rm = js(cli_project, "rm", "notes.txt")
    assert rm["removed"] == ["notes.txt"]
    reset = js(cli_project, "reset", ok=1)
    assert "--force" in reset["error"]
    assert js(cli_project, "reset", "--force")["documents"] == 2
    assert js(cli_project, "search", "queue")["status"] == "index_empty"


def test_paths_are_relative_to_project_root_from_anywhere(cli_project: Path) -> None:
    (cli_project / "agent.yaml").write_text("harness:\n  knowledge:\n    enabled: true\n")
    sub = cli_project / "docs"
    js(cli_project, "index", "docs")
    res = run(
        sub, "knowledge", "--config", str(cli_project / "agent.yaml"), "search", "retries", "--json"
    )
    hit = json.loads(res.stdout)["results"][0]
    assert hit["path"] == "docs/design.md"
    shown = run(
        sub, "knowledge", "--config", str(cli_project / "agent.yaml"), "show", hit["citation"]
    )
    assert "jitter" in shown.stdout


def test_human_output_and_exit_codes(cli_project: Path) -> None:
    proc = run(cli_project, "knowledge", "index")
    assert proc.stderr.startswith("lexical:") and proc.stdout.startswith("indexed: added=3")
    proc = run(cli_project, "knowledge", "search", "backoff")
    assert proc.stdout.startswith("docs/design.md#") and "Section: Design" in proc.stdout
    assert proc.stderr.startswith("lexical:")  # the tier line is not part of the answer
    assert run(cli_project, "knowledge", "show", "nope.md#0", ok=1).stderr.startswith("error:")
    assert run(cli_project, "knowledge", "show", "../x#0", ok=1).stderr.count("outside") == 1
    assert run(cli_project, "knowledge", "search", ok=2).returncode == 2
    assert run(cli_project, "knowledge", "bogus", ok=2).returncode == 2


def test_escape_sequences_never_reach_the_terminal(cli_project: Path) -> None:
    (cli_project / "evil.md").write_text(
        "# Evil \x1b]0;owned\x07title\n\nclear \x1b[2J screen attack\n"
    )
    run(cli_project, "knowledge", "index")
    for args in (
        ["search", "screen attack"],
        ["search", "screen attack", "--full"],
        ["show", "evil.md#0"],
        ["sources"],
    ):
        out = run(cli_project, "knowledge", *args)
        assert "\x1b" not in out.stdout and "\x07" not in out.stdout, args


def test_second_writer_is_told_clearly(cli_project: Path) -> None:
    from fisk_ls.knowledge import open_writer, resolve_settings

    run(cli_project, "knowledge", "index")
    s = resolve_settings(cwd=cli_project)
    with open_writer(s.store_dir):
        res = js(cli_project, "index", ok=1)
        assert "another writer" in res["error"]


def test_config_errors_exit_1(cli_project: Path) -> None:
    (cli_project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    bogus: 1\n"
    )
    res = run(cli_project, "knowledge", "search", "x", ok=1)
    assert "unknown key bogus" in res.stderr


def test_watch_picks_up_changes(cli_project: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "watch", "--debounce", "200ms"],
        cwd=cli_project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout

    def read() -> None:
        for line in stdout:
            lines.put(line)

    reader = threading.Thread(target=read)
    reader.start()

    def next_line() -> str:
        try:
            return lines.get(timeout=HANG_GUARD)  # each line takes well under a second
        except queue.Empty:
            raise AssertionError("watch printed nothing more") from None

    try:
        assert "watching" in next_line()
        assert "indexed" in next_line()  # the first run is done; the watcher started before it
        (cli_project / "late.md").write_text("# Late\n\nplatypus notes\n")
        while not js(cli_project, "search", "platypus")["results"]:
            assert "change(s)" in next_line()  # an update ran; search again after each one
    finally:
        proc.terminate()
        proc.wait(HANG_GUARD)
        reader.join(HANG_GUARD)  # the only reader of stdout
        err = proc.stderr.read() if proc.stderr else ""
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()
    assert "stopped watching" in "".join(lines.queue), err


def test_builtin_provider_from_agent_yaml(cli_project: Path, tmp_path: Path) -> None:
    from tests.support.builtin_model import model_dir

    model = model_dir(tmp_path)
    (cli_project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      provider: builtin\n      model_path: {model}\n"
    )
    idx = js(cli_project, "index")
    assert idx["tier"].startswith("hybrid") and idx["backlog"] == 0
    assert idx["embeddings"] == idx["chunks"] > 0
    st = js(cli_project, "stats")
    assert st["vectors"] == st["chunks"] and st["backlog"] == 0
    assert st["model"].startswith("builtin:all-MiniLM-L6-v2@")
    text = run(cli_project, "knowledge", "stats").stdout
    assert f"Vectors:   {st['chunks']}\n" in text
    res = js(cli_project, "search", "felines and canines")  # notes.txt: cats, dogs, pets
    assert res["status"] == "ok" and res["results"][0]["path"] == "notes.txt"
    assert "vector" in res["results"][0]["retrievers"]
