"""Knowledge packs: one portable file of a project's index, written once (in CI) and adopted by
every copy of the project (index/adopt.py).

A pack is an SQLite database (optionally gzip- or xz-compressed whole: ``OUT.gz``, ``OUT.xz``)
holding the live generation's documents by relative path with their content hashes (SHA-256 of
the file's bytes), their chunks (each distinct body once), the chunks' vectors keyed by chunk
hash, and a manifest: the pack and store formats, the vector space (provider, model, dimension,
prefixes), the project's name, the git commit when in a repository, the counts and the creation
time. It is deterministic: the same index gives the same bytes (rows in key order, one
``VACUUM``); the creation time is ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now.
It is written to a temporary file beside ``OUT`` and renamed into place.

A pack comes from an artifact store, so reading one (unpack.py) trusts nothing in it.
"""

from __future__ import annotations

import datetime
import gzip
import lzma
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import schema
from .connect import scalar
from .errors import KnowledgeError
from .manifest import Manifest
from .store import Store
from .store_files import db_path
from .vectors.space import VectorSpace

if TYPE_CHECKING:
    import apsw

    from .location import Settings

PACK_FORMAT = "fisk-ls knowledge pack"
PACK_VERSION = 1
"""Bumped when the pack's layout changes; a reader refuses any other version."""

MAX_PACK_BYTES = 8 << 30
"""The largest pack accepted, compressed or not (the PowerShell docs' pack with 384-dimension
vectors is about 0.4 GB)."""
MAX_VALUE_BYTES = 4 << 20
"""The longest text or blob one pack value may hold (SQLite's length limit on its connection)."""
MAX_PATH_CHARS = 4096
MAX_DIMENSION = 8192

SCHEMA = """
CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE documents (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  hash TEXT NOT NULL,
  title TEXT NOT NULL,
  doc TEXT NOT NULL,
  tags TEXT NOT NULL,
  chunk_count INTEGER NOT NULL
);
CREATE TABLE texts (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE chunks (
  document_id INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  section TEXT NOT NULL,
  text_id INTEGER NOT NULL,
  cjk TEXT,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  hash BLOB NOT NULL,
  near BLOB NOT NULL,
  PRIMARY KEY (document_id, ordinal)
) WITHOUT ROWID;
CREATE TABLE vectors (hash BLOB PRIMARY KEY, embedding BLOB NOT NULL) WITHOUT ROWID;
"""
"""The pack's layout (version 1). ``documents.tags``: the front-matter tags, one a line."""

MANIFEST_KEYS = (
    "format",
    "pack_version",
    "store_format",
    "project",
    "commit",
    "created",
    "documents",
    "chunks",
    "texts",
    "vectors",
    "provider",
    "model",
    "dimension",
    "query_prefix",
    "document_prefix",
    "normalized",
)

_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class PackRefused(KnowledgeError):
    """A pack that is not data this product wrote, or not whole; the message names the problem.
    Nothing of the local index was changed."""


@dataclass(frozen=True)
class PackManifest:
    """What a pack says about itself."""

    store_format: int
    project: str
    commit: str
    created: str
    documents: int
    chunks: int
    texts: int
    vectors: int
    provider: str
    space: VectorSpace | None
    """The vectors' vector space; None for a pack without vectors."""

    def describe(self) -> str:
        what = f"{self.documents} documents, {self.chunks} chunks"
        if self.space is not None:
            what += f", {self.vectors} vectors ({self.provider} {self.space.describe()})"
        at = f" at {self.commit[:12]}" if self.commit else ""
        return f"pack of {self.project or 'a project'}{at}: {what}"


@dataclass(frozen=True)
class PackStats:
    """What ``write_pack`` wrote."""

    path: Path
    bytes: int
    store_bytes: int
    manifest: PackManifest


@dataclass
class PackDocument:
    """One document of a pack, its chunks and their vectors read and checked."""

    path: str
    hash: str
    title: str
    doc: str
    tags: tuple[str, ...]
    chunks: list[PackChunk]


@dataclass(frozen=True)
class PackChunk:
    ordinal: int
    section: str
    body: str
    cjk: str | None
    start_line: int
    end_line: int
    hash: str
    """The chunk's digest in hex (the vector cache's key)."""
    near: str
    """collapse.py's near-duplicate key (``n:`` + hex)."""


