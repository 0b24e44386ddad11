"""`fisk-ai knowledge watch`: an initial pass, then per-change updates until Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..knowledge import IndexStats, KnowledgeError, index, update_paths
from ..knowledge.config import parse_duration
from ..knowledge.index.backfill import Backfill, BackfillReporter
from ..knowledge.index.watcher import watch
from ..knowledge.location import absolute_roots
from ..knowledge.vectors.backlog import Coverage
from ..knowledge.vectors.providers import make_embedder
from . import render

if TYPE_CHECKING:
    from ..knowledge import Settings
    from ..knowledge.vectors.tier import DocumentEmbedder
    from .app import Context


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


class EmbedLines(BackfillReporter):
    """Background embedding as a few lines on stdout."""

    def begin(self, embedded: int, chunks: int) -> None:
        click.echo(f"{_stamp()} embedding: {Coverage(embedded, chunks).describe()}")

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        tail = f" (paused: {error})" if error else ""
        click.echo(f"{_stamp()} embedded: {Coverage(embedded, chunks).describe()}{tail}")


def run_watch(obj: Context, paths: tuple[Path, ...], debounce: str, no_initial: bool) -> None:
    seconds = parse_duration(debounce, "--debounce")
    settings = obj.settings()
    roots = absolute_roots([str(p) for p in paths]) if paths else settings.roots
    click.echo(render.tier(settings))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    embedder = make_embedder(settings, progress=render.download_progress())
    backfill = None
    if embedder is not None:  # files are searchable at once; vectors follow in the background
        backfill = Backfill(
            settings,
            embedder,
            reporter=EmbedLines,
            on_error=lambda exc: click.echo(f"{_stamp()} embedding paused: {exc}", err=True),
        )
        backfill.start()
    try:
        _watch(settings, roots, seconds, debounce, no_initial, stop, embedder, backfill)
    finally:
        if backfill is not None:
            backfill.stop()
        if embedder is not None:
            embedder.close()


def _watch(
    settings: Settings,
    roots: tuple[Path, ...],
    seconds: float,
    debounce: str,
    no_initial: bool,
    stop: threading.Event,
    embedder: DocumentEmbedder | None,
    backfill: Backfill | None,
) -> None:
    def kick() -> None:
        if backfill is not None:
            backfill.kick()

    if not no_initial:
        existing = tuple(r for r in roots if r.exists())
        stats = index(settings, existing or roots, wait=0.0, embedder=embedder, drain=False)
        click.echo(render.index_summary(stats))
        kick()

    def apply(batch: set[Path]) -> IndexStats:
        stats = update_paths(settings, batch, embedder=embedder, drain=False)
        kick()
        return stats

    def detect(batch: set[Path]) -> None:
        click.echo(f"{_stamp()} {len(batch)} change(s)")

    def indexed(stats: IndexStats | None, err: Exception | None) -> None:
        if err is not None:
            click.echo(f"{_stamp()} reindex failed: {err}", err=True)
        elif stats is not None:
            click.echo(f"{_stamp()} {render.index_summary(stats)}")

    def warn(message: str) -> None:
        click.echo(f"{_stamp()} {message}", err=True)

    click.echo(f"watching {len(roots)} path(s), debounce {debounce}; press Ctrl-C to stop")
    with contextlib.suppress(KeyboardInterrupt):
        watch(
            tuple(roots),
            settings.store_dir,
            apply,
            debounce=seconds,
            stop=stop,
            on_detect=detect,
            on_index=indexed,
            on_warn=warn,
        )
    click.echo("stopped watching")
