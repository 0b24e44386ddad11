"""Searchable first, semantic as it fills in: the embedding backlog (fake embeddings server)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import apsw
import pytest

from fisk_ls.knowledge import (
    EmbeddingsError,
    IndexReporter,
    Knowledge,
    KnowledgeError,
    SearchRequest,
    Settings,
)
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.connect import load_vec
from fisk_ls.knowledge.index.backfill import Backfill, BackfillReporter
from fisk_ls.knowledge.session import WriterSession
from fisk_ls.knowledge.store_files import db_path
from fisk_ls.knowledge.vectors.providers import make_embedder
from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.hybrid import index_project, reader, update_paths
from tests.support.waiting import HANG_GUARD


def hybrid(settings: Settings, server: FakeEmbedServer, model: str = "fake-embed") -> Settings:
    cfg = EmbeddingsConfig(base_url=server.base_url, model=model, timeout=2.0, query_timeout=1.0)
    return settings.with_overrides(embeddings=cfg)


class Flaky:
    """A document embedder that fails on demand (after its probe), else delegates."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.model = inner.model  # type: ignore[attr-defined]
        self.query_prefix = ""
        self.document_prefix = ""
        self.fail = False
        self.calls = 0

    def probe_dimension(self) -> int:
        return int(self.inner.probe_dimension())  # type: ignore[attr-defined]

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        self.calls += 1
        if self.fail:
            raise EmbeddingsError("transient", "the embeddings server went away")
        return list(self.inner.embed_documents(texts, titles))  # type: ignore[attr-defined]


