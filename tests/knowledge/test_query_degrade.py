"""A search never fails because the embeddings server misbehaves (issue 17): every fault at
query time gives lexical results, ``degraded`` and a short reason; a misconfiguration (a bad
key, an unknown model, another dimension) stays loud. And the query is embedded before the read
snapshot opens (issue 12 item 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import (
    EmbeddingsError,
    Knowledge,
    SearchRequest,
    Settings,
)
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.query_vectors import QueryVector, embed_query
from tests.support.fake_embed_server import FakeEmbedServer, fake_embedding
from tests.support.hybrid import index_project, reader, update_paths

DEGRADING = [
    ("refuse", {}),
    ("hang", {"hang_seconds": 5}),
    ("status", {"status": 500}),
    ("status", {"status": 503, "retry_after": "0"}),
    ("status", {"status": 429}),
    ("nan", {}),
    ("inf", {}),
    ("zero", {}),
    ("short", {}),
    ("huge", {}),
    ("html", {}),
    ("redirect", {}),
    ("bad_encoding", {}),
]
LOUD = [
    ("status", {"status": 401}, "permanent"),
    ("status", {"status": 403}, "permanent"),
    ("status", {"status": 404}, "permanent"),  # the fake answers "model not found"
    ("wrong_dim", {}, "dimension"),
]


def hybrid(settings: Settings, server: FakeEmbedServer) -> Settings:
    cfg = EmbeddingsConfig(
        base_url=server.base_url, model="fake-embed", timeout=2.0, query_timeout=0.5
    )
    return settings.with_overrides(embeddings=cfg)


@pytest.fixture
def kb(settings: Settings, fake_embed: FakeEmbedServer) -> Iterator[Knowledge]:
    h = hybrid(settings, fake_embed)
    index_project(h)
    knowledge = reader(h)
    yield knowledge
    knowledge.close()


@pytest.mark.parametrize(("mode", "options"), DEGRADING, ids=lambda v: str(v))
def test_every_query_fault_degrades(
    kb: Knowledge, fake_embed: FakeEmbedServer, mode: str, options: dict[str, Any]
) -> None:
    fake_embed.set_mode(mode, **options)
    res = kb.search(SearchRequest("backpressure producers"))
    assert res.status == "ok" and res.degraded and res.hits
    assert res.hits[0].path == "docs/design.md" and set(res.hits[0].retrievers) == {"lexical"}
    assert res.reason and "\n" not in res.reason and len(res.reason) <= 120
    assert "<" not in res.reason  # never the server's body
    assert res.tier.startswith("degraded:")
    # the breaker remembers the failure: the next search does not ask the server again
    before = fake_embed.stats()["requests"]
    assert kb.search(SearchRequest("backpressure")).degraded
    assert fake_embed.stats()["requests"] == before


@pytest.mark.parametrize(("mode", "options", "kind"), LOUD, ids=lambda v: str(v))
def test_misconfiguration_stays_loud(
    kb: Knowledge, fake_embed: FakeEmbedServer, mode: str, options: dict[str, Any], kind: str
) -> None:
    fake_embed.set_mode(mode, **options)
    with pytest.raises(EmbeddingsError) as caught:
        kb.search(SearchRequest("backpressure producers"))
    assert caught.value.kind == kind and caught.value.misconfigured
    with pytest.raises(EmbeddingsError):  # every time, not hidden by the breaker
        kb.search(SearchRequest("backpressure producers"))


def test_recovers_when_the_server_does(kb: Knowledge, fake_embed: FakeEmbedServer) -> None:
    fake_embed.set_mode("html")
    assert kb.search(SearchRequest("backpressure")).degraded
    fake_embed.set_mode("ok")
    breaker = kb.embedder._breaker  # type: ignore[union-attr]
    breaker.reset()  # stands in for the cool-down passing (the clock test is in test_embeddings)
    res = kb.search(SearchRequest("backpressure"))
    assert not res.degraded and "vector" in res.hits[0].retrievers


class Provider:
    """An in-process provider that breaks the unit-vector contract or raises a bug."""

    model = "fake-embed"
    query_prefix = ""
    document_prefix = ""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour

    def embed_query(self, text: str) -> list[float]:
        if self.behaviour == "bug":
            raise RuntimeError("onnxruntime exploded")
        return [2.0 * x for x in fake_embedding(text, 64)]  # not unit length

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


@pytest.mark.parametrize("behaviour", ["bug", "not_unit"])
def test_a_broken_provider_degrades(
    settings: Settings, fake_embed: FakeEmbedServer, behaviour: str
) -> None:
    h = hybrid(settings, fake_embed)
    index_project(h)
    kb = reader(h, embedder=Provider(behaviour))
    res = kb.search(SearchRequest("backpressure"))
    kb.close()
    assert res.degraded and res.hits and res.reason and "\n" not in res.reason


def test_embed_query_returns_failures_as_values() -> None:
    assert embed_query(Provider("bug"), "x").error is not None
    assert embed_query(Provider("bug"), "   ") == QueryVector()


class SnapshotProbe:
    """A provider that, while it embeds, lets another writer change the index."""

    model = "fake-embed"
    query_prefix = ""
    document_prefix = ""

    def __init__(self, settings: Settings, project: Path) -> None:
        self.settings = settings
        self.project = project

    def embed_query(self, text: str) -> list[float]:
        new = self.project / "docs" / "late.md"
        new.write_text("# Late\n\nzeppelin hangar notes\n")
        update_paths(self.settings, [new])
        return fake_embedding(text, 64)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


def test_the_query_is_embedded_before_the_snapshot_opens(
    settings: Settings, fake_embed: FakeEmbedServer, project: Path
) -> None:
    h = hybrid(settings, fake_embed)
    emb = reader(h).embedder
    index_project(h)
    kb = reader(h, embedder=SnapshotProbe(h, project))
    # The probe writes a new file while the query is embedded. Embedded inside the snapshot,
    # the search would not see it (and would pin a WAL snapshot for the embedding's duration).
    res = kb.search(SearchRequest("zeppelin hangar"))
    assert res.hits and res.hits[0].path == "docs/late.md"
    kb.close()
    if emb is not None:
        emb.close()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_cli_search_degrades_with_exit_0(
    project: Path, store_base: Path, fake_embed: FakeEmbedServer
) -> None:
    (project / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
        f"    embeddings:\n      base_url: {fake_embed.base_url}\n      model: fake-embed\n"
        "      query_timeout: 1s\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fisk_ls.cli", "knowledge", *args, "--json"],
            cwd=project,
            env={**os.environ, "FISK_AI_STORE_DIR": str(store_base)},
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    assert run("index").returncode == 0
    fake_embed.set_mode("nan")
    proc = run("search", "backpressure producers")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "ok" and out["degraded"] is True and out["reason"]
    fake_embed.set_mode("status", status=401)
    assert run("search", "backpressure producers").returncode == 1
