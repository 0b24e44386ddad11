"""Normalisation and the float32 blob format of stored vectors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.vectors.pack import normalize, pack, unpack

finite = st.floats(allow_nan=False, allow_infinity=False)
nonzero_vectors = st.lists(finite, min_size=1, max_size=64).filter(lambda v: any(v))
float32_vectors = st.lists(
    st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=64
)


def test_normalize_gives_unit_length() -> None:
    # reference checklist item 12
    unit = normalize([3.0, 4.0, 0.0, 12.0])
    assert math.isclose(math.fsum(x * x for x in unit), 1.0, rel_tol=1e-6)
    assert unit == pytest.approx([3 / 13, 4 / 13, 0.0, 12 / 13])


@pytest.mark.parametrize(
    "vector",
    [[], [0.0, 0.0], [0.0, -0.0], [1.0, math.nan], [math.inf, 1.0], [-math.inf]],
    ids=["empty", "zero", "signed-zero", "nan", "inf", "minus-inf"],
)
def test_normalize_refuses_garbage(vector: list[float]) -> None:
    # checklist item 13 returned a zero vector unchanged; storing it would poison search
    with pytest.raises(ValueError):
        normalize(vector)


def test_normalize_handles_extreme_magnitudes() -> None:
    assert normalize([1e308, 1e308]) == pytest.approx([2**-0.5, 2**-0.5])
    assert normalize([5e-324]) == [1.0]
    assert normalize([-1e-310, 0.0]) == [-1.0, 0.0]


def test_pack_is_little_endian_float32() -> None:
    assert pack([1.0]) == b"\x00\x00\x80\x3f"
    assert pack([1.0, -2.0]) == b"\x00\x00\x80\x3f\x00\x00\x00\xc0"
    assert unpack(b"\x00\x00\x80\x3f\x00\x00\x00\xc0") == [1.0, -2.0]


@pytest.mark.parametrize("vector", [[], [1e39], [-1e40]])
def test_pack_refuses_what_float32_cannot_hold(vector: list[float]) -> None:
    with pytest.raises(ValueError):
        pack(vector)


@pytest.mark.parametrize("blob", [b"", b"\x00", b"\x00" * 7])
def test_unpack_refuses_partial_floats(blob: bytes) -> None:
    with pytest.raises(ValueError):
        unpack(blob)


@given(nonzero_vectors)
def test_normalize_property(vector: list[float]) -> None:
    unit = normalize(vector)
    assert len(unit) == len(vector)
    assert math.isclose(math.fsum(x * x for x in unit), 1.0, rel_tol=1e-9)
    # same direction: signs kept, and normalising again changes nothing material
    assert all((x > 0) == (u > 0) for x, u in zip(vector, unit, strict=True) if u != 0.0)
    assert normalize(unit) == pytest.approx(unit, rel=1e-12, abs=1e-300)


@given(nonzero_vectors)
def test_pack_unpack_of_unit_vectors_loses_only_float32_precision(vector: list[float]) -> None:
    unit = normalize(vector)
    blob = pack(unit)
    assert len(blob) == 4 * len(unit)
    back = unpack(blob)
    assert all(
        math.isclose(a, b, rel_tol=2**-23, abs_tol=2**-126) for a, b in zip(unit, back, strict=True)
    )


@given(float32_vectors)
def test_float32_values_round_trip_exactly(vector: list[float]) -> None:
    assert unpack(pack(vector)) == vector
    assert pack(unpack(pack(vector))) == pack(vector)
