"""bench/knn.py's recall compares chunk ids, not (id, cosine) pairs: the quantized pass and
exact vec0 KNN compute the same cosine in different ways (a run once reported recall 0.0)."""

from __future__ import annotations

import knn


def test_recall_compares_ids_whatever_the_cosines() -> None:
    exact = [(7, 0.91), (3, 0.90), (5, 0.80), (1, 0.10)]
    quantized = [(3, 0.9000001), (7, 0.9100002), (2, 0.7), (5, 0.79999)]
    assert knn.recall(quantized, exact, 2) == 1.0
    assert knn.recall(quantized, exact, 4) == 0.75
    assert knn.recall([], exact, 2) == 0.0
