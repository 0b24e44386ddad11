"""The cold index of older commits beside this checkout's, with the FTS5 floor in the same run.

    python bench/bisect_cold.py [--runs 3] [--corpus DIR] COMMIT [COMMIT ...]

Each commit is checked out once into a temporary git worktree (removed at the end) and run by
this checkout's interpreter with the worktree first on ``PYTHONPATH``; ``HEAD`` means this
checkout as it is, uncommitted changes included. Runs alternate (commit 1, commit 2, ...,
floor, then again), so load drifts hit every tree alike, and each tree's median is given as a
ratio to the floor's median of the same run, in wall time and in CPU time (user + system of the
process and its workers: on a loaded machine the CPU time moves less than the wall time). The
corpus is read through a hard-link mirror that is a repository of its own (as in peers.py),
never written. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from devset_questions import CORPORA_DIR
from peers_proc import Run, run

REPO = Path(__file__).resolve().parent.parent


def checkout(commit: str, base: Path) -> Path:
    if commit == "HEAD":
        return REPO
    dest = base / commit
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(dest), commit],
        check=True,
    )
    return dest


def timed(cmd: list[Any], cwd: Path | None, env: dict[str, str]) -> tuple[Run, float]:
    """The run and its CPU seconds (user + system, its reaped children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = run(cmd, cwd=cwd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return res, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def mirror(src: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-al", str(src), str(dest)], check=True)
    dest.chmod(dest.stat().st_mode | 0o200)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commits", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=CORPORA_DIR / "windows-powershell-docs")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="fisk-bisect-"))
    trees: dict[str, Path] = {}
    times: dict[str, list[float]] = {c: [] for c in [*args.commits, "floor"]}
    cpu: dict[str, list[float]] = {c: [] for c in times}
    try:
        root = mirror(args.corpus, base / "corpus")
        for c in args.commits:
            trees[c] = checkout(c, base / "trees")
        for r in range(args.runs):
            for c, tree in trees.items():
                store = base / "store"
                shutil.rmtree(store, ignore_errors=True)
                env = {**os.environ, "PYTHONPATH": str(tree), "FISK_AI_STORE_DIR": str(store)}
                cmd = [sys.executable, "-m", "fisk_ls.cli", "knowledge", "index", "--json"]
                res, used = timed(cmd, root, env)
                times[c].append(res.seconds)
                cpu[c].append(used)
                load = os.getloadavg()[0]
                print(
                    f"run {r + 1} {c}: {res.seconds:.2f} s, cpu {used:.2f} s, load {load:.2f}",
                    file=sys.stderr,
                )
            floor_store = base / "floor"
            shutil.rmtree(floor_store, ignore_errors=True)
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            res, used = timed(
                [sys.executable, REPO / "bench" / "floor.py", root, floor_store], None, env
            )
            times["floor"].append(res.seconds)
            cpu["floor"].append(used)
            print(f"run {r + 1} floor: {res.seconds:.2f} s, cpu {used:.2f} s", file=sys.stderr)
    finally:
        for tree in trees.values():
            if tree != REPO:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                    check=False,
                )
        shutil.rmtree(base, ignore_errors=True)
    floor_med = statistics.median(times["floor"])
    floor_cpu = statistics.median(cpu["floor"])
    out: dict[str, Any] = {
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "trees": {
            c: {
                "median_s": round(statistics.median(v), 2),
                "all_s": [round(x, 2) for x in v],
                "x_floor": round(statistics.median(v) / floor_med, 2),
                "cpu_median_s": round(statistics.median(cpu[c]), 2),
                "cpu_x_floor": round(statistics.median(cpu[c]) / floor_cpu, 2),
            }
            for c, v in times.items()
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
