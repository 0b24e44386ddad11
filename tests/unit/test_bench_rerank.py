"""The reranking experiment's harness (bench/rerank.py, bench/rerankers.py): the two reorderings
and the candidate feature cache. The scorers themselves need packages outside the project's
dependencies (nanoranker) or model files, so they are exercised by running the benchmark."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import rerank  # noqa: E402
import rerankers  # noqa: E402

scores = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60)


@given(scores)
def test_reorderings_are_permutations_of_the_candidates(s: list[float]) -> None:
    out = rerank.reorder(len(s), s)
    assert set(out) == set(rerank.VARIANTS)
    for order in out.values():
        assert sorted(order) == list(range(len(s)))


@given(scores)
def test_rerank_sorts_by_score_and_breaks_ties_by_lexical_rank(s: list[float]) -> None:
    order = rerank.reorder(len(s), s)["rerank"]
    keys = [(-s[i], i) for i in order]
    assert keys == sorted(keys)


@given(st.integers(1, 60))
def test_rrf_keeps_the_lexical_order_when_the_scorer_agrees(n: int) -> None:
    agree = [float(n - i) for i in range(n)]
    assert rerank.reorder(n, agree)["rrf"] == list(range(n))


def test_rrf_puts_a_candidate_first_in_both_orders_first() -> None:
    # Lexical order 0..4; the scorer likes 3 best, then 0. 0 is 1st + 2nd, 3 is 4th + 1st.
    out = rerank.reorder(5, [0.9, 0.1, 0.2, 1.0, 0.3])
    assert out["rerank"][:2] == [3, 0]
    assert out["rrf"][0] == 0


def test_better_treats_a_miss_as_worst() -> None:
    assert rerank._better(1, None)
    assert rerank._better(2, 5)
    assert not rerank._better(None, 3)
    assert not rerank._better(None, None)
    assert not rerank._better(4, 4)


class CountingScorer:
    name = "count"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def features(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded.extend(texts)
        return np.array([[len(t), t.count("a")] for t in texts], dtype=np.float32).reshape(-1, 2)

    def score(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        out: np.ndarray = docs @ query
        return out


def test_feature_cache_encodes_each_text_once_and_survives_a_reload(tmp_path: Path) -> None:
    scorer = CountingScorer()
    cache = rerankers.FeatureCache(scorer, tmp_path)
    first = cache.features(["banana", "kiwi", "banana"])
    assert first.tolist() == [[6, 3], [4, 0], [6, 3]]
    assert sorted(scorer.encoded) == ["banana", "kiwi"]
    cache.save()
    again = CountingScorer()
    reloaded = rerankers.FeatureCache(again, tmp_path)
    assert reloaded.features(["kiwi", "banana", "apple"]).tolist() == [[4, 0], [6, 3], [5, 1]]
    assert again.encoded == ["apple"]
    assert cache.features([]).shape == (0, 2)


def test_feature_cache_without_a_folder_keeps_nothing_on_disk(tmp_path: Path) -> None:
    cache = rerankers.FeatureCache(CountingScorer(), None)
    cache.features(["x"])
    cache.save()
    assert list(tmp_path.iterdir()) == []
