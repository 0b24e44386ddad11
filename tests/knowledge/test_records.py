"""The core's records (NamedTuples): immutable, equal by value, copied with ``_replace``."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import SearchRequest, Status, check_request
from fisk_ls.knowledge.deadline import Deadline
from fisk_ls.knowledge.request import Spelling
from fisk_ls.knowledge.results import Hit, SearchResult

queries = st.text(min_size=1, max_size=40).filter(str.strip)
counts = st.none() | st.integers(min_value=1, max_value=20)


@given(queries, counts)
def test_requests_asking_the_same_are_equal_whatever_their_deadline_and_spelling(
    query: str, top_k: int | None
) -> None:
    plain = SearchRequest(query, top_k)
    other = plain._replace(deadline=Deadline(), spelling=Spelling(top_k="topK"))
    assert plain == other and (plain != other) is False
    assert hash(plain) == hash(other)
    assert plain != plain._replace(also=("more",)) and (plain == plain._replace(context=1)) is False


def test_a_checked_request_equals_the_one_built_directly() -> None:
    checked = check_request({"query": "backpressure", "top_k": 3}, Spelling(top_k="--top-k"))
    assert checked == SearchRequest("backpressure", 3)
    assert checked.wanted(5) == 3 and SearchRequest("q").wanted(5) == 5


def test_records_are_immutable_and_copied_by_replace() -> None:
    hit = Hit(1, "a.md", 0, "", "text", 1, 1, 1.0)
    with pytest.raises(AttributeError):
        hit.path = "b.md"  # type: ignore[misc]
    moved = hit._replace(project="docs")
    assert type(moved) is Hit and moved.citation == "docs:a.md#0" and hit.project == ""
    assert pickle.loads(pickle.dumps(moved)) == moved


def test_a_result_without_hits_holds_an_empty_tuple() -> None:
    assert SearchResult(Status.INDEX_EMPTY, "lexical").hits == ()
