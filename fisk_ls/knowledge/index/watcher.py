"""Keep an index fresh while files change: watchfiles events → coalesced, per-path updates.

A burst of events becomes one pass over just the changed paths (not a re-walk of the corpus).
The writer lock is taken only for a pass and shared politely: when another writer holds it the
pass waits and retries, and pending paths are kept, never dropped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import IndexLocked, KnowledgeError
from .runs import IndexStats
from .walk import is_document_name, skip_dir

MIN_DEBOUNCE = 0.1


@dataclass
class PendingChanges:
    """Paths waiting for the next pass; thread-safe."""

    _paths: set[Path] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, paths: Iterable[Path]) -> None:
        with self._lock:
            self._paths.update(paths)

    def take(self) -> set[Path]:
        with self._lock:
            paths, self._paths = self._paths, set()
            return paths

    def __len__(self) -> int:
        with self._lock:
            return len(self._paths)


def relevant(path: Path, roots: tuple[Path, ...], store_dir: Path) -> bool:
    """True for a change the index cares about: a document, or a folder (moves/deletes)."""
    s = str(path)
    store = str(store_dir)
    if s == store or s.startswith(store + os.sep):
        return False
    for root in roots:
        rs = str(root)
        if s == rs or s.startswith(rs + os.sep if not rs.endswith(os.sep) else rs):
            rel = path.relative_to(root).parts if s != rs else ()
            parent = root
            for part in rel[:-1]:
                parent = parent / part
                if skip_dir(part, str(parent), store):
                    return False
            name = path.name
            return is_document_name(name) or not os.path.splitext(name)[1]
    return False


def expand(paths: Iterable[Path]) -> set[Path]:
    """Folder paths (created, moved in) → the documents under them; files stay as they are.

    A folder that no longer exists stays as it is: updating it removes its documents.
    """
    out: set[Path] = set()
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if not skip_dir(d, os.path.join(dirpath, d), "")]
                out.update(Path(dirpath, f) for f in filenames if is_document_name(f))
        else:
            out.add(path)
    return out


def watch(
    roots: tuple[Path, ...],
    store_dir: Path,
    apply: Callable[[set[Path]], IndexStats],
    *,
    debounce: float = 2.0,
    stop: threading.Event | None = None,
    on_detect: Callable[[set[Path]], None] | None = None,
    on_index: Callable[[IndexStats | None, Exception | None], None] | None = None,
    on_warn: Callable[[str], None] | None = None,
    retry_delay: float = 1.0,
) -> None:
    """Watch ``roots`` until ``stop`` is set; each debounced batch of changes goes to ``apply``.

    ``apply`` runs under the writer lock (it raises IndexLocked when busy); on IndexLocked the
    batch is kept and retried after ``retry_delay``.
    """
    if debounce < MIN_DEBOUNCE:
        raise KnowledgeError(f"debounce must be at least {int(MIN_DEBOUNCE * 1000)}ms")
    import watchfiles

    stop = stop or threading.Event()
    pending = PendingChanges()
    existing = [str(r) for r in roots if r.exists()]
    if not existing:
        raise KnowledgeError("none of the knowledge paths exist: " + ", ".join(map(str, roots)))
    for r in roots:
        if not r.exists() and on_warn:
            on_warn(f"skipping missing path {r}")
    watch_dirs = sorted({r if os.path.isdir(r) else os.path.dirname(r) for r in existing})

    def flush() -> None:
        batch = pending.take()
        if not batch:
            return
        if on_detect:
            on_detect(batch)
        try:
            stats = apply(expand(batch))
        except IndexLocked:
            pending.add(batch)
            if on_warn:
                on_warn("another knowledge writer is running; will retry")
            stop.wait(retry_delay)
            return
        except KnowledgeError as exc:
            if on_index:
                on_index(None, exc)
            return
        if on_index:
            on_index(stats, None)

    for changes in watchfiles.watch(
        *watch_dirs,
        debounce=int(debounce * 1000),
        step=50,
        stop_event=stop,
        yield_on_timeout=True,
        rust_timeout=int(max(retry_delay, 0.2) * 1000),
        recursive=True,
    ):
        pending.add(
            p
            for _, raw in changes
            if relevant(p := Path(raw), tuple(map(Path, existing)), store_dir)
        )
        flush()
        if stop.is_set():
            break
