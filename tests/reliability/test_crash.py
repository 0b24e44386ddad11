"""kill -9 during index runs: the database stays sound and every document is old or new."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from fisk_ls.knowledge import (
    SearchRequest,
    Settings,
    resolve_settings,
)
from fisk_ls.knowledge.connect import load_vec
from fisk_ls.knowledge.store_files import db_path
from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.hybrid import index_project, reader
from tests.support.waiting import HANG_GUARD

pytestmark = pytest.mark.slow


def version_text(i: int, v: int, big: bool) -> str:
    body = f"version {v} of file {i}. " * (400 if big else 8)
    return f"# File {i}\n\n## Part A\n\n{body}\n\n## Part B\n\nmarker v{v} f{i}\n"


def write_versions(root: Path, v: int, files: int) -> dict[str, str]:
    hashes = {}
    for i in range(files):
        big = i % 10 == 0
        text = version_text(i, v, big)
        p = root / "docs" / f"f{i:04}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        hashes[f"docs/f{i:04}.md"] = hashlib.sha256(text.encode()).hexdigest()
    return hashes


def check_sound(
    settings: Settings, allowed: dict[str, set[str]], *, hybrid: bool = False, full: bool = False
) -> None:
    """Every document old or new and whole; with ``hybrid``, every vector belongs to a chunk
    flagged embedded and every flagged chunk has exactly one (``full``: every chunk does)."""
    conn = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert conn.execute("PRAGMA integrity_check").get == "ok"
        gen = dict(conn.execute("SELECT key, value FROM rag_meta"))["generation"]
        d, c = f"documents_{gen}", f"chunks_{gen}"
        rows = list(
            conn.execute(
                f"SELECT d.path, d.hash, d.chunk_count, (SELECT count(*) FROM {c} WHERE document_id = d.id)"
                f" FROM {d} d"
            )
        )
        for path, digest, count, actual in rows:
            assert digest in allowed[path], f"{path} is neither its old nor its new version"
            assert count == actual, f"{path}: half-written chunks"
        fts = f"chunks_fts_{gen}"
        docsize = conn.execute(f"SELECT count(*) FROM {fts}_docsize").get
        chunks = conn.execute(f"SELECT count(*) FROM {c}").get
        assert docsize == chunks
        if hybrid:
            load_vec(conn)
            v = f"chunks_vec_{gen}"
            vecs = [r[0] for r in conn.execute(f"SELECT chunk_id FROM {v} ORDER BY chunk_id")]
            flagged = [
                r[0] for r in conn.execute(f"SELECT id FROM {c} WHERE embedded=1 ORDER BY id")
            ]
            assert vecs == flagged, "a vector without its flag, or a flag without its vector"
            if full:
                assert len(vecs) == chunks, "chunks left without a vector"
    finally:
        conn.close()


def run_and_kill(cwd: Path, env: dict[str, str], delay: float, *args: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(HANG_GUARD)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_kill_minus_nine(tmp_path: Path, mode: str, fake_embed: FakeEmbedServer) -> None:
    rng = random.Random(1234 if mode == "lexical" else 4321)
    root = tmp_path / "proj"
    root.mkdir()
    files = 400
    if mode == "hybrid":
        (root / "agent.yaml").write_text(
            "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
            f"      base_url: {fake_embed.base_url}\n      model: fake-embed\n"
        )
        fake_embed.configure(delay_ms=5)
    env = {**os.environ, "FISK_AI_STORE_DIR": str(tmp_path / "stores")}
    settings = resolve_settings(cwd=root, store_base=tmp_path / "stores")
    old = write_versions(root, 0, files)
    index_project(settings)
    kills = 12 if mode == "lexical" else 8
    for n in range(kills):
        version = n + 1
        new = write_versions(root, version, files)
        allowed = {k: {old[k], new[k]} for k in new}
        rebuild = n % 4 == 3
        run_and_kill(root, env, rng.uniform(0.3, 1.6), *(["--reindex"] if rebuild else []))
        check_sound(settings, allowed, hybrid=mode == "hybrid")
        kb = reader(settings)
        res = kb.search(SearchRequest("marker"))
        assert res.status == "ok" and res.hits
        kb.close()
        # finish the run so the next round starts from a known state
        done = subprocess.run(
            [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        check_sound(settings, {k: {new[k]} for k in new}, hybrid=mode == "hybrid", full=True)
        old = new
