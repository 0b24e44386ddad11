"""What an index run reports: its progress as it goes (``IndexReporter``, which front ends
subclass) and its counts at the end (``IndexStats``)."""

from __future__ import annotations

from dataclasses import dataclass, field


class IndexReporter:
    """Progress callbacks; the default does nothing. Adapters subclass it."""

    def on_plan(self, files: int) -> None:
        """The walk is done: ``files`` candidate files will be looked at."""

    def on_file(self, done: int, key: str) -> None:
        """One more file was handled (indexed or skipped)."""

    def on_note(self, message: str) -> None:
        """Something was skipped or could not be read; the run goes on."""

    def on_embed(self, done: int, total: int) -> None:
        """``done`` of the ``total`` chunks of the backlog were embedded so far."""


@dataclass
class IndexStats:
    files: int = 0
    added: int = 0
    updated: int = 0
    skipped: int = 0
    removed: int = 0
    chunks: int = 0
    embeddings: int = 0
    backlog: int = 0
    """Chunks still without a vector when the run ended (``drain=False``)."""
    first_build: bool = False
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)
    adopted: dict[str, object] | None = None
    """What was taken from a knowledge pack (index/adopt.py); None when none was used."""

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "added": self.added,
            "updated": self.updated,
            "skipped": self.skipped,
            "removed": self.removed,
            "chunks": self.chunks,
            "embeddings": self.embeddings,
            "backlog": self.backlog,
            "first_build": self.first_build,
            "dry_run": self.dry_run,
            "notes": list(self.notes),
            "adopted": self.adopted,
        }
