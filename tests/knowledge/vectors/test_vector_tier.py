"""The vector tier end to end against the fake OpenAI-compatible server (checklist 30–37 and
the improvements: safe rebuilds, vector cache, classified query failures, breaker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    EmbeddingsError,
    IndexStats,
    SearchRequest,
    Settings,
    VectorSpaceMismatch,
)
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.doctor import run_checks
from fisk_ls.knowledge.vectors.providers import make_embedder
from tests.support.fake_embed_server import FakeEmbedServer
from tests.support.hybrid import index_project, reader, update_paths
from tests.support.waiting import HANG_GUARD


def hybrid(settings: Settings, server: FakeEmbedServer, **kw: object) -> Settings:
    cfg = EmbeddingsConfig(
        base_url=server.base_url,
        model=str(kw.pop("model", "fake-embed")),
        timeout=2.0,
        query_timeout=0.5,
        **kw,  # type: ignore[arg-type]
    )
    return settings.with_overrides(embeddings=cfg)


def test_hybrid_index_and_search(settings: Settings, fake_embed: FakeEmbedServer) -> None:  # 30
    h = hybrid(settings, fake_embed)
    stats = index_project(h)
    kb = reader(h)
    st = kb.stats()
    assert st.vectors == st.chunks > 0 and stats.embeddings == st.chunks
    assert st.model == "fake-embed" and st.dimension == 64 and st.normalized
    res = kb.search(SearchRequest("backpressure producers queue"))
    assert res.status == "ok" and not res.degraded and res.hits
    assert res.tier.startswith("hybrid:") and "dim 64" in res.tier
    top = res.hits[0]
    assert top.path == "docs/design.md" and set(top.retrievers) == {"lexical", "vector"}
    assert 0 < top.score <= 1
    kb.close()


def test_dry_run_estimates(settings: Settings, fake_embed: FakeEmbedServer) -> None:  # 31
    h = hybrid(settings, fake_embed)
    dry = index_project(h, dry_run=True)
    assert dry.added == 3 and dry.embeddings == dry.chunks > 0
    index_project(h)
    fake_embed.reset_stats()
    again = index_project(h, dry_run=True)
    assert again.skipped == 3 and again.embeddings == 0
    assert fake_embed.stats()["requests"] == 0


def test_dimension_change_needs_reindex(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:  # 32, 33
    h = hybrid(settings, fake_embed)
    index_project(h)
    fake_embed.configure(dim=32)
    with pytest.raises(VectorSpaceMismatch, match="--reindex"):
        index_project(h)
    kb = reader(h)
    with pytest.raises(EmbeddingsError, match="--reindex"):
        kb.search(
            SearchRequest("queue")
        )  # the query vector no longer fits the index: loud, not degraded
    index_project(h, rebuild=True)
    assert reader(h).stats().dimension == 32
    assert reader(h).search(SearchRequest("queue")).status == "ok"


def test_other_model_is_refused_by_reader(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:  # 34
    index_project(hybrid(settings, fake_embed))
    fake_embed.configure(model="other")
    with pytest.raises(VectorSpaceMismatch, match="--reindex"):
        reader(hybrid(settings, fake_embed, model="other")).search(SearchRequest("queue"))


def test_embeddings_on_a_lexical_index_add_vectors_in_place(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:  # 35
    """Vectors are an addition: search answers lexically at once and says how many chunks
    have vectors; a plain index run fills them in (no --reindex)."""
    index_project(settings)
    h = hybrid(settings, fake_embed)
    kb = reader(h)
    before = kb.search(SearchRequest("backpressure"))
    assert before.status == "ok" and before.hits and not before.degraded
    chunks = kb.stats().chunks
    assert (
        before.tier.startswith("lexical:") and f"0 of {chunks} chunks have vectors" in before.tier
    )
    assert fake_embed.stats()["inputs"] == 0  # a lexical index: the query is not embedded
    stats = index_project(h)
    assert stats.embeddings == chunks and stats.backlog == 0
    after = kb.search(SearchRequest("backpressure"))
    assert after.tier.startswith("hybrid:") and kb.stats().vectors == chunks
    kb.close()


def test_lexical_config_never_downgrades_hybrid(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    index_project(hybrid(settings, fake_embed))
    with pytest.raises(VectorSpaceMismatch, match="no embeddings are configured"):
        index_project(settings)
    # a lexical reader may still search a hybrid index
    assert reader(settings).search(SearchRequest("queue")).status == "ok"


def test_query_failure_degrades_fast(settings: Settings, fake_embed: FakeEmbedServer) -> None:  # 36
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h)
    fake_embed.set_mode("refuse")
    res = kb.search(SearchRequest("backpressure"))
    assert res.status == "ok" and res.degraded and res.hits
    assert res.reason and "\n" not in res.reason and len(res.reason) <= 120
    assert res.tier.startswith("degraded:")
    asked = fake_embed.stats()["requests"]
    res2 = kb.search(SearchRequest("backpressure"))
    assert res2.degraded and fake_embed.stats()["requests"] == asked  # the breaker: no new wait
    kb.close()


@pytest.mark.slow
def test_hanging_server_costs_one_query_timeout(
    settings: Settings, fake_embed: FakeEmbedServer
) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h)
    fake_embed.set_mode("hang", hang_seconds=10)
    fake_embed.reset_stats()
    res = kb.search(SearchRequest("backpressure"))
    assert res.degraded and res.reason and "timed out after 0.5s" in res.reason  # query timeout
    assert fake_embed.stats()["requests"] == 1
    kb.close()


def test_permanent_query_errors_are_loud(settings: Settings, fake_embed: FakeEmbedServer) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h)
    fake_embed.set_mode("status", status=401)
    with pytest.raises(EmbeddingsError) as err:
        kb.search(SearchRequest("backpressure"))
    assert err.value.kind == "permanent"
    kb.close()


def test_reconcile_removes_vectors(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:  # 37
    h = hybrid(settings, fake_embed)
    index_project(h)
    before = reader(h).stats().vectors
    (project / "notes.txt").unlink()
    index_project(h)
    after = reader(h).stats()
    assert after.vectors == after.chunks < before


def test_one_changed_paragraph_embeds_one_chunk(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    big = "\n\n".join(f"## Part {i}\n\n" + f"paragraph {i} " * 60 for i in range(10))
    (project / "big.md").write_text("# Big\n\n" + big)
    h = hybrid(settings, fake_embed)
    emb = make_embedder(h)  # long-lived, as in the language server: the probe is cached
    assert emb is not None
    index_project(h, embedder=emb)
    text = (
        (project / "big.md").read_text().replace("paragraph 4 paragraph", "changed 4 paragraph", 1)
    )
    (project / "big.md").write_text(text)
    fake_embed.reset_stats()
    stats = update_paths(h, [project / "big.md"], embedder=emb)
    assert stats.updated == 1 and stats.embeddings == 1
    assert fake_embed.stats()["inputs"] == 1
    emb.close()
    assert reader(h).search(SearchRequest("changed")).hits[0].path == "big.md"


def test_reindex_same_model_reuses_vectors(settings: Settings, fake_embed: FakeEmbedServer) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    fake_embed.reset_stats()
    stats = index_project(h, rebuild=True)
    assert stats.embeddings == 0
    assert fake_embed.stats()["inputs"] == 1  # only the dimension probe
    assert reader(h).stats().vectors == reader(h).stats().chunks


@pytest.mark.slow
def test_failed_rebuild_keeps_old_index(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h)
    before = [x.citation for x in kb.search(SearchRequest("backpressure")).hits]
    fake_embed.configure(dim=16)  # a model switch: every chunk must be embedded again
    fake_embed.set_mode("fail_first", count=1000, status=503)
    with pytest.raises(EmbeddingsError):
        index_project(h, rebuild=True)
    fake_embed.set_mode("ok")
    fake_embed.configure(dim=64)
    assert [x.citation for x in kb.search(SearchRequest("backpressure")).hits] == before
    assert index_project(h).skipped == 3


def test_batches_span_files(settings: Settings, fake_embed: FakeEmbedServer, project: Path) -> None:
    for i in range(100):
        (project / "many" / f"{i}.md").parent.mkdir(exist_ok=True)
        (project / "many" / f"{i}.md").write_text(f"# Doc {i}\n\nsmall text {i}\n")
    h = hybrid(settings, fake_embed)
    stats = index_project(h)
    st = fake_embed.stats()
    assert stats.embeddings == sum(st["batch_sizes"]) - 1  # minus the dimension probe
    assert st["requests"] <= 1 + (stats.embeddings // 64 + 3)
    assert max(st["batch_sizes"]) > 1


@pytest.mark.slow
def test_index_time_outage_fails_loud_and_keeps_index(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    (project / "new.md").write_text("# New\n\nfresh words\n")
    fake_embed.set_mode("status", status=500)
    with pytest.raises(EmbeddingsError):
        index_project(h)
    fake_embed.set_mode("ok")
    kb = reader(h)
    assert kb.search(SearchRequest("backpressure")).hits
    assert (
        kb.search(SearchRequest("fresh words")).hits[0].path == "new.md"
    )  # written before the failure
    assert kb.stats().vectors == kb.stats().chunks - 1  # its chunk waits in the backlog


def test_document_prefix_title(settings: Settings, fake_embed: FakeEmbedServer) -> None:
    h = hybrid(settings, fake_embed, document_prefix="title: {title} | text: ")
    index_project(h)
    assert reader(h).search(SearchRequest("retries")).hits


@pytest.mark.slow
def test_doctor_probes(settings: Settings, fake_embed: FakeEmbedServer) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    emb = make_embedder(h)
    checks = {c.name: c for c in run_checks(h, emb)}
    assert checks["embeddings reachable"].ok and "dim=64" in checks["embeddings reachable"].detail
    assert checks["vector space"].ok
    fake_embed.configure(dim=32)
    emb2 = make_embedder(h)
    checks = {c.name: c for c in run_checks(h, emb2)}
    assert not checks["vector space"].ok and "--reindex" in checks["vector space"].detail
    fake_embed.set_mode("refuse")
    emb3 = make_embedder(h)
    checks = {c.name: c for c in run_checks(h, emb3)}
    assert not checks["embeddings reachable"].ok
    for e in (emb, emb2, emb3):
        assert e is not None
        e.close()


def test_quantized_path_through_the_index(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every vector also gets a coarse-pass row, kept in step by updates and removals; with
    the threshold lowered, a search through the quantized path ranks as the exact one does."""
    import apsw

    from fisk_ls.knowledge.vectors import knn

    for i in range(30):
        (project / "many" / f"{i}.md").parent.mkdir(exist_ok=True)
        (project / "many" / f"{i}.md").write_text(f"# Doc {i}\n\nqueue item {i} backpressure\n")
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h)

    def rows() -> tuple[int, int]:
        with kb.store.snapshot() as snap:
            assert snap is not None
            vq = snap.tables.vq
        conn = apsw.Connection(str(kb.store.path), flags=apsw.SQLITE_OPEN_READONLY)
        n = conn.execute(f"SELECT count(*) FROM {vq}").get
        conn.close()
        return int(n), kb.stats().vectors

    n, vectors = rows()
    assert n == vectors > 30
    exact = [x.citation for x in kb.search(SearchRequest("backpressure queue item", 10)).hits]
    monkeypatch.setattr(knn, "EXACT_BELOW", 1)
    quantized = kb.search(SearchRequest("backpressure queue item", 10))
    assert [x.citation for x in quantized.hits] == exact
    assert kb.coarse is not None and kb.coarse.loads == 1
    (project / "many" / "3.md").unlink()
    index_project(h)
    n, vectors = rows()
    assert n == vectors
    assert "many/3.md" not in {
        x.path for x in kb.search(SearchRequest("backpressure queue item 3", 10)).hits
    }
    kb.close()


