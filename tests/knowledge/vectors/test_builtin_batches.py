"""Token-budget batching of the built-in provider (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.vectors.builtin import batches, query_groups


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


def _cost(groups: list[list[int]], lengths: list[int], run: int) -> int:
    return sum(run + len(g) * max(max(lengths[p] for p in g), 1) for g in groups)


@given(
    st.lists(st.integers(min_value=0, max_value=300), max_size=8),
    st.integers(min_value=0, max_value=64),
)
def test_query_groups_partition_the_strings_at_no_more_cost_than_one_batch_or_one_each(
    lengths: list[int], run: int
) -> None:
    groups = query_groups(lengths, run)
    assert sorted(p for g in groups for p in g) == list(range(len(lengths)))
    flat = [lengths[p] for g in groups for p in g]
    assert flat == sorted(flat) and all(groups)
    cost = _cost(groups, lengths, run)
    assert cost <= _cost([list(range(len(lengths)))] if lengths else [], lengths, run)
    assert cost <= _cost([[p] for p in range(len(lengths))], lengths, run)


def test_a_short_question_is_not_padded_to_long_strings() -> None:
    assert query_groups([13, 18, 18, 40]) == [[0, 1, 2], [3]]
    assert query_groups([40, 13, 41, 80]) == [[1], [0, 2], [3]]
    assert query_groups([20, 20]) == [[0, 1]]
    assert query_groups([]) == []


@given(
    st.lists(st.integers(min_value=0, max_value=120), max_size=7),
    st.integers(min_value=0, max_value=40),
)
def test_query_groups_cost_the_least_of_every_cut_of_the_sorted_strings(
    lengths: list[int], run: int
) -> None:
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    least = min(
        (
            _cost(
                [order[a:b] for a, b in zip((0, *cuts), (*cuts, len(order)), strict=True) if a < b],
                lengths,
                run,
            )
            for mask in range(1 << max(len(order) - 1, 0))
            for cuts in [tuple(i + 1 for i in range(len(order) - 1) if mask >> i & 1)]
        ),
        default=0,
    )
    assert _cost(query_groups(lengths, run), lengths, run) == least
