"""The property both scope tests check: a scoped lexical arm is the full ranking restricted."""

from __future__ import annotations

from collections.abc import Callable

from fisk_ls.knowledge import Knowledge, SearchRequest
from fisk_ls.knowledge.scope import Scope, documents
from fisk_ls.knowledge.search import bm25_ids, query_plan

Ranked = list[tuple[int, float]]


def scoped_and_restricted(
    corpus: Knowledge, scope: Scope | None, query: str, limit: int, inside: Callable[[str], bool]
) -> tuple[Ranked, Ranked]:
    """(the lexical arm's top ``limit`` within ``scope``, the unscoped full ranking restricted
    to the paths ``inside`` keeps, cut to ``limit``): equal when the scope is applied before
    the cut."""
    with corpus.store.snapshot() as snap:
        assert snap is not None
        paths = {
            int(cid): str(path)
            for cid, path in snap.conn.execute(
                f"SELECT c.id, d.path FROM {snap.tables.rows} c"
                f" JOIN {snap.tables.documents} d ON d.id = c.document_id"
            )
        }
        plan = query_plan(snap, query, corpus.term_stats)
        docs = documents(snap, scope) if scope is not None else None
        scoped = bm25_ids(snap, plan, limit, docs)
        full = bm25_ids(snap, plan, len(paths))
    return scoped, [(cid, s) for cid, s in full if inside(paths[cid])][:limit]


def scoped_request(
    query: str, top_k: int | None = None, scope: Scope | None = None
) -> SearchRequest:
    """The request of a search kept to ``scope`` (a built one: its root-anchored patterns are
    given back relative to the root, as a front end would send them)."""
    if scope is None:
        return SearchRequest(query, top_k)
    return SearchRequest(
        query,
        top_k,
        paths=[p.removeprefix("/") for p in scope.include],
        excludes=[p.removeprefix("/") for p in scope.exclude],
        tags=scope.tags,
    )
