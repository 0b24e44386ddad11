"""Each ratio of a benchmark run against the last recorded one: which got worse, and by how much.

    python bench/regress.py BEFORE_DIR AFTER_DIR [--repeat REPEAT_DIR] [--threshold 0.15]
    python bench/regress.py --files BEFORE_DIR AFTER_DIR    # result files to measure again

Only ratios measured side by side in one run are compared (ours against a peer or the floor in
the same run, a search with strings against the same search alone): absolute times follow the
machine's load, ratios much less. A ratio is worse when it moved the wrong way by more than the
threshold (15%: ``after / before`` below 0.85 for a ratio where higher is better). A run that
``--repeat`` measured again calls a ratio worse only when the repeat is worse too; one that
recovered on the repeat is printed as noise. ``--files`` prints the result files whose ratios
moved, one a line, for bench/run.sh to measure again.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

THRESHOLD = 0.15


@dataclass(frozen=True)
class Ratio:
    """One ratio of a result file; ``higher`` says which way is better."""

    file: str
    name: str
    value: float
    higher: bool


def _get(d: Any, *path: str) -> float | None:
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return float(d) if isinstance(d, int | float) and not isinstance(d, bool) and d > 0 else None


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


PEER_MEASURES = {
    "cold index": ("cold", "median_s"),
    "no-change re-index": ("no_change", "median_s"),
    "one changed file": ("one_file", "median_s"),
    "search --json, whole process": ("search_process", "median_s"),
    "search in-process p50": ("search_in_process", "p50_ms"),
    "search in-process p95": ("search_in_process", "p95_ms"),
}


def _peers(d: dict[str, Any]) -> Iterator[tuple[str, float | None, bool]]:
    for corpus, c in sorted((d.get("corpora") or {}).items()):
        for label, (section, field) in PEER_MEASURES.items():
            fisk = _get(c, section, "fisk", field)
            yield (
                f"{corpus}: {label}, qmd ÷ fisk-ls",
                _div(_get(c, section, "qmd", field), fisk),
                True,
            )
        cold = _get(c, "cold", "fisk", "median_s")
        yield (
            f"{corpus}: cold index ÷ floor",
            _div(cold, _get(c, "cold", "floor", "median_s")),
            False,
        )


def _speed(d: dict[str, Any]) -> Iterator[tuple[str, float | None, bool]]:
    for corpus in ("powershell", "otel"):
        yield f"{corpus}: cold index ÷ floor", _get(d, f"{corpus}_cold", "ratio"), False


def _agent(d: dict[str, Any]) -> Iterator[tuple[str, float | None, bool]]:
    yield "three also strings ÷ the question alone, p50", _get(d, "ratio_p50"), False
    yield "three also strings ÷ the question alone, p95", _get(d, "ratio_p95"), False


def _topk(d: dict[str, Any]) -> Iterator[tuple[str, float | None, bool]]:
    yield "exact top-k ÷ plain BM25, p50", _get(d, "p50_ratio"), False


def _mcp(d: dict[str, Any]) -> Iterator[tuple[str, float | None, bool]]:
    yield "HTTP ÷ stdio, one by one", _get(d, "http_over_stdio_one_by_one"), False
    yield "HTTP ÷ stdio, concurrent calls/s", _get(d, "http_over_stdio_concurrent_rate"), True
    yield (
        "HTTP, in flight ÷ one by one, calls/s",
        _get(d, "concurrent_over_one_by_one", "http"),
        True,
    )


EXTRACTORS = {
    "peers.json": _peers,
    "speed.json": _speed,
    "agent-latency-powershell.json": _agent,
    "agent-latency-otel.json": _agent,
    "topk.json": _topk,
    "mcp.json": _mcp,
}
"""The result files holding ratios measured side by side, and how to read them."""


def ratios(folder: Path) -> dict[tuple[str, str], Ratio]:
    out: dict[tuple[str, str], Ratio] = {}
    for name, extract in EXTRACTORS.items():
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for label, value, higher in extract(data):
            if value is not None:
                out[(name, label)] = Ratio(name, label, value, higher)
    return out


def worse_by(before: Ratio, after: Ratio) -> float:
    """How much worse ``after`` is than ``before`` as a fraction (negative: better)."""
    change = after.value / before.value
    return 1 - change if before.higher else change - 1


@dataclass(frozen=True)
class Verdict:
    before: Ratio
    after: Ratio
    repeat: Ratio | None

    def line(self, threshold: float) -> str:
        b, a = self.before, self.after
        head = f"{b.file}: {b.name}: {b.value:.2f} -> {a.value:.2f}"
        worse = f"{worse_by(b, a):+.0%} worse"
        if self.repeat is None:
            return f"WORSE by more than {threshold:.0%}: {head} ({worse}; not repeated)"
        r = self.repeat
        if worse_by(b, r) > threshold:
            return (
                f"WORSE by more than {threshold:.0%}: {head} ({worse}), "
                f"repeated: {r.value:.2f} ({worse_by(b, r):+.0%} worse)"
            )
        return f"noise: {head} ({worse}), repeated: {r.value:.2f} (within {threshold:.0%})"


def compare(
    before: dict[tuple[str, str], Ratio],
    after: dict[tuple[str, str], Ratio],
    repeat: dict[tuple[str, str], Ratio] | None = None,
    threshold: float = THRESHOLD,
) -> list[Verdict]:
    """The ratios of ``after`` that got worse than ``before`` by more than ``threshold``, each
    with its repeat when ``repeat`` holds one."""
    out = []
    for key, a in after.items():
        b = before.get(key)
        if b is not None and worse_by(b, a) > threshold:
            out.append(Verdict(b, a, (repeat or {}).get(key)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--repeat", type=Path)
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    ap.add_argument("--files", action="store_true", help="only the files to measure again")
    args = ap.parse_args()
    before, after = ratios(args.before), ratios(args.after)
    repeat = ratios(args.repeat) if args.repeat else None
    verdicts = compare(before, after, repeat, args.threshold)
    if args.files:
        for name in sorted({v.after.file for v in verdicts}):
            print(name)
        return
    compared = sum(1 for k in after if k in before)
    for v in verdicts:
        print(v.line(args.threshold))
    real = [
        v for v in verdicts if v.repeat is None or worse_by(v.before, v.repeat) > args.threshold
    ]
    summary = f"{compared} ratios compared with the last recorded run: "
    summary += f"{len(real)} worse by more than {args.threshold:.0%}" if real else "none worse"
    if len(real) < len(verdicts):
        summary += f", {len(verdicts) - len(real)} moved and recovered on a repeat"
    print(summary)


if __name__ == "__main__":
    main()
