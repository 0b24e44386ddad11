"""The heading boost without the query's very common words (issue 14), measured, not in the
product.

    SHARE=0.2 python bench/experiments/common_heading_words.py [devset.py args]

"what is an OpenTelemetry distribution" asks for the section headed "Distribution", but its
heading words are ("opentelemetry", "distribution"), so no heading is exactly them. Here a
heading word that more than ``SHARE`` of the rows hold (the site's own name) is left out of the
boost's key, as long as one word remains.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S

SHARE = float(os.environ.get("SHARE", "0.2"))
_LAST: dict[str, Any] = {}
original_query_plan = S.query_plan
original_boost = S.boost_headings


def query_plan(snap: Any, query: str, term_stats: Any) -> Any:
    plan = original_query_plan(snap, query, term_stats)
    _LAST["plan"] = plan
    return plan


def boost_headings(snap: Any, ranked: Any, heading: Any, *a: Any, **kw: Any) -> Any:
    plan = _LAST.get("plan")
    if plan is not None and plan.total > 0 and len(heading) > 1:
        counts = dict(zip(plan.terms, plan.counts, strict=True))
        kept = [w for w in heading if counts.get(w, 0) <= SHARE * plan.total]
        if kept:
            heading = kept
    return original_boost(snap, ranked, heading, *a, **kw)


S.query_plan = query_plan  # type: ignore[assignment]
S.boost_headings = boost_headings  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
