"""Vector arithmetic and the byte format the vector table stores.

Servers disagree about normalisation (llama.cpp returns raw mean-pooled vectors, most others unit
vectors), so every vector is L2-normalised here before it is stored or compared; then a dot
product is a cosine and L2 distance ranks the same way. Vectors travel to sqlite-vec as packed
little-endian float32 blobs, not JSON text: four bytes per number and no parsing.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

_FLOAT32 = struct.Struct("<f")


def normalize(vec: Sequence[float]) -> list[float]:
    """Return ``vec`` scaled to unit L2 length.

    Raises ValueError for an empty vector, a NaN or infinite component, or a zero vector: each
    means the server produced garbage, and storing it would silently poison every search.
    """
    if len(vec) == 0:
        raise ValueError("empty vector")
    if not all(math.isfinite(x) for x in vec):
        raise ValueError("vector has a NaN or infinite component")
    largest = max(abs(x) for x in vec)
    if largest == 0.0:
        raise ValueError("zero vector")
    # Dividing by the largest component first keeps the norm finite for components near the
    # float limit; hypot itself guards against underflow.
    scaled = [x / largest for x in vec]
    norm = math.hypot(*scaled)
    return [x / norm for x in scaled]


def pack(vec: Sequence[float]) -> bytes:
    """Pack ``vec`` as little-endian float32, the blob layout sqlite-vec reads.

    Raises ValueError for an empty vector or a component outside the float32 range.
    """
    if len(vec) == 0:
        raise ValueError("empty vector")
    try:
        return struct.pack(f"<{len(vec)}f", *vec)
    except (OverflowError, struct.error) as exc:
        raise ValueError(f"vector cannot be packed as float32: {exc}") from None


def unpack(blob: bytes) -> list[float]:
    """Inverse of :func:`pack`. Raises ValueError when the length is not a multiple of 4."""
    if len(blob) == 0 or len(blob) % _FLOAT32.size:
        raise ValueError(f"a float32 vector blob cannot be {len(blob)} bytes long")
    return list(struct.unpack(f"<{len(blob) // _FLOAT32.size}f", blob))