# -- writing -------------------------------------------------------------------------------------


def provider_name(settings: Settings) -> str:
    """The embeddings provider as the manifest names it ("" for a lexical-only project)."""
    embeddings = settings.embeddings
    return "" if embeddings is None else str(getattr(embeddings, "provider", "") or "openai")


def write_pack(settings: Settings, out: Path, *, now: datetime.datetime | None = None) -> PackStats:
    """Write the project's live index to ``out`` (``.gz`` / ``.xz``: compressed), atomically.

    KnowledgeError when the index is not built or is empty."""
    store = Store(settings.store_dir)
    try:
        with store.snapshot() as snap:
            if snap is None:
                raise KnowledgeError(
                    "the knowledge index is not built; run `fisk-ai knowledge index` first"
                )
            if snap.manifest.format_version != schema.FORMAT_VERSION:
                raise KnowledgeError(
                    "the index has an older layout; run `fisk-ai knowledge index` first"
                )
            if snap.manifest.hybrid:
                store.ensure_vec(snap.conn)
            manifest = _manifest(settings, snap.conn, snap.manifest, now)
            out = Path(os.path.abspath(out))
            try:
                size = _write_file(out, snap.conn, snap.manifest, manifest)
            except OSError as exc:
                raise KnowledgeError(
                    f"cannot write the pack {out}: {exc.strerror or exc}"
                ) from None
    finally:
        store.close()
    store_bytes = sum(
        p.stat().st_size
        for p in (db_path(settings.store_dir), Path(f"{db_path(settings.store_dir)}-wal"))
        if p.exists()
    )
    return PackStats(out, size, store_bytes, parse_manifest(manifest))


