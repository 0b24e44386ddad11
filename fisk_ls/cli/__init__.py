"""The terminal front end, `fisk-ai`: its entry point (entry.py: a plain search on the quick
path, quick.py, the rest through click), commands (app.py), their output (render.py), and the
`knowledge watch` loop (watch.py)."""

from .entry import main

__all__ = ["main"]
