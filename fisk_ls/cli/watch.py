"""`fisk-ai knowledge watch`: the project's update queue and watcher (``Project.watch``), with
lines on the terminal (``--json``: one JSON object per line)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..knowledge import (
    BackfillReporter,
    Coverage,
    IndexStats,
    KnowledgeError,
    Project,
    QueueHooks,
    parse_duration,
)
from . import render
from .options import emit_json
from .progress import EVERY, Every


def _stamp() -> str:
    return time.strftime("[%H:%M:%S]")


class Lines:
    """What watch prints: stamped text lines, or with ``--json`` one JSON object per line on
    stdout (``{"event": ...}``: watching, indexed, updated, ignore_changed, embedding,
    embedded, warning, error, stopped), so a script can follow it line by line."""

    def __init__(
        self, as_json: bool, root: Path = Path(), clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.as_json = as_json
        self.root = root
        """The project root ignore files are named relative to."""
        self.clock = clock
        """Times the embedding progress lines (``EmbedLines``)."""

    def event(self, name: str, text: str, *, err: bool = False, **fields: Any) -> None:
        self.emit(name, text, fields, err=err)

    def emit(self, name: str, text: str, fields: dict[str, Any], *, err: bool = False) -> None:
        if self.as_json:
            emit_json({"event": name, **fields})
        else:
            click.echo(text, err=err)

    def warn(self, message: str) -> None:
        self.event("warning", f"{_stamp()} {message}", err=True, message=message)

    def updated(self, paths: set[Path], stats: IndexStats) -> None:
        text = f"{_stamp()} {len(paths)} change(s): {render.index_summary(stats)}"
        self.emit("updated", text, {"changes": len(paths), **stats.as_dict()})

    def rules(self, files: list[Path], stats: IndexStats) -> None:
        """An ignore file changed and the full run it brought ended: say which files it took
        out of the index or put back (nothing was said: the run looked like silence)."""
        root = self.root
        names = [str(f.relative_to(root)) if f.is_relative_to(root) else str(f) for f in files]
        changed = ", ".join(dict.fromkeys(names))
        parts = [f"{stats.removed} file(s) now ignored, removed"] if stats.removed else []
        if stats.added:
            parts.append(f"{stats.added} file(s) no longer ignored, indexed")
        text = f"{_stamp()} {changed} changed: {'; '.join(parts) or 'no file added or removed'}"
        self.emit("ignore_changed", text, {**stats.as_dict(), "ignore_files": names})

    def failed(self, exc: KnowledgeError) -> None:
        self.event("error", f"{_stamp()} reindex failed: {exc}", err=True, message=str(exc))

    def reporter(self) -> BackfillReporter:
        return EmbedLines(self)


class EmbedLines(BackfillReporter):
    """Background embedding as a few lines on stdout (``--json``: the same events): when it
    starts, every ``EVERY`` seconds while it goes on, when it ends. The counts are those of the
    watched paths (``watch docs/``), not the whole store's."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.every = Every(lines.clock, EVERY, last=False)

    def begin(self, embedded: int, chunks: int) -> None:
        text = f"{_stamp()} embedding: {Coverage(embedded, chunks).describe()}"
        self.lines.event("embedding", text, embedded=embedded, chunks=chunks)

    def progress(self, embedded: int, chunks: int) -> None:
        if embedded >= chunks or self.every.due(embedded, chunks) is None:
            return  # the end says the last count
        text = f"{_stamp()} embedding: {Coverage(embedded, chunks).describe()}"
        self.lines.event("embedding", text, embedded=embedded, chunks=chunks)

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        tail = f" (paused: {error})" if error else ""
        text = f"{_stamp()} embedded: {Coverage(embedded, chunks).describe()}{tail}"
        self.lines.event(
            "embedded", text, embedded=embedded, chunks=chunks, error=str(error) if error else None
        )


def run_watch(
    project: Project,
    roots: tuple[Path, ...] | None,
    debounce: str,
    no_initial: bool,
    as_json: bool = False,
) -> None:
    settings = project.settings
    seconds = parse_duration(debounce, "--debounce")
    lines = Lines(as_json, settings.project_root)
    tier = render.tier(settings)
    if not as_json:
        click.echo(tier, err=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    hooks = QueueHooks(
        embed_reporter=lines.reporter,
        on_locked=lambda: lines.warn("another knowledge writer is running; will retry"),
        on_error=lines.failed,
        on_update=lines.updated,
        on_rules=lines.rules,
    )
    watched = len(roots if roots is not None else settings.roots)
    lines.event(
        "watching",
        f"watching {watched} path(s), debounce {debounce}; press Ctrl-C to stop",
        paths=watched,
        debounce=seconds,
        tier=tier,
        store=str(settings.store_dir),
    )
    # Files are searchable at once; vectors follow in the background (the queue's backfill).
    project.watch(
        roots,
        debounce=seconds,
        initial=not no_initial,
        stop=stop,
        hooks=hooks,
        on_initial=lambda stats: lines.emit(
            "indexed", render.index_summary(stats), stats.as_dict()
        ),
        on_warn=lines.warn,
        progress=render.download_progress(),
    )
    lines.event("stopped", "stopped watching")
