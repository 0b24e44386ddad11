"""A paragraph that stands in several documents, the chunks around it differing, is one hit:
the other documents' chunks are under its ``copies``, each with where the paragraph is in it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, SearchRequest, Settings, index_project, resolve_settings
from fisk_ls.knowledge.collapse import (
    FOLD_MIN_WORDS,
    Probes,
    casefolded,
    may_hold,
    normalised,
    paragraph_key,
    probe,
)
from tests.support.repeated import (
    COMMANDS,
    OPTION,
    PAGES,
    QUERY,
    option_lines,
    page,
    write_repeated,
)


def make(root: Path, store_base: Path, docs: dict[str, str]) -> Settings:
    for rel, text in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    settings = resolve_settings(cwd=root, store_base=store_base, discover=False)
    index_project(settings)
    return settings


def test_a_paragraph_in_three_documents_is_one_hit_with_two_under_copies(
    tmp_path: Path, store_base: Path
) -> None:
    root = write_repeated(tmp_path / "p")
    k = Knowledge(resolve_settings(cwd=root, store_base=store_base, discover=False))
    try:
        index_project(k.settings)
        hits = k.search(SearchRequest(QUERY)).hits
    finally:
        k.close()
    option = [h for h in hits if h.path in PAGES]
    assert len(option) == 1, "the three pages' paragraph is one hit"
    (top,) = option
    assert top.match is not None and top.match.section.endswith("cache-tarballs")
    assert top.match.lines == option_lines(root, top.path)
    assert {top.path, *(a.path for a in top.copies)} == set(PAGES)
    assert len(top.copies) == 2
    texts = {(root / p).read_text() for p in PAGES}
    assert len(texts) == 3, "the pages around the paragraph differ"
    for other in top.copies:
        assert other.match is not None, "a folded chunk says where the paragraph is in it"
        assert other.match.lines == option_lines(root, other.path)
    assert next(h for h in hits if h.path == "cache.md").copies == ()


def test_folded_hits_do_not_count_toward_top_k(tmp_path: Path, store_base: Path) -> None:
    docs: dict[str, str] = {}
    for i in range(8):  # eight options, each repeated on three pages with other intros
        for c in COMMANDS:
            docs[f"commands/{c}-{i}.md"] = page(
                f"{c}-{i}",
                f"{COMMANDS[c]} Variant {c} number {i}.",
                f"Option {i} changes how the registry client stores tarball number {i} in the "
                f"cache folder when it fetches from the registry ({'x' * i}).",
                f"option-{i}",
            )
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        hits = k.search(SearchRequest("registry client stores tarball cache folder", top_k=6)).hits
    finally:
        k.close()
    assert len(hits) == 6, "top_k counts the hits shown, not the copies folded into them"
    shown = [(h.match.section.rsplit(" > ", 1)[-1] if h.match else "") for h in hits]
    assert len(set(shown)) == 6, "no two hits show the same paragraph"
    assert [len(h.copies) for h in hits] == [2] * 6, [
        (h.citation, h.match and h.match.snippet, h.copies) for h in hits
    ]


def test_a_short_paragraph_or_another_heading_does_not_fold(
    tmp_path: Path, store_base: Path
) -> None:
    docs = {
        f"short/{c}.md": page(c, intro, "Default: true for frobnicators.")
        for c, intro in COMMANDS.items()
    }
    docs |= {
        f"headed/{c}.md": page(c, intro, OPTION.replace("tarball", "gizmo"), f"heading-{c}")
        for c, intro in COMMANDS.items()
    }
    s = make(tmp_path / "p", store_base, docs)
    k = Knowledge(s)
    try:
        short = k.search(SearchRequest("frobnicators default")).hits
        headed = k.search(SearchRequest("copy of every gizmo")).hits
    finally:
        k.close()
    assert len([h for h in short if h.path.startswith("short/")]) == 3
    assert all(h.copies == () for h in short)
    assert len([h for h in headed if h.path.startswith("headed/")]) == 3
    assert all(h.copies == () for h in headed)


words = st.lists(st.sampled_from(["cache", "Tarball", "registry", "npm", "keeps", "a", "42"]))


@given(words, st.sampled_from([" ", "  ", "\n", " \t", ", "]))
def test_the_key_ignores_case_spacing_and_punctuation(ws: list[str], gap: str) -> None:
    text = " ".join(ws)
    key = paragraph_key("save", text)
    assert key == paragraph_key("SAVE", gap.join(w.upper() for w in ws))
    assert (key is None) == (len(ws) < FOLD_MIN_WORDS)
    if key is not None:
        assert key != paragraph_key("other", text)


pieces = st.sampled_from(
    [
        "Cache",
        "tar",
        "ball",
        " ",
        "\n",
        "-",
        "_",
        "[x](http://a.b/c)",
        "](",
        "https://x.y/z ",
        "www.Q.org",
        "ẞtraße",
        "STRASSE",
        "İi",
        "ΣΑΣ",
        "ﬁle",
        "Ǆ",
        "é",
        "é",
        "42",
        "…",
    ]
)


@given(st.lists(pieces | st.text(max_size=4), max_size=30), st.integers(0, 30), st.integers(0, 30))
def test_may_hold_is_false_only_when_the_normalised_text_lacks_the_words(
    parts: list[str], start: int, end: int
) -> None:
    body = "".join(parts)
    part = "".join(parts[start:end])  # often a part of the body, so often held
    words = normalised("", part)
    if words and words in normalised("", body):
        assert may_hold(body.casefold(), probe(words))


@given(st.lists(st.lists(pieces | st.text(max_size=4), max_size=8), max_size=6), st.lists(pieces))
def test_probes_hold_what_may_hold_holds_one_by_one(
    paragraphs: list[list[str]], body_parts: list[str]
) -> None:
    words = [normalised("", "".join(p)) for p in paragraphs]
    body = "".join(body_parts) + "".join(paragraphs[0][1:3] if paragraphs else [])
    expected = any(may_hold(body.casefold(), probe(w)) for w in words)
    assert Probes(words).any_held(casefolded(body)) == expected


@given(st.text() | st.text(alphabet=st.characters(max_codepoint=127)))
def test_casefolded_is_casefold(text: str) -> None:
    assert casefolded(text) == text.casefold()
