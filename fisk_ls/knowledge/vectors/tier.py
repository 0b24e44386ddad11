"""The vector tier at index time: vector space, the vector cache, embedding, vec0 rows.

* The pinned vector space (model, probed dimension, prefixes, normalised) must match the
  configuration; otherwise a run fails loud and names ``--reindex``. A lexical-only index gains
  vectors in place. A lexical configuration never writes into a hybrid index (that would
  silently downgrade it).
* Nothing waits on the embeddings server before the files are written: the dimension probe
  runs on a thread beside the lexical write (:meth:`VectorTier.start`) and is joined after it
  (:meth:`VectorTier.settle`, where a dimension change or a failed probe is raised, the files
  already written). An index that holds vectors knows its vector space before the probe answers,
  so its cached vectors are used during the write.
* Vectors are cached by (vector space, chunk content hash): saving a file where one paragraph
  changed embeds about one chunk, and ``--reindex`` with the same model embeds nothing.
* Embedding happens outside any write transaction; the caller commits before calling
  ``compute`` and then stores the vectors, their cache rows and the chunks' ``embedded`` flags
  in one transaction (backlog.py).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from .. import schema
from ..errors import EmbeddingsError
from ..manifest import Manifest
from ..schema import Tables
from . import knn
from .pack import pack
from .space import (
    VectorSpace,
    dimension_error,
    refuse_lexical_over_hybrid,
    require_match,
    require_unit,
    verifier,
)

__all__ = ["DocumentEmbedder", "VectorTier", "refuse_lexical_over_hybrid"]

if TYPE_CHECKING:
    import apsw

    from ..writer import Writer


class DocumentEmbedder(Protocol):
    """An embeddings provider at index time. ``embed_documents`` returns unit vectors (the
    provider normalises; see space.py), one per text, in order."""

    model: str
    query_prefix: str
    document_prefix: str

    def probe_dimension(self) -> int: ...

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]: ...


class VectorTier:
    def __init__(self, writer: Writer, embedder: DocumentEmbedder) -> None:
        self.writer = writer
        self.embedder = embedder
        self.target = Manifest()
        self.key = ""
        self.embedded = 0
        self._generation = 0
        self._rebuild = False
        self._probe: list[int | BaseException] = []
        self._thread: threading.Thread | None = None

    @classmethod
    def for_live(cls, writer: Writer, embedder: DocumentEmbedder) -> VectorTier:
        """A tier over the live generation's pinned vector space, without probing (the caller has
        checked that the embedder's vector space matches it)."""
        tier = cls(writer, embedder)
        tier.target = writer.manifest
        pinned = VectorSpace.pinned(writer.manifest)
        tier.key = pinned.cache_key() if pinned is not None else ""
        return tier

    @property
    def settled(self) -> bool:
        """The vector space (and so the cache key) is known: cached vectors can be looked up."""
        return bool(self.key)

    def start(self, *, rebuild: bool, generation: int) -> None:
        """Check the vector space against the live index (loud on a model switch) and, when the
        dimension is not known yet, start probing it on a thread beside the lexical write."""
        live = self.writer.manifest
        self._generation = generation
        self._rebuild = rebuild
        if not rebuild:
            try:
                require_match(
                    live, VectorSpace.of_provider(self.embedder), verify=verifier(self.embedder)
                )
            except EmbeddingsError as exc:  # a model that does not load: a fault, raised by
                self._probe.append(exc)  # settle() once the files are written
                return
        if not rebuild and live.hybrid:  # the index knows its vector space before the probe
            self.writer.ensure_vec()
            self.target = live
            self.key = VectorSpace.of_provider(self.embedder, live.dimension).cache_key()
        self._thread = threading.Thread(
            target=self._run_probe, name="fisk-embed-probe", daemon=True
        )
        self._thread.start()

    def _run_probe(self) -> None:
        try:
            self._probe.append(self.embedder.probe_dimension())
        except BaseException as exc:  # re-raised on the index run's thread by settle()
            self._probe.append(exc)

    def settle(self) -> Manifest:
        """After the lexical write: join the probe (its failure is raised here, the files stay
        written), pin the vector space and create the generation's vector tables. A lexical-only
        live index becomes hybrid in place, every chunk in the backlog."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if not self._probe:
            return self.target
        outcome = self._probe.pop()
        if isinstance(outcome, BaseException):
            raise outcome
        wanted = VectorSpace.of_provider(self.embedder, outcome)
        if self.settled:  # the live index's own vector space: the dimension must still fit
            require_match(self.target, wanted)
            return self.target
        target = wanted.manifest(self._generation)
        self.writer.create_vec_table(self._generation, outcome)
        if not self._rebuild:
            self.writer.set_manifest(target)
        self.target, self.key = target, wanted.cache_key()
        return target

    def compute(self, items: Sequence[tuple[str, str, str]]) -> dict[str, bytes]:
        """Vectors (packed float32) for (chunk hash, embedding text, title) items, by hash:
        cached ones reused, misses from the embedder. Writes nothing: the caller stores the
        vectors and calls ``remember`` in one transaction. Runs outside any transaction (slow)."""
        found = self.cached(list(dict.fromkeys(h for h, _, _ in items)))
        found.update(self.embed_missing([item for item in items if item[0] not in found]))
        return found

    def embed_missing(self, items: Sequence[tuple[str, str, str]]) -> dict[str, bytes]:
        """Vectors from the embedder for (hash, text, title) items; touches no database."""
        wanted = {h: (text, title) for h, text, title in items}
        found: dict[str, bytes] = {}
        missing = list(wanted)
        if missing:
            texts = [wanted[h][0] for h in missing]
            titles = [wanted[h][1] for h in missing]
            vectors = self.embedder.embed_documents(texts, titles)
            if len(vectors) != len(missing):
                raise EmbeddingsError(
                    "invalid_response", f"asked for {len(missing)} vectors, got {len(vectors)}"
                )
            for h, vec in zip(missing, vectors, strict=True):
                if len(vec) != self.target.dimension:
                    raise dimension_error(len(vec), self.target.dimension)
                require_unit(vec, "a document vector")
                found[h] = pack(vec)
            self.embedded += len(missing)
        return found

    def cached(self, hashes: list[str]) -> dict[str, bytes]:
        """Cached vectors of these chunk hashes under this vector space."""
        out: dict[str, bytes] = {}
        conn = self.writer.conn
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            marks = ",".join("?" * len(part))
            for h, blob in conn.execute(
                "SELECT hash, embedding FROM vector_cache"
                f" WHERE identity = ? AND hash IN ({marks})",
                (self.key, *part),
            ):
                out[str(h)] = bytes(blob)
        return out

    def remember(self, conn: apsw.Connection, vectors: dict[str, bytes]) -> None:
        """Cache rows for ``vectors`` (inside the caller's transaction)."""
        conn.executemany(
            "INSERT OR IGNORE INTO vector_cache(identity, hash, embedding) VALUES (?, ?, ?)",
            [(self.key, h, blob) for h, blob in vectors.items()],
        )

    def prune(self, tables: Tables) -> None:
        """Drop cached vectors no live chunk uses (other vector spaces, deleted text)."""
        with self.writer.transaction() as conn:
            conn.execute("DELETE FROM vector_cache WHERE identity != ?", (self.key,))
            conn.execute(
                f"DELETE FROM vector_cache WHERE hash NOT IN (SELECT hash FROM {tables.chunks})"
            )


def delete_vectors(conn: apsw.Connection, tables: Tables, doc_id: int) -> None:
    knn.delete_document(conn, tables, doc_id)
    conn.execute(
        f"DELETE FROM {tables.vec} WHERE chunk_id IN "
        f"(SELECT id FROM {tables.chunks} WHERE document_id = ?)",
        (doc_id,),
    )


def has_vec_table(conn: apsw.Connection, generation: int) -> bool:
    name = schema.names(generation).vec
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name = ?", (name,)
    ).fetchone()
    return row is not None
