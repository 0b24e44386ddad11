"""Dev-set corpora and questions: loading, validation and the section-level gold.

Each corpus has its own question file (``bench/devset/<key>-questions.jsonl``), one JSON object
a line with exactly the fields ``id lang kind query path heading``. A question is valid when its
file exists under the corpus, its lang and kind are known, its path fits its language, its
heading names exactly one heading of that file (``null``: the text before the first heading),
and its id and its query are unique in the corpus.

The PowerShell docs hold most pages once per Windows Server version (``docset/winserver2016-ps/``
... ``winserver2025-ps/``), and a few modules were renamed between versions (``RDMgmt`` and
``RemoteDesktop``). ``copy_groups`` derives the copies from the files themselves: two files are
copies when their paths agree once the version folder is removed, or when they have the same
file name and the same SYNOPSIS text. A question's gold is then the target heading in every copy
that has it, and a hit on any copy counts.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fisk_ls.knowledge.index.chunker import headings

HERE = Path(__file__).resolve().parent


def _corpora_dir() -> Path:
    """$FISK_CORPORA, else the nearest ``shared/corpora`` beside the repo or an ancestor (a git
    worktree may sit deeper than the main checkout)."""
    env = os.environ.get("FISK_CORPORA")
    if env:
        return Path(env)
    for up in HERE.parents[1:]:
        if (up / "shared" / "corpora").is_dir():
            return up / "shared" / "corpora"
    return HERE.parents[1] / "shared" / "corpora"


CORPORA_DIR = _corpora_dir()
KINDS = ("exact", "paraphrase", "short", "definitional", "howto", "identifier")
FIELDS = {"id", "lang", "kind", "query", "path", "heading"}


class BrokenQuestion(Exception):
    pass


@dataclass(frozen=True)
class Corpus:
    key: str
    root: Path
    questions: Path
    langs: tuple[str, ...]
    path_fits: Callable[[str, str], bool]
    """(path, lang) -> whether a question in that language may target that path."""
    versioned: bool
    """Whether pages exist in several near-identical copies (see ``copy_groups``)."""


def _otel_path_fits(path: str, lang: str) -> bool:
    return path.startswith(f"content/{lang}/")


def _ps_path_fits(path: str, lang: str) -> bool:
    return lang == "en" and path.startswith("docset/")


CORPORA: dict[str, Corpus] = {
    "otel": Corpus(
        "otel",
        CORPORA_DIR / "opentelemetry-io",
        HERE / "devset" / "otel-questions.jsonl",
        ("en", "ja", "zh", "es", "fr", "pt"),
        _otel_path_fits,
        versioned=False,
    ),
    "powershell": Corpus(
        "powershell",
        CORPORA_DIR / "windows-powershell-docs",
        HERE / "devset" / "powershell-questions.jsonl",
        ("en",),
        _ps_path_fits,
        versioned=True,
    ),
}


HELD_OUT = HERE / "devset" / "otel-heldout.jsonl"
"""36 English OTel questions written on 2026-12-01 from 40 sections drawn at random (seed 8) from
``content/en/docs``, never used to choose a change: run them with ``devset.py --corpus otel
--questions bench/devset/otel-heldout.jsonl`` to estimate what the dev-set figures are worth on
questions nobody tuned for, and keep tuning on the dev files above."""


@dataclass(frozen=True)
class Target:
    path: str
    line: int
    """1-based line of the target heading; for ``heading: null``, of the first heading (or a
    line past the end of the file when it has none)."""
    own_end: int
    """Last line of the section's own text (before its next heading of any level)."""


@dataclass(frozen=True)
class Question:
    id: str
    lang: str
    kind: str
    query: str
    path: str
    heading: str | None
    targets: tuple[Target, ...]
    """The target section in ``path`` first, then in each copy of ``path`` that has it."""


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
    """(line of the target heading, last line of its own text); see ``Target``."""
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


_VERSION_DIR = re.compile(r"(^|/)winserver\d{4}-ps(/|$)")
_SYNOPSIS = re.compile(r"^## SYNOPSIS\s*\n(.*?)(?=^#|\Z)", re.M | re.S)


def version_free(path: str) -> str:
    """The path with its Windows Server version folder replaced by ``*``."""
    return _VERSION_DIR.sub(r"\1*\2", path)


