"""A naive index as a guard rail: the product's question alone against it, per query shape.

The naive index is what anyone builds in an afternoon: every document split at its markdown
headings (the chunker's ``headings``, so a ``#`` inside a code fence is no heading), one chunk a
section with its heading path ("Title > Section > Subsection") and its line span, no size limit,
no front matter handling, no title or path field, no collapsing of copies; plain FTS5
(``porter unicode61``, one column holding the heading path and the text) ranked by plain
``bm25()``; the question's words, each quoted, OR-ed (no stop words, no phrases, no boosts).

Each English question of the dev sets runs against it and through the product's
``Knowledge.search`` (lexical, the question alone), both scored by ``bench/devset.py``'s
``score`` (section level: a hit whose span holds the target heading, in any copy of the page),
per query shape (``bench/expansion.py``'s shapes: keyword, short, conversational; and the long
conversational questions, of 12 words or more, on their own) and per kind.
``below`` lists the shapes where the product's Hit@5 or MRR@10 is under the naive one, and
``worse`` the questions the naive index ranks higher than the product does.

    python bench/naive.py --store-base DIR [--corpus otel|powershell|otel-heldout|all]

The product's stores are ``bench/devset.py``'s under ``--store-base`` (built when missing,
reused when present); the naive ones are ``naive-<corpus>.db`` beside them, rebuilt every run
(under a minute for the PowerShell docs). otel-heldout is reported, never tuned on.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
from devset import score, store_settings
from devset_questions import Corpus, Question, load
from devset_stats import TOP_K, summarize
from expansion import SHAPES, Set, set_arguments

from fisk_ls.knowledge import Hit, Knowledge, SearchRequest, index_project
from fisk_ls.knowledge.index.chunker import headings, split_lines
from fisk_ls.knowledge.index.walk import SKIP_DIRS, is_document_name

SCHEMA = (
    "CREATE VIRTUAL TABLE chunks USING fts5(path UNINDEXED, span UNINDEXED, text, "
    "tokenize = 'porter unicode61')"
)


@dataclass(frozen=True)
class Section:
    """One naive chunk: a heading's section up to the next heading of any level."""

    path: str
    heading: str
    """The heading path, "" for the text before the first heading."""
    start_line: int
    end_line: int
    text: str


def sections(path: str, text: str) -> Iterator[Section]:
    """``text`` cut at every heading: the text before the first one (when it holds any), then
    each heading with its lines up to the next heading, labelled with the heading path."""
    lines = split_lines(text)
    found = headings(text)
    starts = [line for _, _, line in found]
    if not starts or starts[0] > 1:
        end = (starts[0] - 1) if starts else len(lines)
        body = "\n".join(lines[:end])
        if body.strip():
            yield Section(path, "", 1, end, body)
    trail: list[tuple[int, str]] = []
    for i, (level, name, line) in enumerate(found):
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, name))
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(lines)
        body = "\n".join(lines[line:end])
        yield Section(path, " > ".join(n for _, n in trail), line, end, body)


def documents(root: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``root``, text) of every document the product's walk would take by
    name (dot folders and ``SKIP_DIRS`` skipped; no ignore files)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if is_document_name(name):
                full = Path(dirpath, name)
                yield full.relative_to(root).as_posix(), full.read_text("utf-8", "replace")


_WORD = re.compile(r"\w+")


def expression(question: str) -> str:
    """The question's words, each quoted, OR-ed (duplicates once)."""
    terms = dict.fromkeys(w.casefold() for w in _WORD.findall(question))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


@dataclass
class Result:
    hits: list[Hit] = field(default_factory=list)


