"""Reading a knowledge pack (pack.py) that comes from an artifact store: nothing in it is
trusted.

``open_pack`` copies (and decompresses) it into a private folder within a size bound, then opens
the copy read-only and immutable with SQLite's defensive mode and a value-length limit. Its
header must describe a whole rollback-journal database (a truncated file is refused before
SQLite reads a page), its schema must be exactly the one ``pack.write_pack`` creates (no
trigger, view, index or table of anything else) and its manifest must carry every key with a
valid value. ``Pack.check`` then reads every row once: paths relative and inside the project,
hashes well formed, each chunk's hash its text's, ordinals in order, vectors finite, of the
manifest's dimension and of unit length, every count as the manifest says. A refusal is one
``PackRefused`` line, raised before anything of the local index is written.
"""

from __future__ import annotations

import contextlib
import gzip
import lzma
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

from . import schema
from .pack import (
    MANIFEST_KEYS,
    MAX_PACK_BYTES,
    MAX_PATH_CHARS,
    MAX_VALUE_BYTES,
    PACK_FORMAT,
    PACK_VERSION,
    SCHEMA,
    PackChunk,
    PackDocument,
    PackManifest,
    PackRefused,
    parse_manifest,
)
from .vectors.space import UNIT_TOLERANCE

if TYPE_CHECKING:
    import apsw

_GZIP = b"\x1f\x8b"
_XZ = b"\xfd7zXZ\x00"
_SQLITE = b"SQLite format 3\x00"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\\]")


def open_pack(path: Path, *, limit: int | None = None) -> Pack:
    """The pack at ``path``, copied (decompressed) into a private folder and opened read-only;
    its layout and manifest checked (``Pack.check`` reads the rows). PackRefused otherwise."""
    bound = MAX_PACK_BYTES if limit is None else limit
    work = Path(tempfile.mkdtemp(prefix="fisk-pack-"))
    try:
        copy = work / "pack.sqlite"
        _materialise(path, copy, bound)
        return Pack(path, work, copy)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _refuse(path: Path, problem: str) -> PackRefused:
    return PackRefused(f"refused the pack {path}: {problem}; the local index is unchanged")


def _materialise(path: Path, copy: Path, bound: int) -> None:
    from .regular import NotRegular, open_regular

    try:
        fd = open_regular(path)
    except NotRegular as exc:
        raise _refuse(path, exc.strerror or "not a regular file") from None
    except OSError as exc:
        raise _refuse(path, exc.strerror or str(exc)) from None
    with os.fdopen(fd, "rb") as src:
        head = src.read(len(_SQLITE))
        src.seek(0)
        stream: BinaryIO
        if head.startswith(_GZIP):
            stream = gzip.GzipFile(fileobj=src, mode="rb")  # type: ignore[assignment]
        elif head.startswith(_XZ):
            stream = lzma.LZMAFile(src, "rb")  # type: ignore[assignment]  # noqa: SIM115
        elif head == _SQLITE:
            stream = src
        else:
            raise _refuse(path, "it is not a knowledge pack (not SQLite, gzip or xz)")
        written = 0
        fd_out = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd_out, "wb") as out:
            try:
                while part := stream.read(1 << 20):
                    written += len(part)
                    if written > bound:
                        raise _refuse(path, f"it is larger than {bound:,} bytes")
                    out.write(part)
            except (EOFError, OSError, lzma.LZMAError) as exc:
                raise _refuse(path, f"it is truncated or damaged ({exc})") from None


