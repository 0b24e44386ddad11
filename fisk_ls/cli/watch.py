"""`fisk-ai knowledge watch`: an initial pass, then per-change updates until Ctrl-C."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..knowledge import IndexStats, index, update_paths
from ..knowledge.config import parse_duration
from ..knowledge.index.watcher import watch
from ..knowledge.location import absolute_roots
from . import render

if TYPE_CHECKING:
    from .app import Context


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


def run_watch(obj: Context, paths: tuple[Path, ...], debounce: str, no_initial: bool) -> None:
    seconds = parse_duration(debounce, "--debounce")
    settings = obj.settings()
    roots = absolute_roots([str(p) for p in paths]) if paths else settings.roots
    click.echo(render.tier(settings), err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if not no_initial:
        existing = tuple(r for r in roots if r.exists())
        stats = index(settings, existing or roots, wait=0.0)
        click.echo(render.index_summary(stats))

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
            lambda batch: update_paths(settings, batch),
            debounce=seconds,
            stop=stop,
            on_detect=detect,
            on_index=indexed,
            on_warn=warn,
        )
    click.echo("stopped watching")