def vec_rows(settings: Settings) -> tuple[list[int], list[int], list[int]]:
    """(chunk ids, vec chunk ids, chunk ids flagged embedded) of the live generation."""
    conn = apsw.Connection(str(db_path(settings.store_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    load_vec(conn)
    gen = int(conn.execute("SELECT value FROM rag_meta WHERE key='generation'").get)
    chunks = [r[0] for r in conn.execute(f"SELECT id FROM chunks_{gen} ORDER BY id")]
    vecs = [r[0] for r in conn.execute(f"SELECT chunk_id FROM chunks_vec_{gen} ORDER BY chunk_id")]
    flagged = [
        r[0] for r in conn.execute(f"SELECT id FROM chunks_{gen} WHERE embedded = 1 ORDER BY id")
    ]
    conn.close()
    return chunks, vecs, flagged


def test_files_are_searchable_before_their_vectors(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    first = index_project(h, drain=False)
    assert first.backlog == first.chunks > 0 and first.embeddings == 0
    assert fake_embed.stats()["inputs"] == 1  # only the dimension probe
    kb = reader(h)
    res = kb.search(SearchRequest("backpressure producers"))
    assert res.status == "ok" and res.hits[0].path == "docs/design.md"
    assert all(set(hit.retrievers) == {"lexical"} for hit in res.hits)  # no vectors yet
    assert f"0 of {first.chunks} chunks embedded" in res.tier
    assert kb.stats().vectors == 0
    assert kb.coverage() is not None and kb.coverage().backlog == first.chunks  # type: ignore[union-attr]
    second = index_project(h)  # the CLI's run: returns once the backlog is empty
    assert second.embeddings == first.chunks and second.backlog == 0 and second.skipped == 3
    res = kb.search(SearchRequest("backpressure producers"))
    assert "chunks embedded" not in res.tier and "lexical" in res.hits[0].retrievers
    assert "vector" in res.hits[0].retrievers
    assert kb.stats().vectors == first.chunks
    chunks, vecs, flagged = vec_rows(h)
    assert chunks == vecs == flagged
    kb.close()


def test_an_embedder_failure_keeps_the_lexical_part_and_the_backlog(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    emb = Flaky(make_embedder(h))
    emb.fail = True
    with pytest.raises(EmbeddingsError, match="went away"):
        index_project(h, embedder=emb)
    kb = reader(h)
    assert kb.search(SearchRequest("restart the broker")).hits[0].path == "docs/ops/runbook.md"
    chunks, vecs, _ = vec_rows(h)
    assert chunks and vecs == []
    emb.fail = False
    stats = index_project(h, embedder=emb)
    assert stats.skipped == 3 and stats.embeddings == len(chunks) and stats.backlog == 0
    again, vecs, flagged = vec_rows(h)
    assert again == chunks == vecs == flagged
    kb.close()


def test_an_edit_embeds_only_changed_chunks_and_waits_in_the_backlog(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    fake_embed.reset_stats()
    doc = project / "docs" / "design.md"
    doc.write_text(doc.read_text() + "\n## Timeouts\n\nRequests give up after ten seconds.\n")
    stats = update_paths(h, [doc], drain=False)
    assert stats.backlog == 1  # the old sections came back from the vector cache
    assert fake_embed.stats()["inputs"] == 1  # the probe only
    stats = update_paths(h, [], drain=True)
    assert stats.embeddings == 1 and stats.backlog == 0
    chunks, vecs, flagged = vec_rows(h)
    assert chunks == vecs == flagged


class Watching(IndexReporter):
    """Checks, at every embedding round of a rebuild, what a reader of the old setup sees."""

    def __init__(self, reader: Knowledge, expected: int) -> None:
        self.reader = reader
        self.expected = expected
        self.rounds = 0

    def on_embed(self, done: int, total: int) -> None:
        self.rounds += 1
        st = self.reader.stats()
        assert st.model == "fake-embed" and st.vectors == st.chunks == self.expected


def test_a_model_switch_embeds_beside_the_live_index(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    chunks = index_project(h).chunks
    old = reader(h)
    fake_embed.configure(model="other-embed", dim=16)
    h2 = hybrid(settings, fake_embed, model="other-embed")
    watching = Watching(old, chunks)
    stats = index_project(h2, rebuild=True, reporter=watching)
    assert watching.rounds >= 1 and stats.embeddings == chunks and stats.backlog == 0
    st = reader(h2).stats()
    assert st.model == "other-embed" and st.dimension == 16 and st.vectors == st.chunks
    old.close()


def test_a_lexical_index_rebuilt_hybrid_switches_first(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    chunks = index_project(settings).chunks
    h = hybrid(settings, fake_embed)
    stats = index_project(h, rebuild=True, drain=False)
    assert stats.backlog == chunks  # searchable (lexically) in the new generation at once
    kb = reader(h)
    assert kb.stats().model == "fake-embed" and kb.stats().vectors == 0
    assert kb.search(SearchRequest("backpressure")).hits
    index_project(h)
    assert kb.stats().vectors == chunks
    kb.close()


class Recorder(BackfillReporter):
    events: ClassVar[list[tuple[str, int, int]]] = []

    def begin(self, embedded: int, chunks: int) -> None:
        self.events.append(("begin", embedded, chunks))

    def progress(self, embedded: int, chunks: int) -> None:
        self.events.append(("progress", embedded, chunks))

    def end(self, embedded: int, chunks: int, error: KnowledgeError | None) -> None:
        self.events.append(("end", embedded, chunks))


def test_backfill_embeds_the_backlog_in_rounds_in_the_background(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    emb = make_embedder(h)
    assert emb is not None
    chunks = index_project(h, embedder=emb, drain=False).chunks
    Recorder.events = []
    worker = Backfill(h, emb, WriterSession(h.store_dir), reporter=Recorder, round_size=2)
    worker.start()
    try:
        worker.kick()
        assert worker.wait_idle(HANG_GUARD)
    finally:
        worker.stop()
        worker.session.close()
    assert Recorder.events[0] == ("begin", 0, chunks)
    assert Recorder.events[-1] == ("end", chunks, chunks)
    rounds = [e for e in Recorder.events if e[0] == "progress"]
    assert [e[1] for e in rounds] == sorted(e[1] for e in rounds) and len(rounds) >= chunks // 2
    all_chunks, vecs, flagged = vec_rows(h)
    assert all_chunks == vecs == flagged
    emb.close()


def test_backfill_lets_the_embedder_free_its_indexing_model_when_the_backlog_is_empty(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    emb = make_embedder(h)
    assert emb is not None
    index_project(h, embedder=emb, drain=False)
    released: list[int] = []
    emb.release_documents = lambda: released.append(1)  # type: ignore[method-assign, union-attr]
    worker = Backfill(h, emb, WriterSession(h.store_dir), round_size=2)
    worker.start()
    try:
        worker.kick()
        assert worker.wait_idle(HANG_GUARD)
        assert released == [1]  # once, after the last round
        worker.kick()  # nothing left to embed: nothing to free again
        assert worker.wait_idle(HANG_GUARD)
        assert released == [1]
    finally:
        worker.stop()
        worker.session.close()
    emb.close()


def test_backfill_drops_a_round_whose_chunks_changed(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    h = hybrid(settings, fake_embed)
    made = make_embedder(h)
    assert made is not None
    emb = made  # not None, inside the class below too
    index_project(h, embedder=emb, drain=False)
    doc = project / "docs" / "design.md"

    class EditWhileEmbedding:
        """Embeds, but the file changes before the round is stored."""

        model, query_prefix, document_prefix = emb.model, "", ""

        def probe_dimension(self) -> int:
            return emb.probe_dimension()

        def embed_documents(
            self, texts: Sequence[str], titles: Sequence[str] | None = None
        ) -> list[list[float]]:
            out = emb.embed_documents(texts, titles)
            doc.write_text("# Design\n\nEverything about this page changed.\n")
            update_paths(h, [doc], embedder=emb, drain=False)
            return out

    worker = Backfill(
        h,
        EditWhileEmbedding(),
        WriterSession(h.store_dir),
        round_size=50,
    )
    r = worker.run_round()
    assert r is not None and r.stored == r.embedded  # the other files' chunks are stored
    all_chunks, vecs, flagged = vec_rows(h)
    assert vecs == flagged and len(all_chunks) - len(vecs) == 1  # the new chunk waits
    worker.embedder = emb
    r = worker.run_round()
    assert r is not None and r.done
    assert worker.session.opened == 2  # the edit between its two rounds was another writer's
    worker.session.close()
    emb.close()
