"""A provider that embeds in this process with its model loaded (``ready()``) embeds a search's
strings on a thread of its own while the lexical arms run: the same result as embedding first,
the same degraded or loud outcome when it fails, and no thread left once the search returns."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from fisk_ls.knowledge import EmbeddingsError, Knowledge, SearchRequest, Settings
from fisk_ls.knowledge.query_vectors import Embedding, QueryVector, embeds_beside
from tests.knowledge.test_query_degrade import hybrid
from tests.support.fake_embed_server import FakeEmbedServer, fake_embedding
from tests.support.hybrid import index_project, reader

THREAD = "fisk-query-embed"
ALSO = ("producers slow down when consumers lag", "backpressure")


class Interrupt(BaseException):
    """Stands in for a KeyboardInterrupt raised while the model runs."""


class Local:
    """An in-process provider; ``ready`` says whether its model is loaded."""

    model = "fake-embed"
    query_prefix = ""
    document_prefix = ""

    def __init__(self, behaviour: str = "ok", *, loaded: bool = True) -> None:
        self.behaviour = behaviour
        self.loaded = loaded
        self.threads: list[str] = []

    def ready(self) -> bool:
        return self.loaded

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        if self.behaviour == "outage":
            raise EmbeddingsError("transient", "the model is busy")
        if self.behaviour == "misconfigured":
            raise EmbeddingsError("permanent", "no such model")
        if self.behaviour == "bug":
            raise RuntimeError("onnxruntime exploded")
        if self.behaviour == "interrupt":
            raise Interrupt
        if self.behaviour == "not_unit":
            return [[2.0 * x for x in fake_embedding(t, 64)] for t in texts]
        return [fake_embedding(t, 64) for t in texts]


@pytest.fixture
def hybrid_settings(settings: Settings, fake_embed: FakeEmbedServer) -> Settings:
    h = hybrid(settings, fake_embed)
    index_project(h)
    return h


@pytest.fixture
def no_thread_left() -> Iterator[None]:
    yield
    assert not [t for t in threading.enumerate() if t.name == THREAD]


def search(settings: Settings, provider: Local, also: Sequence[str] = ALSO) -> object:
    kb: Knowledge = reader(settings, embedder=provider)
    try:
        return kb.search(SearchRequest("backpressure producers", also=also))
    finally:
        kb.close()


@pytest.mark.parametrize("also", [(), ALSO], ids=["alone", "with_also"])
def test_embedding_beside_the_lexical_arms_gives_the_same_result(
    hybrid_settings: Settings, no_thread_left: None, also: Sequence[str]
) -> None:
    beside, first = Local(), Local(loaded=False)
    assert embeds_beside(beside) and not embeds_beside(first)
    res = search(hybrid_settings, beside, also)
    assert res == search(hybrid_settings, first, also)
    assert beside.threads == [THREAD] and first.threads == ["MainThread"]
    assert not res.degraded and res.hits  # type: ignore[attr-defined]
    assert any("vector" in h.retrievers for h in res.hits)  # type: ignore[attr-defined]


@pytest.mark.parametrize("behaviour", ["outage", "bug", "not_unit"])
def test_a_failure_on_the_thread_degrades_as_before(
    hybrid_settings: Settings, no_thread_left: None, behaviour: str
) -> None:
    res = search(hybrid_settings, Local(behaviour))
    before = search(hybrid_settings, Local(behaviour, loaded=False))
    assert res == before
    assert res.degraded and res.hits and res.reason  # type: ignore[attr-defined]


def test_a_misconfiguration_on_the_thread_stays_loud(
    hybrid_settings: Settings, no_thread_left: None
) -> None:
    with pytest.raises(EmbeddingsError) as caught:
        search(hybrid_settings, Local("misconfigured"))
    assert caught.value.misconfigured and caught.value.reason == "no such model"


def test_what_escapes_the_thread_is_raised_by_the_search(
    hybrid_settings: Settings, no_thread_left: None
) -> None:
    with pytest.raises(Interrupt):
        search(hybrid_settings, Local("interrupt"))


def test_a_provider_without_ready_embeds_before_the_snapshot(
    hybrid_settings: Settings, no_thread_left: None
) -> None:
    class Remote(Local):
        ready = None  # type: ignore[assignment]

    remote = Remote()
    assert not embeds_beside(remote)
    search(hybrid_settings, remote)
    assert remote.threads == ["MainThread"]


def test_an_embedding_is_joined_even_when_nobody_waits_for_its_vectors(
    no_thread_left: None,
) -> None:
    release = threading.Event()

    def work() -> list[QueryVector]:
        release.wait()
        return [QueryVector(vector=[1.0])]

    pending = Embedding(work)
    release.set()
    pending.join()
    assert pending.result() == [QueryVector(vector=[1.0])]


def test_an_index_not_built_yet_leaves_no_thread(
    settings: Settings, fake_embed: FakeEmbedServer, no_thread_left: None
) -> None:
    res = search(hybrid(settings, fake_embed), Local())
    assert res.status == "index_not_built"  # type: ignore[attr-defined]