class NaiveIndex:
    """Plain heading chunks in plain FTS5; ``search`` has ``Knowledge.search``'s shape, so
    ``devset.score`` scores it as it scores the product."""

    def __init__(self, db: Path) -> None:
        self.conn = apsw.Connection(str(db))

    @classmethod
    def build(cls, root: Path, db: Path) -> NaiveIndex:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        naive = cls(db)
        naive.conn.execute(SCHEMA)
        with naive.conn:
            for path, text in documents(root.resolve()):
                naive.conn.executemany(
                    "INSERT INTO chunks(path, span, text) VALUES (?, ?, ?)",
                    (
                        (s.path, f"{s.start_line}:{s.end_line}", f"{s.heading}\n{s.text}")
                        for s in sections(path, text)
                    ),
                )
        return naive

    def chunks(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def search(self, request: SearchRequest) -> Result:
        """The plain BM25 top of ``request``'s query (its ``also`` strings are not used)."""
        top_k = request.top_k or TOP_K
        expr = expression(request.query)
        if not expr:
            return Result()
        rows = self.conn.execute(
            "SELECT rowid, path, span, text, bm25(chunks) AS s FROM chunks "
            "WHERE chunks MATCH ? ORDER BY s, rowid LIMIT ?",
            (expr, top_k),
        ).fetchall()
        hits = []
        for ordinal, (rowid, path, span, text, s) in enumerate(rows):
            start, end = (int(x) for x in str(span).split(":"))
            heading, _, body = str(text).partition("\n")
            hits.append(Hit(int(rowid), str(path), ordinal, heading, body, start, end, -float(s)))
        return Result(hits)

    def close(self) -> None:
        self.conn.close()


LONG = "long conversational"
"""The conversational questions of at least ``LONG_WORDS`` words: the shape real questions in a
person's words mostly take (bench/devset/README.md), where a naive index is hardest to beat."""

LONG_WORDS = 12


def _is_long(q: Question) -> bool:
    return q.kind in SHAPES["conversational"] and len(q.query.split()) >= LONG_WORDS


def _slices(questions: list[Question]) -> dict[str, list[str]]:
    out = {"overall": [q.id for q in questions]}
    out |= {shape: [q.id for q in questions if q.kind in kinds] for shape, kinds in SHAPES.items()}
    out[LONG] = [q.id for q in questions if _is_long(q)]
    for kind in sorted({q.kind for q in questions}):
        out[f"kind {kind}"] = [q.id for q in questions if q.kind == kind]
    return {k: v for k, v in out.items() if v}


def _naive_index(corpus: Corpus, base: Path, built: dict[str, NaiveIndex]) -> NaiveIndex:
    if corpus.key not in built:
        built[corpus.key] = NaiveIndex.build(corpus.root, base / f"naive-{corpus.key}.db")
    return built[corpus.key]


def run_set(s: Set, base: Path, resamples: int, built: dict[str, NaiveIndex]) -> dict[str, Any]:
    questions = [q for q in load(s.corpus, s.questions) if q.lang == "en"]
    settings = store_settings(s.corpus, base)
    index_project(settings)
    k = Knowledge(settings)
    try:
        product = score(questions, k, False, resamples)["per_question"]
    finally:
        k.close()
    naive_index = _naive_index(s.corpus, base, built)
    naive = score(questions, naive_index, False, resamples)["per_question"]  # type: ignore[arg-type]
    slices: dict[str, Any] = {}
    below: list[str] = []
    for label, ids in _slices(questions).items():
        row = {
            "naive": summarize([naive[i]["rank"] for i in ids], resamples),
            "question alone": summarize([product[i]["rank"] for i in ids], resamples),
        }
        slices[label] = row
        if (label in SHAPES or label == LONG) and any(
            row["question alone"][m] < row["naive"][m] for m in ("hit@5", "mrr@10")
        ):
            below.append(label)
    worse = {
        q.id: {"kind": q.kind, "naive": naive[q.id]["rank"], "product": product[q.id]["rank"]}
        for q in questions
        if _rr(naive[q.id]["rank"]) > _rr(product[q.id]["rank"])
    }
    return {
        "corpus": s.corpus.key,
        "questions": str(s.questions.relative_to(Path(__file__).resolve().parents[1])),
        "tune": s.tune,
        "n": len(questions),
        "naive_chunks": naive_index.chunks(),
        "slices": slices,
        "below": below,
        "worse": worse,
    }


def _rr(rank: int | None) -> float:
    return 1.0 / rank if rank is not None and rank <= TOP_K else 0.0


def main(argv: list[str] | None = None) -> int:
    parsed = set_arguments(__doc__ or "", argv)
    if parsed is None:
        return 2
    args, chosen = parsed
    out: dict[str, Any] = {
        "top_k": TOP_K,
        "tier": "lexical",
        "naive": (
            "plain heading chunks (split at every heading, heading path kept, no size limit), "
            "plain FTS5 BM25 (porter unicode61, one column), the question's words OR-ed"
        ),
        "shapes": {k: list(v) for k, v in SHAPES.items()}
        | {LONG: [f"conversational, {LONG_WORDS}+ words"]},
        "sets": {},
    }
    built: dict[str, NaiveIndex] = {}
    with tempfile.TemporaryDirectory(prefix="fisk-naive-") as scratch:
        base = Path(args.store_base or scratch)
        base.mkdir(parents=True, exist_ok=True)
        try:
            for s in chosen:
                out["sets"][s.name] = run_set(s, base, args.resamples, built)
                print(f"{s.name}: done", file=sys.stderr)
        finally:
            for naive_index in built.values():
                naive_index.close()
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
