"""The vector space: what an index's vectors depend on, and the one check of it.

An index pins the vector space it was built with in its manifest (model, dimension, query and
document prefixes, normalisation). The embeddings provider asks for one
(:meth:`VectorSpace.of_provider`: for the built-in model the weights' hash is part of it).
Every comparison of the two, and every message about a difference, is here: the index run
(``tier.VectorTier.start``), the search (``search.run_search``) and ``doctor`` all call
:func:`require_match` with the provider's vector space, so the three cannot disagree.

Vectors are an addition, never a switch: a lexical-only index matches any vector space (an index
run adds the vectors in place, a search answers lexically meanwhile). Only an index that holds
vectors of another vector space needs ``--reindex``. A provider whose model cannot be loaded (a
damaged ``model.onnx``) is a fault, not another vector space: ``require_match`` asks the provider's
``verify`` before it calls a model difference a switch, and the load error degrades a search.

Normalisation happens once, in the provider: every :class:`~.tier.DocumentEmbedder` /
:class:`~fisk_ls.knowledge.query_vectors.QueryEmbedder` returns unit vectors (the OpenAI-compatible
client L2-normalises what the server sends, because servers disagree). Callers only *check*
with :func:`require_unit` (a sum of squares, no rescaling), so a provider that breaks the
contract fails with a clear error instead of silently skewing every distance.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import EmbeddingsError, VectorSpaceMismatch
from ..store import Manifest

REINDEX = "`fisk-ai knowledge index --reindex`"
"""The command that fixes every vector-space difference: a rebuild beside the live index."""

UNIT_TOLERANCE = 1e-3
"""How far from 1 a vector's squared length may be (float32 storage rounds at ~1e-7)."""


class Provider(Protocol):
    """What a vector space needs from an embeddings provider."""

    model: str
    query_prefix: str
    document_prefix: str


@dataclass(frozen=True)
class VectorSpace:
    """One vector space (vectors of two spaces cannot be compared). ``dimension`` 0 means "not
    known yet" (the configuration alone does not say it; the probe at index time or the first
    query vector does)."""

    model: str
    dimension: int = 0
    query_prefix: str = ""
    document_prefix: str = ""
    normalized: bool = True

    @classmethod
    def of_provider(cls, provider: Provider, dimension: int = 0) -> VectorSpace:
        return cls(provider.model, dimension, provider.query_prefix, provider.document_prefix)

    @classmethod
    def pinned(cls, manifest: Manifest) -> VectorSpace | None:
        """The vector space an index was built with; None for a lexical-only index."""
        if not manifest.hybrid:
            return None
        return cls(
            manifest.model,
            manifest.dimension,
            manifest.query_prefix,
            manifest.document_prefix,
            manifest.normalized,
        )

    def manifest(self, generation: int) -> Manifest:
        """The manifest that pins this vector space for ``generation``."""
        return Manifest(
            generation=generation,
            model=self.model,
            dimension=self.dimension,
            normalized=self.normalized,
            query_prefix=self.query_prefix,
            document_prefix=self.document_prefix,
        )

    def cache_key(self) -> str:
        """What a cached document vector depends on (the query prefix does not matter)."""
        raw = "\x00".join([self.model, str(self.dimension), self.document_prefix, "normalized"])
        return hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()

    def describe(self) -> str:
        return (
            f"model {self.model!r} dim {self.dimension} query_prefix {self.query_prefix!r} "
            f"document_prefix {self.document_prefix!r}"
        )


def describe(manifest: Manifest) -> str:
    """The vector space a manifest pins, in words ("lexical-only" when it pins none)."""
    pinned = VectorSpace.pinned(manifest)
    return "lexical-only" if pinned is None else pinned.describe()


def differences(pinned: VectorSpace, wanted: VectorSpace) -> list[str]:
    """Each way ``pinned`` (the index) differs from ``wanted`` (the configuration), in words.

    Dimensions are compared only when both are known.
    """
    wrong = []
    if pinned.model != wanted.model:
        wrong.append(f"model {pinned.model!r} (configured {wanted.model!r})")
    if pinned.dimension and wanted.dimension and pinned.dimension != wanted.dimension:
        wrong.append(f"dim {pinned.dimension} (the model now gives {wanted.dimension})")
    if pinned.query_prefix != wanted.query_prefix:
        wrong.append(f"query_prefix {pinned.query_prefix!r} (configured {wanted.query_prefix!r})")
    if pinned.document_prefix != wanted.document_prefix:
        wrong.append(
            f"document_prefix {pinned.document_prefix!r} (configured {wanted.document_prefix!r})"
        )
    if not pinned.normalized:
        wrong.append("unnormalised vectors")
    return wrong


def mismatch_message(wrong: Sequence[str]) -> str:
    return f"the index was built with {', '.join(wrong)}; run {REINDEX} to rebuild it"


ADDING = "`fisk-ai knowledge index` adds them in place (the language server and watch do it too)"
"""What fills the vectors of a lexical-only index once embeddings are configured."""


def require_match(
    manifest: Manifest, wanted: VectorSpace, *, verify: Callable[[], object] | None = None
) -> None:
    """Raise :class:`VectorSpaceMismatch` unless the index may be used with ``wanted``.

    A lexical-only index always matches (its vectors are added in place). When the model
    differs, ``verify`` (the provider's model check, when it has one) runs first: a model that
    cannot be loaded raises its own :class:`EmbeddingsError`, a fault rather than a switch.
    """
    pinned = VectorSpace.pinned(manifest)
    if pinned is None:
        return
    wrong = differences(pinned, wanted)
    if wrong:
        if verify is not None and pinned.model != wanted.model:
            verify()
        raise VectorSpaceMismatch(mismatch_message(wrong))


def verifier(provider: object) -> Callable[[], object] | None:
    """The provider's model check (``verify``: the built-in model loads), if it has one."""
    check = getattr(provider, "verify", None)
    return check if callable(check) else None


def refuse_lexical_over_hybrid(manifest: Manifest) -> None:
    """A run without embeddings must not write into an index that holds vectors."""
    if manifest.hybrid:
        raise VectorSpaceMismatch(
            f"the index holds vectors ({describe(manifest)}) but no embeddings are configured; "
            f"configure the same embeddings, or run {REINDEX} to rebuild it lexical-only"
        )


def dimension_error(got: int, pinned: int) -> EmbeddingsError:
    """A provider's vectors no longer fit the index: loud (a configuration change), never a
    degraded search."""
    return EmbeddingsError(
        "dimension",
        f"the embeddings model now returns {got}-dimensional vectors but the index holds "
        f"{pinned}; run {REINDEX}",
    )


def require_unit(vector: Sequence[float], what: str = "a vector") -> None:
    """Raise ``invalid_response`` unless ``vector`` is finite with unit L2 length."""
    try:
        square = math.fsum(x * x for x in vector)
    except (OverflowError, TypeError):
        square = math.nan
    if not (math.isfinite(square) and abs(square - 1.0) <= UNIT_TOLERANCE):
        raise EmbeddingsError(
            "invalid_response",
            f"the embeddings provider returned {what} that is not a finite unit vector",
        )
