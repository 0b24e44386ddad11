"""Hit assembly: a fused ranking → the hits shown. The query's (or else the reader's) language
first among translated copies, near-duplicates collapsed into the best copy's ``copies``, each
hit's match located, and a hit whose matched paragraph a better hit already shows folded into
it (collapse.py has the keys, match.py the location).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .collapse import Probes, casefolded, normalised, paragraph
from .languages import prefer_query_language
from .match import Match, fts_tokenizer, terms_tokens
from .match import locate as locate_match
from .query import Query
from .results import Hit, Location

if TYPE_CHECKING:
    from .store import Snapshot


def best_hits(
    snap: Snapshot,
    query: Query,
    fused: list[tuple[int, float]],
    ranks: dict[int, dict[str, int]],
    found: dict[int, tuple[str, ...]],
    locate: Callable[[Hit], Match] | None,
) -> list[Hit]:
    """The top ``query.top_k`` hits: the query's (or else the reader's) language first among
    translated copies, then near-duplicates collapsed and (with ``locate``) repeated matched
    paragraphs folded; each says which strings ``found`` it."""
    got = _candidates(snap, fused)
    paths = {cid: c.path for cid, c in got.items()}
    preferred = prefer_query_language(fused, paths, query.text, query.reader_language)
    keys = {cid: c.key for cid, c in got.items()}
    return assemble(snap, preferred, ranks, query.top_k, keys, found, locate)


class _Row(NamedTuple):
    path: str
    ordinal: int
    section: str
    body: str
    start_line: int
    end_line: int


def _chunk_rows(snap: Snapshot, ids: Sequence[int], columns: str) -> list[Any]:
    """``columns`` (of chunk ``c`` and its document ``d``) after the chunk id, for ``ids``."""
    if not ids:
        return []
    d, c = snap.tables.documents, snap.tables.chunks
    marks = ",".join("?" * len(ids))
    return snap.conn.execute(
        f"SELECT c.id, {columns} FROM {c} c JOIN {d} d ON d.id = c.document_id"
        f" WHERE c.id IN ({marks})",
        list(ids),
    ).fetchall()


def hydrate(snap: Snapshot, ids: Sequence[int]) -> dict[int, _Row]:
    rows = _chunk_rows(snap, ids, "d.path, c.ordinal, c.section, c.body, c.start_line, c.end_line")
    return {  # NOT NULL text and integer columns, but the body (a view's LEFT JOIN)
        cid: _Row(path, ordinal, section, str(body), start, end)
        for cid, path, ordinal, section, body, start, end in rows
    }


class _Candidate(NamedTuple):
    key: str
    """The near-duplicate key (collapse.py; the chunk's own id when the row has none)."""
    path: str
    """The document's path (translated copies are told apart by their folders)."""


def _candidates(snap: Snapshot, fused: Sequence[tuple[int, float]]) -> dict[int, _Candidate]:
    """What ranking and collapsing need of each candidate, in one read."""
    rows = _chunk_rows(snap, [cid for cid, _ in fused], "c.near, d.path")
    return {cid: _Candidate(str(near) or f"#{cid}", path) for cid, near, path in rows}


def _locations(snap: Snapshot, ids: Sequence[int]) -> dict[int, Location]:
    rows = _chunk_rows(snap, ids, "d.path, c.ordinal, c.start_line, c.end_line")
    return {cid: Location(path, ordinal, start, end) for cid, path, ordinal, start, end in rows}


def assemble(
    snap: Snapshot,
    fused: Sequence[tuple[int, float]],
    ranks: dict[int, dict[str, int]],
    k: int,
    keys: dict[int, str],
    found: dict[int, tuple[str, ...]] | None = None,
    locate: Callable[[Hit], Match] | None = None,
) -> list[Hit]:
    """The best ``k`` hits of ``fused``, best first, each saying which strings ``found`` it.
    Near-duplicates (equal ``keys``: ``chunks.near``, see collapse.py) collapse into the best
    copy's ``copies``; a candidate without a key is gone since it was read. With ``locate`` each
    hit gets its match, and a hit whose matched part is a paragraph a better hit already shows
    (``collapse.paragraph_key``: the same text under the same heading, the chunks around it
    differing) folds into that hit's ``copies`` with its own copies, each location with its own
    match. Folded hits do not count: candidates are read on until ``k`` hits stand (or none
    is left). Text is read for the hits shown and the ones folded alone."""
    groups: list[tuple[int, float]] = []
    members: dict[int, list[int]] = {}
    heads: dict[str, int] = {}
    for cid, score in fused:
        key = keys.get(cid)
        if key is None:
            continue  # gone since the candidates were read
        head = heads.get(key)
        if head is None:
            heads[key] = cid
            groups.append((cid, score))
            members[cid] = []
        else:
            members[head].append(cid)
    found = found or {}

    def hit_of(cid: int, score: float, row: _Row) -> Hit:
        hit = Hit(
            chunk_id=cid,
            path=row.path,
            ordinal=row.ordinal,
            section=row.section,
            text=row.body,
            start_line=row.start_line,
            end_line=row.end_line,
            score=round(score, 4),
            retrievers=ranks.get(cid, {}),
            found_by=found.get(cid, ("query",)),
        )
        return hit if locate is None else hit._replace(match=locate(hit))

    hits: list[Hit] = []
    folded: dict[int, list[Hit]] = {}  # a hit's chunk id -> the hits folded into it
    shown: dict[str, int] = {}  # paragraph key -> the chunk id of the hit showing it
    words: list[str] = []  # the shown paragraphs' normalised words
    at = 0
    while len(hits) < k and at < len(groups):
        batch = groups[at : at + k - len(hits)] if locate is not None else groups[:k]
        at += len(batch)
        rows = hydrate(snap, [cid for cid, _ in batch])
        for cid, score in batch:
            if (row := rows.get(cid)) is None:
                continue
            hit = hit_of(cid, score, row)
            part = _paragraph(hit)
            if part is not None and (into := shown.get(part[0])) is not None:
                folded[into].append(hit)
                continue
            if part is not None:
                shown[part[0]] = cid
                words.append(part[1])
            folded[cid] = []
            hits.append(hit)
        if locate is None:
            break
    if words and at < len(groups):
        # The candidates below the last hit: those that hold a shown paragraph (cheap tests:
        # its words in the case-folded body, then the paragraph in the normalised text) are
        # located, and fold into its hit when that is what matched.
        rest = groups[at:]
        rows = hydrate(snap, [cid for cid, _ in rest])
        probes = Probes(words)
        for cid, score in rest:
            row = rows.get(cid)
            if row is None:
                continue
            if not probes.any_held(casefolded(row.body)):
                continue  # most: normalising them would find none of the paragraphs
            text = normalised("", row.body)
            if not any(w in text for w in words):
                continue
            hit = hit_of(cid, score, row)
            part = _paragraph(hit)
            if part is not None and (into := shown.get(part[0])) is not None:
                folded[into].append(hit)
    place = {cid: i for i, (cid, _) in enumerate(fused)}
    copies = [m for h in hits for m in members[h.chunk_id]]
    copies += [m for h in hits for f in folded[h.chunk_id] for m in members[f.chunk_id]]
    where = _locations(snap, copies)

    def others(hit: Hit) -> tuple[Location, ...]:
        out = [where[m] for m in members[hit.chunk_id] if m in where]
        for f in folded[hit.chunk_id]:
            out.append(Location(f.path, f.ordinal, f.start_line, f.end_line, f.match))
            for m in members[f.chunk_id]:
                if (w := where.get(m)) is not None and f.match is not None:
                    out.append(w._replace(match=_moved(f.match, w.start_line - f.start_line)))
        rank = {(w.path, w.ordinal): place.get(c, 0) for c, w in where.items()}
        rank |= {(f.path, f.ordinal): place.get(f.chunk_id, 0) for f in folded[hit.chunk_id]}
        return tuple(sorted(out, key=lambda w: rank.get((w.path, w.ordinal), 0)))

    return [h._replace(copies=others(h)) for h in hits]


def _paragraph(hit: Hit) -> tuple[str, str] | None:
    """The key of the hit's matched part under its own heading, and its normalised words
    (collapse.paragraph)."""
    m = hit.match
    if m is None:
        return None
    heading = m.section.rsplit(" > ", 1)[-1]
    return paragraph(heading, hit.text[m.offset : m.end])


def _moved(match: Match, shift: int) -> Match:
    """``match`` in a copy of its chunk whose lines start ``shift`` lines later."""
    word = match.first_word
    return match._replace(
        lines=(match.lines[0] + shift, match.lines[1] + shift),
        first_word=None if word is None else word._replace(line=word.line + shift),
    )


def matcher(snap: Snapshot, query: Query) -> Callable[[Hit], Match]:
    """Locates a hit's match (match.locate) with the index's tokenizer and the terms of every
    string that found it (tokenized once per set of strings)."""
    tokenize = fts_tokenizer(snap.conn)
    strings = {s.name: s for s in query.strings}
    tokens: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}

    def match(hit: Hit) -> Match:
        terms = tokens.get(hit.found_by)
        if terms is None:
            names = [n for n in hit.found_by if n in strings] or [query.strings[0].name]
            parts = [terms_tokens(strings[name].terms, tokenize) for name in names]
            terms = tokens[hit.found_by] = (
                set().union(*(p[0] for p in parts)),
                set().union(*(p[1] for p in parts)),
            )
        return locate_match(hit.text, hit.section, (hit.start_line, hit.end_line), terms, tokenize)

    return match
