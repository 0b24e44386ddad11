"""The sentences of a search's soft outcomes: "no searchable words" only for a query of stop
words and punctuation, "no document contains these words" for words the docs lack, and during
an index run how far it got instead of "not built" or "empty"."""

from __future__ import annotations

import pytest

from fisk_ls.knowledge import (
    IndexRun,
    Knowledge,
    Scope,
    SearchRequest,
    SearchResult,
    Settings,
    Status,
    index_project,
    search_notice,
)
from fisk_ls.knowledge.notices import (
    EMPTY_SENTENCE,
    NO_MATCH,
    NO_MATCH_IN_SCOPE,
    NO_TERMS_SENTENCE,
    NOT_BUILT_SENTENCE,
)
from tests.support.restricted import scoped_request


def result(status: Status, hits: int = 0, **fields: object) -> SearchResult:
    from fisk_ls.knowledge.results import Hit

    found = [Hit(i, "a.md", i, "", "text", 1, 1, 1.0) for i in range(hits)]
    return SearchResult(status, "lexical", found, **fields)  # type: ignore[arg-type]


RUN = IndexRun(257, 1812)


@pytest.mark.parametrize(
    ("outcome", "sentence"),
    [
        pytest.param(result(Status.OK, 2), None, id="hits"),
        pytest.param(result(Status.OK), NO_MATCH, id="no-match"),
        pytest.param(result(Status.OK, scoped=True), NO_MATCH_IN_SCOPE, id="no-match-in-scope"),
        pytest.param(result(Status.NO_TERMS), NO_TERMS_SENTENCE, id="no-terms"),
        pytest.param(result(Status.INDEX_NOT_BUILT), NOT_BUILT_SENTENCE, id="not-built"),
        pytest.param(result(Status.INDEX_EMPTY), EMPTY_SENTENCE, id="empty"),
        pytest.param(
            result(Status.OK, 2, indexing=RUN),
            "still indexing: 257 of 1,812 files; these are the results so far",
            id="hits-while-indexing",
        ),
        pytest.param(
            result(Status.OK, indexing=RUN),
            "no document indexed so far contains these words (still indexing: 257 of 1,812 files)",
            id="no-match-while-indexing",
        ),
        pytest.param(
            result(Status.INDEX_EMPTY, indexing=RUN),
            "still indexing: 257 of 1,812 files; nothing is searchable yet",
            id="empty-while-indexing",
        ),
        pytest.param(
            result(Status.INDEX_NOT_BUILT, indexing=IndexRun()),
            "still indexing: counting files; nothing is searchable yet",
            id="not-built-while-counting",
        ),
        pytest.param(
            result(Status.NO_TERMS, indexing=RUN), NO_TERMS_SENTENCE, id="no-terms-while-indexing"
        ),
    ],
)
def test_each_outcome_has_its_sentence(outcome: SearchResult, sentence: str | None) -> None:
    assert search_notice(outcome) == sentence


def test_searchable_words_no_document_holds_are_not_no_terms(settings: Settings) -> None:
    index_project(settings)
    kb = Knowledge(settings)
    try:
        missing = kb.search(SearchRequest("zeppelin"))
        assert (missing.status, missing.hits) == (Status.OK, [])
        assert search_notice(missing) == NO_MATCH
        for query in ("?!", "--- ***", "   "):
            only = kb.search(SearchRequest(query))
            assert only.status == Status.NO_TERMS, query
            assert search_notice(only) == NO_TERMS_SENTENCE
        scoped = kb.search(scoped_request("zeppelin", scope=Scope.build(["docs"])))
        assert (scoped.status, scoped.scoped) == (Status.OK, True)
        assert search_notice(scoped) == NO_MATCH_IN_SCOPE
        assert search_notice(kb.search(SearchRequest("backpressure"))) is None
    finally:
        kb.close()


def test_the_not_built_sentence_is_the_one_show_raises(settings: Settings) -> None:
    from fisk_ls.knowledge import CitationError

    kb = Knowledge(settings)
    try:
        assert search_notice(kb.search(SearchRequest("queue"))) == NOT_BUILT_SENTENCE
        with pytest.raises(CitationError) as err:
            kb.show("a.md#0")
        assert str(err.value) == NOT_BUILT_SENTENCE
    finally:
        kb.close()


def test_each_status_is_its_wire_string_with_one_sentence() -> None:
    """``Status`` is a ``str``: JSON and f-strings give the value the wire always had, and each
    member has its one sentence from the one table."""
    import json

    from fisk_ls.knowledge.notices import STATUS_SENTENCES

    wire = ["ok", "index_not_built", "index_empty", "no_terms"]
    assert [s.value for s in Status] == wire
    assert json.dumps({"status": list(Status)}) == json.dumps({"status": wire})
    assert [f"{s}" for s in Status] == [str(s) for s in Status] == wire
    assert Status("no_terms") is Status.NO_TERMS
    assert isinstance(Status.NO_TERMS, str) and Status.NO_TERMS.startswith("no_")
    assert set(STATUS_SENTENCES) == set(Status)
    assert len({s.sentence for s in Status}) == len(Status)
    assert Status.OK.sentence == NO_MATCH and Status.INDEX_NOT_BUILT.sentence == NOT_BUILT_SENTENCE
