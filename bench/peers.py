"""fisk-ls beside its peers, measured in one run: qmd 2.8.3, ripgrep and the FTS5 floor.

    bash bench/install_peers.sh            # qmd (with a private Node 22) and ripgrep
    python bench/peers.py [--runs 3] [--corpora powershell,otel] > bench/results/peers.json

Every measure is a whole process unless it says in-process, runs alternate between the tools
(A/B/A/B, so load drifts hit both alike) and the medians of ``--runs`` runs are kept. The
corpora are read where they are through a hard-link mirror under .bench/corpora/ (no bytes
copied; the one file the "changed file" measure edits is replaced by a new inode, so the shared
corpus is never written). Stores and indexes live under .bench/peers-run/ (``--work``) and are removed at
the end unless --keep.

Measures per corpus: cold index (time, peak RSS of the process tree sampled from /proc, and the
largest single process from wait4), index size on disk, no-change re-index, one changed file
then index, whole-process ``search --json`` (5 queries x rounds, ripgrep ``rg -l -i`` of the
query words as the no-index floor), in-process search p50/p95 (ours through
``fisk_ls.knowledge.Knowledge``, timed by bench/fisk_latency.py; qmd through its SDK,
``createStore`` + ``searchLex``, the call behind ``qmd search``, timed inside Node by
bench/qmd_latency.mjs; each tool in a fresh process per block after one warm-up pass; the floor
as one FTS5 bm25 OR query on bench/floor.py's table), and start-up (``fisk-ai --help`` vs ``qmd --version``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset_questions import CORPORA_DIR as CORPORA
from peers_proc import Run, dir_bytes, med, pct, run
from peers_tools import (
    BENCH,
    FISK,
    NODE,
    QMD,
    QMD_PKG,
    REPO,
    TOP_K,
    Tools,
    find_tools,
    fisk_env,
    qmd_bytes,
    qmd_clear,
    qmd_env,
    qmd_write_config,
    rg_args,
)

CORPUS_SETS: dict[str, dict[str, Any]] = {
    "powershell": {
        "path": CORPORA / "windows-powershell-docs",
        "label": "windows-powershell-docs",
        "queries": [
            "how to configure DNS server forwarders",
            "remove a printer driver",
            "Get-NetAdapter",
            "BitLocker recovery key backup",
            "schedule a task to run at logon",
        ],
    },
    "otel": {
        "path": CORPORA / "opentelemetry-io" / "content" / "en",
        "label": "opentelemetry-io/content/en",
        "queries": [
            "how to configure the collector exporter",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "tail sampling processor",
            "propagate context between services",
            "what is a span",
        ],
    },
}


WORK = [BENCH / "peers-run"]
"""The folder for stores and indexes (``--work``)."""


def log(msg: str) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"[{time.strftime('%H:%M:%S')} load {load}] {msg}", file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --- one corpus --------------------------------------------------------------------------


def mirror(src: Path, name: str) -> Path:
    """A hard-link copy of ``src`` that is a project of its own: the mirror lies inside this
    repository, so without a ``.git`` of its own fisk-ls would take the repository's top as the
    project root and index this checkout instead of the corpus."""
    dest = BENCH / "corpora" / name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(src), str(dest)], check=True)
    dest.chmod(dest.stat().st_mode | 0o200)  # the mirror's own folder, not the corpus's
    return own_project(dest)


def own_project(folder: Path) -> Path:
    """Make ``folder`` (under .bench/, inside this repository) the top of a repository of its
    own, so fisk-ls takes it as the project root."""
    if not (folder / ".git").exists():
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def pick_target(root: Path) -> Path:
    files = sorted(root.rglob("*.md"))
    return min(files, key=lambda p: (abs(p.stat().st_size - 20_000), str(p)))


def replace_text(path: Path, text: str) -> None:
    """Write a new inode in place of ``path`` (never through a hard link into the corpus)."""
    tmp = path.with_name(path.name + ".bench-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def restore_link(path: Path, original: Path) -> None:
    tmp = path.with_name(path.name + ".bench-tmp")
    tmp.unlink(missing_ok=True)
    os.link(original, tmp)
    os.replace(tmp, path)


def measure_corpus(
    key: str, tools: Tools, runs: int, search_rounds: int, inproc: int
) -> dict[str, Any]:
    spec = CORPUS_SETS[key]
    src: Path = spec["path"]
    queries: list[str] = spec["queries"]
    root = mirror(src, key)
    work = WORK[0] / key
    fisk_store = work / "fisk"
    qmd_home = work / "qmd"
    floor_store = work / "floor"
    work.mkdir(parents=True, exist_ok=True)
    files = sum(1 for _ in root.rglob("*.md"))
    res: dict[str, Any] = {
        "corpus": spec["label"],
        "md_files": files,
        "bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file()),
        "queries": queries,
        "load_avg_at_start": loadavg(),
    }
    fisk_cmd = [FISK, "knowledge", "index", "--json"]
    qmd_cmd = [QMD, "update"]

    # cold index ------------------------------------------------------------------------
    cold: dict[str, list[Run]] = {"fisk": [], "qmd": [], "floor": []}
    for r in range(runs):
        log(f"{key}: cold index run {r + 1}/{runs}")
        shutil.rmtree(fisk_store, ignore_errors=True)
        cold["fisk"].append(run(fisk_cmd, cwd=root, env=fisk_env(fisk_store), sample=True))
        if tools.qmd:
            qmd_clear(qmd_home)
            qmd_write_config(qmd_home, root)
            cold["qmd"].append(run(qmd_cmd, cwd=root, env=qmd_env(qmd_home), sample=True))
        shutil.rmtree(floor_store, ignore_errors=True)
        cold["floor"].append(
            run(
                [sys.executable, REPO / "bench" / "floor.py", root, floor_store],
                env={**os.environ, "PYTHONPATH": str(REPO)},
                sample=True,
            )
        )
    res["cold"] = {
        tool: {
            "median_s": med([x.seconds for x in rs], 2),
            "all_s": [round(x.seconds, 2) for x in rs],
            "tree_peak_rss_mb": med([x.tree_peak_rss_mb for x in rs], 1),
            "max_single_rss_mb": med([x.max_single_rss_mb for x in rs], 1),
        }
        for tool, rs in cold.items()
        if rs
    }
    stats = json.loads(cold["fisk"][-1].stdout)
    if int(stats.get("files", 0)) < files:
        raise SystemExit(f"fisk-ls indexed {stats.get('files')} files of {root}, not {files}")
    res["fisk_index"] = {k: stats.get(k) for k in ("files", "chunks") if k in stats} or stats
    res["size_bytes"] = {"fisk": dir_bytes(fisk_store), "floor": dir_bytes(floor_store)}
    if tools.qmd:
        res["size_bytes"]["qmd"] = qmd_bytes(qmd_home)

    # no-change re-index ----------------------------------------------------------------
    log(f"{key}: no-change re-index")
    noop: dict[str, list[float]] = {"fisk": [], "qmd": []}
    for _ in range(runs):
        noop["fisk"].append(run(fisk_cmd, cwd=root, env=fisk_env(fisk_store)).seconds)
        if tools.qmd:
            noop["qmd"].append(run(qmd_cmd, cwd=root, env=qmd_env(qmd_home)).seconds)
    res["no_change"] = {
        t: {"median_s": med(v), "all_s": [round(x, 3) for x in v]} for t, v in noop.items() if v
    }

    # one changed file, then index --------------------------------------------------------
    target = pick_target(root)
    original_text = target.read_text(encoding="utf-8")
    log(f"{key}: one changed file ({target.relative_to(root)}, {target.stat().st_size} B)")
    one: dict[str, list[float]] = {"fisk": [], "qmd": []}
    try:
        for r in range(runs):
            replace_text(target, original_text + f"\n\nBenchmark edit {r} adds a sentence.\n")
            one["fisk"].append(run(fisk_cmd, cwd=root, env=fisk_env(fisk_store)).seconds)
            if tools.qmd:
                one["qmd"].append(run(qmd_cmd, cwd=root, env=qmd_env(qmd_home)).seconds)
    finally:
        restore_link(target, src / target.relative_to(root))
    res["one_file"] = {
        "file": str(target.relative_to(root)),
        "file_bytes": len(original_text.encode()),
        **{t: {"median_s": med(v), "all_s": [round(x, 3) for x in v]} for t, v in one.items() if v},
    }
    # bring both indexes back to the corpus as it is
    run(fisk_cmd, cwd=root, env=fisk_env(fisk_store))
    if tools.qmd:
        run(qmd_cmd, cwd=root, env=qmd_env(qmd_home))

    # whole-process search ----------------------------------------------------------------
    log(f"{key}: whole-process search, {len(queries)} queries x {search_rounds}")
    proc: dict[str, list[float]] = {"fisk": [], "qmd": [], "rg": []}
    counts: dict[str, dict[str, int]] = {"fisk": {}, "qmd": {}, "rg": {}}
    for _ in range(search_rounds):
        for q in queries:
            r1 = run(
                [FISK, "knowledge", "search", "--json", "--top-k", str(TOP_K), q],
                cwd=root,
                env=fisk_env(fisk_store),
            )
            proc["fisk"].append(r1.seconds)
            counts["fisk"][q] = len(json.loads(r1.stdout).get("results", []))
            if tools.qmd:
                r2 = run(
                    [QMD, "search", "--json", "-n", str(TOP_K), q],
                    cwd=root,
                    env=qmd_env(qmd_home),
                )
                proc["qmd"].append(r2.seconds)
                counts["qmd"][q] = len(json.loads(r2.stdout or "[]"))
            if tools.rg:
                try:
                    r3 = run([tools.rg, *rg_args(q), "."], cwd=root)
                except RuntimeError:  # rg exits 1 when nothing matches
                    continue
                proc["rg"].append(r3.seconds)
                counts["rg"][q] = len(r3.stdout.splitlines())
    res["search_process"] = {
        t: {
            "median_s": med(v),
            "p95_s": round(pct(v, 0.95), 3),
            "n": len(v),
            "hits": counts[t],
        }
        for t, v in proc.items()
        if v
    }

    # in-process search ---------------------------------------------------------------------
    log(f"{key}: in-process search, {len(queries)} queries x {inproc}")
    res["search_in_process"] = in_process(
        root, fisk_store, qmd_home, floor_store, queries, tools, runs, inproc
    )
    return res


def in_process(
    root: Path,
    fisk_store: Path,
    qmd_home: Path,
    floor_store: Path,
    queries: list[str],
    tools: Tools,
    blocks: int,
    rounds: int,
) -> dict[str, Any]:
    """Blocks alternate between the tools; each block times every query ``rounds/blocks`` times."""
    import apsw

    from fisk_ls.knowledge import schema

    per_block = max(1, -(-rounds // blocks))
    conn = apsw.Connection(str(floor_store / "floor.db"), flags=apsw.SQLITE_OPEN_READONLY)
    fts = schema.names(1).fts
    floor_sql = f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rank LIMIT {TOP_K}"

    def floor_expr(q: str) -> str:
        return " OR ".join(f'"{w}"' for w in re.findall(r"\w+", q))

    lat: dict[str, list[float]] = {"fisk": [], "qmd": [], "floor": []}
    slowest: dict[str, dict[str, float]] = {"fisk": {}, "qmd": {}, "floor": {}}
    for q in queries:  # warm
        conn.execute(floor_sql, (floor_expr(q),)).fetchall()
    for _ in range(blocks):
        # A process per block for each tool (qmd's Node, our Python), each warmed up first.
        out = run(
            [
                sys.executable,
                REPO / "bench" / "fisk_latency.py",
                root,
                fisk_store,
                per_block,
                TOP_K,
                *queries,
            ]
        )
        for i, ms in enumerate(json.loads(out.stdout)["ms"]):
            q = queries[i % len(queries)]
            lat["fisk"].append(ms)
            slowest["fisk"][q] = max(slowest["fisk"].get(q, 0.0), ms)
        if tools.qmd:
            out = run(
                [
                    NODE,
                    REPO / "bench" / "qmd_latency.mjs",
                    QMD_PKG,
                    qmd_home / "index.sqlite",
                    qmd_home / "config" / "index.yml",
                    per_block,
                    TOP_K,
                    *queries,
                ],
                env=qmd_env(qmd_home),
            )
            ms_list = json.loads(out.stdout)["ms"]
            lat["qmd"] += ms_list
            for i, ms in enumerate(ms_list):
                q = queries[i % len(queries)]
                slowest["qmd"][q] = max(slowest["qmd"].get(q, 0.0), ms)
        for _ in range(per_block):
            for q in queries:
                t = time.perf_counter()
                conn.execute(floor_sql, (floor_expr(q),)).fetchall()
                ms = (time.perf_counter() - t) * 1000
                lat["floor"].append(ms)
                slowest["floor"][q] = max(slowest["floor"].get(q, 0.0), ms)
    conn.close()
    out_d: dict[str, Any] = {}
    for tool, v in lat.items():
        if not v:
            continue
        worst = max(slowest[tool].items(), key=lambda kv: kv[1])
        out_d[tool] = {
            "p50_ms": round(statistics.median(v), 2),
            "p95_ms": round(pct(v, 0.95), 2),
            "n": len(v),
            "slowest_query": worst[0],
            "slowest_ms": round(worst[1], 1),
        }
    return out_d


def import_profile(cmd: list[Any], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """``python -X importtime`` of one command: how many modules it imports and the sum of
    their own import times (the flag's overhead included, so compare runs with each other)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "fisk_ls.cli", *cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [
        line.split("|")
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "self [us]" not in line
    ]
    names = {r[2].strip() for r in rows}
    return {
        "modules": len(rows),
        "self_ms": round(sum(int(r[0].split(":")[1]) for r in rows) / 1000, 1),
        "forbidden": sorted(
            n
            for n in names
            if n.split(".")[0] in ("multiprocessing", "rich", "yaml")
            or n.startswith(("fisk_ls.knowledge.index.", "fisk_ls.knowledge.writer"))
        ),
    }