def _write_file(out: Path, src: apsw.Connection, live: Manifest, manifest: dict[str, str]) -> int:
    """The pack built in a temporary folder beside ``out``, renamed into place; its size."""
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".fisk-pack-", dir=out.parent))
    try:
        plain = work / "pack.sqlite"
        _fill(plain, src, live, manifest)
        final = work / "pack.out"
        _compress(plain, final, out.suffix)
        os.chmod(final, 0o644)
        size = final.stat().st_size
        os.replace(final, out)
        return size
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _created(now: datetime.datetime | None) -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if now is None and epoch.isdigit():
        now = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
    moment = now or datetime.datetime.now(datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_commit(root: Path) -> str:
    """The commit checked out at ``root`` ("" outside a git repository or without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _COMMIT.fullmatch(commit) else ""


def _manifest(
    settings: Settings,
    conn: apsw.Connection,
    live: Manifest,
    now: datetime.datetime | None,
) -> dict[str, str]:
    t = live.tables
    vectors = 0
    if live.hybrid:
        vectors = scalar(conn, f"SELECT count(DISTINCT hash) FROM {t.rows} WHERE embedded = 1")
    counts = {
        "documents": scalar(conn, f"SELECT count(*) FROM {t.documents}"),
        "chunks": scalar(conn, f"SELECT count(*) FROM {t.rows}"),
        "texts": scalar(conn, f"SELECT count(DISTINCT text_id) FROM {t.rows}"),
    }
    return {
        "format": PACK_FORMAT,
        "pack_version": str(PACK_VERSION),
        "store_format": str(live.format_version),
        "project": settings.project_root.name,
        "commit": git_commit(settings.project_root),
        "created": _created(now),
        **{k: str(int(v)) for k, v in counts.items()},
        "vectors": str(vectors),
        "provider": provider_name(settings) if live.hybrid else "",
        "model": live.model if live.hybrid else "",
        "dimension": str(live.dimension if live.hybrid else 0),
        "query_prefix": live.query_prefix if live.hybrid else "",
        "document_prefix": live.document_prefix if live.hybrid else "",
        "normalized": "true" if live.hybrid and live.normalized else "false",
    }


def _fill(path: Path, src: apsw.Connection, live: Manifest, manifest: dict[str, str]) -> None:
    """The pack's rows, in key order (the same index gives the same file)."""
    import apsw

    t = live.tables
    conn = apsw.Connection(str(path))
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA page_size=4096")
        conn.execute(SCHEMA)
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO manifest(key, value) VALUES (?, ?)", sorted(manifest.items()))
        texts: dict[int, int] = {}
        docs = src.execute(
            f"SELECT id, path, hash, title, doc, chunk_count FROM {t.documents} ORDER BY path"
        ).fetchall()
        for number, (doc_id, key, digest, title, doc, count) in enumerate(docs, 1):
            tags = "\n".join(
                sorted(
                    str(r[0])
                    for r in src.execute(
                        f"SELECT tag FROM {t.tags} WHERE document_id = ?", (doc_id,)
                    )
                )
            )
            conn.execute(
                "INSERT INTO documents(id, path, hash, title, doc, tags, chunk_count)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (number, key, digest, title, doc, tags, count),
            )
            rows = src.execute(
                f"SELECT r.ordinal, r.section, r.text_id, x.body, r.cjk, r.start_line,"
                f" r.end_line, r.hash, r.near FROM {t.rows} AS r JOIN {t.texts} AS x"
                " ON x.id = r.text_id WHERE r.document_id = ? ORDER BY r.ordinal",
                (doc_id,),
            ).fetchall()
            for ordinal, section, text_id, body, cjk, start, end, chash, near in rows:
                source_id: int = text_id  # type: ignore[assignment]
                mine = texts.get(source_id)
                if mine is None:
                    mine = texts[source_id] = len(texts) + 1
                    conn.execute("INSERT INTO texts(id, body) VALUES (?, ?)", (mine, body))
                conn.execute(
                    "INSERT INTO chunks(document_id, ordinal, section, text_id, cjk, start_line,"
                    " end_line, hash, near) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (number, ordinal, section, mine, cjk, start, end, chash, near),
                )
        if live.hybrid:
            conn.executemany(
                "INSERT OR IGNORE INTO vectors(hash, embedding) VALUES (?, ?)",
                src.execute(
                    f"SELECT r.hash, v.embedding FROM {t.rows} AS r JOIN {t.vec} AS v"
                    " ON v.chunk_id = r.id WHERE r.embedded = 1 ORDER BY r.hash"
                ),
            )
        conn.execute("COMMIT")
        conn.execute("VACUUM")
    finally:
        conn.close()


def _compress(plain: Path, out: Path, suffix: str) -> None:
    """``plain`` as ``out``: gzip (no name, time 0) for ``.gz``, xz for ``.xz``, else as is."""
    if suffix not in (".gz", ".xz"):
        os.replace(plain, out)
        return
    with plain.open("rb") as src, out.open("wb") as raw:
        if suffix == ".gz":
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                shutil.copyfileobj(src, gz, 1 << 20)
        else:
            with lzma.LZMAFile(raw, "wb", preset=6) as xz:
                shutil.copyfileobj(src, xz, 1 << 20)
        raw.flush()
        os.fsync(raw.fileno())


def parse_manifest(rows: dict[str, str]) -> PackManifest:
    def count(name: str) -> int:
        value = rows[name]
        if not value.isdigit() or len(value) > 12:
            raise ValueError(f"{name} {value[:20]!r} is not a count")
        return int(value)

    dimension = count("dimension")
    if dimension > MAX_DIMENSION:
        raise ValueError(f"dimension {dimension} is larger than {MAX_DIMENSION}")
    if rows["normalized"] not in ("true", "false"):
        raise ValueError("normalized is neither true nor false")
    commit = rows["commit"]
    if commit and not _COMMIT.fullmatch(commit):
        raise ValueError("commit is not a git commit id")
    space = None
    if rows["model"] and dimension:
        if rows["normalized"] != "true":
            raise ValueError("its vectors are not normalised")
        space = VectorSpace(
            rows["model"], dimension, rows["query_prefix"], rows["document_prefix"], True
        )
    elif count("vectors"):
        raise ValueError("it counts vectors but names no model and dimension")
    for name in ("project", "created", "provider", "model", "query_prefix", "document_prefix"):
        if len(rows[name]) > 1000:
            raise ValueError(f"{name} is longer than 1000 characters")
    return PackManifest(
        store_format=count("store_format"),
        project=rows["project"],
        commit=commit,
        created=rows["created"],
        documents=count("documents"),
        chunks=count("chunks"),
        texts=count("texts"),
        vectors=count("vectors"),
        provider=rows["provider"],
        space=space,
    )
