"""Dated posts rank below the reference pages (posts.py): the rule, its invariants, and the
effect through a real index (a how-to page and blog posts that tell the same story)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge import Knowledge, index, posts, resolve_settings
from fisk_ls.knowledge.posts import POST_WEIGHT, is_post, lower_posts


@pytest.mark.parametrize(
    "path",
    [
        "content/en/blog/2024/otel-at-scale/index.md",
        "blog/2021-06-01-launch.md",
        "_posts/2020-01-01-hello.md",
        "docs/blog/posts/release.md",
        "website/news/v2.md",
        "Blogs/Intro.md",
    ],
)
def test_posts_are_told_by_their_folder(path: str) -> None:
    assert is_post(path)


@pytest.mark.parametrize(
    "path",
    [
        "content/en/docs/concepts/signals/traces.md",
        "docs/blogging-platform.md",  # a topic, not a folder of posts
        "README.md",
        "docs/api/posts.md",  # a page about a "posts" endpoint
        "src/newsletter/guide.md",
    ],
)
def test_reference_pages_are_not_posts(path: str) -> None:
    assert not is_post(path)


scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.lists(st.tuples(scores, st.booleans()), max_size=30))
def test_lower_posts_keeps_every_candidate_and_the_order_within_each_kind(
    rows: list[tuple[float, bool]],
) -> None:
    fused = sorted(((i, s) for i, (s, _) in enumerate(rows)), key=lambda r: (-r[1], r[0]))
    where = {i: ("blog/p.md" if post else "docs/p.md") for i, (_, post) in enumerate(rows)}
    out = lower_posts(fused, where)
    assert sorted(out) == sorted((i, s * POST_WEIGHT if is_post(where[i]) else s) for i, s in fused)
    for kind in (True, False):
        assert [i for i, _ in fused if is_post(where[i]) is kind] == [
            i for i, _ in out if is_post(where[i]) is kind
        ]
    assert out == sorted(out, key=lambda r: (-r[1], r[0]))


def test_no_post_among_the_candidates_leaves_them_as_they_are() -> None:
    fused = [(3, 0.9), (1, 0.9), (2, 0.4)]
    assert lower_posts(fused, {1: "a.md", 2: "b.md", 3: "c.md"}) == fused


PAGE = """\
    ---
    title: Sampling
    ---

    ## Head sampling

    Head sampling decides whether to keep a trace at its first span. Configure the sampler
    of the SDK with the `OTEL_TRACES_SAMPLER` environment variable, for example
    `parentbased_traceidratio`, and set the ratio with `OTEL_TRACES_SAMPLER_ARG`.
    """

POST = """\
    # How we cut our tracing bill

    We wanted to configure sampling in every service. Sampling, sampling, sampling: we tried
    head sampling first and configured the sampler in each SDK, then tail sampling in the
    collector. Configuring head sampling took an afternoon. {n}
    """

ONLY_IN_THE_BLOG = """\
    # Our observability hackathon

    The winning team built a flame graph for the office coffee machine.
    """


@pytest.fixture
def knowledge(tmp_path: Path) -> Knowledge:
    root = tmp_path / "site"
    files = {"content/docs/sampling.md": PAGE, "content/blog/hackathon.md": ONLY_IN_THE_BLOG}
    files |= {f"content/blog/2024/bill-{n}.md": POST.replace("{n}", str(n)) for n in range(3)}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    settings = resolve_settings(cwd=root, store_base=tmp_path / "store", discover=False)
    index(settings)
    return Knowledge(settings)


def test_the_reference_page_comes_before_posts_that_repeat_its_words(
    knowledge: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = "how do I configure head sampling"
    try:
        monkeypatch.setattr(posts, "POST_WEIGHT", 1.0)
        first = knowledge.search(query, top_k=5).hits[0].path
        assert first.startswith("content/blog/"), "the fixture must favour the posts by BM25"
        monkeypatch.undo()
        hits = knowledge.search(query, top_k=5).hits
        assert hits[0].path == "content/docs/sampling.md"
        assert any(h.path.startswith("content/blog/2024/") for h in hits[1:])
    finally:
        knowledge.close()


def test_a_question_only_the_blog_answers_still_finds_the_blog(knowledge: Knowledge) -> None:
    try:
        hits = knowledge.search("coffee machine flame graph", top_k=5).hits
        assert hits[0].path == "content/blog/hackathon.md"
    finally:
        knowledge.close()
