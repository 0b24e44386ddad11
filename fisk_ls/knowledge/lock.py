"""One writer per store across processes.

On Unix an advisory ``flock`` on ``knowledge.lock`` (released by the OS when the process dies);
on Windows an exclusive-create lock file. A second writer gets ``IndexLocked`` at once, or waits
up to ``wait`` seconds.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from types import TracebackType

from .errors import RESET_FIX, IndexLocked, StoreError
from .regular import NotRegular, open_regular

LOCK_NAME = "knowledge.lock"


class WriterLock:
    def __init__(self, store_dir: Path) -> None:
        self.path = store_dir / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait: float = 0.0) -> None:
        deadline = time.monotonic() + max(wait, 0.0)
        delay = 0.02
        while True:
            if self._try():
                return
            if time.monotonic() >= deadline:
                raise IndexLocked(
                    f"another writer (fisk-ai knowledge index/watch or the language server) is "
                    f"running on {self.path.parent}; wait for it or pass --wait"
                )
            time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 2, 0.25)

    def _try(self) -> bool:
        if os.name == "nt":  # pragma: no cover - exercised on Windows only
            try:
                self._fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            except FileExistsError:
                return False
            return True
        import fcntl

        try:
            fd = open_regular(self.path, follow=False, flags=os.O_CREAT | os.O_RDWR)
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.fchmod(fd, 0o600)
        self._fd = fd
        return True

    def is_locked_elsewhere(self) -> bool:
        """True when another process holds the lock (for doctor). Never blocks, never creates
        or writes anything: the lock file is opened read-only (so this works on read-only
        media) and probed with a shared non-blocking lock released at once."""
        if self.held:
            return False
        if os.name == "nt":  # pragma: no cover - the lock file exists only while held
            return self.path.exists()
        import fcntl

        try:
            fd = open_regular(self.path, follow=False)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing releases the probe
        return False

    def _unusable(self, exc: OSError) -> StoreError:
        odd = isinstance(exc, NotRegular) or exc.errno == errno.EISDIR
        fix = f"; remove it, or {RESET_FIX}" if odd else ""
        return StoreError(f"cannot open lock file {self.path}: {exc.strerror or exc}{fix}")

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if os.name == "nt":  # pragma: no cover
            os.close(fd)
            self.path.unlink(missing_ok=True)
            return
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