def synopsis(text: str) -> str:
    """The SYNOPSIS section's text, whitespace-collapsed and lower-cased ("" when absent)."""
    m = _SYNOPSIS.search(text)
    return " ".join(m.group(1).split()).lower() if m else ""


def copy_groups(root: Path) -> dict[str, tuple[str, ...]]:
    """Every markdown file under ``root`` (relative POSIX path) -> its sorted copy group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    first_by: dict[tuple[str, str], str] = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".md"):
                continue
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            parent[rel] = rel
            keys = [("path", version_free(rel))]
            with full.open(encoding="utf-8", errors="replace") as fh:
                syn = synopsis(fh.read(8192))
            if syn:
                keys.append((name.lower(), syn))
            for key in keys:
                if key in first_by:
                    union(rel, first_by[key])
                else:
                    first_by[key] = rel
    members: dict[str, list[str]] = defaultdict(list)
    for rel in parent:
        members[find(rel)].append(rel)
    return {rel: tuple(sorted(members[find(rel)])) for rel in parent}


def load(corpus: Corpus, path: Path | None = None) -> list[Question]:
    """Every question of ``corpus`` (from ``path`` when given), or BrokenQuestion listing all
    problems found."""
    path = path or corpus.questions
    groups = copy_groups(corpus.root) if corpus.versioned else {}
    questions: list[Question] = []
    problems: list[str] = []
    seen_ids: set[str] = set()
    seen_queries: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            where = f"{path.name}:{n}"
            try:
                q = _question(json.loads(raw), corpus, groups)
            except (json.JSONDecodeError, BrokenQuestion) as e:
                problems.append(f"{where}: {e}")
                continue
            if q.id in seen_ids:
                problems.append(f"{where}: duplicate id {q.id}")
            seen_ids.add(q.id)
            norm = " ".join(q.query.lower().split())
            if norm in seen_queries:
                problems.append(f"{where}: {q.id} repeats the query of {seen_queries[norm]}")
            seen_queries.setdefault(norm, q.id)
            questions.append(q)
    if problems:
        raise BrokenQuestion("broken questions:\n  " + "\n  ".join(problems))
    if not questions:
        raise BrokenQuestion(f"{path}: no questions")
    return questions


def _question(obj: Any, corpus: Corpus, groups: dict[str, tuple[str, ...]]) -> Question:
    if not isinstance(obj, dict) or set(obj) != FIELDS:
        raise BrokenQuestion(f"want exactly the fields {sorted(FIELDS)}, got {obj!r}")
    for name in ("id", "lang", "kind", "query", "path"):
        if not isinstance(obj[name], str) or not obj[name].strip():
            raise BrokenQuestion(f"{name} must be a non-empty string")
    if obj["heading"] is not None and not isinstance(obj["heading"], str):
        raise BrokenQuestion("heading must be a string or null")
    if obj["lang"] not in corpus.langs:
        raise BrokenQuestion(f"lang must be one of {corpus.langs}")
    if obj["kind"] not in KINDS:
        raise BrokenQuestion(f"kind must be one of {KINDS}")
    if obj["kind"] == "short" and len(obj["query"].split()) > 3:
        raise BrokenQuestion(f"{obj['id']}: a short query has 1-3 words")
    if not corpus.path_fits(obj["path"], obj["lang"]):
        raise BrokenQuestion(f"path {obj['path']} does not fit lang {obj['lang']}")
    file = corpus.root / obj["path"]
    if not file.is_file():
        raise BrokenQuestion(f"{obj['id']}: no file {obj['path']}")
    try:
        line, own_end = heading_line(file.read_text(encoding="utf-8"), obj["heading"])
    except BrokenQuestion as e:
        raise BrokenQuestion(f"{obj['id']} ({obj['path']}): {e}") from None
    targets = [Target(obj["path"], line, own_end)]
    for copy in groups.get(obj["path"], ()):
        if copy == obj["path"]:
            continue
        try:
            c_line, c_end = heading_line(
                (corpus.root / copy).read_text(encoding="utf-8"), obj["heading"]
            )
        except BrokenQuestion:
            continue  # this copy lacks the section (or has it twice): not gold
        targets.append(Target(copy, c_line, c_end))
    return Question(
        obj["id"],
        obj["lang"],
        obj["kind"],
        obj["query"],
        obj["path"],
        obj["heading"],
        tuple(targets),
    )
