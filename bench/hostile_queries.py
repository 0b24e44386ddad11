"""Worst-case query cost: seeded hostile queries against the PowerShell docs (~150k chunks).

    python bench/hostile_queries.py [--per-family N] [--seed S] [--store DIR] > hostile.json

Indexes the corpus once into ``.bench/hostile/`` (reused afterwards), then times
``Knowledge.search`` on queries built to be expensive, every one at most ``MAX_QUERY_CHARS``
long (the longest any front end accepts): long runs of hyphenated word pairs (phrase bonuses),
one long run of word characters (the identifier pattern), CJK runs (bigrams), dotted and
underscored identifiers, many distinct rare words, the commonest words of the corpus, FTS
syntax and quotes, random code points, emoji, the index's own commonest terms (alone, many, in
hyphenated pairs). Every query starts with nothing counted (``--warm`` keeps the reader's
term counts between queries). Prints JSON with the wall-clock max and p50 and the CPU-time max (this thread's, which load on
a shared machine does not inflate) per family
and the worst query overall; exits 1 when any query takes longer than ``--budget`` seconds of wall-clock time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fisk_ls.knowledge import Knowledge, SearchRequest, index, resolve_settings
from fisk_ls.knowledge.fts import MAX_QUERY_CHARS
from fisk_ls.knowledge.lexical import TermStats

REPO = Path(__file__).resolve().parents[1]
PS = REPO.parent.parent / "shared" / "corpora" / "windows-powershell-docs"
if not PS.is_dir():
    PS = Path("/work/shared/corpora/windows-powershell-docs")

_WORDS = (
    "get set new remove service adapter network firewall rule policy disk volume storage "
    "cluster user group computer registry certificate module command parameter object value "
    "string path item content process event log windows server client remote session task "
    "schedule backup restore update install feature role dns dhcp vpn smb share file folder"
)
WORDS = _WORDS.split()


def _fit(parts: list[str], sep: str = " ") -> str:
    out: list[str] = []
    size = 0
    for p in parts:
        if size + len(p) + len(sep) > MAX_QUERY_CHARS:
            break
        out.append(p)
        size += len(p) + len(sep)
    return sep.join(out)


def hyphen_pairs(rng: random.Random) -> str:
    return _fit([f"{rng.choice(WORDS)}-{rng.choice(WORDS)}" for _ in range(2000)])


def hyphen_chain(rng: random.Random) -> str:
    return _fit([rng.choice(WORDS) for _ in range(2000)], sep=rng.choice("-_./:"))


def word_run(rng: random.Random) -> str:
    return rng.choice(string.ascii_lowercase) * rng.randint(MAX_QUERY_CHARS // 2, MAX_QUERY_CHARS)


def word_run_then_sep(rng: random.Random) -> str:
    n = rng.randint(MAX_QUERY_CHARS // 2, MAX_QUERY_CHARS - 2)
    return "x" * n + rng.choice("-_./:") + "!"


def cjk(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_QUERY_CHARS))


def cjk_repeated(rng: random.Random) -> str:
    return (rng.choice("设计文档数据库") * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]


def mixed_cjk_latin(rng: random.Random) -> str:
    return _fit([rng.choice(WORDS) + chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(2000)], "")


def rare_words(rng: random.Random) -> str:
    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12)))

    return _fit([word() for _ in range(1000)])


def common_words(rng: random.Random) -> str:
    return _fit([rng.choice(WORDS) for _ in range(1000)])


def syntax(rng: random.Random) -> str:
    pieces = ['"', "AND", "OR", "NOT", "NEAR(", ")", "*", "^", ":", "-", "col:", "{", "}", "''"]
    return _fit([rng.choice(pieces) + rng.choice(WORDS) for _ in range(1000)])


def random_code_points(rng: random.Random) -> str:
    out = []
    for _ in range(MAX_QUERY_CHARS):
        c = rng.randint(1, 0x2FFFF)
        if 0xD800 <= c <= 0xDFFF:
            c = 0x41
        out.append(chr(c))
    return "".join(out)


def emoji(rng: random.Random) -> str:
    return "".join(chr(rng.randint(0x1F300, 0x1F5FF)) for _ in range(MAX_QUERY_CHARS))


def combining(rng: random.Random) -> str:
    return ("e" + "\u0301" * rng.randint(1, 50)) * (MAX_QUERY_CHARS // 51)


COMMONEST: list[str] = []
"""The index's commonest terms (filled from the vocabulary before the run)."""


