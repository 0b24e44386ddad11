"""Paired comparison of two dev-set result files (bench/devset.py output), e.g. before and after
a change: per corpus and run, overall and per language and kind, the change in MRR@10 and Hit@5
with a paired-bootstrap 95% interval over the questions both files answered.

    python bench/devset_compare.py BEFORE.json AFTER.json [--run lexical] [--json]

A row whose interval holds 0 is marked "noise" (this question set cannot tell the runs apart),
"better" or "worse" otherwise, and "same" when no question's rank changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from devset_stats import METRICS, RESAMPLES, paired_diff

SHOWN = ("mrr@10", "hit@5")


def compare(
    before: dict[str, Any], after: dict[str, Any], resamples: int = RESAMPLES
) -> list[dict[str, Any]]:
    """One row per (corpus, run, slice) present in both files."""
    rows: list[dict[str, Any]] = []
    for corpus, b_corpus in before.get("corpora", {}).items():
        a_corpus = after.get("corpora", {}).get(corpus)
        if a_corpus is None:
            continue
        for run, b_run in b_corpus["runs"].items():
            a_run = a_corpus["runs"].get(run)
            if a_run is None:
                continue
            bq, aq = b_run["per_question"], a_run["per_question"]
            ids = sorted(set(bq) & set(aq))
            slices: list[tuple[str, list[str]]] = [("overall", ids)]
            for field in ("lang", "kind"):
                for value in sorted({bq[i][field] for i in ids}):
                    slices.append((f"{field} {value}", [i for i in ids if bq[i][field] == value]))
            for label, chosen in slices:
                row: dict[str, Any] = {
                    "corpus": corpus,
                    "run": run,
                    "slice": label,
                    "n": len(chosen),
                    "changed": sum(1 for i in chosen if bq[i]["rank"] != aq[i]["rank"]),
                }
                for name in SHOWN:
                    f = METRICS[name]
                    mean, lo, hi = paired_diff(
                        [f(bq[i]["rank"]) for i in chosen],
                        [f(aq[i]["rank"]) for i in chosen],
                        resamples,
                    )
                    row[name] = {
                        "before": round(sum(f(bq[i]["rank"]) for i in chosen) / len(chosen), 4),
                        "after": round(sum(f(aq[i]["rank"]) for i in chosen) / len(chosen), 4),
                        "diff": round(mean, 4),
                        "ci": [round(lo, 4), round(hi, 4)],
                    }
                rows.append(row)
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    out = [
        "| corpus | run | slice | n | changed | MRR@10 before → after | Δ [95% CI] | Hit@5 before → after | Δ [95% CI] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [r["corpus"], r["run"], r["slice"], str(r["n"]), str(r["changed"])]
        for name in SHOWN:
            m = r[name]
            lo, hi = m["ci"]
            if r["changed"] == 0:
                verdict = "same"
            elif lo <= 0 <= hi:
                verdict = "noise"
            else:
                verdict = "better" if lo > 0 else "worse"
            cells.append(f"{m['before']:.3f} → {m['after']:.3f}")
            cells.append(f"{m['diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] {verdict}")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--run", help="only this run (lexical, hybrid)")
    ap.add_argument("--resamples", type=int, default=RESAMPLES)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    docs = []
    for p in (args.before, args.after):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            print(f"error: {p}: {e}", file=sys.stderr)
            return 2
        if "corpora" not in doc:
            print(f"error: {p} is not a bench/devset.py result (no 'corpora')", file=sys.stderr)
            return 2
        docs.append(doc)
    rows = [
        r for r in compare(docs[0], docs[1], args.resamples) if not args.run or r["run"] == args.run
    ]
    if not rows:
        print("error: the two files share no corpus and run", file=sys.stderr)
        return 2
    print(json.dumps(rows, indent=2) if args.json else render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
