"""The server's own file watcher (watchfiles), for changes no client reports.

Neovim on Linux sends no ``workspace/didChangeWatchedFiles``, and nobody reports a ``git
checkout`` or an agent writing files. Relevant paths (documents, and folders for moves and
deletes) go to the project's indexing queue, which coalesces them with the client's events.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..knowledge.index.watcher import relevant

log = logging.getLogger(__name__)

STEP_MS = 50
DEBOUNCE_MS = 400


class Watcher:
    def __init__(
        self,
        roots: tuple[Path, ...],
        store_dir: Path,
        on_change: Callable[[set[Path]], object],
    ) -> None:
        self.roots = tuple(r for r in roots if r.exists())
        self.store_dir = store_dir
        self.on_change = on_change
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fisk-watch", daemon=True)

    def start(self) -> None:
        if self.roots:
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        import watchfiles

        dirs = sorted({str(r if r.is_dir() else r.parent) for r in self.roots})
        try:
            for changes in watchfiles.watch(
                *dirs,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=self._stop,
                rust_timeout=500,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                paths = {p for _, raw in changes if self._relevant(p := Path(raw))}
                if paths:
                    self.on_change(paths)
        except Exception as exc:  # inotify limits, a root that vanished…
            if not self._stop.is_set():
                log.warning("file watcher stopped for %s: %s", ", ".join(dirs), exc)

    def _relevant(self, path: Path) -> bool:
        return relevant(Path(os.path.abspath(path)), self.roots, self.store_dir)
