"""Fusing the lexical and vector candidate lists (fusion.fuse)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.fusion import LEXICAL_WEIGHT, fuse


def test_lexical_alone_is_bm25_relative_to_the_best() -> None:
    assert fuse([(4, -8.0), (2, -4.0)], []) == [(4, 1.0), (2, 0.5)]


def test_vector_alone_is_rescaled_over_its_candidates() -> None:
    assert fuse([], [(7, 0.9), (3, 0.7), (5, 0.5)]) == [
        (7, 1.0),
        (3, pytest.approx(0.5)),
        (5, 0.0),
    ]
    assert fuse([], [(7, 0.9)]) == [(7, 1.0)]  # one candidate: no spread to rescale


def test_a_flat_vector_list_cannot_outvote_a_clear_lexical_order() -> None:
    # An English-only model on a Japanese query: every cosine within 0.01, so its order is
    # noise; ranks would count it as much as the lexical ranks, the score fusion barely does.
    lexical = [(1, -9.0), (2, -3.0), (3, -2.0)]
    vector = [(3, 0.310), (2, 0.305), (9, 0.300)]
    assert fuse(lexical, vector)[0][0] == 1


def test_a_strong_semantic_match_lifts_a_weak_lexical_one() -> None:
    # A paraphrase: lexically third, but by far the nearest vector.
    lexical = [(1, -10.0), (2, -9.5), (3, -9.0)]
    vector = [(3, 0.80), (8, 0.45), (1, 0.40)]
    assert fuse(lexical, vector)[0][0] == 3


def test_first_in_both_scores_one() -> None:
    fused = fuse([(5, -3.0), (6, -1.0)], [(5, 0.8), (6, 0.2)])
    assert fused[0] == pytest.approx((5, 1.0))
    assert fused[1] == pytest.approx((6, LEXICAL_WEIGHT / 3))


bm25 = st.floats(min_value=-50.0, max_value=-0.01, allow_nan=False)
cosine = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@st.composite
def candidate_lists(draw: st.DrawFn) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    lex_ids = draw(st.lists(st.integers(1, 40), unique=True, max_size=12))
    vec_ids = draw(st.lists(st.integers(1, 40), unique=True, max_size=12))
    lexical = sorted(((c, draw(bm25)) for c in lex_ids), key=lambda x: (x[1], x[0]))
    vector = sorted(((c, draw(cosine)) for c in vec_ids), key=lambda x: (-x[1], x[0]))
    return lexical, vector


@pytest.mark.slow
@given(candidate_lists())
def test_fused_scores_are_in_range_ordered_and_cover_every_candidate(
    lists: tuple[list[tuple[int, float]], list[tuple[int, float]]],
) -> None:
    lexical, vector = lists
    fused = fuse(lexical, vector)
    assert {c for c, _ in fused} == {c for c, _ in lexical} | {c for c, _ in vector}
    assert all(-1e-9 <= s <= 1.0 + 1e-9 for _, s in fused)
    assert fused == sorted(fused, key=lambda x: (-x[1], x[0]))
    if lexical and vector and lexical[0][0] == vector[0][0]:
        assert fused[0][0] == lexical[0][0]


@given(candidate_lists(), st.integers(0, 11))
def test_a_better_lexical_score_never_lowers_a_chunk(
    lists: tuple[list[tuple[int, float]], list[tuple[int, float]]], pick: int
) -> None:
    lexical, vector = lists
    if len(lexical) < 2:
        return
    i = pick % (len(lexical) - 1) + 1  # not the best: improving it must not hurt it
    cid, s = lexical[i]
    better = sorted(
        [*lexical[:i], (cid, (s + lexical[0][1]) / 2), *lexical[i + 1 :]],
        key=lambda x: (x[1], x[0]),
    )
    before = dict(fuse(lexical, vector))[cid]
    after = dict(fuse(better, vector))[cid]
    assert after >= before - 1e-12
