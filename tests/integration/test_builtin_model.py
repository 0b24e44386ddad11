"""The built-in provider with a real model (all-MiniLM-L6-v2 int8 from PyPI packages, loaded
from a local directory): semantic hits, searchable while embedding, kill -9, provider switch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import apsw
import pytest

from fisk_ls.knowledge import (
    IndexReporter,
    Knowledge,
    SearchRequest,
    Settings,
    VectorSpaceMismatch,
    resolve_settings,
)
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.connect import load_vec
from fisk_ls.knowledge.store_files import db_path
from tests.conftest import REPO, write_docs
from tests.support.builtin_model import model_dir
from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.hybrid import index_project, reader
from tests.support.waiting import HANG_GUARD

DOCS = {
    "pets/cat.md": "# Cats\n\nA cat is a small domesticated carnivore that purrs and hunts mice.\n",
    "pets/dog.md": "# Dogs\n\nDogs are loyal companions that bark and love long walks.\n",
    "ops/backup.md": "# Backups\n\nSnapshots of the database are copied nightly to cold storage.\n",
    "ops/deploy.md": "# Deploys\n\nReleases roll out gradually, one region at a time.\n",
    "food/bread.md": "# Bread\n\nKnead the dough, let it rise, then bake until golden.\n",
    "net/tls.md": "# Certificates\n\nThe renewal job rotates certificates every ninety days.\n",
}
PARAPHRASES = {
    "which animal meows and chases rodents": "pets/cat.md",
    "making a loaf in the oven": "food/bread.md",
}


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model_dir(tmp_path_factory.mktemp("model"))


def builtin(settings: Settings, model: Path) -> Settings:
    cfg = EmbeddingsConfig("", "all-MiniLM-L6-v2", provider="builtin", model_path=str(model))
    return settings.with_overrides(embeddings=cfg)


@pytest.fixture
def pets(tmp_path: Path, store_base: Path) -> Settings:
    root = tmp_path / "pets-project"
    root.mkdir()
    write_docs(root, DOCS)
    return resolve_settings(cwd=root, store_base=store_base)


def test_a_paraphrase_with_no_shared_words_is_found(pets: Settings, minilm: Path) -> None:
    lexical = reader(pets)
    index_project(pets)
    h = builtin(pets, minilm)
    index_project(h, rebuild=True)
    kb = reader(h)
    assert kb.stats().vectors == kb.stats().chunks == len(DOCS)
    for query, path in PARAPHRASES.items():
        lex = lexical.search(SearchRequest(query))
        assert path not in [hit.path for hit in lex.hits]  # no word in common
        res = kb.search(SearchRequest(query, 3))
        assert res.status == "ok" and res.tier.startswith("hybrid:")
        assert "builtin:all-MiniLM-L6-v2@" in res.tier
        assert path in [hit.path for hit in res.hits], (query, [h.path for h in res.hits])
    kb.close()
    lexical.close()


def test_the_index_answers_lexically_while_its_backlog_waits(pets: Settings, minilm: Path) -> None:
    h = builtin(pets, minilm)
    stats = index_project(h, drain=False)
    assert stats.backlog == stats.chunks == len(DOCS)
    kb = reader(h)
    res = kb.search(SearchRequest("knead the dough"))
    assert res.hits[0].path == "food/bread.md" and res.hits[0].retrievers == {"lexical": 1}
    assert f"0 of {len(DOCS)} chunks embedded" in res.tier
    assert index_project(h).backlog == 0
    res = kb.search(SearchRequest("knead the dough"))
    assert set(res.hits[0].retrievers) == {"lexical", "vector"}
    assert "chunks embedded" not in res.tier
    kb.close()


def _rows(settings: Settings) -> tuple[list[int], list[int], list[int]]:
    conn = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    load_vec(conn)
    g = int(conn.execute("SELECT value FROM rag_meta WHERE key='generation'").get)
    chunks = [r[0] for r in conn.execute(f"SELECT id FROM chunks_{g} ORDER BY id")]
    vecs = [r[0] for r in conn.execute(f"SELECT chunk_id FROM chunks_vec_{g} ORDER BY chunk_id")]
    flagged = [
        r[0] for r in conn.execute(f"SELECT id FROM chunks_{g} WHERE embedded=1 ORDER BY id")
    ]
    conn.close()
    return chunks, vecs, flagged


def test_kill_9_while_embedding_then_a_rerun_finishes_the_backlog(
    tmp_path: Path, store_base: Path, minilm: Path
) -> None:
    root = tmp_path / "many"
    root.mkdir()
    topics = ["queues", "retries", "caches", "tokens", "shards", "indexes", "leases", "quotas"]
    filler = "Each line here adds a few words so that the section stands as a chunk of its own. "
    docs = {
        f"d{n:03}.md": "".join(
            f"## {topics[(n + i) % 8].title()} {n}-{i}\n\nNote {i} of page {n} about "
            f"{topics[(n * 3 + i) % 8]}. {filler * 4}\n\n"
            for i in range(10)
        )
        for n in range(20)
    }
    write_docs(root, docs)  # 200 chunks: two embedding rounds (192 + 8)
    signal_file = tmp_path / "hanging"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.embed_then_hang",
            str(root),
            str(store_base),
            str(minilm),
            str(signal_file),
        ],
        env=env,
        cwd=REPO,
    )
    try:
        for _ in range(1200):  # wait for the child's signal (bounded: 10 minutes)
            if signal_file.exists() or child.poll() is not None:
                break
            threading.Event().wait(0.5)
        assert signal_file.exists(), f"the child exited early with {child.returncode}"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(HANG_GUARD)
    settings = resolve_settings(cwd=root, store_base=store_base)
    h = builtin(settings, minilm)
    chunks, vecs, flagged = _rows(h)
    assert len(chunks) == 200 and vecs == flagged and len(vecs) == 192  # round 1 is kept
    stats = index_project(h)
    assert stats.skipped == 20 and stats.embeddings == 200 - 192 and stats.backlog == 0
    chunks, vecs, flagged = _rows(h)
    assert chunks == vecs == flagged  # nothing missing, nothing twice


class OldReaderSees(IndexReporter):
    def __init__(self, reader: Knowledge) -> None:
        self.reader = reader
        self.checked = 0

    def on_embed(self, done: int, total: int) -> None:
        st = self.reader.stats()
        assert st.model == "fake-embed" and st.vectors == st.chunks
        self.checked += 1


def test_a_provider_switch_rebuilds_beside_the_live_index(
    pets: Settings, minilm: Path, fake_embed: FakeEmbedServer
) -> None:
    served = pets.with_overrides(
        embeddings=EmbeddingsConfig(base_url=fake_embed.base_url, model="fake-embed")
    )
    index_project(served)
    old = reader(served)
    h = builtin(pets, minilm)
    with pytest.raises(VectorSpaceMismatch, match="--reindex"):
        index_project(h)
    watcher = OldReaderSees(old)
    stats = index_project(h, rebuild=True, reporter=watcher)
    assert watcher.checked >= 1 and stats.embeddings == len(DOCS)
    st = reader(h).stats()
    assert st.model.startswith("builtin:all-MiniLM-L6-v2@") and st.dimension == 384
    assert st.vectors == st.chunks == len(DOCS)
    old.close()


def test_batching_and_padding_do_not_change_vectors(minilm: Path) -> None:
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=minilm, batch_tokens=64)
    short = "Dogs bark."
    long = "Releases roll out gradually, one region at a time. " * 30  # truncated at 256
    alone = emb.embed_documents([short])[0]
    mixed = emb.embed_documents([long, short, long[:200]])
    query = emb.embed_query(short)
    dot = sum(a * b for a, b in zip(alone, mixed[1], strict=True))
    assert dot > 0.9999 and abs(sum(a * a for a in mixed[0]) - 1) < 1e-5
    assert sum(a * b for a, b in zip(alone, query, strict=True)) > 0.9999  # no prefixes here
    assert len(alone) == emb.probe_dimension() == 384
    emb.close()


def test_a_query_and_its_strings_get_the_vectors_of_one_padded_batch(minilm: Path) -> None:
    """The strings run in groups by length (query_groups): each vector is the one a single
    padded batch of them all gives, and the one each string gets alone, to float noise."""
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=minilm)
    texts = [
        "what does a collector do",
        "the collector receives, processes and exports telemetry data from many sources " * 3,
        "collector pipeline receivers processors exporters",
        "an agent running beside each service",
    ]
    try:
        session, tokenizer = emb._query_parts()
        batch = emb._run(session, tokenizer.encode_batch(texts))
        grouped = emb.embed_queries(texts)
        one_by_one = [emb.embed_query(t) for t in texts]
    finally:
        emb.close()
    assert len(grouped) == len(texts)
    for g, b, o in zip(grouped, batch, one_by_one, strict=True):
        assert max(abs(x - y) for x, y in zip(g, b, strict=True)) < 1e-5
        assert max(abs(x - y) for x, y in zip(g, o, strict=True)) < 1e-5


def test_the_model_embeds_beside_the_lexical_arms_once_loaded(pets: Settings, minilm: Path) -> None:
    """The first search loads the model before its snapshot opens; later ones embed on a thread
    while the lexical arms run (query_vectors.embeds_beside), with the same result."""
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    h = builtin(pets, minilm)
    index_project(h)
    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=minilm)
    kb = reader(h, embedder=emb)
    request = SearchRequest("which animal meows", 3, also=("cats chase mice", "a pet that purrs"))
    try:
        assert not emb.ready()
        first = kb.search(request)
        assert emb.ready()
        assert kb.search(request) == first and not first.degraded
        assert first.hits[0].path == "pets/cat.md"
    finally:
        kb.close()
        emb.close()
    assert not emb.ready()
    assert not [t for t in threading.enumerate() if t.name == "fisk-query-embed"]


def test_the_indexing_session_is_freed_and_reloaded(minilm: Path) -> None:
    from fisk_ls.knowledge.vectors.builtin import BuiltinEmbedder

    emb = BuiltinEmbedder("all-MiniLM-L6-v2", model_dir=minilm)
    try:
        first = emb.embed_documents(["Dogs bark at night."])[0]
        assert emb._docs is not None
        emb.release_documents()
        assert emb._docs is None  # what the background embedder calls once the backlog is empty
        assert emb.embed_documents(["Dogs bark at night."])[0] == first
    finally:
        emb.close()
    emb.release_documents()  # after close: nothing to free, no error
