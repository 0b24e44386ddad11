"""The ``fisk-ai`` entry point: a plain ``knowledge search --json`` runs on the quick path
(quick.py, no click); every other command line runs through click (app.py)."""

from __future__ import annotations

import atexit
import gc
import sys


def main(args: list[str] | None = None) -> None:
    """Run the command line ``args`` (None: sys.argv's) and exit with its code.

    Run as the program (``args`` None), the process ends with the command: its objects are
    frozen (``gc.freeze``) after the other exit handlers ran, so the interpreter's collections
    at exit skip them. Those walk every object of every module imported (about a tenth of a
    search's time) for memory the operating system takes back anyway; the commands close
    their stores, files and workers themselves. A plain search (the quick path) runs with the
    collector off: its young-generation collections while the modules load find nothing to
    free, and the process ends after one search. Every other command (click's) turns it back
    on, since it may index or watch for as long as it is left running."""
    if args is None:
        atexit.register(gc.freeze)  # runs after every other exit handler (they run last-in first)
        gc.disable()
    argv = list(sys.argv[1:] if args is None else args)
    from .quick import search

    if search(argv):
        sys.exit(0)
    if args is None:
        gc.enable()
    from .app import run

    run(argv)
