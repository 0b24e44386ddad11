"""Token-budget batching of the built-in provider (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.vectors.builtin import batches


@given(
    st.lists(st.integers(min_value=0, max_value=600), max_size=300).map(sorted),
    st.integers(min_value=1, max_value=4096),
    st.integers(min_value=1, max_value=80),
)
def test_batches_cover_everything_in_order_within_budget(
    lengths: list[int], budget: int, most: int
) -> None:
    groups = batches(lengths, budget, most)
    assert [p for g in groups for p in g] == list(range(len(lengths)))
    for g in groups:
        assert 1 <= len(g) <= most
        longest = max(max(lengths[p] for p in g), 1)
        assert len(g) == 1 or len(g) * longest <= budget


def test_short_texts_share_a_call_long_ones_do_not() -> None:
    assert batches([10] * 10, 2048) == [list(range(10))]
    assert [len(g) for g in batches([256] * 20, 2048)] == [8, 8, 4]
    assert batches([5000], 2048) == [[0]]  # one text over budget still goes alone
