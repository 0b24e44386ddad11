"""`fisk-ai knowledge watch`: the core's update queue and watcher, with lines on the terminal."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import click

from ..knowledge import IndexStats, KnowledgeError, Settings
from ..knowledge.config import parse_duration
from ..knowledge.index.queue import QueueHooks, watch
from . import render


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


def _warn(message: str) -> None:
    click.echo(f"{_stamp()} {message}", err=True)


def _updated(paths: set[Path], stats: IndexStats) -> None:
    click.echo(f"{_stamp()} {len(paths)} change(s): {render.index_summary(stats)}")


def _failed(exc: KnowledgeError) -> None:
    click.echo(f"{_stamp()} reindex failed: {exc}", err=True)


def run_watch(
    settings: Settings, roots: tuple[Path, ...] | None, debounce: str, no_initial: bool
) -> None:
    seconds = parse_duration(debounce, "--debounce")
    click.echo(render.tier(settings), err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    hooks = QueueHooks(
        on_locked=lambda: _warn("another knowledge writer is running; will retry"),
        on_error=_failed,
        on_update=_updated,
    )
    watched = len(roots if roots is not None else settings.roots)
    click.echo(f"watching {watched} path(s), debounce {debounce}; press Ctrl-C to stop")
    watch(
        settings,
        roots,
        debounce=seconds,
        initial=not no_initial,
        stop=stop,
        hooks=hooks,
        on_initial=lambda stats: click.echo(render.index_summary(stats)),
        on_warn=_warn,
    )
    click.echo("stopped watching")
