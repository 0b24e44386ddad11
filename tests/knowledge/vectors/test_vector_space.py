"""The one vector space: from config, from the manifest, the difference, the message."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.errors import EmbeddingsError, VectorSpaceMismatch
from fisk_ls.knowledge.manifest import Manifest
from fisk_ls.knowledge.vectors.space import (
    VectorSpace,
    describe,
    differences,
    dimension_error,
    mismatch_message,
    refuse_lexical_over_hybrid,
    require_match,
    require_unit,
)

PINNED = Manifest(
    generation=3,
    model="m",
    dimension=64,
    normalized=True,
    query_prefix="q: ",
    document_prefix="d: ",
)


def test_round_trip_through_the_manifest() -> None:
    ident = VectorSpace.pinned(PINNED)
    assert ident == VectorSpace("m", 64, "q: ", "d: ", True)
    assert ident.manifest(3) == PINNED
    assert VectorSpace.pinned(Manifest()) is None
    assert describe(Manifest()) == "lexical-only"
    assert describe(PINNED) == "model 'm' dim 64 query_prefix 'q: ' document_prefix 'd: '"


class _Provider:
    model = "m"
    query_prefix = "q: "
    document_prefix = "d: "


def test_from_the_provider_knows_no_dimension_until_probed() -> None:
    assert VectorSpace.of_provider(_Provider()).dimension == 0
    assert VectorSpace.of_provider(_Provider(), 64) == VectorSpace.pinned(PINNED)
    # an unknown dimension is not a difference
    assert (
        differences(VectorSpace("m", 64, "q: ", "d: "), VectorSpace.of_provider(_Provider())) == []
    )


def test_cache_key_is_stable_and_ignores_the_query_prefix() -> None:
    a = VectorSpace("m", 64, "q: ", "d: ")
    # the key the tier used before space.py existed: caches built then stay valid
    assert a.cache_key() == "351031e49d1ffd2b48e7b2e1"
    assert a.cache_key() == VectorSpace("m", 64, "other", "d: ").cache_key()
    assert a.cache_key() != VectorSpace("m", 32, "q: ", "d: ").cache_key()
    assert a.cache_key() != VectorSpace("m", 64, "q: ", "").cache_key()


@pytest.mark.parametrize(
    ("wanted", "phrase"),
    [
        (VectorSpace("other", 64, "q: ", "d: "), "model 'm' (configured 'other')"),
        (VectorSpace("m", 32, "q: ", "d: "), "dim 64 (the model now gives 32)"),
        (VectorSpace("m", 64, "", "d: "), "query_prefix 'q: ' (configured '')"),
        (VectorSpace("m", 64, "q: ", ""), "document_prefix 'd: ' (configured '')"),
    ],
)
def test_each_difference_is_named_with_the_fix(wanted: VectorSpace, phrase: str) -> None:
    with pytest.raises(VectorSpaceMismatch) as caught:
        require_match(PINNED, wanted)
    message = str(caught.value)
    assert phrase in message and "fisk-ai knowledge index --reindex" in message
    pinned = VectorSpace.pinned(PINNED)
    assert pinned is not None
    assert message == mismatch_message(differences(pinned, wanted))


def test_unnormalised_index_differs() -> None:
    old = Manifest(model="m", dimension=64, normalized=False)
    with pytest.raises(VectorSpaceMismatch, match="unnormalised"):
        require_match(old, VectorSpace("m", 64))


def test_a_lexical_index_matches_any_vector_space() -> None:
    """Vectors are an addition: a lexical-only index gains them in place, never a rebuild."""
    require_match(Manifest(), VectorSpace("m"))
    require_match(Manifest(), VectorSpace("other", 384, "q: ", "d: "))


def test_a_model_that_does_not_load_is_a_fault_not_a_switch() -> None:
    """The provider's check runs before a model difference is called a switch: its load error
    (not VectorSpaceMismatch) is what the caller sees, and it degrades rather than fails."""
    fault = EmbeddingsError("permanent", "cannot load model.onnx", misconfigured=False)

    def broken() -> None:
        raise fault

    with pytest.raises(EmbeddingsError) as caught:
        require_match(PINNED, VectorSpace("m@other-hash", 64, "q: ", "d: "), verify=broken)
    assert caught.value is fault and not caught.value.misconfigured
    # a model that loads and differs is a switch
    with pytest.raises(VectorSpaceMismatch):
        require_match(PINNED, VectorSpace("m@other-hash", 64, "q: ", "d: "), verify=lambda: None)
    # the check is not run when only a prefix differs, nor when nothing does
    require_match(PINNED, VectorSpace("m", 64, "q: ", "d: "), verify=broken)


def test_lexical_configuration_never_writes_into_a_hybrid_index() -> None:
    refuse_lexical_over_hybrid(Manifest())
    with pytest.raises(VectorSpaceMismatch, match="no embeddings are configured"):
        refuse_lexical_over_hybrid(PINNED)


def test_dimension_error_is_a_misconfiguration() -> None:
    err = dimension_error(32, 64)
    assert err.kind == "dimension" and err.misconfigured and "--reindex" in err.reason


@pytest.mark.parametrize(
    "vector",
    [[], [0.0, 0.0], [math.nan, 1.0], [math.inf, 0.0], [3.0, 4.0], [0.5, 0.5], [1e308, 1e308]],
)
def test_require_unit_refuses_what_is_not_a_unit_vector(vector: list[float]) -> None:
    with pytest.raises(EmbeddingsError) as caught:
        require_unit(vector)
    assert caught.value.kind == "invalid_response" and not caught.value.misconfigured


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=64))
def test_require_unit_accepts_every_normalised_vector(raw: list[float]) -> None:
    norm = math.sqrt(math.fsum(x * x for x in raw))
    if norm < 1e-150:
        return
    require_unit([x / norm for x in raw])
