"""A search request is parsed once where it enters the core (query.py): each string's text is
normalised, its stop words found and its words split by one ``question.Asked``, and nothing after
the parse derives them from the text again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    fts,
    index_project,
    query,
    question,
    resolve_settings,
    search,
    topk,
)
from fisk_ls.knowledge.query import SearchString


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Knowledge]:
    root = tmp_path_factory.mktemp("parse")
    docs = root / "docs"
    docs.mkdir()
    (docs / "spans.md").write_text(
        "# Spans\n\nA span is one operation of a trace.\n\n## Span processors\n\n"
        "The BatchSpanProcessor exports spans in batches.\n",
        encoding="utf-8",
    )
    (docs / "logs.md").write_text("# Logs\n\nA log record is one event.\n", encoding="utf-8")
    s = resolve_settings(cwd=docs, store_base=root / "stores", discover=False)
    index_project(s)
    kb = Knowledge(s)
    yield kb
    kb.close()


def _counting(monkeypatch: pytest.MonkeyPatch, counts: Counter[str]) -> None:
    """Count the query-side normalisers wherever the core calls them."""
    for name in ("stop_words",):
        original: Callable[..., Any] = getattr(fts, name)

        def wrapped(*a: Any, _o: Callable[..., Any] = original, _n: str = name) -> Any:
            counts[_n] += 1
            return _o(*a)

        for module in (fts, query, question, search, topk):
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, wrapped)
    of = question.Asked.of.__func__  # type: ignore[attr-defined]

    def asked(cls: type[question.Asked], text: str) -> question.Asked:
        counts["Asked.of"] += 1
        return of(cls, text)  # type: ignore[no-any-return]

    monkeypatch.setattr(question.Asked, "of", classmethod(asked))


@pytest.mark.parametrize("also", [(), ("BatchSpanProcessor", "span processor batches")])
def test_each_string_is_read_once(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch, also: tuple[str, ...]
) -> None:
    knowledge.search(
        SearchRequest("what is a span processor", also=also)
    )  # warm: nothing cached differs
    counts: Counter[str] = Counter()
    _counting(monkeypatch, counts)
    result = knowledge.search(SearchRequest("what is a span processor", also=also))
    assert result.hits
    # One Asked per string, each finding its stop words once; no other normaliser runs.
    assert counts == Counter({"Asked.of": 1 + len(also), "stop_words": 1 + len(also)})


pieces = [*"abcOTLP_-./: 'é’スパン世界?¿\x07", "what is ", "qué es un ", "とは", "span"]
texts = st.lists(st.sampled_from(pieces), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_the_parsed_string_is_what_the_functions_say(text: str) -> None:
    """The fields of a parsed string are what its ``Asked`` says."""
    s = SearchString.parse(text)
    asked = question.Asked.of(text)
    assert s.terms == tuple(asked.search_terms())
    assert s.phrases == tuple(asked.phrases())
    assert s.heading == tuple(asked.heading_terms())
    assert s.stop == asked.stop
    want = fts.heading_key(" ".join(s.heading), s.stop) if s.heading else ()
    assert s.heading_key == want
