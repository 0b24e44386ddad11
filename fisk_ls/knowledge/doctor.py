"""Health checks. Each is (name, ok, fatal, detail); doctor fails when a fatal one fails.

Doctor opens the database itself, read-only and without the store-id and vector-space checks
of a search, so it still runs when the very thing it should diagnose (a model mismatch, a
broken file) is wrong.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from . import schema
from .location import Settings
from .lock import LOCK_NAME, WriterLock
from .regular import kind_of
from .schema import Tables

if TYPE_CHECKING:
    import apsw
from .connect import RECOVERY, connect_reader, explain, scalar
from .errors import ForeignStore, KnowledgeError
from .fts_check import SOUND, CpuBudget, Stopped, fts_mismatch
from .manifest import Manifest, read_manifest
from .store_files import SIDECARS, db_path, odd_file_error, odd_files, store_dir_problem
from .store_id import check_store_id
from .vectors.space import ADDING, Provider, VectorSpace, require_match

FTS_BUDGET = 5.0
"""Seconds of CPU the full-text comparison may take before doctor says it stopped (``--full``:
no limit). CPU, not wall time, so a busy machine does not cut a check short."""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fatal: bool = False

    @property
    def broken(self) -> bool:
        return self.fatal and not self.ok


def run_checks(
    settings: Settings,
    embedder: object | None = None,
    *,
    full: bool = False,
    clock: Callable[[], float] = time.process_time,
) -> list[Check]:
    """Every check, in order. The full-text comparison stops after ``FTS_BUDGET`` seconds on
    ``clock`` (a non-fatal line says so) unless ``full``."""
    checks: list[Check] = []
    budget = partial(CpuBudget, None if full else FTS_BUDGET, clock)
    store_dir = settings.store_dir
    path = db_path(store_dir)
    if not os.path.lexists(path):
        checks.append(
            Check("store", False, f"{path} not built; run `fisk-ai knowledge index`", False)
        )
        if (problem := store_dir_problem(store_dir)) is not None:
            checks.append(Check("store folder", False, problem, fatal=True))
    else:
        checks.append(Check("store", True, str(path)))
        checks.extend(_database_checks(path, budget))
        checks.extend(_mode_checks(store_dir, path))
    checks.append(_lock_check(store_dir))
    checks.extend(_path_checks(settings))
    checks.extend(_embeddings_checks(settings, embedder, path))
    return checks


def _lock_check(store_dir: Path) -> Check:
    for path, kind in odd_files(store_dir, (LOCK_NAME,)):
        return Check("writer lock", False, str(odd_file_error(path, kind)), fatal=True)
    try:
        busy = store_dir.is_dir() and WriterLock(store_dir).is_locked_elsewhere()
    except KnowledgeError as exc:
        return Check("writer lock", True, f"unknown ({exc})")
    return Check("writer lock", True, "a writer is active" if busy else "free")


def _database_checks(path: Path, budget: Callable[[], CpuBudget]) -> list[Check]:
    """Read-only checks: doctor never writes and never waits on a writer (WAL readers do not
    block), so it also runs on read-only media and while an index run is going on."""
    out: list[Check] = []
    try:
        conn = connect_reader(path)
    except Exception as exc:  # any failure to open is the finding
        return [Check("open", False, str(explain(exc, path)), fatal=True)]
    try:
        return _checks_on(conn, path, out, budget)
    except Exception as exc:  # a damaged page found by a later query
        return [*out, Check("read", False, str(explain(exc, path)), fatal=True)]
    finally:
        conn.close()


def _checks_on(
    conn: apsw.Connection, path: Path, out: list[Check], budget: Callable[[], CpuBudget]
) -> list[Check]:
    out.append(Check("FTS5 compiled in", True, "yes", fatal=True))
    mode = scalar(conn, "PRAGMA journal_mode")
    out.append(Check("WAL journal mode", mode == "wal", f"journal_mode={mode}"))
    ok = str(scalar(conn, "PRAGMA quick_check"))
    detail = "ok" if ok == "ok" else f"{ok[:200]}; {RECOVERY}"
    out.append(Check("SQLite integrity", ok == "ok", detail, fatal=True))
    try:
        manifest = read_manifest(conn)
    except Exception as exc:
        return [*out, Check("manifest", False, str(exc), fatal=True)]
    if manifest is None:
        owned = _store_id_check(conn, path, built=False)
        if not owned.ok:  # contents from elsewhere read as "no manifest"
            return [*out, owned]
        out.append(Check("manifest", False, "missing; run `fisk-ai knowledge index`"))
        return out
    out.append(
        Check(
            "manifest",
            True,
            f"format {manifest.format_version}, generation {manifest.generation}, "
            + (
                f"model {manifest.model} dim {manifest.dimension}" if manifest.hybrid else "lexical"
            ),
        )
    )
    out.append(_store_id_check(conn, path))
    missing = _missing_tables(conn, manifest)
    if missing:
        detail = f"generation {manifest.generation} lacks {', '.join(missing)}; {RECOVERY}"
        return [*out, Check("tables", False, detail, fatal=True)]
    out.extend(_fts_checks(conn, manifest.tables, budget))
    return out


def _store_id_check(conn: apsw.Connection, path: Path, built: bool = True) -> Check:
    try:
        check_store_id(conn, path.parent, built=built)
    except ForeignStore as exc:
        return Check("store id", False, str(exc), fatal=True)
    return Check("store id", True, "the contents belong to this store")


def _missing_tables(conn: apsw.Connection, manifest: Manifest) -> list[str]:
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    return [
        t
        for t in schema.required(manifest.generation, manifest.hybrid, manifest.format_version)
        if t not in names
    ]


def _fts_checks(
    conn: apsw.Connection, tables: Tables, budget: Callable[[], CpuBudget]
) -> list[Check]:
    """Every chunk has its full-text row, and the index says what the chunks say: FTS5's own
    integrity-check and its comparison with the chunks' text, on a private copy (fts_check.py),
    since the check is spelled as an INSERT and doctor never writes to a store or takes its
    lock. A comparison that outlives its ``budget`` (started here) stops with a non-fatal
    line saying what it found sound by then: a bound never turns a sound index into a broken
    one."""
    chunks = int(scalar(conn, f"SELECT count(*) FROM {tables.rows}"))
    docsize = int(scalar(conn, f"SELECT count(*) FROM {tables.fts}_docsize"))
    detail = f"{chunks:,} chunks, {docsize:,} indexed rows"
    if chunks != docsize:
        return [Check("FTS consistency", False, f"{detail}; {RECOVERY}", fatal=True)]
    try:
        mismatch = fts_mismatch(conn, tables, budget())
    except Stopped as stop:
        found = f"{stop.done}, but its" if stop.done == SOUND else "its"
        partial = (
            f"stopped after {stop.seconds:g} s of CPU: {found} comparison with the "
            f"{chunks:,} chunks' text did not finish; "
            "run `fisk-ai knowledge doctor --full` to check everything"
        )
        return [Check("FTS consistency", True, detail), Check("FTS comparison", False, partial)]
    if mismatch is not None:
        detail = f"the full-text index does not match the chunks ({mismatch}); {RECOVERY}"
        return [Check("FTS consistency", False, detail, fatal=True)]
    return [Check("FTS consistency", True, f"{detail}, index and chunks agree")]


def _mode_checks(store_dir: Path, path: Path) -> list[Check]:
    out: list[Check] = []
    if (problem := store_dir_problem(store_dir)) is not None:
        out.append(Check("store folder", False, problem, fatal=True))
    try:
        st = os.lstat(store_dir)
        mode = stat.S_IMODE(st.st_mode)
        out.append(Check("store folder mode", mode & 0o077 == 0, f"{mode:04o} (want 0700)"))
    except OSError as exc:
        out.append(Check("store folder mode", False, str(exc)))
    for suffix in ("", *SIDECARS):
        p = Path(f"{path}{suffix}")
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            problem = str(odd_file_error(p, kind_of(st.st_mode)))
            out.append(Check(f"{p.name} mode", False, problem, fatal=True))
            continue
        mode = stat.S_IMODE(st.st_mode)
        out.append(Check(f"{p.name} mode", mode & 0o077 == 0, f"{mode:04o} (want 0600)"))
    writable = os.access(path, os.W_OK) and os.access(store_dir, os.W_OK)
    out.append(
        Check("index writable", writable, "yes" if writable else "no write access for this user")
    )
    return out


def _path_checks(settings: Settings) -> list[Check]:
    out = []
    for root in settings.roots:
        exists = root.exists()
        out.append(Check(f"path {root}", exists, "exists" if exists else "does not exist"))
    return out


def _embeddings_checks(settings: Settings, embedder: object | None, path: Path) -> list[Check]:
    """Which provider and model files are used, whether the provider answers, and the one
    vector-space comparison index runs and searches make (space.require_match)."""
    cfg = settings.embeddings
    if cfg is None or embedder is None:
        return [Check("embeddings", True, "not configured (lexical only)")]
    from .errors import EmbeddingsError, KnowledgeError, VectorSpaceMismatch

    out: list[Check] = []
    files = getattr(embedder, "describe_files", None)
    if callable(files):
        try:
            out.append(Check("model files", True, str(files())))
        except KnowledgeError as exc:  # a failed download, no model anywhere
            return [*out, Check("model files", False, str(exc))]
    try:
        dim = int(embedder.probe_dimension())  # type: ignore[attr-defined]
    except KnowledgeError as exc:  # unreachable, the runtime missing, a model that cannot load
        reason = exc.reason if isinstance(exc, EmbeddingsError) else str(exc)
        return [*out, Check("embeddings reachable", False, reason)]
    provider = cast("Provider", embedder)
    where = f"builtin ({provider.model})" if cfg.builtin else cfg.base_url
    out.append(
        Check(
            "embeddings reachable",
            True,
            f"{where} model={cfg.model} dim={dim} "
            f"query_prefix={cfg.query_prefix!r} document_prefix={cfg.document_prefix!r}",
        )
    )
    if not path.exists():
        return out
    try:
        conn = connect_reader(path)
        try:
            manifest = read_manifest(conn)
            chunks = 0
            if manifest is not None:
                chunks = int(scalar(conn, f"SELECT count(*) FROM {manifest.tables.rows}"))
        finally:
            conn.close()
    except Exception as exc:
        return [*out, Check("vector space", False, str(exc))]
    if manifest is None or not manifest.hybrid:
        detail = f"lexical-only index, 0 of {chunks:,} chunks have vectors: {ADDING}"
        return [*out, Check("vector space", True, detail)]
    try:
        require_match(manifest, VectorSpace.of_provider(provider, dim))
    except VectorSpaceMismatch as exc:
        return [*out, Check("vector space", False, str(exc), fatal=True)]
    same = "pinned model, dimension, prefixes and normalisation match"
    out.append(Check("vector space", True, same))
    return out
