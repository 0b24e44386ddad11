"""The worker side of an index run: read, hash and chunk files, with no database access.

Large runs do this in a spawned worker process (``examine_all``), so reading and chunking
(Python, GIL-bound) overlap with the SQLite writes in the indexing process; a worker exits when
its parent dies, even by ``kill -9`` (``die_with_parent``).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Literal, NamedTuple

from .. import fts, schema
from ..collapse import text_key
from .chunker import body_key, chunk_body, split_lines
from .files import CHANGED_NOTE, read_document
from .front_matter import FrontMatter, front_matter
from .walk import Candidate

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclass
class Existing:
    id: int
    size: int
    mtime_ns: int
    inode: int
    hash: str
    chunk_count: int


class ChunkRow(NamedTuple):
    """One chunk as written: its row (the columns of ``chunk_rows`` after ``document_id``, with
    the body in place of ``text_id``) and ``key``, its body's digest in ``texts``."""

    ordinal: int
    section: str
    body: str
    cjk: str | None
    start_line: int
    end_line: int
    hash: str
    near: str
    key: bytes


@dataclass
class Prepared:
    key: str
    candidate: Candidate
    digest: str
    title: str
    existing: Existing | None
    rows: list[ChunkRow] = field(default_factory=list)
    about: str = ""
    """What names the whole document (``documents.doc``, a full-text field of each chunk)."""
    tags: tuple[str, ...] = ()
    """Its front-matter tags (``tags``), normalised."""


OutcomeKind = Literal["unchanged", "touched", "unreadable", "changing", "changed"]
"""Same size, mtime and inode; same bytes (only re-stamped); skipped with a note; changed under
the walk (kept as indexed until the next run); new or changed (chunked)."""


@dataclass
class Outcome:
    """What examining one file found: unchanged, touched (same bytes), unreadable, changed."""

    key: str
    candidate: Candidate
    existing: Existing | None
    kind: OutcomeKind
    note: str = ""
    prepared: Prepared | None = None


Derived = tuple[str | None, str, str]
"""What a chunk's row holds besides its text: its CJK column, digest and near-duplicate key."""

DERIVED_MAX = 100_000
"""Entries a ``Repeats`` keeps (about 30 MB) before it starts over."""

DOCUMENTS_MAX_CHARS = 32_000_000
"""Characters of chunk text a ``Repeats`` keeps for whole documents (about 50 MB); past it the
oldest go. Copies of a page lie one version's folder apart in the walk: the PowerShell docs
need about 30M characters to keep them all (bench/tuning.md, "Cold index: the chunking worker")."""

Chunked = tuple[str, list[ChunkRow]]
"""A document body's rows and the title its headings give (``chunker.chunk_body``)."""


class Repeats:
    """What one run has examined so far: the rows of each document body (by
    ``chunker.body_key``) and the derived fields of each chunk (by section and body digest).

    Both are functions of those keys alone, and versioned documentation repeats most pages
    under new front matter (the PowerShell docs: 7,948 bodies in 14,143 files) and most chunks
    in every copy of a page, so a run chunks each body and derives each chunk once."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, bytes], Derived] = {}
        self.documents: dict[bytes, Chunked] = {}
        self.document_chars = 0

    def derived(self, section: str, body: str, key: bytes) -> Derived:
        found = self.known.get((section, key))
        if found is None:
            if len(self.known) >= DERIVED_MAX:
                self.known.clear()
            found = self.known[(section, key)] = derive(section, body)
        return found

    def chunked(self, lines: list[str], front: FrontMatter) -> Chunked:
        key = body_key(lines, front)
        found = self.documents.get(key)
        if found is None:
            found = _chunked(lines, front, self)
            self.documents[key] = found
            self.document_chars += _chars(found)
            while self.document_chars > DOCUMENTS_MAX_CHARS:  # the oldest go first
                self.document_chars -= _chars(self.documents.pop(next(iter(self.documents))))
        return found


def _chars(chunked: Chunked) -> int:
    return sum(len(row.body) for row in chunked[1])


def _chunked(lines: list[str], front: FrontMatter, repeats: Repeats | None) -> Chunked:
    title, chunks = chunk_body(lines, front)
    rows = []
    for ch in chunks:
        body = schema.body_key(ch.text)
        cjk, hashed, near = (
            repeats.derived(ch.section, ch.text, body)
            if repeats is not None
            else derive(ch.section, ch.text)
        )
        rows.append(
            ChunkRow(
                ch.ordinal,
                ch.section,
                ch.text,
                cjk,
                ch.start_line,
                ch.end_line,
                hashed,
                near,
                body,
            )
        )
    return title, rows


def derive(section: str, body: str) -> Derived:
    """A chunk's CJK column, digest and near-duplicate key."""
    return (
        fts.cjk_column(section + "\n" + body),
        chunk_hash_of(section, body),
        text_key(section, body),
    )


