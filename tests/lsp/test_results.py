"""The language server's result shapes that need no server: a copy's selected lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.lsp.results import copy_lines


def test_the_matched_lines_move_with_the_copy() -> None:
    assert copy_lines((12, 13), (5, 20), (105, 120)) == (112, 113)
    assert copy_lines((5, 5), (5, 20), (1, 16)) == (1, 1)


def test_a_shorter_copy_keeps_the_selection_inside_its_chunk() -> None:
    assert copy_lines((18, 20), (5, 20), (40, 50)) == (50, 50)
    assert copy_lines((8, 20), (5, 20), (40, 50)) == (43, 50)


@st.composite
def spans(draw: st.DrawFn) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    start = draw(st.integers(1, 10_000))
    end = draw(st.integers(start, start + 200))
    first = draw(st.integers(start, end))
    last = draw(st.integers(first, end))
    copy_start = draw(st.integers(1, 10_000))
    copy_end = draw(st.integers(copy_start, copy_start + 200))
    return (first, last), (start, end), (copy_start, copy_end)


@given(spans())
def test_the_selection_is_inside_the_copy_and_shifted_when_it_fits(
    case: tuple[tuple[int, int], tuple[int, int], tuple[int, int]],
) -> None:
    matched, chunk, copy = case
    start, end = copy_lines(matched, chunk, copy)
    assert copy[0] <= start <= end <= copy[1]
    shift = copy[0] - chunk[0]
    if matched[1] + shift <= copy[1]:
        assert (start, end) == (matched[0] + shift, matched[1] + shift)
