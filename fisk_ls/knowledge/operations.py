"""Writer-side operations of the core: index runs, path updates, removal and reset, each under
the writer lock. Adapters reach them through the ``fisk_ls.knowledge`` facade."""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import KnowledgeError
from .index.ignore import IgnoreRules
from .index.runs import Indexer
from .index.stats import IndexReporter, IndexStats
from .location import Settings, document_key, inside_root, resolved_parent
from .opening import open_writer
from .progress import RunRecord
from .store_files import clear_odd_files, db_path, odd_files
from .vectors.tier import DocumentEmbedder
from .writer import Writer

if TYPE_CHECKING:
    from .index.adopt import Adoption
    from .session import WriterSession
    from .unpack import Pack


def ignore_rules(settings: Settings) -> IgnoreRules:
    """The project's ignore rules (.gitignore, .fiskignore, ``exclude``): walk, watcher, didSave.

    Build it once per watcher or server project and ask ``.ignored(path)`` per event; it re-reads
    an ignore file when that file changes.
    """
    return IgnoreRules.for_project(settings.project_root, settings.exclude)


def index_project(
    settings: Settings,
    roots: Iterable[Path] | None = None,
    *,
    rebuild: bool = False,
    dry_run: bool = False,
    wait: float = 0.0,
    reporter: IndexReporter | None = None,
    cancel: threading.Event | None = None,
    embedder: DocumentEmbedder | None = None,
    drain: bool = True,
    ignore: IgnoreRules | None = None,
    pack: Path | None = None,
    session: WriterSession | None = None,
) -> IndexStats:
    """One index run under the writer lock.

    Over the configured paths (``roots`` None) it is a full run: documents outside those paths
    are removed too, so the same configuration gives the same index from every front end. Over
    explicit ``roots`` only documents under them are reconciled.

    ``embedder`` (the project's: ``Project.embedder``; None indexes lexically) embeds the chunks
    without a vector; with ``drain`` the run returns once there are none left (files are
    searchable lexically as soon as they are written), without it they stay in the backlog for
    a background worker (``Backfill``). ``ignore``: the project's rules when the caller keeps
    them (the update queue does); built from ``settings`` otherwise.

    ``pack``: a knowledge pack to adopt first (index/adopt.py); a refused one raises
    ``PackRefused`` with nothing written (its layout is checked before the writer lock is
    taken, its rows as the adoption reads them, in one transaction). Without
    it, the configured ``prebuilt`` pack is adopted by a run that finds the index empty (a
    refused or missing one is a note; the run indexes locally).

    ``session``: the writer kept open between runs (the update queue's, session.py); without
    one the store is opened for this run and closed after it.
    """
    if pack is not None and (rebuild or dry_run):
        raise KnowledgeError(
            "--from adopts a pack into the live index: not with --reindex or --dry-run"
        )
    recover = rebuild and not dry_run  # --reindex always works: an unusable store moves aside
    with (
        _checked_pack(pack) as given,
        _writing(settings.store_dir, session, wait=wait, recover=recover) as w,
    ):
        for note in (*w.cleared, w.set_aside, w.recovered):
            if note:
                (reporter or IndexReporter()).on_note(note)
        record = None if dry_run else RunRecord(settings.store_dir)
        with _recorded(record):
            indexer = Indexer(
                w,
                settings.project_root,
                reporter=_Recording(reporter or IndexReporter(), record),
                cancel=cancel,
                embedder=embedder,
                ignore=ignore if ignore is not None else ignore_rules(settings),
            )
            adoption = None
            if not (rebuild or dry_run or w.outdated):
                adoption = _adopt(indexer, settings, roots, given, embedder)
                for note in adoption.notes if adoption is not None else ():
                    indexer.reporter.on_note(note)
            stats = _full_run(indexer, w, settings, roots, rebuild, dry_run, drain)
            if adoption is not None:
                stats.adopted = adoption.as_dict()
                stats.notes[:0] = adoption.notes
            return stats


