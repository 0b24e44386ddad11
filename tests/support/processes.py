"""Processes found by what their environment holds (a server and every child it forked)."""

from __future__ import annotations

import os
from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """Pids whose environment mentions ``marker`` (the server and any child it forked)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