def commonest_words(rng: random.Random) -> str:
    return _fit([rng.choice(COMMONEST) for _ in range(1000)])


def commonest_pairs(rng: random.Random) -> str:
    return _fit([f"{rng.choice(COMMONEST)}-{rng.choice(COMMONEST)}" for _ in range(1000)])


def one_common_word(rng: random.Random) -> str:
    return rng.choice(COMMONEST[:5])


def cmdlet_soup(rng: random.Random) -> str:
    verbs = ["Get", "Set", "New", "Remove", "Enable", "Disable", "Add", "Clear"]
    nouns = ["NetAdapter", "Service", "Disk", "ADUser", "DnsClientCache", "VM", "Item"]
    return _fit([f"{rng.choice(verbs)}-{rng.choice(nouns)}" for _ in range(500)])


FAMILIES: dict[str, Callable[[random.Random], str]] = {
    f.__name__: f
    for f in (
        hyphen_pairs,
        hyphen_chain,
        word_run,
        word_run_then_sep,
        cjk,
        cjk_repeated,
        mixed_cjk_latin,
        rare_words,
        common_words,
        syntax,
        random_code_points,
        emoji,
        combining,
        cmdlet_soup,
        commonest_words,
        commonest_pairs,
        one_common_word,
    )
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-family", type=int, default=5)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--store", type=Path, default=REPO / ".bench" / "hostile")
    ap.add_argument("--budget", type=float, default=0.5)
    ap.add_argument(
        "--warm",
        dest="cold",
        action="store_false",
        help="keep the reader's term counts between queries (default: every query starts cold)",
    )
    args = ap.parse_args(argv)
    if not PS.is_dir():
        print(f"corpus not found at {PS}", file=sys.stderr)
        return 2
    settings = resolve_settings(cwd=PS, store_base=args.store)
    t0 = time.perf_counter()
    stats = index(settings)
    index_s = time.perf_counter() - t0
    kb = Knowledge(settings)
    kb.search(SearchRequest("warm up the reader"))
    with kb.store.snapshot() as snap:
        assert snap is not None
        v = snap.tables.vocab
        COMMONEST[:] = [
            str(t) for (t,) in snap.conn.execute(f"SELECT term FROM {v} ORDER BY doc DESC LIMIT 40")
        ]
    rng = random.Random(args.seed)
    families: dict[str, Any] = {}
    worst: tuple[float, str, str] = (0.0, "", "")
    max_cpu = 0.0
    for name, make in FAMILIES.items():
        times, cpu = [], []
        for _ in range(args.per_family):
            q = make(rng)
            assert len(q) <= MAX_QUERY_CHARS, (name, len(q))
            if args.cold:
                kb.term_stats = TermStats()  # nothing counted yet: the lookups are paid too
            t, c = time.perf_counter(), time.thread_time()
            kb.search(SearchRequest(q))
            dt = time.perf_counter() - t
            times.append(dt)
            cpu.append(time.thread_time() - c)
            if dt > worst[0]:
                worst = (dt, name, q)
        families[name] = {
            "max_s": round(max(times), 4),
            "p50_s": round(statistics.median(times), 4),
            "max_cpu_s": round(max(cpu), 4),
        }
        max_cpu = max(max_cpu, *cpu)
    kb.close()
    report = {
        "corpus": str(PS),
        "chunks": stats.chunks,
        "index_s": round(index_s, 2),
        "max_query_chars": MAX_QUERY_CHARS,
        "queries": args.per_family * len(FAMILIES),
        "seed": args.seed,
        "cold": args.cold,
        "budget_s": args.budget,
        "max_s": round(worst[0], 4),
        "max_cpu_s": round(max_cpu, 4),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "worst_family": worst[1],
        "worst_query_head": worst[2][:120],
        "families": families,
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0 if worst[0] < args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
