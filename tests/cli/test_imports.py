"""Lean start-up: each command imports only what it uses (issue: speed round 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import contextlib, io, json, sys
from fisk_ls.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)))
"""

NEVER_FOR_SEARCH = (
    "multiprocessing",
    "concurrent.futures.process",
    "fisk_ls.knowledge.index.runs",
    "fisk_ls.knowledge.writer",
    "fisk_ls.knowledge.index.examine",
    "fisk_ls.knowledge.index.chunker",
    "fisk_ls.knowledge.index.blocks",
    "fisk_ls.knowledge.vectors.providers",
    "fisk_ls.knowledge.vectors.models",
    "fisk_ls.cli.progress",
    "hashlib",  # it loads OpenSSL; a search's digests are the built-in ones (knowledge/digests.py)
    "_hashlib",
    "secrets",
    "rich",
    "rich.progress",
    "yaml",
    "watchfiles",
    "pygls",
    "mcp",
)

NEVER_FOR_LEXICAL_SEARCH = (
    "fisk_ls.knowledge.expansion",  # only with --expand
    "fisk_ls.knowledge.scope",  # only with --path, --exclude or --tag
    "fisk_ls.knowledge.wildmatch",
    "string",  # the glob syntax's (scope); collapse.py's byte table needs none of it
    "fisk_ls.knowledge.vectors.backlog",  # only with embeddings configured
    "fisk_ls.knowledge.vectors.space",
    "logging",
    "traceback",
)

NEVER_FOR_JSON_SEARCH = (
    "click",  # the quick path (cli/quick.py) reads a plain search's command line
    "fisk_ls.cli.app",
    "fisk_ls.cli.options",
    "dataclasses",  # the search's records are NamedTuples: cheaper to create at import
    "inspect",
)


def modules_after(cwd: Path, *args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_search_imports_no_indexer_and_no_yaml_without_agent_yaml(
    project: Path, store_base: Path
) -> None:
    from fisk_ls.knowledge import index_project, resolve_settings

    index_project(resolve_settings(cwd=project, store_base=store_base))
    loaded = modules_after(project, "knowledge", "search", "backpressure", "--json")
    assert "fisk_ls.knowledge.reader" in loaded  # it really searched
    never = (*NEVER_FOR_SEARCH, *NEVER_FOR_LEXICAL_SEARCH, *NEVER_FOR_JSON_SEARCH)
    assert not [m for m in never if m in loaded]


def test_scoped_search_imports_the_scope(project: Path, store_base: Path) -> None:
    """The modules a plain search leaves out are imported by the search that uses them."""
    from fisk_ls.knowledge import index_project, resolve_settings

    index_project(resolve_settings(cwd=project, store_base=store_base))
    loaded = modules_after(project, "knowledge", "search", "backpressure", "--path", "docs")
    assert {"fisk_ls.knowledge.scope", "fisk_ls.knowledge.wildmatch"} <= loaded
    assert not [m for m in NEVER_FOR_SEARCH if m in loaded]


def test_help_imports_no_core_beyond_settings(project: Path) -> None:
    loaded = modules_after(project, "--help")
    assert not [m for m in (*NEVER_FOR_SEARCH, "apsw", "fisk_ls.knowledge.reader") if m in loaded]


def test_help_imports_no_store_search_or_vectors(tmp_path: Path) -> None:
    """``--help`` only describes the commands: no SQLite, search or vector code."""
    loaded = modules_after(tmp_path, "--help")
    assert "fisk_ls.cli.app" in loaded
    never = ["apsw", "numpy", "fisk_ls.knowledge.store", "fisk_ls.knowledge.search"]
    never += [f"fisk_ls.knowledge.vectors.{m}" for m in ("backlog", "knn", "pack", "tier")]
    assert not [m for m in (*NEVER_FOR_SEARCH, *never) if m in loaded]


AT_EXIT_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print(%s))  # runs last
from fisk_ls.cli import main
main(%s)
"""


def at_exit(cwd: Path, shows: str, argv: str, *args: str) -> str:
    """What ``shows`` (a Python expression) prints once a CLI process run with ``args`` ends,
    the CLI's ``main`` called with ``argv`` (empty: as the program)."""
    proc = subprocess.run(
        [sys.executable, "-c", AT_EXIT_PROBE % (shows, argv), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def exit_probe(cwd: Path, argv: str) -> str:
    shows = '"frozen at exit:", gc.get_freeze_count() > 0'
    return at_exit(cwd, shows, argv, "knowledge", "sources", "--json")


def test_the_program_skips_the_collections_at_exit(project: Path, store_base: Path) -> None:
    """Run as the program, the CLI freezes its objects when the process ends (the interpreter's
    collections at exit then skip them); called in a process that goes on (a test, a script),
    it leaves the collector alone."""
    assert exit_probe(project, "") == "frozen at exit: True"
    assert exit_probe(project, "sys.argv[1:]") == "frozen at exit: False"


def collector_at_exit(cwd: Path, *args: str) -> str:
    return at_exit(cwd, '"collector on:", gc.isenabled()', "", *args)


def test_only_a_plain_search_runs_without_the_collector(project: Path, store_base: Path) -> None:
    """Run as the program, a plain search (one query, then the process ends) leaves the
    collector off; a command through click, which may run for as long as it is left, has it."""
    from fisk_ls.knowledge import index_project, resolve_settings

    index_project(resolve_settings(cwd=project, store_base=store_base))
    search = ("knowledge", "search", "backpressure", "--json", "--store-dir", str(store_base))
    assert collector_at_exit(project, *search) == "collector on: False"
    assert collector_at_exit(project, "knowledge", "sources", "--json") == "collector on: True"
    assert collector_at_exit(project, *search[:3]) == "collector on: True"  # text: click
