"""Lexical search behaviour: term pruning, the term-statistics cache, near-duplicate collapse."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import (
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
    resolve_settings,
    update_paths,
)
from fisk_ls.knowledge.collapse import normalised, text_key
from fisk_ls.knowledge.query import SearchString
from fisk_ls.knowledge.search import TermStats, query_plan


def make(root: Path, store_base: Path, docs: dict[str, str]) -> Settings:
    for rel, text in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    settings = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index_project(settings)
    return settings


BACKPRESSURE = "\n\n".join(
    f"## Stage {i}\n\nBackpressure at stage {i} slows the producer when the consumer lags; "
    "each stage keeps a bounded queue and blocks writes while the queue is full. " * 3
    for i in range(5)
)


def test_one_document_index_answers_when_every_term_is_common(
    tmp_path: Path, store_base: Path
) -> None:
    # Every chunk says "backpressure"; "work" is nowhere. Pruning the common term and keeping
    # the absent one used to leave a query that matches nothing.
    s = make(tmp_path / "p", store_base, {"README.md": "# Backpressure\n\n" + BACKPRESSURE})
    k = Knowledge(s)
    try:
        result = k.search(SearchRequest("how does backpressure work"))
        assert result.status == "ok"
        assert result.hits, "a one-document index must answer a question about its topic"
        assert all(h.path == "README.md" for h in result.hits)
    finally:
        k.close()


def test_pruning_drops_common_terms_only_when_a_rarer_matching_term_remains(
    tmp_path: Path, store_base: Path
) -> None:
    docs = {f"d{i}.md": f"# Doc {i}\n\nThe queue is bounded here ({i}).\n" for i in range(6)}
    docs["d0.md"] = "# Doc 0\n\nThe queue is bounded and backpressure applies.\n"
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        with k.store.snapshot() as snap:
            assert snap is not None
            stats = TermStats()
            # "queue" is in every chunk, "backpressure" in one: the common one goes.
            assert stats.prune(snap, ["queue", "backpressure"]) == ["backpressure"]
            # "zebra" matches nothing, so it cannot stand in for the common term.
            assert stats.prune(snap, ["queue", "zebra"]) == ["queue", "zebra"]
            expr = query_plan(snap, SearchString.parse("queue zebra"), stats).expression()
            assert '"queue"' in expr
    finally:
        k.close()


def test_term_stats_refresh_after_an_incremental_update(tmp_path: Path, store_base: Path) -> None:
    root = tmp_path / "p"
    docs = {f"d{i}.md": f"# Doc {i}\n\nPlain words number {i}.\n" for i in range(4)}
    s = make(root, store_base, docs)
    k = Knowledge(s)
    try:
        stats = TermStats()
        with k.store.snapshot() as snap:
            assert snap is not None
            # "kestrel" appears nowhere yet: nothing to prune.
            assert stats.prune(snap, ["kestrel", "plain"]) == ["kestrel", "plain"]
        for i in range(4):  # now "kestrel" is in every chunk, in the same generation
            path = root / f"d{i}.md"
            path.write_text(f"# Doc {i}\n\nKestrel words {i}, rare{i}.\n", encoding="utf-8")
            os.utime(path, ns=(10**18 + i, 10**18 + i))
        update_paths(s, [root / f"d{i}.md" for i in range(4)])
        with k.store.snapshot() as snap:
            assert snap is not None
            assert stats.prune(snap, ["kestrel", "rare0"]) == ["rare0"]
    finally:
        k.close()


def test_normalised_text_ignores_link_targets_case_and_spacing() -> None:
    a = "See [about_CommonParameters](https://go.microsoft.com/fwlink/?LinkID=113216)."
    b = "See about_CommonParameters (http://go.microsoft.com/fwlink/?LinkID=113216)."
    assert normalised("S", a) == normalised("s", b)
    assert text_key("S", a) == text_key("S", b)
    assert text_key("Inputs", "None.") != text_key("Outputs", "None.")
    assert text_key("S", "one two") != text_key("S", "one three")


def reference_normalised(section: str, body: str) -> str:
    """The definition, spelled as plainly as possible (collapse.normalised takes short cuts)."""
    text = f"{section}\n{body}"
    text = re.sub(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", "]", text)
    text = re.sub(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", " ", text, flags=re.IGNORECASE)
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


pieces = st.sampled_from(
    [
        "](",
        ")",
        "[a]",
        "(x y)",
        "://",
        "http",
        "HTTPS://a.b",
        "ftp",
        "www.",
        "WwW.x",
        " ",
        "\n",
        "_",
        "\t",
        "ẞ",
        "İ",
        "K",
        "ſ",
        "µ",
        "é",
        "日本",
        "\u00a0",
        '"t"',
        "-",
        "a1",
    ]
)
texts = st.one_of(st.text(max_size=60), st.lists(pieces, max_size=20).map("".join))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(texts, texts)
def test_normalised_short_cuts_give_the_reference_text(section: str, body: str) -> None:
    assert normalised(section, body) == reference_normalised(section, body)


PAGE = """\
    ---
    title: Get-Widget
    online version: https://example.invalid/get-widget?view=server{v}
    ---

    # Get-Widget

    ## SYNOPSIS

    Gets the widgets of a frobnicator, see [docs](https://example.invalid/{v}/widgets).

    ## DESCRIPTION

    The Get-Widget cmdlet lists every widget attached to a frobnicator, with its state.
    """


def test_copies_of_a_page_collapse_into_one_hit_and_top_k_stays_filled(
    tmp_path: Path, store_base: Path
) -> None:
    docs = {f"server{v}/Get-Widget.md": PAGE.format(v=v) for v in (2016, 2019, 2022, 2025)}
    for i in range(12):  # distinct pages that also mention widgets, each in four copies
        for v in (2016, 2019, 2022, 2025):
            docs[f"server{v}/Other-{i}.md"] = (
                f"# Other-{i}\n\n## SYNOPSIS\n\nWidget helper number {i} for frobnicators.\n"
            )
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        result = k.search(SearchRequest("frobnicator widgets", top_k=10))
        assert len(result.hits) == 10
        keys = [(h.section, h.text) for h in result.hits]
        assert len(set(keys)) == 10, "no two hits show the same text"
        top = next(h for h in result.hits if h.path.endswith("Get-Widget.md"))
        where = {top.path, *(a.path for a in top.copies)}
        assert where == {f"server{v}/Get-Widget.md" for v in (2016, 2019, 2022, 2025)}
        assert all(a.citation.startswith(a.path + "#") for a in top.copies)
    finally:
        k.close()


def test_json_output_lists_the_other_locations(tmp_path: Path, store_base: Path) -> None:
    from fisk_ls.cli.render import hit_json

    docs = {f"v{v}/page.md": "# Page\n\nThe same words about gizmos.\n" for v in (1, 2)}
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        hits = k.search(SearchRequest("gizmos")).hits
        assert len(hits) == 1
        out = hit_json(hits[0])
        assert [a["path"] for a in out["copies"]] == ["v2/page.md"]
        assert out["copies"][0]["citation"] == "v2/page.md#0"
    finally:
        k.close()


def test_text_output_names_the_other_copies(tmp_path: Path, store_base: Path) -> None:
    from fisk_ls.cli.render import search_text

    docs = {f"v{v}/page.md": "# Page\n\nThe same words about gizmos.\n" for v in range(1, 6)}
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        text = search_text(k.search(SearchRequest("gizmos")))
    finally:
        k.close()
    assert "Also in 4 files: v2/page.md#0, v3/page.md#0, v4/page.md#0, and 1 more" in text


def test_own_headings_of_a_label() -> None:
    from fisk_ls.knowledge.lexical import own_headings

    assert own_headings("Traces > Context Propagation; Spans") == ["Context Propagation", "Spans"]
    assert own_headings("A > B > C; D") == ["C", "D"]
    assert own_headings("Title") == ["Title"]
    assert own_headings("") == []
