"""Development question sets: section-level MRR@10 and Hit@5 with bootstrap 95% intervals.

Two corpora, each with its own question file in bench/devset/ (see devset_questions.py for the
fields and the validation): the OpenTelemetry docs (``otel``: en, ja, zh, es, fr, pt) and the
Windows PowerShell docs (``powershell``: one page per Windows Server version; a hit on any copy
counts). Each corpus is indexed in place (zero-config: the project root is the corpus folder,
the store goes to a temporary base, nothing is written into the corpus) by the real indexer, and
every question runs through ``Knowledge.search`` at top 10.

A hit is correct at section level when its path is a target path and the target heading's line
lies within [start_line, end_line]; for ``heading: null`` (answer before the first heading) the
hit must be in a target file and start before the first heading. File level only asks for a
target path; ``span_hit@5`` also accepts a later chunk of the target section's own text (a long
section split in pieces), which the strict section level does not. Every slice (corpus, language,
kind) reports MRR@10, Hit@5 and Hit@10 with bootstrap intervals (devset_stats.py); the output
keeps every question's ranks, so two runs can be compared with ``bench/devset_compare.py``.

    python bench/devset.py [--corpus otel|powershell|all] [--subset LANG] [--kind KIND]
                           [--show-misses] [--validate-only] [--store-base DIR]
                           [--embed-url URL --model NAME | --builtin MODEL_DIR]
                           [--embed-corpora otel,powershell]
                           [--query-prefix P] [--document-prefix P]]
                           [--agent [--agent-strings 0,1,2]]

``--agent`` sends each question's agent strings (bench/devset/agent-strings.md: a keyword query,
a hypothetical answer, a rephrasing, written blind from the question alone) as ``also``;
``--agent-strings`` picks which of the three (0-based), e.g. ``0`` for the keywords alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from devset_questions import CORPORA, KINDS, BrokenQuestion, Corpus, Question, load
from devset_stats import RESAMPLES, SEED, TOP_K, hit_rate, summarize

from fisk_ls.knowledge import (
    Hit,
    Knowledge,
    Project,
    SearchRequest,
    Settings,
    index_project,
    resolve_settings,
)
from fisk_ls.knowledge.config import EmbeddingsConfig


def section_match(q: Question, hit: Hit) -> bool:
    for t in q.targets:
        if hit.path != t.path:
            continue
        if q.heading is None:
            if hit.start_line < t.line:
                return True
        elif hit.start_line <= t.line <= hit.end_line:
            return True
    return False


def span_match(q: Question, hit: Hit) -> bool:
    """Looser: also a later chunk of the target section's own text (a long section split)."""
    return section_match(q, hit) or any(
        hit.path == t.path and q.heading is not None and t.line <= hit.start_line <= t.own_end
        for t in q.targets
    )


def file_match(q: Question, hit: Hit) -> bool:
    return any(hit.path == t.path for t in q.targets)


def _rank(q: Question, hits: Sequence[Hit], ok: Callable[[Question, Hit], bool]) -> int | None:
    return next((i + 1 for i, h in enumerate(hits) if ok(q, h)), None)


def store_settings(corpus: Corpus, base: Path, builtin: Path | None = None) -> Settings:
    """The settings of a corpus's dev-set store under ``base`` (as :func:`run_corpus` builds
    them): lexical, or with ``builtin`` (a model directory) the hybrid store beside it."""
    root = corpus.root.resolve()
    if builtin is None:
        return resolve_settings(cwd=root, store_base=base / corpus.key, discover=False)
    emb = EmbeddingsConfig(
        base_url="",
        provider="builtin",
        model="all-MiniLM-L6-v2",
        model_path=str(builtin.resolve()),
    )
    hybrid = resolve_settings(cwd=root, store_base=base / corpus.key / "hybrid", discover=False)
    return hybrid.with_overrides(embeddings=emb)


def agent_file(questions: Path) -> Path:
    """The agent strings of a question file: otel-questions.jsonl -> otel-agent.jsonl,
    otel-heldout.jsonl -> otel-heldout-agent.jsonl."""
    stem = questions.name.removesuffix(".jsonl").removesuffix("-questions")
    return questions.with_name(f"{stem}-agent.jsonl")


def load_agent(path: Path, questions: list[Question], pick: list[int] | None) -> dict[str, Any]:
    """id -> the ``also`` strings to send (``pick``: which of them, by position)."""
    strings: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                strings[str(row["id"])] = [str(x) for x in row["also"]]
    missing = [q.id for q in questions if q.id not in strings]
    if missing:
        raise BrokenQuestion(f"{path.name}: no agent strings for {', '.join(missing[:5])}")
    return {
        q.id: tuple(strings[q.id] if pick is None else [strings[q.id][i] for i in pick])
        for q in questions
    }


