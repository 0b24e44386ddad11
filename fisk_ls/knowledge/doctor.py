"""Health checks. Each is (name, ok, fatal, detail); doctor fails when a fatal one fails.

Doctor opens the database itself, read-only and without the identity checks of a search, so it
still runs when the very thing it should diagnose (a model mismatch, a broken file) is wrong.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .location import Settings
from .lock import WriterLock
from .schema import Tables
from .store import (
    SIDECARS,
    connect_reader,
    db_path,
    read_manifest,
    scalar,
)
from .vectors.identity import LEXICAL_ONLY, VectorIdentity, differences, mismatch_message


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fatal: bool = False

    @property
    def broken(self) -> bool:
        return self.fatal and not self.ok


def run_checks(settings: Settings, embedder: object | None = None) -> list[Check]:
    checks: list[Check] = []
    store_dir = settings.store_dir
    path = db_path(store_dir)
    if not path.exists():
        checks.append(
            Check("store", False, f"{path} not built; run `fisk-ai knowledge index`", False)
        )
    else:
        checks.append(Check("store", True, str(path)))
        checks.extend(_database_checks(path))
        checks.extend(_mode_checks(store_dir, path))
    lock = WriterLock(store_dir)
    busy = store_dir.is_dir() and lock.is_locked_elsewhere()
    checks.append(Check("writer lock", True, "held by a running writer" if busy else "free"))
    checks.extend(_path_checks(settings))
    checks.extend(_embeddings_checks(settings, embedder, path))
    return checks


def _database_checks(path: Path) -> list[Check]:
    out: list[Check] = []
    try:
        conn = connect_reader(path)
    except Exception as exc:  # any failure to open is the finding
        return [Check("open", False, str(exc), fatal=True)]
    try:
        out.append(Check("FTS5 compiled in", True, "yes", fatal=True))
        mode = scalar(conn, "PRAGMA journal_mode")
        out.append(Check("WAL journal mode", mode == "wal", f"journal_mode={mode}"))
        ok = scalar(conn, "PRAGMA quick_check")
        out.append(Check("SQLite integrity", ok == "ok", str(ok), fatal=True))
        try:
            manifest = read_manifest(conn)
        except Exception as exc:
            return [*out, Check("manifest", False, str(exc), fatal=True)]
        if manifest is None:
            out.append(Check("manifest", False, "missing; run `fisk-ai knowledge index`"))
            return out
        out.append(
            Check(
                "manifest",
                True,
                f"format {manifest.format_version}, generation {manifest.generation}, "
                + (
                    f"model {manifest.model} dim {manifest.dimension}"
                    if manifest.hybrid
                    else "lexical"
                ),
            )
        )
        out.append(_fts_check(path, conn, manifest.tables))
    finally:
        conn.close()
    return out


def _fts_check(path: Path, conn: object, tables: Tables) -> Check:
    """FTS5's own integrity-check (it is spelled as an INSERT but writes nothing, so it needs a
    read-write handle); on read-only media, fall back to comparing row counts."""
    import apsw

    fts = tables.fts
    try:
        rw = apsw.Connection(
            str(path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
        )
    except apsw.Error:
        return _fts_counts(conn, tables)
    try:
        rw.setbusytimeout(5000)
        rw.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
        return Check("FTS consistency", True, "full-text index matches the chunks", fatal=True)
    except apsw.Error as exc:
        return Check("FTS consistency", False, f"{exc}; run --reindex", fatal=True)
    finally:
        rw.close()


def _fts_counts(conn: object, tables: Tables) -> Check:
    c = conn.execute  # type: ignore[attr-defined]
    chunks = c(f"SELECT count(*) FROM {tables.chunks}").fetchone()[0]
    docsize = c(f"SELECT count(*) FROM {tables.fts}_docsize").fetchone()[0]
    ok = chunks == docsize
    detail = f"{chunks} chunks, {docsize} indexed rows"
    return Check("FTS consistency", ok, detail if ok else f"{detail}; run --reindex", fatal=True)


def _mode_checks(store_dir: Path, path: Path) -> list[Check]:
    out: list[Check] = []
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
        if stat.S_ISLNK(st.st_mode):
            out.append(Check(f"{p.name} mode", False, "is a symlink; remove it", fatal=True))
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
    cfg = settings.embeddings
    if cfg is None or embedder is None:
        return [Check("embeddings", True, "not configured (lexical only)")]
    from .errors import EmbeddingsError, KnowledgeError

    out: list[Check] = []
    try:
        dim = int(embedder.probe_dimension())  # type: ignore[attr-defined]
    except EmbeddingsError as exc:
        return [Check("embeddings reachable", False, exc.reason)]
    except KnowledgeError as exc:  # the builtin provider without its extra, a bad model_path
        return [Check("embeddings reachable", False, str(exc))]
    where = f"builtin ({embedder.model})" if cfg.builtin else cfg.base_url  # type: ignore[attr-defined]
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
        manifest = read_manifest(conn)
        conn.close()
    except Exception as exc:
        return [*out, Check("identity", False, str(exc))]
    pinned = VectorIdentity.pinned(manifest) if manifest is not None else None
    if pinned is None:
        out.append(Check("identity", False, LEXICAL_ONLY))
        return out
    wrong = differences(pinned, VectorIdentity.of_config(cfg, dim))
    out.append(
        Check(
            "identity",
            not wrong,
            mismatch_message(wrong)
            if wrong
            else "pinned model, dimension, prefixes and normalisation match",
            fatal=bool(wrong),
        )
    )
    return out