@contextlib.contextmanager
def _writing(
    store_dir: Path, session: WriterSession | None, *, wait: float, recover: bool = False
) -> Iterator[Writer]:
    """The session's kept writer, else one opened for this call and closed after it."""
    if session is not None:
        with session.open(wait=wait, recover=recover) as kept:
            yield kept
        return
    with open_writer(store_dir, wait=wait, recover=recover) as writer:
        yield writer


@contextlib.contextmanager
def _checked_pack(path: Path | None) -> Iterator[Pack | None]:
    """The pack at ``path`` opened (its layout and manifest checked, ``PackRefused``
    otherwise; the rows are checked as adoption reads them), closed after."""
    if path is None:
        yield None
        return
    from .unpack import open_pack

    with open_pack(path) as pack:
        yield pack


def _adopt(
    indexer: Indexer,
    settings: Settings,
    roots: Iterable[Path] | None,
    given: Pack | None,
    embedder: DocumentEmbedder | None,
) -> Adoption | None:
    """Adopt ``given``, else the configured ``prebuilt`` pack when the index is empty (a
    refused or missing one becomes a note: the run indexes locally)."""
    from .index.adopt import Adoption, adopt
    from .pack import PackRefused, provider_name
    from .unpack import open_pack

    walked = tuple(roots) if roots is not None else settings.roots
    stats = IndexStats()
    provider = provider_name(settings)
    if given is not None:
        return adopt(indexer, given, walked, stats, embedder=embedder, provider=provider)
    prebuilt = settings.prebuilt
    if prebuilt is None or indexer.writer.counts()[0]:
        return None
    if not prebuilt.exists():
        return Adoption(notes=[f"the prebuilt pack {prebuilt} does not exist; indexing locally"])
    try:
        with open_pack(prebuilt) as pack:
            return adopt(indexer, pack, walked, stats, embedder=embedder, provider=provider)
    except PackRefused as exc:
        return Adoption(notes=[f"{exc}; indexing locally"])


def _full_run(
    indexer: Indexer,
    w: Writer,
    settings: Settings,
    roots: Iterable[Path] | None,
    rebuild: bool,
    dry_run: bool,
    drain: bool,
) -> IndexStats:
    if w.outdated and not dry_run:  # an older layout: rebuild all of it, not just ``roots``
        return _noted(indexer.run(settings.roots, rebuild=True, drain=drain), w)
    stats = _noted(
        indexer.run(
            tuple(roots) if roots is not None else settings.roots,
            rebuild=rebuild,
            dry_run=dry_run,
            drain=drain,
        ),
        w,
    )
    if roots is None and not rebuild:
        outside = _outside(w, settings)
        if not dry_run:
            indexer.remove(outside)
        stats.removed += len(outside)
    return stats


@contextlib.contextmanager
def _recorded(record: RunRecord | None) -> Iterator[None]:
    """``record`` kept for the run inside (readers see its progress), removed at its end."""
    if record is None:
        yield
        return
    record.start()
    try:
        yield
    finally:
        record.end()


class _Recording(IndexReporter):
    """``inner`` with the run's progress also recorded for readers in other processes."""

    def __init__(self, inner: IndexReporter, record: RunRecord | None) -> None:
        self.inner = inner
        self.record = record

    def on_plan(self, files: int) -> None:
        if self.record is not None:
            self.record.plan(files)
        self.inner.on_plan(files)

    def on_file(self, done: int, key: str) -> None:
        if self.record is not None:
            self.record.file(done)
        self.inner.on_file(done, key)

    def on_note(self, message: str) -> None:
        self.inner.on_note(message)

    def on_embed(self, done: int, total: int) -> None:
        self.inner.on_embed(done, total)


def update_paths(
    settings: Settings,
    paths: Iterable[Path],
    *,
    wait: float = 0.0,
    embedder: DocumentEmbedder | None = None,
    cancel: threading.Event | None = None,
    drain: bool = True,
    ignore: IgnoreRules | None = None,
    session: WriterSession | None = None,
) -> IndexStats:
    """Re-index just these files (saved, created, deleted, renamed) under the writer lock.

    An index with an older layout is rebuilt whole instead. ``drain``, ``ignore``,
    ``session``: as in ``index_project``."""
    with _writing(settings.store_dir, session, wait=wait) as w:
        rules = ignore if ignore is not None else ignore_rules(settings)
        indexer = Indexer(w, settings.project_root, embedder=embedder, cancel=cancel, ignore=rules)
        if w.outdated:
            return indexer.run(settings.roots, rebuild=True, drain=drain)
        return indexer.update_paths(paths, drain=drain)


