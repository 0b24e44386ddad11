"""Adopting a knowledge pack (pack.py) before an index run: what the pack already holds is
taken from it instead of being chunked and embedded again.

For each file the run would walk that the pack has, the file's bytes are read and hashed (no
chunking); when the hash equals the pack's, the document is written from the pack's chunks,
stamped with the file's size, mtime and inode, so the index run that follows finds it unchanged.
The pack's vectors go into the vector cache under the local vector space's key when the two
vector spaces (provider, model, dimension, prefixes) are the same exactly, so the run's backlog
takes them from there: no embedding call for them. Otherwise the pack's lexical part is still
used and one note says why its vectors were not. What differs or is missing is then indexed by
the run as usual, and what the pack has that the disk does not is never written (the run's
reconciling removes such a document from an older local index).

The pack was checked whole (``Pack.check``) before the first write; every value read here is
checked again as it is read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import schema
from ..vectors.space import VectorSpace, differences
from .examine import ChunkRow, Existing, Prepared
from .files import read_document

if TYPE_CHECKING:
    from ..pack import PackDocument
    from ..unpack import Pack
    from ..vectors.tier import DocumentEmbedder
    from .runs import Indexer, IndexStats
    from .walk import Candidate


@dataclass
class Adoption:
    """What an adoption took from a pack."""

    documents: int = 0
    """Documents written from the pack (their hash equals the file's)."""
    current: int = 0
    """Documents the local index already held as the pack has them."""
    differ: int = 0
    """Files the pack has with other content: indexed by the run."""
    vectors: int = 0
    """Vectors taken from the pack."""
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "documents": self.documents,
            "current": self.current,
            "differ": self.differ,
            "vectors": self.vectors,
        }


def vector_key(
    pack: Pack, embedder: DocumentEmbedder | None, provider: str, live: VectorSpace | None
) -> tuple[str | None, str | None]:
    """(the vector cache key the pack's vectors go under, None when they are not used; the one
    line saying why not)."""
    space = pack.manifest.space
    if space is None:
        return None, None
    why = "the pack's vectors were not used"
    if embedder is None:
        return None, f"{why}: no embeddings are configured here (the index stays lexical-only)"
    wanted = VectorSpace.of_provider(embedder, space.dimension)
    wrong = []
    if pack.manifest.provider != provider:
        wrong.append(f"provider {pack.manifest.provider!r} (configured {provider!r})")
    wrong.extend(differences(space, wanted))
    if live is not None and live.dimension != space.dimension:
        wrong.append(f"dim {space.dimension} (the local index holds {live.dimension})")
    if wrong:
        return None, f"{why}: the pack was built with {', '.join(wrong)}; they are embedded here"
    return wanted.cache_key(), None


def adopt(
    indexer: Indexer,
    pack: Pack,
    roots: Sequence[Path],
    stats: IndexStats,
    *,
    embedder: DocumentEmbedder | None,
    provider: str,
) -> Adoption:
    """Write into the live generation every document of ``pack`` under ``roots`` whose content
    hash equals the file's (module docstring). ``stats`` receives the walk's notes."""
    writer = indexer.writer
    tables = writer.manifest.tables
    live = VectorSpace.pinned(writer.manifest)
    key, why = vector_key(pack, embedder, provider, live)
    done = Adoption()
    if why:
        done.notes.append(why)
    direct = key is not None and live is not None and indexer.has_vectors
    if direct:
        writer.ensure_vec()
    packed = {path: (doc_id, digest) for doc_id, path, digest in pack.documents()}
    existing = indexer.existing(tables)
    with writer.batch() as batch:
        for path, cand in indexer.collect(roots, stats):
            found = packed.get(path)
            if found is None:
                continue
            old = existing.get(path)
            if old is not None and (old.size, old.mtime_ns, old.inode) == (
                cand.size,
                cand.mtime_ns,
                cand.inode,
            ):
                if old.hash == found[1]:
                    done.current += 1
                else:
                    done.differ += 1
                continue
            read = read_document(cand.path, expected=cand)
            if isinstance(read, str):
                continue  # the run says why
            if hashlib.sha256(read[0]).hexdigest() != found[1]:
                done.differ += 1
                continue
            if old is not None and old.hash == found[1]:
                done.current += 1
                continue
            doc = pack.document(found[0])
            batch.tick()
            vectors = pack.vectors([c.hash for c in doc.chunks]) if key is not None else {}
            if vectors:
                writer.conn.executemany(
                    "INSERT OR IGNORE INTO vector_cache(identity, hash, embedding)"
                    " VALUES (?, ?, ?)",
                    [(key, h, blob) for h, blob in vectors.items()],
                )
            indexer.write(_prepared(doc, cand, old), tables, vectors if direct else None)
            done.documents += 1
            done.vectors += len(vectors)
    return done


def _prepared(doc: PackDocument, cand: Candidate, old: Existing | None) -> Prepared:
    """The pack's document as the index run's writer takes a chunked file."""
    rows = [
        ChunkRow(
            c.ordinal,
            c.section,
            c.body,
            c.cjk,
            c.start_line,
            c.end_line,
            c.hash,
            c.near,
            schema.body_key(c.body),
        )
        for c in doc.chunks
    ]
    return Prepared(doc.path, cand, doc.hash, doc.title, old, rows, doc.doc, doc.tags)
