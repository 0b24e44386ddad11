"""The lexical arms of a search with agent strings, sequential against concurrent: for each
English dev-set question and its three strings, the four plans are made on the reader's
snapshot, then the four ``bm25_ids`` scans run (a) one after another on that connection, (b)
the query's on it and the strings' on worker threads, each with its own read-only connection
(kept per thread, as a reader would keep them), and (c) with the reader connections' page
cache / mmap settings changed. Variants alternate question by question in one process after a
warm-up, and every variant's ids and scores are checked equal to (a).

    python bench/experiments/also_parallel.py --store-base STORES [--corpus powershell|otel]
                                              [--rounds 3] [--variants seq,par1,par2,par3]

Prints p50 / p95 of the four scans per variant and their ratio to the question's scan alone.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devset import agent_file, load_agent, store_settings
from devset_questions import CORPORA, load

from fisk_ls.knowledge import search
from fisk_ls.knowledge.connect import connect_reader
from fisk_ls.knowledge.lexical import TermStats
from fisk_ls.knowledge.manifest import read_manifest
from fisk_ls.knowledge.query import Query
from fisk_ls.knowledge.store import Snapshot, Store

Result = list[tuple[int, float]]


def q(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(0.95 * len(xs)))]


class Pool:
    """Worker threads, each with its own reader connection (opened on first use)."""

    def __init__(self, path: Path, workers: int, pragmas: tuple[str, ...] = ()) -> None:
        self.path, self.pragmas = path, pragmas
        self.local = threading.local()
        self.pool = ThreadPoolExecutor(workers)

    def conn(self) -> Any:
        c = getattr(self.local, "conn", None)
        if c is None:
            c = self.local.conn = connect_reader(self.path)
            for p in self.pragmas:
                c.execute(p)
        return c

    def scan(self, snap: Snapshot, plan: Any) -> Result:
        c = self.conn()
        c.execute("BEGIN")
        try:
            m = read_manifest(c)
            assert m is not None and m.generation == snap.manifest.generation
            return search.bm25_ids(Snapshot(c, m), plan, search.FANOUT * search.DEEPER)
        finally:
            c.execute("COMMIT")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store-base", type=Path, required=True)
    ap.add_argument("--corpus", choices=list(CORPORA), default="powershell")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="seq,par1,par2,par3,steal,mmap,cache,burn1,burn2")
    args = ap.parse_args()
    corpus = CORPORA[args.corpus]
    questions = [x for x in load(corpus) if x.lang == "en"]
    also = load_agent(agent_file(corpus.questions), questions, None)
    settings = store_settings(corpus, args.store_base)
    store = Store(settings.store_dir)
    stats = TermStats()
    path = store.path
    deep = search.FANOUT * search.DEEPER
    pools = {
        "par1": Pool(path, 1),
        "par2": Pool(path, 2),
        "par3": Pool(path, 3),
    }
    side: dict[str, Any] = {}

    def side_conn(name: str, pragmas: tuple[str, ...]) -> Any:
        if name not in side:
            c = side[name] = connect_reader(path)
            for p in pragmas:
                c.execute(p)
        return side[name]

    def seq_on(conn: Any, plans: list[Any]) -> list[Result]:
        conn.execute("BEGIN")
        try:
            m = read_manifest(conn)
            assert m is not None
            s = Snapshot(conn, m)
            return [search.bm25_ids(s, p, deep) for p in plans]
        finally:
            conn.execute("COMMIT")

    data = os.urandom(4 << 20)

    def burn() -> None:
        hashlib.sha256(data).digest()

    def steal(snap: Snapshot, plans: list[Any]) -> list[Result]:
        """The main thread and one worker take arms from one list, costliest first."""
        order = sorted(range(len(plans)), key=lambda i: -sum(plans[i].counts))
        out: list[Result | None] = [None] * len(plans)
        lock = threading.Lock()
        pool = pools["par1"]

        def take() -> int | None:
            with lock:
                return order.pop(0) if order else None

        def worker() -> None:
            c = pool.conn()
            c.execute("BEGIN")
            try:
                m = read_manifest(c)
                assert m is not None
                s = Snapshot(c, m)
                while (i := take()) is not None:
                    out[i] = search.bm25_ids(s, plans[i], deep)
            finally:
                c.execute("COMMIT")

        f = pool.pool.submit(worker)
        while (i := take()) is not None:
            out[i] = search.bm25_ids(snap, plans[i], deep)
        f.result()
        return [r for r in out if r is not None]

    def run(variant: str, snap: Snapshot, plans: list[Any]) -> list[Result]:
        if variant == "seq":
            return [search.bm25_ids(snap, p, deep) for p in plans]
        if variant == "alone":
            return [search.bm25_ids(snap, plans[0], deep)]
        if variant == "mmap":
            return seq_on(side_conn("mmap", ("PRAGMA mmap_size=268435456",)), plans)
        if variant == "cache":
            return seq_on(side_conn("cache", ("PRAGMA cache_size=-65536",)), plans)
        if variant == "steal":
            return steal(snap, plans)
        if variant == "burn1":
            for _ in range(4):
                burn()
            return []
        if variant == "burn2":
            f = pools["par1"].pool.submit(lambda: (burn(), burn()))
            burn()
            burn()
            f.result()
            return []
        pool = pools[variant]
        futures = [pool.pool.submit(pool.scan, snap, p) for p in plans[1:]]
        first = search.bm25_ids(snap, plans[0], deep)
        return [first, *(f.result() for f in futures)]

    variants = ["alone", *args.variants.split(",")]
    times: dict[str, list[float]] = {v: [] for v in variants}
    work: list[Callable[[], None]] = []
    for rnd in range(args.rounds + 1):
        for x in questions:
            query = Query.parse(x.query, 10, also=also[x.id])
            with store.snapshot() as snap:
                assert snap is not None
                plans = [search.query_plan(snap, s, stats) for s in query.strings if s.terms]
                want = run("seq", snap, plans)
                for v in variants:
                    t = time.perf_counter()
                    got = run(v, snap, plans)
                    dt = (time.perf_counter() - t) * 1000
                    if rnd:
                        times[v].append(dt)
                    assert v.startswith("burn") or got == want[: len(got)], (v, x.id)
    del work
    a50, a95 = q(times["alone"])
    print(f"{args.corpus}: {len(questions)} questions x {args.rounds} rounds")
    for v in variants:
        p50, p95 = q(times[v])
        print(f"{v:6s} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms   x{p50 / a50:.2f} / x{p95 / a95:.2f}")
    for pool in pools.values():
        pool.pool.shutdown()
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
