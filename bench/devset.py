"""Development question set over the OpenTelemetry docs: section-level MRR@10 and Hit@5.

The corpus is indexed in place (zero-config: the project root is the corpus folder, the store
goes to a temporary base, nothing is written into the corpus) by the real indexer, and every
question runs through ``Knowledge.search`` at top 10.

A hit is correct at section level when its path is the question's path and the target heading's
line lies within [start_line, end_line]; for ``heading: null`` (answer before the first heading)
the hit must be in that file and start before the first heading. File level only asks for the
path; ``span_hit@5`` also accepts a later chunk of the target section's own text (a long section
split in pieces), which the strict section level does not.

    python bench/devset.py [--subset en|ja|zh] [--show-misses]
                           [--embed-url URL --model NAME [--query-prefix P] [--document-prefix P]]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fisk_ls.knowledge import (
    Hit,
    Knowledge,
    index,
    resolve_settings,
)
from fisk_ls.knowledge.config import EmbeddingsConfig
from fisk_ls.knowledge.index.chunker import headings

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "opentelemetry-io"
QUESTIONS = Path(__file__).resolve().parent / "devset" / "otel-questions.jsonl"
TOP_K = 10
LANGS = ("en", "ja", "zh")
KINDS = ("exact", "paraphrase", "short")
FIELDS = {"id", "lang", "kind", "query", "path", "heading"}


class BrokenQuestion(Exception):
    pass


@dataclass(frozen=True)
class Question:
    id: str
    lang: str
    kind: str
    query: str
    path: str
    heading: str | None
    line: int
    """1-based line of the target heading; for ``heading: null``, of the first heading (or a
    line past the end of the file when it has none)."""
    own_end: int
    """Last line of the section's own text (before its next heading of any level)."""


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]*)\]\[[^\]]*\]")
_EMPH = re.compile(r"(\*\*|__|\*|_|`)")
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")


def plain(text: str) -> str:
    """Heading text without markdown links, emphasis, backticks and ``{#anchor}`` suffixes."""
    text = _ANCHOR.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _EMPH.sub("", text)
    return " ".join(text.split())


def heading_line(text: str, heading: str | None) -> tuple[int, int]:
    """(line of the target heading, last line of its own text); see ``Question``."""
    found = headings(text)
    past_end = len(text.splitlines()) + 2
    if heading is None:
        first = found[0][2] if found else past_end
        return first, first - 1
    for same in (lambda h: h == heading, lambda h: plain(h) == plain(heading)):
        lines = [line for _, h, line in found if same(h)]
        if len(lines) > 1:
            raise BrokenQuestion(f"heading {heading!r} is ambiguous: lines {lines}")
        if lines:
            nxt = next((line for _, _, line in found if line > lines[0]), past_end)
            return lines[0], nxt - 1
    raise BrokenQuestion(
        f"heading {heading!r} not found; headings are: {[h for _, h, _ in found][:40]}"
    )


def load(path: Path, corpus: Path) -> list[Question]:
    questions: list[Question] = []
    problems: list[str] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = f"{path.name}:{n}"
            try:
                q = _question(json.loads(raw), corpus)
            except (json.JSONDecodeError, BrokenQuestion) as e:
                problems.append(f"{where}: {e}")
                continue
            if q.id in seen:
                problems.append(f"{where}: duplicate id {q.id}")
            seen.add(q.id)
            questions.append(q)
    if problems:
        raise BrokenQuestion("broken questions:\n  " + "\n  ".join(problems))
    return questions


def _question(obj: Any, corpus: Path) -> Question:
    if not isinstance(obj, dict) or set(obj) != FIELDS:
        raise BrokenQuestion(f"want exactly the fields {sorted(FIELDS)}, got {obj!r}")
    for name in ("id", "lang", "kind", "query", "path"):
        if not isinstance(obj[name], str) or not obj[name].strip():
            raise BrokenQuestion(f"{name} must be a non-empty string")
    if obj["heading"] is not None and not isinstance(obj["heading"], str):
        raise BrokenQuestion("heading must be a string or null")
    if obj["lang"] not in LANGS:
        raise BrokenQuestion(f"lang must be one of {LANGS}")
    if obj["kind"] not in KINDS:
        raise BrokenQuestion(f"kind must be one of {KINDS}")
    if not obj["path"].startswith(f"content/{obj['lang']}/"):
        raise BrokenQuestion(f"path {obj['path']} is not under content/{obj['lang']}/")
    file = corpus / obj["path"]
    if not file.is_file():
        raise BrokenQuestion(f"{obj['id']}: no file {obj['path']}")
    try:
        line, own_end = heading_line(file.read_text(encoding="utf-8"), obj["heading"])
    except BrokenQuestion as e:
        raise BrokenQuestion(f"{obj['id']} ({obj['path']}): {e}") from None
    return Question(
        obj["id"],
        obj["lang"],
        obj["kind"],
        obj["query"],
        obj["path"],
        obj["heading"],
        line,
        own_end,
    )


def section_match(q: Question, hit: Hit) -> bool:
    if hit.path != q.path:
        return False
    if q.heading is None:
        return hit.start_line < q.line
    return hit.start_line <= q.line <= hit.end_line


def span_match(q: Question, hit: Hit) -> bool:
    """Looser: also a later chunk of the target section's own text (a long section split)."""
    return section_match(q, hit) or (
        hit.path == q.path and q.heading is not None and q.line <= hit.start_line <= q.own_end
    )


