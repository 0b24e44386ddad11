"""Index runs: walk, detect changes, chunk, write, (embed the backlog).

* A file whose size, mtime and inode are unchanged is skipped without being read; one whose
  bytes hash the same is only re-stamped.
* Each file is written atomically (a savepoint for its document row and chunks, inside a batch
  that commits every 0.25 s; the batch's full-text rows are written in one statement just
  before each commit, writer.py), so a crash or Ctrl-C leaves every document either old or new.
* Reconciling removes only documents under the roots that were walked.
* One unreadable, oversized, binary or non-UTF-8 file is skipped with a note; the run goes on.
* ``rebuild`` (``--reindex``) fills a new generation and switches over at the end (writer.py).
* With vectors, a file is written as soon as it is chunked (lexically searchable at once); its
  chunks get their cached vectors in the same transaction and the rest wait in the backlog
  (vectors/backlog.py), which ``drain`` embeds after the files (``drain=False`` leaves it to a
  background worker, backfill.py). A rebuild of a hybrid index embeds its backlog before the
  switch, so readers never see fewer vectors than before; a rebuild of a lexical index switches
  first (readers gain lexical results at once, vectors as they come).

Reading is in files.py, the worker side in examine.py, a document's rows in rows.py and what a
run reports in stats.py.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import schema
from ..errors import Cancelled, KnowledgeError
from ..location import document_key, inside_root, key_prefix, resolved_parent
from ..manifest import Manifest
from ..schema import Tables
from ..vectors.backlog import coverage, incomplete, pending, store
from ..vectors.tier import (
    DocumentEmbedder,
    VectorTier,
    refuse_lexical_over_hybrid,
)
from .examine import PARALLEL_MIN_FILES, Existing, Job, Outcome, Prepared, Workers, examine_all
from .ignore import IgnoreRules
from .rows import delete_document, write_document
from .stats import IndexReporter, IndexStats
from .walk import (
    Candidate,
    in_skipped_dir,
    is_document_name,
    unprintable_name,
    walk,
)

if TYPE_CHECKING:
    from ..writer import Writer


EMBED_GROUP = 192
"""Backlog chunks per embedding round: one commit per round (3 requests of 64 to a server)."""

FIRST_BUILD_BATCH = (4096, 2.0)
"""Files and seconds per commit when the generation being written was empty (a new store, or a
rebuild, which readers do not see before the switch); other runs commit every 256 files or
0.25 s (writer.py). Each commit writes a full-text segment and every page its rows touched
again (bench/tuning.md, "Cold index")."""


def _under(key: str, walked: list[str]) -> bool:
    """True when ``key`` is one of the walked files or below one of the walked folders."""
    return any(key == w or ((w.endswith("/") or not w) and key.startswith(w)) for w in walked)


class Indexer:
    """One index run's worth of state over a Writer."""

    def __init__(
        self,
        writer: Writer,
        project_root: Path,
        *,
        reporter: IndexReporter | None = None,
        cancel: threading.Event | None = None,
        embedder: DocumentEmbedder | None = None,
        ignore: IgnoreRules | None = None,
    ) -> None:
        self.writer = writer
        self.root = project_root
        self.ignore = ignore
        self.reporter = reporter or IndexReporter()
        self.cancel = cancel
        self.embedder = embedder
        self._has_vec = writer.has_vec_table(writer.manifest.generation)

    @property
    def has_vectors(self) -> bool:
        """The live generation has its vector table (vectors can be stored with the chunks)."""
        return self._has_vec

    def refresh_vectors(self) -> None:
        """Look again whether the live generation has its vector table (after a pin)."""
        self._has_vec = self.writer.has_vec_table(self.writer.manifest.generation)

    # -- public entry points -----------------------------------------------------------------

    def run(
        self,
        roots: Sequence[Path],
        *,
        reconcile: bool = True,
        rebuild: bool = False,
        dry_run: bool = False,
        drain: bool = True,
    ) -> IndexStats:
        """Index ``roots`` (folders or files below the project root); with ``drain``, return only
        once every chunk has its vector (an embedder failure raises, the files stay written).
        Each root is resolved and must stay inside the project root (a symlinked root too)."""
        roots = [inside_root(r, self.root) for r in roots]
        keys = [
            key_prefix(r, self.root) if r.is_dir() else document_key(r, self.root) for r in roots
        ]
        stats = IndexStats(dry_run=dry_run)
        existing = {} if rebuild else self.existing(self.writer.manifest.tables)
        stats.first_build = rebuild or not existing
        with Workers() as workers:
            # A first build chunks every file it finds: its worker starts during the walk.
            candidates = self.collect(roots, stats, workers if stats.first_build else None)
            generation = self.writer.manifest.generation
            tables = self.writer.manifest.tables
            if rebuild and not dry_run:
                generation = self.writer.begin_rebuild()
                tables = schema.names(generation)
            vectors: VectorTier | None = None
            try:
                if not dry_run:
                    vectors = self._vector_tier(rebuild, generation)
                self.reporter.on_plan(len(candidates))
                with (
                    self.writer.text_index_after(generation)
                    if stats.first_build and not dry_run
                    else contextlib.nullcontext()
                ):
                    self._process(
                        self._examined(candidates, existing, workers),
                        tables,
                        stats,
                        dry_run,
                        vectors,
                        first_build=stats.first_build,
                    )
                workers.close()  # every file is written: the worker's memory goes back now
                if reconcile and not rebuild:
                    seen = {key for key, _ in candidates}
                    walked = [k for k, r in zip(keys, roots, strict=True) if r.exists()]
                    stale = [k for k in existing if k not in seen and _under(k, walked)]
                    if not dry_run:
                        self._delete(stale, tables)
                    stats.removed += len(stale)
                self._settle(vectors, generation)
                if rebuild and vectors is not None and self.writer.manifest.hybrid:
                    self._drain(vectors, tables)  # before the switch: never fewer vectors than now
            except BaseException:
                if rebuild and not dry_run:
                    self.writer.abandon_rebuild(generation)
                raise
        if rebuild and not dry_run:
            self.writer.finish_rebuild(generation, vectors.target if vectors else Manifest())
        elif (stats.removed or stats.updated or stats.first_build) and not dry_run:
            self.writer.vacuum()
        self._finish(vectors, stats, drain)
        if vectors is not None and (rebuild or stats.removed or stats.updated):
            vectors.prune(self.writer.manifest.tables)
        return stats

    @staticmethod
    def _examined(
        candidates: list[tuple[str, Candidate]],
        existing: dict[str, Existing],
        workers: Workers,
    ) -> Iterator[Outcome]:
        """Outcomes of every candidate. Files whose size, mtime and inode match are settled here,
        without a read; only the others go to ``examine_all`` (so a run where nothing changed
        starts no worker process)."""
        changed: list[Job] = []
        for key, cand in candidates:
            old = existing.get(key)
            if old is not None and (old.size, old.mtime_ns, old.inode) == (
                cand.size,
                cand.mtime_ns,
                cand.inode,
            ):
                yield Outcome(key, cand, old, "unchanged")
            else:
                changed.append((key, cand, old))
        yield from examine_all(changed, workers=workers)

    def _finish(self, vectors: VectorTier | None, stats: IndexStats, drain: bool) -> None:
        """Embed the live generation's backlog (``drain``) and count what is left."""
        if vectors is None:
            return
        tables = self.writer.manifest.tables
        try:
            if drain:
                self._drain(vectors, tables)
        finally:
            stats.embeddings = vectors.embedded
            left = incomplete(self.writer.conn, tables)  # cheap when nothing is left
            stats.backlog = left.backlog if left is not None else 0

    def _drain(self, vectors: VectorTier, tables: Tables) -> None:
        """Embed the backlog of ``tables`` in rounds of ``EMBED_GROUP`` chunks, each stored in
        one transaction (vectors, cache rows, flags), so a kill loses no stored vector."""
        conn = self.writer.conn
        total = coverage(conn, tables).backlog
        done = after = 0
        while items := pending(conn, tables, EMBED_GROUP, after):
            self._check_cancel()
            found = vectors.compute([(i.hash, i.text, i.title) for i in items])
            with self.writer.transaction() as tx:
                vectors.remember(tx, found)
                store(tx, tables, items, found)
            after = items[-1].chunk_id
            done += len(items)
            self.reporter.on_embed(done, total)

    def _vector_tier(self, rebuild: bool, generation: int) -> VectorTier | None:
        """Check the vector space before any write (loud on a model switch; no request to
        the embeddings server) and start the dimension probe beside the write if needed."""
        if self.embedder is None:
            if not rebuild:
                refuse_lexical_over_hybrid(self.writer.manifest)
            return None
        tier = VectorTier(self.writer, self.embedder)
        tier.start(rebuild=rebuild, generation=generation)
        return tier

    def _settle(self, vectors: VectorTier | None, generation: int) -> None:
        """After the lexical write: the probe's answer pins the vector space (vectors.settle)."""
        if vectors is not None:
            vectors.settle()
            self._has_vec = self.writer.has_vec_table(generation)

    def _process(
        self,
        outcomes: Iterable[Outcome],
        tables: Tables,
        stats: IndexStats,
        dry_run: bool,
        vectors: VectorTier | None,
        *,
        first_build: bool = False,
    ) -> None:
        """Apply examined files in order, each written at once; with vectors, the chunks whose
        vectors are cached get them in the same transaction, the others join the backlog.
        ``first_build``: commit less often (``FIRST_BUILD_BATCH``)."""
        done = 0
        with self.writer.batch(*(FIRST_BUILD_BATCH if first_build else ())) as batch:
            for outcome in outcomes:
                self._check_cancel()
                if dry_run and self.embedder is not None and outcome.prepared:
                    stats.embeddings += len(outcome.prepared.rows)  # what a real run would send
                cached: dict[str, bytes] | None = None
                if vectors is not None and vectors.settled and outcome.prepared is not None:
                    cached = vectors.cached([row.hash for row in outcome.prepared.rows])
                if (
                    not dry_run and outcome.kind != "unchanged"
                ):  # a run with no change writes nothing
                    batch.tick()
                self._apply(outcome, tables, stats, dry_run, cached)
                done += 1
                self.reporter.on_file(done, outcome.key)

    def update_paths(self, paths: Iterable[Path], *, drain: bool = True) -> IndexStats:
        """Bring just these files up to date (saved, created, changed, deleted or renamed).

        A path that no longer exists, or is no longer a document, is removed from the index.
        ``drain``: as in ``run``.
        """
        stats = IndexStats()
        tables = self.writer.manifest.tables
        store_dir = self.writer.store_dir
        gone: list[str] = []
        jobs: list[Job] = []
        for path in dict.fromkeys(map(resolved_parent, paths)):
            self._check_cancel()
            try:  # folders resolved: a path through a link out of the project is not ours
                key = document_key(path, self.root)
            except KnowledgeError:
                continue
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            if st is None or not os.path.isfile(path) or os.path.islink(path):
                gone.extend(self._keys_under(key, tables))
                continue
            if not is_document_name(path.name) or in_skipped_dir(path, self.root, store_dir):
                continue
            if self.ignore is not None and self.ignore.ignored(path, False):
                gone.extend(self._keys_under(key, tables))  # newly ignored: out of the index
                continue
            if (bad := unprintable_name(str(path), key)) is not None:
                stats.notes.append(bad)
                self.reporter.on_note(bad)
                continue
            cand = Candidate(str(path), st.st_size, st.st_mtime_ns, st.st_ino)
            jobs.append((key, cand, self.existing(tables, key).get(key)))
        stats.files = len(jobs)
        vectors = self._vector_tier(False, self.writer.manifest.generation)
        self._process(examine_all(jobs), tables, stats, False, vectors)
        self._delete(gone, tables)
        stats.removed += len(gone)
        self._settle(vectors, self.writer.manifest.generation)
        self._finish(vectors, stats, drain)
        return stats

    def remove(self, keys: Iterable[str]) -> list[str]:
        """Remove documents by key (or every document under a folder key); return those removed.

        All or nothing: one transaction, so a failure (disk full, a damaged page) mid-way
        leaves every document in place."""
        tables = self.writer.manifest.tables
        found: list[str] = []
        for key in keys:
            found.extend(self._keys_under(key.strip("/"), tables))
        if (
            not found
        ):  # nothing to remove: no transaction (a run where nothing changed writes nothing)
            return found
        with self.writer.transaction():
            self._delete(list(dict.fromkeys(found)), tables)
        self.writer.vacuum()
        return found

    # -- steps -------------------------------------------------------------------------------

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("index run cancelled; re-running skips files already indexed")

    def collect(
        self, roots: Sequence[Path], stats: IndexStats, workers: Workers | None = None
    ) -> list[tuple[str, Candidate]]:
        """The documents under ``roots`` by key. ``workers`` are started once the walk has
        found enough files for them (``PARALLEL_MIN_FILES``)."""

        def note(message: str) -> None:
            stats.notes.append(message)
            self.reporter.on_note(message)

        found: dict[str, Candidate] = {}
        # Keys by string slicing on this hot path (a no-change run of 14k files spent most of
        # its time building Path objects in document_key); the walk only yields paths below
        # the root it was given, which is below the project root.
        base = str(self.root).rstrip(os.sep) + os.sep
        slash = os.sep != "/"
        for root in roots:
            inside_root(root, self.root)  # raises for a root outside the project
            for cand in walk(root, self.writer.store_dir, note, self.ignore):
                self._check_cancel()
                text = cand.path
                if text.startswith(base):
                    key = text[len(base) :]
                    key = key.replace(os.sep, "/") if slash else key
                else:
                    key = document_key(Path(text), self.root)
                found.setdefault(key, cand)
                if workers is not None and len(found) == PARALLEL_MIN_FILES:
                    workers.start()
        stats.files = len(found)
        return list(found.items())

    def existing(self, tables: Tables, key: str | None = None) -> dict[str, Existing]:
        sql = f"SELECT path, id, size, mtime_ns, inode, hash, chunk_count FROM {tables.documents}"
        rows = (
            self.writer.conn.execute(sql + " WHERE path = ?", (key,))
            if key is not None
            else self.writer.conn.execute(sql)
        )
        return {r[0]: Existing(*r[1:]) for r in rows}

    def _keys_under(self, key: str, tables: Tables) -> list[str]:
        """The document ``key`` and every document below the folder ``key`` ("" is all): a
        range on the path index (``key/`` up to ``key0``, "0" following "/"), not a scan, so
        removing 14k documents one path each is not quadratic."""
        if not key:
            return [r[0] for r in self.writer.conn.execute(f"SELECT path FROM {tables.documents}")]
        rows = self.writer.conn.execute(
            f"SELECT path FROM {tables.documents} WHERE path = ? OR (path >= ? AND path < ?)",
            (key, f"{key}/", f"{key}0"),
        )
        return [r[0] for r in rows]

    def _apply(
        self,
        outcome: Outcome,
        tables: Tables,
        stats: IndexStats,
        dry_run: bool,
        vectors: dict[str, bytes] | None = None,
    ) -> None:
        """Count one examined file and write it (writer thread)."""
        existing = outcome.existing
        if outcome.kind in ("unchanged", "touched"):
            assert existing is not None
            stats.skipped += 1
            stats.chunks += existing.chunk_count
            if outcome.kind == "touched" and not dry_run:
                cand = outcome.candidate
                with self.writer.transaction() as conn:
                    conn.execute(
                        f"UPDATE {tables.documents} SET size=?, mtime_ns=?, inode=? WHERE id=?",
                        (cand.size, cand.mtime_ns, cand.inode, existing.id),
                    )
            return
        if outcome.kind in ("unreadable", "changing"):
            stats.notes.append(outcome.note)
            self.reporter.on_note(outcome.note)
            if outcome.kind == "unreadable" and existing is not None and not dry_run:
                self._delete([outcome.key], tables)  # a file that became unreadable must go
                stats.removed += 1
            return
        prep = outcome.prepared
        assert prep is not None
        if outcome.note:  # part of its front matter was dropped: indexed, and said so
            stats.notes.append(outcome.note)
            self.reporter.on_note(outcome.note)
        if existing is None:
            stats.added += 1
        else:
            stats.updated += 1
        stats.chunks += len(prep.rows)
        if not dry_run:
            self.write(prep, tables, vectors)

    def write(self, prep: Prepared, tables: Tables, vectors: dict[str, bytes] | None) -> None:
        """One file's document row and chunks (and the chunks' cached ``vectors``), atomically."""
        with self.writer.transaction() as conn:
            write_document(conn, tables, prep, vectors, has_vectors=self._has_vec)

    def _delete(self, keys: Sequence[str], tables: Tables) -> None:
        """Each document of ``keys`` with its chunks and vectors, one transaction each."""
        for key in keys:
            with self.writer.transaction() as conn:
                delete_document(conn, tables, key, has_vectors=self._has_vec)
