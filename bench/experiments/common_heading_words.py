"""The heading boost without the query's very common words (issue 14), measured, not in the
product.

    SHARE=0.2 python bench/experiments/common_heading_words.py [devset.py args]

"what is an OpenTelemetry distribution" asks for the section headed "Distribution", but its
heading words are ("opentelemetry", "distribution"), so no heading is exactly them. Here a
heading word that more than ``SHARE`` of the rows hold (the site's own name) is left out of the
boost's key, as long as one word remains: ``search.lexical_arm`` is wrapped, and each search
string goes to it with its ``heading_key`` rebuilt from the kept words (the row counts are the
string's plan's, ``TermStats.plan``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import devset

from fisk_ls.knowledge import search as S
from fisk_ls.knowledge.fts import heading_key

SHARE = float(os.environ.get("SHARE", "0.2"))
original_lexical_arm = S.lexical_arm


def lexical_arm(snap: Any, string: Any, plan: Any, within: Any = None) -> Any:
    heading = string.heading
    if plan.total > 0 and len(heading) > 1:
        counts = dict(zip(plan.terms, plan.counts, strict=True))
        kept = [w for w in heading if counts.get(w, 0) <= SHARE * plan.total]
        if kept and len(kept) < len(heading):
            key = heading_key(" ".join(kept), string.stop)
            string = dataclasses.replace(string, heading=tuple(kept), heading_key=key)
    return original_lexical_arm(snap, string, plan, within)


S.lexical_arm = lexical_arm  # type: ignore[assignment]

if __name__ == "__main__":
    raise SystemExit(devset.main())