def examine(
    key: str, cand: Candidate, existing: Existing | None, repeats: Repeats | None = None
) -> Outcome:
    """Read, hash and chunk one file. No database access: runs in a worker process.
    ``repeats``: the run's documents and chunks so far, whose rows are reused."""
    if (
        existing is not None
        and existing.size == cand.size
        and existing.mtime_ns == cand.mtime_ns
        and existing.inode == cand.inode
    ):
        return Outcome(key, cand, existing, "unchanged")
    result = read_document(cand.path, expected=cand)
    if isinstance(result, str):
        kind: OutcomeKind = "changing" if result.endswith(CHANGED_NOTE) else "unreadable"
        return Outcome(key, cand, existing, kind, note=result)
    raw, text = result
    digest = hashlib.sha256(raw).hexdigest()
    if existing is not None and existing.hash == digest:
        return Outcome(key, cand, existing, "touched")
    lines = split_lines(text)
    front = front_matter(lines)
    heading_title, rows = (
        repeats.chunked(lines, front) if repeats is not None else _chunked(lines, front, None)
    )
    title = front.title or heading_title
    first = rows[0].section if rows else ""
    about = fts.document_field(title, front.description, key, first)
    prep = Prepared(key, cand, digest, title, existing, list(rows), about, front.tags)
    note = f"{key}: {front.problem}" if front.problem else ""
    return Outcome(key, cand, existing, "changed", note=note, prepared=prep)


Job = tuple[str, Candidate, "Existing | None"]


_WORKER_REPEATS = Repeats()
"""A worker process's: it lives for one run (``examine_all`` starts its own workers)."""


def _examine_many(jobs: list[Job]) -> list[Outcome]:
    return [examine(*job, _WORKER_REPEATS) for job in jobs]


PARALLEL_MIN_FILES = 200
"""Below this many files a run chunks inline; above, worker processes chunk ahead."""


class Workers:
    """The chunking worker processes of a run. ``start`` may come before the first job (during
    the walk of a first build), so that a worker's start-up (a new interpreter importing the
    chunker) overlaps the walk instead of following it. The owner closes them."""

    def __init__(self, count: int = 1) -> None:
        self.count = max(1, count)
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> ProcessPoolExecutor:
        """The pool, its processes started (once)."""
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor  # here: most commands never chunk

            # "spawn", not "fork": a forked worker would inherit the writer lock's descriptor
            # and the open SQLite connection, and would keep the lock alive after the parent
            # is killed.
            self._pool = ProcessPoolExecutor(
                max_workers=self.count,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_start,
                initargs=(os.getpid(),),
            )
            for _ in range(self.count):  # a process is spawned when a call finds none idle
                self._pool.submit(_ready)
        return self._pool

    def close(self) -> None:
        """Stop the workers (what is queued is cancelled) and wait for them to exit."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ready() -> None:
    """A worker's first call: it has imported this module."""


def _worker_start(parent: int) -> None:
    """Worker initializer: ``die_with_parent``, and a quick exit. A worker's outcomes are all
    sent (synchronously) before it exits; tearing down its interpreter would free the run's
    memory object by object (about 0.2 s for the PowerShell docs) while the run waits on it."""
    die_with_parent(parent)
    atexit.register(os._exit, 0)


def examine_all(
    jobs: Sequence[Job],
    batch: int = 32,
    depth: int = 64,
    workers: int | Workers = 1,
) -> Iterator[Outcome]:
    """``examine`` over ``jobs``, yielded in order. Large runs use worker processes
    (``workers``: how many, or the caller's ``Workers``, perhaps started already), so reading
    and chunking (Python, GIL-bound) overlap with the SQLite writes in this process; ``depth``
    batches per worker are in flight (2,048 files), so the worker chunks on through the
    longest commit of a first build. One worker: a second one measured no faster on the shared
    2-core machine (bench/tuning.md, "Cold index"); more cores are untested."""
    if len(jobs) < PARALLEL_MIN_FILES:
        repeats = Repeats()
        for job in jobs:
            yield examine(*job, repeats)
        return
    owned = not isinstance(workers, Workers)
    team = Workers(workers) if not isinstance(workers, Workers) else workers
    try:
        pool = team.start()
        batches = (list(jobs[i : i + batch]) for i in range(0, len(jobs), batch))
        window: deque[Future[list[Outcome]]] = deque(
            pool.submit(_examine_many, b) for b in islice(batches, depth * team.count)
        )
        try:
            while window:
                results = window.popleft().result()
                for b in islice(batches, 1):
                    window.append(pool.submit(_examine_many, b))
                yield from results
        finally:
            for future in window:  # given up early: what has not started never will
                future.cancel()
    finally:
        if owned:
            team.close()


PARENT_POLL_SECONDS = 0.5


def die_with_parent(parent: int) -> None:
    """Worker initializer: exit when the parent process dies, even by ``kill -9``.

    On Linux the kernel sends SIGKILL at once (``PR_SET_PDEATHSIG``); everywhere a daemon thread
    also watches the parent id (a dead parent's children are re-parented), so a worker never
    lingers, blocked, holding the resource tracker open."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="fisk-parent-watch", daemon=True).start()


def chunk_hash_of(section: str, body: str) -> str:
    """A chunk's digest (hex): the vector cache's key, also checked in a pack (pack.py)."""
    return hashlib.blake2b(f"{section}\x00{body}".encode(), digest_size=16).hexdigest()