def startup(tools: Tools, runs: int) -> dict[str, Any]:
    log("start-up")
    home = WORK[0] / "startup-qmd"
    proj = WORK[0] / "startup-fisk"
    proj.mkdir(parents=True, exist_ok=True)
    own_project(proj)
    (proj / "a.md").write_text("# Jam\n\nMarmalade is made from citrus fruit.\n")
    env = fisk_env(WORK[0] / "startup-fisk-store")
    run([FISK, "knowledge", "index"], cwd=proj, env=env)
    search = ["knowledge", "search", "marmalade", "--json"]
    cmds: dict[str, list[Any]] = {
        "fisk-ai --help": [FISK, "--help"],
        "fisk-ai knowledge search --json (one-file index)": [FISK, *search],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    if tools.qmd:
        cmds["qmd --version"] = [QMD, "--version"]
        cmds["node -e 0"] = [NODE, "-e", "0"]
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(max(5, runs)):
        for name, cmd in cmds.items():
            fisk = name.startswith("fisk-ai knowledge")
            r = run(cmd, cwd=proj if fisk else None, env=env if fisk else qmd_env(home))
            times[name].append(r.seconds)
    out: dict[str, Any] = {
        k: {"median_s": med(v), "all_s": [round(x, 3) for x in v]} for k, v in times.items()
    }
    profiles = [import_profile(search, proj, env) for _ in range(max(3, runs))]
    out["imports of `search` (-X importtime)"] = {
        "modules": profiles[-1]["modules"],
        "self_ms_median": med([p["self_ms"] for p in profiles]),
        "forbidden": profiles[-1]["forbidden"],
    }
    return out


def compile_bytecode() -> None:
    """Write this checkout's ``.pyc`` files first, as installing a wheel does: with
    ``PYTHONDONTWRITEBYTECODE`` set (or a read-only tree) every start-up would compile the
    sources again (about 30 ms for the search modules) and time that instead."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "fisk_ls")],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def main() -> None:
    from speed import machine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per measure (medians)")
    ap.add_argument("--search-rounds", type=int, default=3)
    ap.add_argument("--in-process-rounds", type=int, default=20)
    ap.add_argument("--corpora", default="powershell,otel")
    ap.add_argument("--keep", action="store_true", help="keep the work folder (stores)")
    ap.add_argument(
        "--work", type=Path, default=BENCH / "peers-run", help="stores and indexes go here"
    )
    args = ap.parse_args()
    WORK[0] = args.work.resolve()
    WORK[0].mkdir(parents=True, exist_ok=True)
    tools = find_tools()
    compile_bytecode()
    result: dict[str, Any] = {
        "machine": machine(),
        "tools": {
            "fisk": "fisk-ai (this checkout)",
            "qmd": tools.qmd_version or None,
            "node": tools.node_version or None,
            "rg": tools.rg_version or None,
            "missing": tools.missing,
        },
        "runs": args.runs,
        "top_k": TOP_K,
        "corpora": {},
    }
    try:
        for key in args.corpora.split(","):
            spec = CORPUS_SETS[key]
            if not spec["path"].is_dir():
                result["corpora"][key] = {"skipped": f"corpus not found: {spec['path']}"}
                continue
            result["corpora"][key] = measure_corpus(
                key, tools, args.runs, args.search_rounds, args.in_process_rounds
            )
        result["startup"] = startup(tools, args.runs)
        result["load_avg_at_end"] = loadavg()
    finally:
        if not args.keep:
            shutil.rmtree(WORK[0], ignore_errors=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
