"""Dev-set metrics with bootstrap confidence intervals, and paired comparison of two runs.

Per question the harness keeps the 1-based rank of the first correct hit (or None). MRR@10 is
the mean of 1/rank (0 past 10), Hit@5 the share with rank <= 5. A 95% interval comes from
resampling the questions with replacement (``RESAMPLES`` times, fixed ``SEED``) and taking the
2.5th and 97.5th percentiles of the resampled means. A paired comparison resamples the
questions both runs answered and takes the same percentiles of the mean per-question difference,
so a change whose interval holds 0 is within the noise of this question set.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

RESAMPLES = 1000
SEED = 20261201
TOP_K = 10


def reciprocal(rank: int | None) -> float:
    return 1.0 / rank if rank is not None and rank <= TOP_K else 0.0


def hit_at(k: int) -> Callable[[int | None], float]:
    def f(rank: int | None) -> float:
        return 1.0 if rank is not None and rank <= k else 0.0

    return f


METRICS: dict[str, Callable[[int | None], float]] = {
    "mrr@10": reciprocal,
    "hit@5": hit_at(5),
    "hit@10": hit_at(10),
}


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default rule) of already sorted values."""
    if not sorted_values:
        raise ValueError("no values")
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_ci(
    values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of ``values``."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return _percentile(means, 0.025), _percentile(means, 0.975)


def paired_diff(
    before: Sequence[float], after: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float, float]:
    """(mean of after - before, 95% interval low, high), resampling the pairs together."""
    if len(before) != len(after):
        raise ValueError(f"unpaired: {len(before)} vs {len(after)} values")
    diffs = [b - a for a, b in zip(before, after, strict=True)]
    lo, hi = bootstrap_ci(diffs, resamples, seed)
    return sum(diffs) / len(diffs), lo, hi


def summarize(ranks: Sequence[int | None], resamples: int = RESAMPLES) -> dict[str, object]:
    """n, and each metric with its interval as ``<metric>_ci: [low, high]``."""
    out: dict[str, object] = {"n": len(ranks)}
    for name, f in METRICS.items():
        values = [f(r) for r in ranks]
        lo, hi = bootstrap_ci(values, resamples)
        out[name] = round(sum(values) / len(values), 4)
        out[f"{name}_ci"] = [round(lo, 4), round(hi, 4)]
    return out


def hit_rate(ranks: Sequence[int | None], k: int = 5) -> float:
    """Share of ranks within ``k`` (for the looser file/span levels, reported without CI)."""
    return round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 4)
