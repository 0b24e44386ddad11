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

The pack is read once, in one transaction, and checked as it is read (unpack.py); a refusal
rolls the transaction back, so a refused pack leaves the local index as it was. The commit at
the end writes the full-text rows of every adopted chunk in one statement.
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
    from .runs import Indexer
    from .stats import IndexStats
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
    hash equals the file's (module docstring), in one transaction: the pack is read once and
    checked as it is read, and a refusal (``PackRefused``) rolls back every write, so nothing
    of the local index is lost. ``stats`` receives the walk's notes."""
    writer = indexer.writer
    live = VectorSpace.pinned(writer.manifest)
    key, why = vector_key(pack, embedder, provider, live)
    done = Adoption(notes=[why] if why else [])
    if pack.manifest.space is not None:
        pack.check_vectors()  # all of them, before the first write
    wanted = _matching(indexer, pack, roots, stats, done)
    if not wanted:
        for _ in pack.stream():  # nothing to take: still read whole (a refusal is loud)
            pass
        return done
    before = writer.manifest
    try:
        with writer.transaction():
            if key is not None and live is None and pack.manifest.space is not None:
                _pin(indexer, pack.manifest.space)  # its vectors go in with the chunks
            direct = key is not None and indexer.has_vectors
            if direct:
                writer.ensure_vec()
            tables = writer.manifest.tables
            for doc in pack.stream():
                found = wanted.get(doc.path)
                if found is None:
                    continue
                vectors = pack.vectors([c.hash for c in doc.chunks]) if key is not None else {}
                if vectors:
                    writer.conn.executemany(
                        "INSERT OR IGNORE INTO vector_cache(identity, hash, embedding)"
                        " VALUES (?, ?, ?)",
                        [(key, h, blob) for h, blob in vectors.items()],
                    )
                indexer.write(_prepared(doc, *found), tables, vectors if direct else None)
                done.documents += 1
                done.vectors += len(vectors)
    except BaseException:
        writer.manifest = before
        indexer.refresh_vectors()
        raise
    return done


def _matching(
    indexer: Indexer, pack: Pack, roots: Sequence[Path], stats: IndexStats, done: Adoption
) -> dict[str, tuple[Candidate, Existing | None]]:
    """The files under ``roots`` whose bytes hash as the pack's copy and that the local index
    does not already hold so (each read and hashed, never chunked); counts the others."""
    packed = pack.documents()
    existing = indexer.existing(indexer.writer.manifest.tables)
    wanted: dict[str, tuple[Candidate, Existing | None]] = {}
    for path, cand in indexer.collect(roots, stats):
        digest = packed.get(path)
        if digest is None:
            continue
        old = existing.get(path)
        if old is not None and (old.size, old.mtime_ns, old.inode) == (
            cand.size,
            cand.mtime_ns,
            cand.inode,
        ):
            if old.hash == digest:
                done.current += 1
            else:
                done.differ += 1
            continue
        read = read_document(cand.path, expected=cand)
        if isinstance(read, str):
            continue  # the run says why
        if hashlib.sha256(read[0]).hexdigest() != digest:
            done.differ += 1
        elif old is not None and old.hash == digest:
            done.current += 1
        else:
            wanted[path] = (cand, old)
    return wanted


def _pin(indexer: Indexer, space: VectorSpace) -> None:
    """Pin the pack's vector space on a lexical-only (or new) index and make its vector
    tables, as the probe would once it answered (the run's probe still checks the dimension)."""
    writer = indexer.writer
    generation = writer.manifest.generation
    writer.create_vec_table(generation, space.dimension)
    writer.set_manifest(space.manifest(generation))
    indexer.refresh_vectors()


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
