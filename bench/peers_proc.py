"""Whole processes for bench/peers.py: wall time, peak RSS of the process tree (sampled from
/proc) and of the largest single process (wait4), stdout and stderr; small statistics."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_rss_kb(pid: int) -> int:
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += _rss_kb(p)
        todo += _children(p)
    return total


@dataclass
class Run:
    seconds: float
    returncode: int
    stdout: str
    stderr: str
    tree_peak_rss_mb: float
    max_single_rss_mb: float


def run(
    cmd: Sequence[object],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    sample: bool = False,
) -> Run:
    """Run one process to its end; wall time, and peak RSS when ``sample`` (polls /proc)."""
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
        t = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=out_f, stderr=err_f)
        peak = 0
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if sample:
                peak = max(peak, _tree_rss_kb(p.pid))
            time.sleep(0.02 if sample else 0.002)
        sec = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        r = Run(
            sec,
            p.returncode,
            out_f.read(),
            err_f.read(),
            round(peak / 1024, 1),
            round(ru.ru_maxrss / 1024, 1),
        )
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {r.returncode}: {r.stderr[-800:]}")
    return r


def med(xs: Sequence[float], digits: int = 3) -> float:
    return round(statistics.median(xs), digits)


def pct(values: Sequence[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p * len(s) + 0.5) - 1))]


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0