@pytest.mark.slow
def test_no_index_run_waits_on_the_embeddings_server_before_its_lexical_write(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that answers late (a model still loading): all 400 files of a first build are
    lexically searchable while it has answered nothing; vectors follow once it does."""
    import threading

    from fisk_ls.knowledge.vectors import tier

    (project / "many").mkdir()
    for i in range(400):
        (project / "many" / f"{i:03}.md").write_text(f"# Page {i}\n\nword{i} appears here.\n")
    h = hybrid(settings, fake_embed)
    written = threading.Event()
    settle = tier.VectorTier.settle

    def after_the_write(self: tier.VectorTier) -> object:
        written.set()  # every file is committed; the run now waits for the probe
        return settle(self)

    monkeypatch.setattr(tier.VectorTier, "settle", after_the_write)
    fake_embed.hold()
    outcome: list[object] = []
    run = threading.Thread(target=lambda: outcome.append(index_project(h)))
    run.start()
    try:
        assert written.wait(HANG_GUARD)
        assert fake_embed.asked.wait(HANG_GUARD)  # the probe went out beside the write ...
        assert fake_embed.stats()["inputs"] == 0  # ... and nothing was answered yet
        kb = reader(h)
        found = kb.search(SearchRequest("word399"))
        assert found.hits and found.hits[0].path == "many/399.md"
        assert found.tier.startswith("lexical:")  # no vectors yet, and it says so
        kb.close()
    finally:
        fake_embed.release()
        run.join(HANG_GUARD)
    stats = outcome[0]
    assert isinstance(stats, IndexStats) and stats.backlog == 0 and stats.embeddings == stats.chunks
    assert reader(h).search(SearchRequest("word399")).tier.startswith("hybrid:")
