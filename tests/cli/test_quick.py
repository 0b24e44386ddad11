"""The quick path of a plain search (cli/quick.py) reads a command line exactly as click does,
or leaves it to click."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.cli import app, search
from fisk_ls.cli.context import Context
from fisk_ls.cli.quick import parse

HERE = Path(__file__).resolve().parent
TOKENS = [
    "knowledge", "rag", "search", "show", "--json", "--json=1", "--full", "--expand", "--help",
    "--", "-", "-x", "--bogus", "--top-k", "--top-k=3", "--top-k=", "5", " 7 ", "x7", "0",
    "--also", "--also=", "--path", "--exclude", "--tag", "--project", "#tag", "docs",
    "--store-dir", "--config", f"--store-dir={HERE}", str(HERE), str(HERE / "test_quick.py"),
    "/nonexistent/fisk", "", "registry key", "search", "é",
]  # fmt: skip


class Captured(BaseException):
    """What click handed the search command (raised past every handler)."""

    def __init__(self, obj: Context, values: dict[str, Any]) -> None:
        super().__init__()
        self.obj, self.values = obj, values


def clicks(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Context, dict[str, Any]]:
    def capture(obj: Context, values: dict[str, Any], here: bool) -> Any:
        raise Captured(obj, values)

    monkeypatch.setattr(search, "search_request", capture)
    with pytest.raises(Captured) as got:
        app.cli.main(argv, prog_name="fisk-ai", standalone_mode=False)
    return got.value.obj, got.value.values


def same(quick: tuple[Context, dict[str, Any]], clicked: tuple[Context, dict[str, Any]]) -> None:
    (qo, qv), (co, cv) = quick, clicked
    assert (qo.config, qo.store_dir, qo.as_json) == (co.config, co.store_dir, co.as_json)
    assert {k: v for k, v in qv.items() if k != "full"} == {
        k: v for k, v in cv.items() if k != "expand"
    }
    assert not cv["expand"]


@pytest.mark.parametrize(
    "argv",
    [
        ["knowledge", "search", "--json", "--top-k", "10", "remove a registry key"],
        ["--json", "rag", f"--store-dir={HERE}", "search", "q", "--top-k= 3 ", "--also", "a"],
        ["knowledge", "--config", "/nonexistent/agent.yaml", "search", "--also=", "q", "--json"],
        ["knowledge", "search", "q", "--json", "--path", "docs", "--tag", "#x", "--full"],
        ["knowledge", "search", "q", "--json", "--exclude", "a", "--exclude", "b"],
        ["knowledge", "search", "q", "--json", "--store-dir", "/nonexistent/a", "--store-dir", str(HERE)],
    ],
)  # fmt: skip
def test_the_quick_path_reads_what_click_reads(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = parse(argv)
    assert quick is not None
    same(quick, clicks(argv, monkeypatch))


@pytest.mark.parametrize(
    "argv",
    [
        ["knowledge", "search", "q"],  # text output: click's echo
        ["knowledge", "search", "--json", "q", "--expand"],
        ["knowledge", "search", "--json", "q", "--project", str(HERE)],
        ["knowledge", "search", "--json", "q", "--help"],
        ["knowledge", "search", "--json", "--", "-q"],
        ["knowledge", "search", "--json", "q", "--top-k", "x"],
        ["knowledge", "search", "--json", "q", "--store-dir", str(HERE / "test_quick.py")],
        ["knowledge", "search", "--json", "q", "--config", str(HERE)],
        ["knowledge", "search", "--json", "q", "--also"],
        ["knowledge", "search", "--json", "q", "--also", "-x"],
        ["knowledge", "search", "--json=1", "q"],
        ["knowledge", "show", "--json", "a.md#1"],
        ["--json", "search", "q"],
        ["knowledge", "--top-k", "3", "search", "--json", "q"],
        ["knowledge", "search", "--json", "q", "r"],
        ["knowledge", "search", "--json"],
    ],
)
def test_the_rest_is_left_to_click(argv: list[str]) -> None:
    assert parse(argv) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(TOKENS), max_size=8),
    st.sampled_from([["knowledge", "search"], ["rag", "search"], [], ["--json", "knowledge"]]),
)
def test_any_command_line_the_quick_path_takes_click_reads_the_same(
    tail: list[str], head: list[str]
) -> None:
    argv = [*head, *tail]
    quick = parse(argv)
    if quick is None:
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        try:
            clicked = clicks(argv, monkeypatch)
        except click.ClickException as exc:  # pragma: no cover - the property's failure
            pytest.fail(f"click refused what the quick path took: {argv}: {exc}")
    same(quick, clicked)


def test_the_tests_paths_are_what_they_claim() -> None:
    assert os.path.isdir(HERE) and os.path.isfile(HERE / "test_quick.py")
