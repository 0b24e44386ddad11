"""The terminal front end, `fisk-ai`: commands (app.py), their output (render.py), and the
`knowledge watch` loop (watch.py)."""

from .app import main

__all__ = ["main"]
