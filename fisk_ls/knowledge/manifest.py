"""The manifest: what ``rag_meta`` says about the live index (generation, format, vector space)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from . import schema
from .errors import FormatTooNew

if TYPE_CHECKING:
    import apsw


class Manifest(NamedTuple):
    """What ``rag_meta`` says about the live index."""

    format_version: int = schema.FORMAT_VERSION
    generation: int = 1
    model: str = ""
    dimension: int = 0
    normalized: bool = False
    query_prefix: str = ""
    document_prefix: str = ""

    @classmethod
    def from_rows(cls, rows: dict[str, str]) -> Manifest:
        def num(key: str, default: int) -> int:
            try:
                return int(rows.get(key, default))
            except ValueError:
                return default

        return cls(
            format_version=num("format_version", schema.FORMAT_VERSION),
            generation=num("generation", 1),
            model=rows.get("model", ""),
            dimension=num("dimension", 0),
            normalized=rows.get("normalized", "false") == "true",
            query_prefix=rows.get("query_prefix", ""),
            document_prefix=rows.get("document_prefix", ""),
        )

    def rows(self) -> dict[str, str]:
        return {
            "format_version": str(self.format_version),
            "generation": str(self.generation),
            "model": self.model,
            "dimension": str(self.dimension),
            "normalized": "true" if self.normalized else "false",
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
        }

    @property
    def hybrid(self) -> bool:
        return bool(self.model) and self.dimension > 0

    @property
    def tables(self) -> schema.Tables:
        return schema.names(self.generation, self.format_version)


def read_manifest(conn: apsw.Connection) -> Manifest | None:
    """The manifest, or None for a store with no manifest yet (not built)."""
    import apsw

    try:
        rows = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM rag_meta")}
    except apsw.SQLError:
        return None
    if not rows:
        return None
    manifest = Manifest.from_rows(rows)
    if manifest.format_version > schema.FORMAT_VERSION:
        raise FormatTooNew(
            f"the index was written by a newer fisk-ls (format {manifest.format_version}, this "
            f"one reads {schema.FORMAT_VERSION}); upgrade fisk-ls"
        )
    return manifest
