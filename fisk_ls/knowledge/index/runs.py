"""Index runs: walk, detect changes, chunk, (embed,) write.

* A file whose size, mtime and inode are unchanged is skipped without being read; one whose
  bytes hash the same is only re-stamped.
* Each file is written in its own short transaction (its document row, its chunks; FTS triggers
  follow), so a crash or Ctrl-C leaves every document either old or new.
* Reconciling removes only documents under the roots that were walked.
* One unreadable, oversized, binary or non-UTF-8 file is skipped with a note; the run goes on.
* ``rebuild`` (``--reindex``) fills a new generation and switches over at the end (writer.py).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from .. import fts, schema
from ..collapse import text_key
from ..errors import Cancelled, KnowledgeError
from ..location import document_key, key_prefix
from ..schema import Tables
from ..store import Manifest, scalar
from ..vectors.tier import (
    DocumentEmbedder,
    VectorTier,
    delete_vectors,
    has_vec_table,
    insert_vectors,
    refuse_lexical_over_hybrid,
)
from .chunker import Chunk, chunk_document, display_text
from .ignore import IgnoreRules
from .walk import (
    Candidate,
    in_skipped_dir,
    is_document_name,
    walk,
)

if TYPE_CHECKING:
    from ..writer import Writer

MAX_FILE_BYTES = 1024 * 1024
"""Larger files are skipped with a note (documentation pages are far smaller)."""


class IndexReporter:
    """Progress callbacks; the default does nothing. Adapters subclass it."""

    def on_plan(self, files: int) -> None:
        """The walk is done: ``files`` candidate files will be looked at."""

    def on_file(self, done: int, key: str) -> None:
        """One more file was handled (indexed or skipped)."""

    def on_note(self, message: str) -> None:
        """Something was skipped or could not be read; the run goes on."""


@dataclass
class IndexStats:
    files: int = 0
    added: int = 0
    updated: int = 0
    skipped: int = 0
    removed: int = 0
    chunks: int = 0
    embeddings: int = 0
    first_build: bool = False
    dry_run: bool = False
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "added": self.added,
            "updated": self.updated,
            "skipped": self.skipped,
            "removed": self.removed,
            "chunks": self.chunks,
            "embeddings": self.embeddings,
            "first_build": self.first_build,
            "dry_run": self.dry_run,
            "notes": list(self.notes),
        }


@dataclass
class _Existing:
    id: int
    size: int
    mtime_ns: int
    inode: int
    hash: str
    chunk_count: int


@dataclass
class _Prepared:
    key: str
    candidate: Candidate
    digest: str
    title: str
    existing: _Existing | None
    rows: list[tuple[object, ...]] = field(default_factory=list)
    """Chunk rows minus document_id: (ordinal, section, body, cjk, start, end, hash, doc, near)."""


@dataclass
class _Outcome:
    """What examining one file found: unchanged, touched (same bytes), unreadable, changed."""

    key: str
    candidate: Candidate
    existing: _Existing | None
    kind: str
    note: str = ""
    prepared: _Prepared | None = None


def examine(key: str, cand: Candidate, existing: _Existing | None) -> _Outcome:
    """Read, hash and chunk one file. No database access: runs in a worker process."""
    if (
        existing is not None
        and existing.size == cand.size
        and existing.mtime_ns == cand.mtime_ns
        and existing.inode == cand.inode
    ):
        return _Outcome(key, cand, existing, "unchanged")
    result = read_document(cand.path)
    if isinstance(result, str):
        return _Outcome(key, cand, existing, "unreadable", note=result)
    raw, text = result
    digest = hashlib.sha256(raw).hexdigest()
    if existing is not None and existing.hash == digest:
        return _Outcome(key, cand, existing, "touched")
    doc = chunk_document(text)
    first = doc.chunks[0].section if doc.chunks else ""
    about = fts.document_field(doc.title, doc.description, key, first)
    rows: list[tuple[object, ...]] = [
        (
            ch.ordinal,
            ch.section,
            ch.text,
            fts.cjk_column(ch.section + "\n" + ch.text),
            ch.start_line,
            ch.end_line,
            chunk_hash(ch),
            about,
            text_key(ch.section, ch.text),
        )
        for ch in doc.chunks
    ]
    prep = _Prepared(key, cand, digest, doc.title, existing, rows)
    return _Outcome(key, cand, existing, "changed", prepared=prep)


_Job = tuple[str, Candidate, "_Existing | None"]


def _examine_many(jobs: list[_Job]) -> list[_Outcome]:
    return [examine(*job) for job in jobs]


PARALLEL_MIN_FILES = 200
"""Below this many files a run chunks inline; above, a worker process chunks ahead."""


def examine_all(jobs: Sequence[_Job], batch: int = 32, depth: int = 4) -> Iterator[_Outcome]:
    """``examine`` over ``jobs`` in order. Large runs use one worker process, so reading and
    chunking (Python, GIL-bound) overlap with SQLite inserts in this process."""
    if len(jobs) < PARALLEL_MIN_FILES:
        for job in jobs:
            yield examine(*job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor  # here: most commands never chunk

    # "spawn", not "fork": a forked worker would inherit the writer lock's descriptor and the
    # open SQLite connection, and would keep the lock alive after the parent is killed.
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        batches = (list(jobs[i : i + batch]) for i in range(0, len(jobs), batch))
        window: deque[Future[list[_Outcome]]] = deque(
            pool.submit(_examine_many, b) for b in islice(batches, depth)
        )
        while window:
            results = window.popleft().result()
            for b in islice(batches, 1):
                window.append(pool.submit(_examine_many, b))
            yield from results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


EMBED_GROUP = 192
"""Chunks gathered across files before one embedding round (3 requests of 64)."""


def _embed_text(row: tuple[object, ...]) -> str:
    """What a chunk is embedded as: breadcrumb, blank line, body (as a reader sees it)."""
    return display_text(str(row[1]), str(row[2])) or " "


def _under(key: str, walked: list[str]) -> bool:
    """True when ``key`` is one of the walked files or below one of the walked folders."""
    return any(key == w or ((w.endswith("/") or not w) and key.startswith(w)) for w in walked)


def chunk_hash(chunk: Chunk) -> str:
    return hashlib.blake2b(f"{chunk.section}\x00{chunk.text}".encode(), digest_size=16).hexdigest()


def read_document(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[bytes, str] | str:
    """(raw bytes, text) of a document, or a note saying why it is skipped."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return f"skipping {path}: {exc.strerror or exc}"
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        return f"skipping {path}: {exc.strerror or exc}"
    if len(raw) > limit:
        return f"skipping {path}: larger than {limit // 1024} KiB"
    if b"\x00" in raw:
        return f"skipping {path}: binary file (contains NUL bytes)"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"skipping {path}: not valid UTF-8"
    return raw, text


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
        self._has_vec = has_vec_table(writer.conn, writer.manifest.generation)

    # -- public entry points -----------------------------------------------------------------

    def run(
        self,
        roots: Sequence[Path],
        *,
        reconcile: bool = True,
        rebuild: bool = False,
        dry_run: bool = False,
    ) -> IndexStats:
        """Index ``roots`` (folders or files below the project root)."""
        keys = [
            key_prefix(r, self.root) if r.is_dir() else document_key(r, self.root) for r in roots
        ]
        stats = IndexStats(dry_run=dry_run)
        candidates = self._collect(roots, stats)
        generation = self.writer.manifest.generation
        if rebuild and not dry_run:
            generation = self.writer.begin_rebuild()
        tables = schema.names(generation)
        vectors: VectorTier | None = None
        try:
            existing = {} if rebuild else self._existing(tables)
            stats.first_build = rebuild or not existing
            if not dry_run:
                vectors = self._vector_tier(rebuild, generation, empty=not existing)
                self._has_vec = vectors is not None
            self.reporter.on_plan(len(candidates))
            outcomes = examine_all([(k, c, existing.get(k)) for k, c in candidates])
            self._process(outcomes, tables, stats, dry_run, vectors)
            if reconcile and not rebuild:
                seen = {key for key, _ in candidates}
                walked = [k for k, r in zip(keys, roots, strict=True) if r.exists()]
                stale = [k for k in existing if k not in seen and _under(k, walked)]
                if not dry_run:
                    self._delete(stale, tables)
                stats.removed += len(stale)
        except BaseException:
            if rebuild and not dry_run:
                self.writer.abandon_rebuild(generation)
            raise
        if vectors is not None:
            stats.embeddings = vectors.embedded
        if rebuild and not dry_run:
            self.writer.finish_rebuild(generation, vectors.target if vectors else Manifest())
        elif (stats.removed or stats.updated) and not dry_run:
            self.writer.vacuum()
        if vectors is not None and (rebuild or stats.removed or stats.updated):
            vectors.prune(self.writer.manifest.tables)
        return stats

    def _vector_tier(self, rebuild: bool, generation: int, empty: bool) -> VectorTier | None:
        """Settle the vector identity before any embedding spend (loud on a mismatch)."""
        if self.embedder is None:
            if not rebuild:
                refuse_lexical_over_hybrid(self.writer.manifest)
            return None
        if not empty:
            empty = self.writer.counts()[1] == 0
        tier = VectorTier(self.writer, self.embedder)
        tier.prepare(rebuild=rebuild, generation=generation, empty=empty)
        return tier

    def _process(
        self,
        outcomes: Iterable[_Outcome],
        tables: Tables,
        stats: IndexStats,
        dry_run: bool,
        vectors: VectorTier | None,
    ) -> None:
        """Apply examined files in order. With vectors, changed files wait in a queue until
        about ``EMBED_GROUP`` chunks are pending; then the open transaction is committed, the
        group is embedded (outside any transaction), and the files are written."""
        done = 0
        pending: list[_Outcome] = []
        pending_chunks = 0
        with self.writer.batch() as batch:

            def flush() -> None:
                nonlocal done, pending_chunks
                if not pending:
                    return
                assert vectors is not None
                batch.commit()
                vecs = vectors.embed(
                    [
                        (str(row[6]), _embed_text(row), str(row[1]))
                        for o in pending
                        for row in (o.prepared.rows if o.prepared else [])
                    ]
                )
                for o in pending:
                    batch.tick()
                    self._apply(o, tables, stats, False, vecs)
                    done += 1
                    self.reporter.on_file(done, o.key)
                pending.clear()
                pending_chunks = 0

            for outcome in outcomes:
                self._check_cancel()
                if vectors is not None and outcome.kind == "changed" and outcome.prepared:
                    pending.append(outcome)
                    pending_chunks += len(outcome.prepared.rows)
                    if pending_chunks >= EMBED_GROUP:
                        flush()
                    continue
                if dry_run and self.embedder is not None and outcome.prepared:
                    stats.embeddings += len(outcome.prepared.rows)  # what a real run would send
                if not dry_run:
                    batch.tick()
                self._apply(outcome, tables, stats, dry_run)
                done += 1
                self.reporter.on_file(done, outcome.key)
            flush()

    def update_paths(self, paths: Iterable[Path]) -> IndexStats:
        """Bring just these files up to date (saved, created, changed, deleted or renamed).

        A path that no longer exists, or is no longer a document, is removed from the index.
        """
        stats = IndexStats()
        tables = self.writer.manifest.tables
        store_dir = self.writer.store_dir
        gone: list[str] = []
        jobs: list[_Job] = []
        for path in dict.fromkeys(Path(os.path.abspath(p)) for p in paths):
            self._check_cancel()
            try:
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
            cand = Candidate(path, st.st_size, st.st_mtime_ns, st.st_ino)
            jobs.append((key, cand, self._existing(tables, key).get(key)))
        stats.files = len(jobs)
        vectors = self._vector_tier(False, self.writer.manifest.generation, empty=False)
        self._has_vec = vectors is not None
        self._process(examine_all(jobs), tables, stats, False, vectors)
        self._delete(gone, tables)
        stats.removed += len(gone)
        if vectors is not None:
            stats.embeddings = vectors.embedded
        return stats

    def remove(self, keys: Iterable[str]) -> list[str]:
        """Remove documents by key (or every document under a folder key); return those removed."""
        tables = self.writer.manifest.tables
        found: list[str] = []
        for key in keys:
            found.extend(self._keys_under(key.strip("/"), tables))
        self._delete(found, tables)
        if found:
            self.writer.vacuum()
        return found

    # -- steps -------------------------------------------------------------------------------

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled("index run cancelled; re-running skips files already indexed")

    def _collect(self, roots: Sequence[Path], stats: IndexStats) -> list[tuple[str, Candidate]]:
        def note(message: str) -> None:
            stats.notes.append(message)
            self.reporter.on_note(message)

        found: dict[str, Candidate] = {}
        for root in roots:
            document_key(root, self.root)  # raises for a root outside the project
            for cand in walk(root, self.writer.store_dir, note, self.ignore):
                self._check_cancel()
                found.setdefault(document_key(cand.path, self.root), cand)
        stats.files = len(found)
        return list(found.items())

    def _existing(self, tables: Tables, key: str | None = None) -> dict[str, _Existing]:
        sql = f"SELECT path, id, size, mtime_ns, inode, hash, chunk_count FROM {tables.documents}"
        rows = (
            self.writer.conn.execute(sql + " WHERE path = ?", (key,))
            if key is not None
            else self.writer.conn.execute(sql)
        )
        return {r[0]: _Existing(*r[1:]) for r in rows}

    def _keys_under(self, key: str, tables: Tables) -> list[str]:
        rows = self.writer.conn.execute(
            f"SELECT path FROM {tables.documents} WHERE path = ? OR "
            "(substr(path, 1, length(?) + 1) = ? || '/') OR ? = ''",
            (key, key, key, key),
        )
        return [r[0] for r in rows]

    def _apply(
        self,
        outcome: _Outcome,
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
        if outcome.kind == "unreadable":
            stats.notes.append(outcome.note)
            self.reporter.on_note(outcome.note)
            if existing is not None and not dry_run:
                self._delete([outcome.key], tables)  # a file that became unreadable must go
                stats.removed += 1
            return
        prep = outcome.prepared
        assert prep is not None
        if existing is None:
            stats.added += 1
        else:
            stats.updated += 1
        stats.chunks += len(prep.rows)
        if not dry_run:
            self._write(prep, tables, vectors)

    def _write(self, prep: _Prepared, tables: Tables, vectors: dict[str, bytes] | None) -> None:
        d, c = tables.documents, tables.chunks
        cand = prep.candidate
        with self.writer.transaction() as conn:
            doc_id = scalar(
                conn,
                f"INSERT INTO {d}(path, title, size, mtime_ns, inode, hash, chunk_count,"
                " indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET"
                " title=excluded.title, size=excluded.size, mtime_ns=excluded.mtime_ns,"
                " inode=excluded.inode, hash=excluded.hash, chunk_count=excluded.chunk_count,"
                " indexed_at=excluded.indexed_at RETURNING id",
                (
                    prep.key,
                    prep.title,
                    cand.size,
                    cand.mtime_ns,
                    cand.inode,
                    prep.digest,
                    len(prep.rows),
                    time.time(),
                ),
            )
            if prep.existing is not None:
                if self._has_vec:
                    delete_vectors(conn, tables, doc_id)
                conn.execute(f"DELETE FROM {c} WHERE document_id = ?", (doc_id,))
            conn.executemany(
                f"INSERT INTO {c}(document_id, ordinal, section, body, cjk, start_line, end_line,"
                " hash, doc, near) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(doc_id, *row) for row in prep.rows],
            )
            if vectors is not None:
                insert_vectors(conn, tables, doc_id, vectors)

    def _delete(self, keys: Sequence[str], tables: Tables) -> None:
        d, c = tables.documents, tables.chunks
        for key in keys:
            with self.writer.transaction() as conn:
                row = conn.execute(f"SELECT id FROM {d} WHERE path = ?", (key,)).fetchone()
                if row is None:
                    continue
                if self._has_vec:
                    delete_vectors(conn, tables, row[0])
                conn.execute(f"DELETE FROM {c} WHERE document_id = ?", (row[0],))
                conn.execute(f"DELETE FROM {d} WHERE id = ?", (row[0],))