class Removal(tuple[list[str], list[str]]):
    """What ``remove`` did: (removed document keys, requested paths that matched nothing)."""

    @property
    def removed(self) -> list[str]:
        return self[0]

    @property
    def missing(self) -> list[str]:
        return self[1]


def remove(settings: Settings, paths: Iterable[str], *, cwd: Path | None = None) -> Removal | None:
    """Remove documents (files, or every document under a folder) from the index; None when
    the index is not built. ``paths`` are as a person typed them (relative to ``cwd``) or
    document keys."""
    requested = list(paths)
    if not db_path(settings.store_dir).exists():
        return None
    base = (cwd or Path.cwd()).resolve()
    keys: list[str] = []
    for typed in requested:
        try:
            keys.append(document_key(resolved_parent(base / typed), settings.project_root))
        except KnowledgeError:
            keys.append(typed)
    with open_writer(settings.store_dir) as w:
        removed = Indexer(w, settings.project_root).remove(keys)
    ordered = sorted(removed)
    missing = [
        typed for typed, key in zip(requested, keys, strict=True) if not _covers(key, ordered)
    ]
    return Removal((removed, missing))


def _covers(key: str, ordered: list[str]) -> bool:
    """Did removing ``ordered`` (sorted) remove the document or folder ``key``? Binary searches,
    so checking 14k typed paths against 14k removals is not quadratic ("0" follows "/")."""
    key = key.strip("/")
    if not key:
        return bool(ordered)
    i = bisect.bisect_left(ordered, key)
    if i < len(ordered) and ordered[i] == key:
        return True
    return bisect.bisect_left(ordered, f"{key}/") < bisect.bisect_left(ordered, f"{key}0")


def reset(
    settings: Settings, *, force: bool, notes: list[str] | None = None
) -> tuple[int, int] | None:
    """Empty the index; (documents, chunks) it held, or None when there is no index.

    Without ``force`` nothing is deleted and KnowledgeError says how much would be. With it a
    store that cannot be read is moved aside (a note in ``notes`` says where) and a new, empty
    one created, so ``reset --force`` always recovers: anything but a regular file at the
    store's file names (a FIFO, a folder, a socket, a link) is removed or moved aside first."""
    if not os.path.lexists(db_path(settings.store_dir)):
        if force and odd_files(settings.store_dir):
            (notes if notes is not None else []).extend(clear_odd_files(settings.store_dir))
        return None
    with open_writer(settings.store_dir, recover=force) as w:
        if notes is not None:
            notes.extend(w.cleared)
        if w.recovered:
            if notes is not None:
                notes.append(w.recovered)
            return 0, 0
        docs, chunks = w.counts()
        if not force:
            raise KnowledgeError(
                f"this deletes {docs} documents and {chunks} chunks from {settings.store_dir}; "
                "re-run with --force"
            )
        w.reset()
    return docs, chunks


def _noted(stats: IndexStats, writer: Writer) -> IndexStats:
    for note in (writer.recovered, writer.set_aside, *reversed(writer.cleared)):
        if note:
            stats.notes.insert(0, note)
    return stats


def _outside(writer: Writer, settings: Settings) -> list[str]:
    """Indexed documents that no configured path covers (the paths were narrowed). A path that
    is missing right now (a checkout in progress) still covers what was indexed under it."""
    covered: list[str] = []
    for root in settings.roots:
        key = document_key(inside_root(root, settings.project_root), settings.project_root)
        if not key:
            return []
        covered.append(key)
    rows = writer.conn.execute(f"SELECT path FROM {writer.manifest.tables.documents}")
    paths = [str(path) for (path,) in rows]
    return [p for p in paths if not any(p == k or p.startswith(f"{k}/") for k in covered)]