def score(questions: list[Question], k: Knowledge, show_misses: bool) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    for q in questions:
        t0 = time.perf_counter()
        result = k.search(q.query, top_k=TOP_K)
        times.append(time.perf_counter() - t0)
        hits = result.hits[:TOP_K]
        rank = next((i + 1 for i, h in enumerate(hits) if section_match(q, h)), None)
        span_rank = next((i + 1 for i, h in enumerate(hits) if span_match(q, h)), None)
        file_rank = next((i + 1 for i, h in enumerate(hits) if h.path == q.path), None)
        rows.append({"q": q, "rank": rank, "span_rank": span_rank, "file_rank": file_rank})
        if show_misses and (rank is None or rank > 5):
            _print_miss(q, rank, span_rank, file_rank, hits)
    summary: dict[str, Any] = {"overall": _metrics(rows)}
    summary["by_lang"] = {
        lang: _metrics([r for r in rows if r["q"].lang == lang])
        for lang in LANGS
        if any(r["q"].lang == lang for r in rows)
    }
    summary["by_kind"] = {
        kind: _metrics([r for r in rows if r["q"].kind == kind])
        for kind in KINDS
        if any(r["q"].kind == kind for r in rows)
    }
    times.sort()
    summary["query_ms"] = {
        "p50": round(1000 * statistics.median(times), 1),
        "p95": round(1000 * times[min(len(times) - 1, int(0.95 * len(times)))], 1),
    }
    summary["misses"] = [r["q"].id for r in rows if r["rank"] is None or r["rank"] > 5]
    return summary


def _metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {
        "n": n,
        "mrr@10": round(sum(1 / r["rank"] for r in rows if r["rank"]) / n, 4),
        "hit@5": round(sum(1 for r in rows if r["rank"] and r["rank"] <= 5) / n, 4),
        "hit@10": round(sum(1 for r in rows if r["rank"]) / n, 4),
        "span_hit@5": round(sum(1 for r in rows if r["span_rank"] and r["span_rank"] <= 5) / n, 4),
        "file_hit@5": round(sum(1 for r in rows if r["file_rank"] and r["file_rank"] <= 5) / n, 4),
    }


def _print_miss(
    q: Question, rank: int | None, span_rank: int | None, file_rank: int | None, hits: list[Hit]
) -> None:
    print(
        f"MISS {q.id} [{q.lang}/{q.kind}] {q.query!r} -> {q.path} # {q.heading} (line {q.line})"
        f"  section rank={rank} span rank={span_rank} file rank={file_rank}",
        file=sys.stderr,
    )
    for i, h in enumerate(hits[:3], 1):
        print(
            f"    {i}. {h.path}:{h.start_line}-{h.end_line} [{h.section}] "
            f"score={h.score:.3f} {h.retrievers}",
            file=sys.stderr,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--subset", choices=LANGS)
    ap.add_argument("--show-misses", action="store_true", help="print misses with the top 3 hits")
    ap.add_argument("--embed-url", help="OpenAI-compatible base URL; also runs hybrid")
    ap.add_argument("--model", help="embedding model name (with --embed-url)")
    ap.add_argument("--query-prefix", default="")
    ap.add_argument("--document-prefix", default="")
    ap.add_argument("--store-base", help="keep the indexes here (reused by later runs)")
    ap.add_argument("--validate-only", action="store_true", help="check the question file, exit")
    args = ap.parse_args(argv)
    if args.embed_url and not args.model:
        ap.error("--embed-url needs --model")

    corpus = args.corpus.resolve()
    try:
        questions = load(args.questions, corpus)
    except BrokenQuestion as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.subset:
        questions = [q for q in questions if q.lang == args.subset]
    if args.validate_only:
        print(json.dumps({"questions": len(questions), "valid": True}))
        return 0

    out: dict[str, Any] = {
        "corpus": str(corpus),
        "questions": len(questions),
        "counts": {
            f"{lang}/{kind}": sum(1 for q in questions if q.lang == lang and q.kind == kind)
            for lang in LANGS
            for kind in KINDS
        },
        "runs": {},
    }
    with tempfile.TemporaryDirectory(prefix="fisk-devset-") as scratch:
        # A persistent --store-base lets a re-run reuse its vectors (the vector cache).
        tmp = args.store_base or scratch
        settings = resolve_settings(cwd=corpus, store_base=Path(tmp), discover=False)
        modes: list[tuple[str, Any]] = [("lexical", settings)]
        if args.embed_url:
            emb = EmbeddingsConfig(
                base_url=args.embed_url,
                model=args.model,
                timeout=120.0,
                query_timeout=30.0,
                query_prefix=args.query_prefix,
                document_prefix=args.document_prefix,
            )
            # Lexical first on a lexical store, then the hybrid run on its own store.
            hybrid = resolve_settings(cwd=corpus, store_base=Path(tmp) / "hybrid", discover=False)
            modes.append(("hybrid", hybrid.with_overrides(embeddings=emb)))
        for name, s in modes:
            t0 = time.perf_counter()
            stats = index(s)
            index_s = time.perf_counter() - t0
            k = Knowledge(s)
            if args.show_misses:
                print(f"== {name} misses (section rank > 5) ==", file=sys.stderr)
            try:
                t1 = time.perf_counter()
                run = score(questions, k, args.show_misses)
                run["index_s"] = round(index_s, 1)
                run["eval_s"] = round(time.perf_counter() - t1, 1)
                run["index_stats"] = _stats(stats)
            finally:
                k.close()
            out["runs"][name] = run
            print(f"{name}: done in {index_s + run['eval_s']:.1f}s", file=sys.stderr)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


def _stats(stats: Any) -> Any:
    for attr in ("as_dict", "to_dict"):
        fn = getattr(stats, attr, None)
        if callable(fn):
            return fn()
    d = getattr(stats, "__dict__", None)
    if d is not None:
        return {k: v for k, v in d.items() if isinstance(v, int | float | str)}
    return str(stats)


if __name__ == "__main__":
    sys.exit(main())
