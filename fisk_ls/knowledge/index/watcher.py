"""File-system events → the paths the index cares about (documents, and folders for moves and
deletes), handed to the update queue (queue.py), which coalesces them and keeps the lock polite.

Neovim on Linux sends no ``workspace/didChangeWatchedFiles``, and nobody reports a ``git
checkout`` or an agent writing files, so the language server runs this watcher too.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from .walk import is_document_name, skip_dir

log = logging.getLogger(__name__)


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


STEP_MS = 50
DEBOUNCE_MS = 50
"""watchfiles' own grouping; the update queue does the real coalescing."""


class Watcher:
    """A watchfiles thread over the roots that hands relevant changed paths to ``on_change``
    (the update queue's ``add``). Used by the language server and ``fisk-ai knowledge watch``."""

    def __init__(
        self,
        roots: tuple[Path, ...],
        store_dir: Path,
        on_change: Callable[[set[Path]], object],
        *,
        ignored: Callable[[Path], bool] = lambda path: False,
        sources: Callable[[Path], bool] = lambda path: False,
        on_warn: Callable[[str], None] | None = None,
    ) -> None:
        """``ignored``: the project's ignore rules (``knowledge.ignore_rules``): changes to
        ignored paths never reach the queue. ``sources``: the files those rules come from
        (``IgnoreRules.is_source``): their changes always do (``.git/info/exclude`` too)."""
        # Resolved, as the index run resolves them: events then name the paths the index keys.
        self.roots = tuple(Path(os.path.realpath(r)) for r in roots if r.exists())
        self.store_dir = store_dir
        self.on_change = on_change
        self.ignored = ignored
        self.sources = sources
        self.on_warn = on_warn
        self.ready = threading.Event()
        """Set once the OS watches are in place (or the watcher gave up)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fisk-watch", daemon=True)

    def start(self) -> None:
        if self.roots:
            self._thread.start()
        else:
            self.ready.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        import watchfiles

        dirs = sorted({str(r if r.is_dir() else r.parent) for r in self.roots})
        default = watchfiles.DefaultFilter()

        def keep(change: watchfiles.Change, raw: str) -> bool:
            # watchfiles' default filter drops everything under .git, info/exclude included.
            return default(change, raw) or self.sources(Path(os.path.abspath(raw)))

        try:
            for changes in watchfiles.watch(
                *dirs,
                watch_filter=keep,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=self._stop,
                rust_timeout=200,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                self.ready.set()
                paths = {
                    p
                    for _, raw in changes
                    if self.sources(p := Path(os.path.abspath(raw)))
                    or (relevant(p, self.roots, self.store_dir) and not self.ignored(p))
                }
                if paths:
                    self.on_change(paths)
        except Exception as exc:  # inotify limits, a root that vanished…
            if not self._stop.is_set():
                log.warning("file watcher stopped for %s: %s", ", ".join(dirs), exc)
                if self.on_warn:
                    self.on_warn(f"file watcher stopped: {exc}")
        finally:
            self.ready.set()
