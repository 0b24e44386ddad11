"""Shared fixtures: a temporary project with docs, settings whose store lives in tmp."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import Settings, resolve_settings
from fisk_ls.knowledge.languages import LOCALE_VARIABLES

pytest_plugins = ["tests.support.embed_fixtures", "tests.support.git_repo"]

REPO = Path(__file__).resolve().parents[1]


def _corpora() -> Path:
    """$FISK_CORPORA, else the nearest ``shared/corpora`` beside the repo or above it (a git
    worktree elsewhere still finds the shared corpora)."""
    if env := os.environ.get("FISK_CORPORA"):
        return Path(env)
    for up in REPO.parents:
        if (up / "shared" / "corpora").is_dir():
            return up / "shared" / "corpora"
    return REPO.parent / "shared" / "corpora"


CORPORA = _corpora()

DOCS = {
    "docs/design.md": """\
        # Design

        ## Backpressure

        When the queue is full, producers block until consumers catch up. This is how
        backpressure works in the C client.

        ## Retries

        Retries use exponential backoff with jitter, capped at thirty seconds.
        """,
    "docs/ops/runbook.md": """\
        ---
        title: Runbook
        ---

        ## Restarting the broker

        Drain the node first, then restart the service and watch the logs.
        """,
    "notes.txt": "Plain text notes about cats, dogs and other pets.\n",
}


def write_docs(root: Path, docs: dict[str, str] | None = None) -> None:
    for rel, text in (docs or DOCS).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write_docs(root)
    return root


@pytest.fixture
def store_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "stores"
    monkeypatch.setenv("FISK_AI_STORE_DIR", str(base))
    return base


@pytest.fixture
def settings(project: Path, store_base: Path) -> Settings:
    return resolve_settings(cwd=project, store_base=store_base)


# Folders whose every test runs real processes (the CLI, the MCP server, a real model) or breaks
# them on purpose: slow, like the tests marked so and those that read the shared corpora. The
# fast subset (`pytest -m "not slow"`, tests/README.md) leaves them all out.
SLOW_FOLDERS = {("cli",), ("agent", "mcp"), ("reliability",), ("integration",)}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        parts = item.path.relative_to(here).parts if here in item.path.parents else ()
        if any(parts[: len(f)] == f for f in SLOW_FOLDERS) or item.get_closest_marker("corpus"):
            item.add_marker(pytest.mark.slow)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("corpus") and not CORPORA.is_dir():
        pytest.skip(f"shared corpora not found at {CORPORA} (set FISK_CORPORA to their folder)")


@pytest.fixture
def corpora(request: pytest.FixtureRequest) -> Path:
    """The shared corpora folder, for tests marked ``corpus`` (skipped when it is absent)."""
    if not request.node.get_closest_marker("corpus"):
        pytest.fail("a test that reads the shared corpora is marked @pytest.mark.corpus")
    return CORPORA


@pytest.fixture(autouse=True)
def _no_user_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Never write into the real user cache directory from tests."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    if "FISK_AI_STORE_DIR" in os.environ and not os.environ["FISK_AI_STORE_DIR"]:
        monkeypatch.delenv("FISK_AI_STORE_DIR")
    # A search whose words name no language takes the locale's (the reader's): tests run in a
    # neutral one unless they set their own, whatever the machine's.
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    yield
