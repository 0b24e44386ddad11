"""A short query's words also search for the identifier they spell: the index keeps
``PrefixLength`` or ``BatchSpanProcessor`` as one token, so "prefix length" could not reach the
parameter it names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, index_project, question, resolve_settings
from fisk_ls.knowledge.fts import MAX_TERMS, STOP_WORDS, stop_words
from fisk_ls.knowledge.question import COMPOUND_WORDS
from tests.support.question import compound_terms, query_terms, search_terms


@pytest.mark.parametrize(
    ("query", "compounds"),
    [
        ("prefix length", ["prefixlength"]),
        ("batch span processor", ["batchspan", "spanprocessor", "batchspanprocessor"]),
        ("self-signed certificate", ["selfsigned", "signedcertificate", "selfsignedcertificate"]),
        ("flush the DNS cache", ["flushdns", "dnscache", "flushdnscache"]),
        ("what is a span context", ["spancontext"]),
        ("span", []),
        ("PrefixLength", []),
        ("OTEL_SERVICE_NAME", []),  # an identifier already: its phrase matches it
        ("service.name attribute", []),
        ("how do I configure the tail sampling processor in a gateway", []),  # a sentence
        ("スパン コンテキスト", []),
        ("", []),
    ],
)
def test_compound_terms(query: str, compounds: list[str]) -> None:
    assert compound_terms(query) == compounds


def test_the_index_is_searched_for_the_terms_then_their_compounds() -> None:
    assert search_terms("prefix length") == ["prefix", "length", "prefixlength"]
    assert search_terms("PrefixLength prefix length").count("prefixlength") == 1
    assert query_terms("prefix length") == ["prefix", "length"]  # what is highlighted stays


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8).filter(
    lambda w: w not in STOP_WORDS
)


@given(st.lists(WORD, min_size=1, max_size=COMPOUND_WORDS + 3), st.sampled_from([" ", "  ", "-"]))
def test_a_compound_is_neighbouring_query_words_joined(words: list[str], sep: str) -> None:
    query = sep.join(words)
    compounds = compound_terms(query)
    kept = [w for w in words if w not in stop_words(query)]  # "b o" reads as Portuguese
    if not 2 <= len(kept) <= COMPOUND_WORDS:
        assert compounds == []
        return
    joined = {"".join(kept[i:j]) for i in range(len(kept)) for j in range(i + 2, len(kept) + 1)}
    assert compounds and set(compounds) <= joined
    assert len(search_terms(query)) <= MAX_TERMS


CMDLET = """\
    ---
    title: New-NetIPAddress
    ---

    # New-NetIPAddress

    ## SYNOPSIS

    Creates and configures an IP address.

    ## PARAMETERS

    ### -IPAddress

    Specifies the IPv4 or IPv6 address to create.

    ### -PrefixLength

    Specifies the number of bits of the subnet mask for the address you create.
    """

GUIDE = """\
    ---
    title: Routing guide {n}
    ---

    # Routing guide {n}

    ## Routes

    Every route has a prefix, and a longer prefix wins. The length of the route table grows
    with each site; keep the route table length short and the prefix list tidy.
    """


@pytest.fixture()
def knowledge(tmp_path: Path) -> Knowledge:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "New-NetIPAddress.md").write_text(textwrap.dedent(CMDLET), encoding="utf-8")
    for n in range(4):
        (root / f"routing-{n}.md").write_text(textwrap.dedent(GUIDE.format(n=n)), "utf-8")
    settings = resolve_settings(cwd=root, store_base=tmp_path / "store", discover=False)
    index_project(settings)
    return Knowledge(settings)


def test_words_reach_the_parameter_they_name(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        top = knowledge.search(SearchRequest("prefix length", top_k=3)).hits[0]
        assert top.path == "New-NetIPAddress.md"
        assert top.section.endswith("-PrefixLength")
        assert top.match is not None and "PrefixLength" in top.match.terms  # shown as matched
        # Without the compound the words alone rank the guides first.
        monkeypatch.setattr(question.Asked, "compounds", lambda self: [])
        assert (
            knowledge.search(SearchRequest("prefix length", top_k=3))
            .hits[0]
            .path.startswith("routing-")
        )
    finally:
        knowledge.close()