def score(
    questions: list[Question],
    k: Knowledge,
    show_misses: bool,
    resamples: int,
    reader: bool = False,
    also: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Rank every question; with ``reader``, each is asked as from a desktop in its own
    language (``reader_language=q.lang``, what the locale or an editor's display language
    tells the product)."""
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    for q in questions:
        t0 = time.perf_counter()
        result = k.search(
            SearchRequest(
                q.query,
                top_k=TOP_K,
                reader_language=q.lang if reader else None,
                also=also.get(q.id, ()) if also else (),
            )
        )
        times.append(time.perf_counter() - t0)
        hits = result.hits[:TOP_K]
        row: dict[str, Any] = {
            "q": q,
            "rank": _rank(q, hits, section_match),
            "span_rank": _rank(q, hits, span_match),
            "file_rank": _rank(q, hits, file_match),
        }
        rows.append(row)
        if show_misses and (row["rank"] is None or row["rank"] > 5):
            _print_miss(row, hits)
    summary: dict[str, Any] = {"overall": _metrics(rows, resamples)}
    langs = sorted({r["q"].lang for r in rows}, key=lambda x: (x != "en", x))
    summary["by_lang"] = {
        lang: _metrics([r for r in rows if r["q"].lang == lang], resamples) for lang in langs
    }
    summary["by_kind"] = {
        kind: _metrics([r for r in rows if r["q"].kind == kind], resamples)
        for kind in KINDS
        if any(r["q"].kind == kind for r in rows)
    }
    times.sort()
    summary["query_ms"] = {
        "p50": round(1000 * statistics.median(times), 1),
        "p95": round(1000 * times[min(len(times) - 1, int(0.95 * len(times)))], 1),
    }
    summary["misses"] = [r["q"].id for r in rows if r["rank"] is None or r["rank"] > 5]
    summary["per_question"] = {
        r["q"].id: {
            "lang": r["q"].lang,
            "kind": r["q"].kind,
            "rank": r["rank"],
            "span_rank": r["span_rank"],
            "file_rank": r["file_rank"],
        }
        for r in rows
    }
    return summary


def _metrics(rows: list[dict[str, Any]], resamples: int) -> dict[str, Any]:
    out = summarize([r["rank"] for r in rows], resamples)
    out["span_hit@5"] = hit_rate([r["span_rank"] for r in rows])
    out["file_hit@5"] = hit_rate([r["file_rank"] for r in rows])
    return out


def _print_miss(row: dict[str, Any], hits: Sequence[Hit]) -> None:
    q: Question = row["q"]
    print(
        f"MISS {q.id} [{q.lang}/{q.kind}] {q.query!r} -> {q.path} # {q.heading} "
        f"(line {q.targets[0].line}, {len(q.targets)} copies)  section rank={row['rank']} "
        f"span rank={row['span_rank']} file rank={row['file_rank']}",
        file=sys.stderr,
    )
    for i, h in enumerate(hits[:3], 1):
        print(
            f"    {i}. {h.path}:{h.start_line}-{h.end_line} [{h.section}] "
            f"score={h.score:.3f} {h.retrievers}",
            file=sys.stderr,
        )


def run_corpus(
    corpus: Corpus, questions: list[Question], args: argparse.Namespace, base: Path
) -> dict[str, Any]:
    root = corpus.root.resolve()
    langs = sorted({q.lang for q in questions}, key=lambda x: (x != "en", x))
    out: dict[str, Any] = {
        "corpus": str(root),
        "questions": len(questions),
        "counts": {
            f"{lang}/{kind}": n
            for lang in langs
            for kind in KINDS
            if (n := sum(1 for q in questions if q.lang == lang and q.kind == kind))
        },
        "runs": {},
    }
    settings = resolve_settings(cwd=root, store_base=base / corpus.key, discover=False)
    modes: list[tuple[str, Any]] = [("lexical", settings)]
    emb: EmbeddingsConfig | None = None
    if args.builtin and corpus.key in args.embed_corpora:
        emb = EmbeddingsConfig(
            base_url="",
            provider="builtin",
            model=args.model or "all-MiniLM-L6-v2",
            threads=args.threads,
            model_path=str(args.builtin.resolve()),
            query_prefix=args.query_prefix,
            document_prefix=args.document_prefix,
        )
    elif args.embed_url and corpus.key in args.embed_corpora:
        emb = EmbeddingsConfig(
            base_url=args.embed_url,
            model=args.model,
            timeout=120.0,
            query_timeout=30.0,
            query_prefix=args.query_prefix,
            document_prefix=args.document_prefix,
        )
    if emb is not None:
        # Lexical first on a lexical store, then the hybrid run on its own store.
        hybrid = resolve_settings(cwd=root, store_base=base / corpus.key / "hybrid", discover=False)
        modes.append(("hybrid", hybrid.with_overrides(embeddings=emb)))
    for name, s in modes:
        t0 = time.perf_counter()
        project = Project(s)  # its one embedder, for the index run and the reader
        stats = index_project(s, embedder=project.embedder())
        index_s = time.perf_counter() - t0
        k = Knowledge(s, project.embedder())
        if args.show_misses:
            print(f"== {corpus.key} {name} misses (section rank > 5) ==", file=sys.stderr)
        try:
            t1 = time.perf_counter()
            run = score(
                questions, k, args.show_misses, args.resamples, args.reader_language, args.also
            )
            run["index_s"] = round(index_s, 1)
            run["eval_s"] = round(time.perf_counter() - t1, 1)
            run["index_stats"] = _stats(stats)
        finally:
            k.close()
        out["runs"][name] = run
        print(f"{corpus.key} {name}: done in {index_s + run['eval_s']:.1f}s", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=[*CORPORA, "all"], default="all")
    ap.add_argument("--questions", type=Path, help="another question file (one --corpus only)")
    ap.add_argument("--subset", metavar="LANG", help="only questions in this language")
    ap.add_argument("--kind", choices=KINDS, help="only questions of this kind")
    ap.add_argument("--show-misses", action="store_true", help="print misses with the top 3 hits")
    ap.add_argument("--embed-url", help="OpenAI-compatible base URL; also runs hybrid")
    ap.add_argument(
        "--builtin",
        type=Path,
        metavar="MODEL_DIR",
        help="a built-in model directory (model.onnx + tokenizer.json); also runs hybrid",
    )
    ap.add_argument("--model", help="embedding model name (with --embed-url or --builtin)")
    ap.add_argument("--threads", type=int, default=0, help="--builtin: onnxruntime threads")
    ap.add_argument(
        "--embed-corpora",
        type=lambda v: [x for x in v.split(",") if x],
        default=list(CORPORA),
        help="comma-separated corpora that also run hybrid (default: all)",
    )
    ap.add_argument("--query-prefix", default="")
    ap.add_argument("--document-prefix", default="")
    ap.add_argument("--store-base", help="keep the indexes here (reused by later runs)")
    ap.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples")
    ap.add_argument("--validate-only", action="store_true", help="check the question files, exit")
    ap.add_argument(
        "--reader-language",
        action="store_true",
        help="ask each question from a locale in its own language (default: no locale)",
    )
    ap.add_argument(
        "--agent",
        action="store_true",
        help="send each question's agent strings (bench/devset/*-agent.jsonl) as `also`",
    )
    ap.add_argument(
        "--agent-strings",
        type=lambda v: [int(x) for x in v.split(",") if x],
        help="which agent strings to send, 0-based (0 keywords, 1 answer, 2 rephrasing)",
    )
    args = ap.parse_args(argv)
    args.also = None
    if args.embed_url and not args.model:
        ap.error("--embed-url needs --model")
    unknown = [c for c in args.embed_corpora if c not in CORPORA]
    if unknown:
        ap.error(f"--embed-corpora: unknown {unknown}; known: {list(CORPORA)}")
    if args.resamples < 1:
        ap.error("--resamples must be at least 1")
    keys = list(CORPORA) if args.corpus == "all" else [args.corpus]
    if args.questions and len(keys) != 1:
        ap.error("--questions needs one --corpus")

    chosen: dict[str, list[Question]] = {}
    for key in keys:
        corpus = CORPORA[key]
        if not corpus.root.is_dir():
            print(f"error: corpus {key} not found at {corpus.root}", file=sys.stderr)
            return 2
        try:
            questions = load(corpus, args.questions)
        except BrokenQuestion as e:
            print(f"error: {key}: {e}", file=sys.stderr)
            return 2
        if args.subset:
            questions = [q for q in questions if q.lang == args.subset]
        if args.kind:
            questions = [q for q in questions if q.kind == args.kind]
        if questions:
            chosen[key] = questions
            if args.agent:
                try:
                    strings = load_agent(
                        agent_file(args.questions or corpus.questions),
                        questions,
                        args.agent_strings,
                    )
                except (OSError, BrokenQuestion) as e:
                    print(f"error: {key}: {e}", file=sys.stderr)
                    return 2
                args.also = (args.also or {}) | strings
    if not chosen:
        print("error: no question matches --subset/--kind", file=sys.stderr)
        return 2
    if args.validate_only:
        print(json.dumps({k: len(v) for k, v in chosen.items()} | {"valid": True}))
        return 0

    out: dict[str, Any] = {
        "top_k": TOP_K,
        "bootstrap": {"resamples": args.resamples, "seed": SEED, "interval": 0.95},
        "questions": sum(len(v) for v in chosen.values()),
        "corpora": {},
    }
    with tempfile.TemporaryDirectory(prefix="fisk-devset-") as scratch:
        # A persistent --store-base lets a re-run reuse its vectors (the vector cache).
        base = Path(args.store_base or scratch)
        for key, questions in chosen.items():
            out["corpora"][key] = run_corpus(CORPORA[key], questions, args, base)
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