class Pack:
    """An opened pack: a private read-only copy; ``close`` removes it."""

    def __init__(self, source: Path, work: Path, copy: Path) -> None:
        self.source = source
        self._work = work
        self._copy = copy
        self.conn = self._open()
        try:
            self._check_layout()
            self.manifest = self._read_manifest()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Pack:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        shutil.rmtree(self._work, ignore_errors=True)

    def refuse(self, problem: str) -> PackRefused:
        return _refuse(self.source, problem)

    def _open(self) -> apsw.Connection:
        import apsw

        raw = self._copy.read_bytes()[:100] if self._copy.stat().st_size >= 100 else b""
        if len(raw) < 100 or not raw.startswith(_SQLITE):
            raise self.refuse("it is not a knowledge pack (no SQLite header)")
        page = int.from_bytes(raw[16:18], "big")
        page = 65536 if page == 1 else page
        pages = int.from_bytes(raw[28:32], "big")
        size = self._copy.stat().st_size
        if raw[18] != 1 or raw[19] != 1:
            raise self.refuse("it is not a knowledge pack (a write-ahead-log database)")
        if page < 512 or page & (page - 1) or pages * page != size:
            raise self.refuse(f"it is truncated ({size:,} bytes, its header says {pages * page:,})")
        uri = "file:" + _quote(str(self._copy)) + "?immutable=1"
        flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_NOFOLLOW
        try:
            conn = apsw.Connection(uri, flags=flags)
        except apsw.Error as exc:
            raise self.refuse(f"it cannot be opened ({exc})") from None
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
        conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        conn.execute("PRAGMA query_only=1")
        conn.execute("PRAGMA cell_size_check=1")
        return conn

    def _rows(
        self, sql: str, params: tuple[Any, ...] = (), cursor: apsw.Cursor | None = None
    ) -> Iterator[tuple[Any, ...]]:
        import apsw

        try:
            yield from (cursor or self.conn.cursor()).execute(sql, params)
        except apsw.Error as exc:
            raise self.refuse(f"it is damaged ({exc})") from None

    def _check_layout(self) -> None:
        """The schema must be exactly :data:`SCHEMA` (no trigger, view, index or table else)."""
        wanted = _expected_layout()
        found = sorted(
            (str(t), str(n), str(tb), str(s))
            for t, n, tb, s in self._rows("SELECT type, name, tbl_name, sql FROM sqlite_master")
        )
        if found != wanted:
            extra = sorted({(t, n) for t, n, _, _ in found} - {(t, n) for t, n, _, _ in wanted})
            what = f"an unknown {extra[0][0]} {extra[0][1][:60]!r}" if extra else "another layout"
            raise self.refuse(f"it is not data fisk-ls wrote ({what})")

    def _read_manifest(self) -> PackManifest:
        rows: dict[str, str] = {}
        for key, value in self._rows("SELECT key, value FROM manifest"):
            if not isinstance(key, str) or not isinstance(value, str):
                raise self.refuse("its manifest holds a value that is not text")
            rows[key] = value
        if set(rows) != set(MANIFEST_KEYS):
            odd = sorted(set(rows) ^ set(MANIFEST_KEYS))
            raise self.refuse(f"its manifest is not fisk-ls's (key {odd[0]!r})")
        if rows["format"] != PACK_FORMAT:
            raise self.refuse("it is not a knowledge pack (its manifest names another format)")
        if rows["pack_version"] != str(PACK_VERSION):
            raise self.refuse(
                f"it is pack version {rows['pack_version'][:20]!r}; this fisk-ls reads "
                f"{PACK_VERSION}: build the pack with the same fisk-ls"
            )
        if rows["store_format"] != str(schema.FORMAT_VERSION):
            raise self.refuse(
                f"its chunks are of store format {rows['store_format'][:20]!r}; this fisk-ls "
                f"writes {schema.FORMAT_VERSION}: build the pack with the same fisk-ls"
            )
        try:
            return parse_manifest(rows)
        except ValueError as exc:
            raise self.refuse(f"its manifest is invalid ({exc})") from None

    def documents(self) -> dict[str, str]:
        """Every document's path → content hash, checked (paths unique: the layout says so)."""
        return {
            self._key(key): self._digest(digest)
            for key, digest in self._rows("SELECT path, hash FROM documents")
        }

    def stream(self) -> Iterator[PackDocument]:
        """Every document with its chunks, checked, in one pass over the pack (documents by id,
        chunks by document and ordinal, merged); once all are read, the counts are compared
        with the manifest. PackRefused at the first problem."""
        chunk_rows = self._rows(
            "SELECT c.document_id, c.ordinal, c.section, t.body, c.cjk, c.start_line,"
            " c.end_line, c.hash, c.near FROM chunks AS c LEFT JOIN texts AS t"
            " ON t.id = c.text_id ORDER BY c.document_id, c.ordinal",
            cursor=self.conn.cursor(),
        )
        pending = next(chunk_rows, None)
        documents = chunks = 0
        for row in self._rows(
            "SELECT id, path, hash, title, doc, tags, chunk_count FROM documents ORDER BY id"
        ):
            doc_id, key, digest, title, doc, tags, count = row
            key = self._key(key)
            if not all(isinstance(v, str) for v in (title, doc, tags)) or type(count) is not int:
                raise self.refuse(f"document {key!r} has a value of the wrong type")
            if pending is not None and pending[0] < doc_id:
                raise self.refuse("it holds chunks of no document")
            mine: list[PackChunk] = []
            while pending is not None and pending[0] == doc_id:
                mine.append(self._chunk(key, pending[1:]))
                pending = next(chunk_rows, None)
            if [c.ordinal for c in mine] != list(range(count)):
                raise self.refuse(
                    f"document {key!r} says {count} chunks but holds {len(mine)} in another order"
                )
            taglist = tuple(t for t in tags.split("\n") if t)
            if any(len(t) > 200 for t in taglist):
                raise self.refuse(f"document {key!r} has a tag longer than 200 characters")
            documents += 1
            chunks += len(mine)
            yield PackDocument(key, self._digest(digest), title, doc, taglist, mine)
        if pending is not None:
            raise self.refuse("it holds chunks of no document")
        texts = next(self._rows("SELECT count(*) FROM texts"))[0]
        self._counted(documents=documents, chunks=chunks, texts=texts)

    def check_vectors(self) -> int:
        """Every vector read once, in batches: of the manifest's dimension, finite, of unit
        length, as many as the manifest says. Returns how many."""
        import numpy as np

        space = self.manifest.space
        count = 0
        batch: list[bytes] = []

        def flush() -> None:
            if not batch:
                return
            assert space is not None
            matrix = np.frombuffer(b"".join(batch), dtype="<f4").reshape(len(batch), -1)
            if not np.isfinite(matrix).all():
                raise self.refuse("a vector holds NaN or infinite numbers")
            wide = matrix.astype(np.float64)
            if (np.abs(np.einsum("ij,ij->i", wide, wide) - 1.0) > UNIT_TOLERANCE).any():
                raise self.refuse("a vector is not of unit length")
            batch.clear()

        for chash, blob in self._rows("SELECT hash, embedding FROM vectors"):
            if not isinstance(chash, bytes) or len(chash) != 16 or not isinstance(blob, bytes):
                raise self.refuse("a vector row is malformed")
            if space is None:
                raise self.refuse("it holds vectors but its manifest names no vector space")
            if len(blob) != 4 * space.dimension:
                raise self.refuse(
                    f"a vector has {len(blob) // 4} numbers, the manifest says {space.dimension}"
                )
            batch.append(blob)
            count += 1
            if len(batch) >= 4096:
                flush()
        flush()
        self._counted(vectors=count)
        return count

    def vectors(self, hashes: list[str]) -> dict[str, bytes]:
        """The pack's vectors of these chunk hashes (``check_vectors`` checked them all)."""
        out: dict[str, bytes] = {}
        for i in range(0, len(hashes), 500):
            part = [bytes.fromhex(h) for h in hashes[i : i + 500]]
            marks = ",".join("?" * len(part))
            for chash, blob in self._rows(
                f"SELECT hash, embedding FROM vectors WHERE hash IN ({marks})", tuple(part)
            ):
                out[chash.hex()] = blob
        return out

    def check(self) -> PackManifest:
        """Read every row once (``stream`` and ``check_vectors``): PackRefused at the first
        problem."""
        for _ in self.stream():
            pass
        self.check_vectors()
        return self.manifest

    def _counted(self, **counts: int) -> None:
        said = {
            "documents": self.manifest.documents,
            "chunks": self.manifest.chunks,
            "texts": self.manifest.texts,
            "vectors": self.manifest.vectors,
        }
        for name, count in counts.items():
            if count != said[name]:
                raise self.refuse(f"its manifest says {said[name]} {name} but it holds {count}")

    # -- one value each ----------------------------------------------------------------------

    def _key(self, key: object) -> str:
        problem = key_problem(key)
        if problem is not None:
            raise self.refuse(problem)
        assert isinstance(key, str)
        return key

    def _digest(self, digest: object) -> str:
        if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
            raise self.refuse("a document's content hash is not a SHA-256 in hex")
        return digest

    def _chunk(self, key: str, row: tuple[Any, ...]) -> PackChunk:
        from .index.examine import chunk_hash_of

        ordinal, section, body, cjk, start, end, chash, near = row
        if (
            type(ordinal) is not int
            or not isinstance(section, str)
            or not isinstance(body, str)
            or not (cjk is None or isinstance(cjk, str))
            or type(start) is not int
            or type(end) is not int
            or not 1 <= start <= end
            or not isinstance(chash, bytes)
            or not isinstance(near, bytes)
        ):
            raise self.refuse(f"a chunk of {key!r} is malformed")
        digest = chunk_hash_of(section, body)
        if chash.hex() != digest:
            raise self.refuse(f"a chunk of {key!r} does not hash to its text")
        if len(near) != 8:
            raise self.refuse(f"a chunk of {key!r} has a malformed near-duplicate key")
        return PackChunk(ordinal, section, body, cjk, start, end, digest, "n:" + near.hex())


def key_problem(key: object) -> str | None:
    """Why ``key`` cannot be a document path of a pack (None when it can): it must be relative,
    inside the project, in ``/`` form, without ``.``/``..`` parts or control characters."""
    if not isinstance(key, str) or not key:
        return "a document path is empty or not text"
    shown = repr(key[:80])
    if len(key) > MAX_PATH_CHARS:
        return f"a document path is longer than {MAX_PATH_CHARS} characters"
    if key.startswith("/") or re.match(r"[A-Za-z]:", key) or key.startswith("\\"):
        return f"the document path {shown} is absolute"
    if _UNSAFE.search(key):
        return f"the document path {shown} holds a backslash or a control character"
    if any(part in ("", ".", "..") for part in key.split("/")):
        return f"the document path {shown} leaves the project (or is not normalised)"
    return None


def _expected_layout() -> list[tuple[str, str, str, str]]:
    import apsw

    conn = apsw.Connection(":memory:")
    try:
        conn.execute(SCHEMA)
        return sorted(
            (str(t), str(n), str(tb), str(s))
            for t, n, tb, s in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
        )
    finally:
        conn.close()


def _quote(path: str) -> str:
    import urllib.parse

    return urllib.parse.quote(path)
