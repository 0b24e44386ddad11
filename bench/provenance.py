"""Where a result was measured, and whether the code it measures changed since.

bench/run.sh stamps every result it writes (``python bench/provenance.py stamp FILE``): the
commit checked out, its commit time, the time of the measurement, and the content hash of every
file under ``STAMPED`` that differed from that commit (uncommitted changes are measured too, so
they are recorded). bench/report.py asks :func:`changed_since` which of a table's measured paths
now differ from what was measured, and marks (or, with ``--strict``, refuses) the table.

"Differ" is by content, not by date: a file counts as changed when its bytes in the working
tree are not the bytes measured (the commit's, or the recorded hash of an uncommitted change).
A stamp whose commit this repository does not hold (a rebase, a shallow clone) falls back on
dates: every file a later commit touched, or that has uncommitted changes, counts as changed.

    python bench/provenance.py stamp RESULT.json
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY = "measured"
"""The key of the stamp in a result's JSON object."""

STAMPED = ("fisk_ls", "bench", "pyproject.toml")
"""Where uncommitted changes are recorded at measuring time (results and the page excluded)."""

UNSTAMPED = ("bench/results/", "bench/tests/", "BENCHMARKS.md")


@dataclass(frozen=True)
class Stamp:
    commit: str
    commit_time: int
    date: str
    uncommitted: dict[str, str | None] = field(default_factory=dict)
    """Path → git blob hash of what was measured (None: the file was deleted)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "commit_time": self.commit_time,
            "date": self.date,
            "uncommitted": self.uncommitted,
        }

    @staticmethod
    def of(result: Any) -> Stamp | None:
        """The stamp of a result object, None when it has none (or a malformed one)."""
        s = result.get(KEY) if isinstance(result, dict) else None
        if not isinstance(s, dict):
            return None
        try:
            return Stamp(
                str(s["commit"]), int(s["commit_time"]), str(s["date"]), dict(s["uncommitted"])
            )
        except (KeyError, TypeError, ValueError):
            return None


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=check
    )
    return done.stdout


def _pathspec(paths: Sequence[str]) -> list[str]:
    """``!path`` entries exclude, as git's ``:(exclude)`` magic does."""
    return [f":(exclude){p[1:]}" if p.startswith("!") else p for p in paths]


def covers(paths: Sequence[str], name: str) -> bool:
    """Whether ``name`` is under one of ``paths`` and under none of its ``!`` exclusions."""

    def under(prefix: str) -> bool:
        return name == prefix or name.startswith(prefix.rstrip("/") + "/")

    return any(under(p) for p in paths if not p.startswith("!")) and not any(
        under(p[1:]) for p in paths if p.startswith("!")
    )


def _blob(repo: Path, name: str) -> str | None:
    path = repo / name
    if not path.is_file():
        return None
    return git(repo, "hash-object", "--", name).strip()


def _uncommitted(repo: Path, paths: Sequence[str]) -> list[str]:
    """Tracked files that differ from HEAD, and untracked ones, under ``paths``."""
    out = git(repo, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths)
    names, entries = [], out.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        if entry[0] in "RC":  # a rename's old name follows
            i += 1
        names.append(entry[3:])
    return sorted(n for n in names if not n.startswith(UNSTAMPED))


def current(repo: Path, paths: Sequence[str] = STAMPED) -> Stamp:
    """The stamp of a measurement taken now in ``repo``'s working tree (uncommitted changes
    recorded under ``paths``)."""
    commit, ct = git(repo, "log", "-1", "--format=%H %ct").split()
    return Stamp(
        commit=commit,
        commit_time=int(ct),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        uncommitted={n: _blob(repo, n) for n in _uncommitted(repo, paths)},
    )


def stamp_file(path: Path, stamp: Stamp) -> None:
    """Write ``stamp`` into the JSON object in ``path`` (under ``KEY``)."""
    result = json.loads(path.read_text())
    if not isinstance(result, dict):
        raise ValueError(f"{path}: a result must be a JSON object to carry its stamp")
    result[KEY] = stamp.as_json()
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


def _known(repo: Path, commit: str) -> bool:
    return (
        subprocess.run(
            ["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
        ).returncode
        == 0
    )


def changed_since(repo: Path, stamp: Stamp, paths: Sequence[str]) -> list[str]:
    """The files under ``paths`` whose content now differs from what ``stamp`` measured."""
    spec = _pathspec(paths)
    if _known(repo, stamp.commit):
        names = set(git(repo, "diff", "--name-only", stamp.commit, "--", *spec).split("\n"))
        names |= set(_uncommitted(repo, spec))  # new untracked files
    else:
        names, newer = set(), False
        for line in git(repo, "log", "--format=@%ct", "--name-only", "--", *spec).split("\n"):
            if line.startswith("@"):
                newer = int(line[1:]) > stamp.commit_time
            elif line and newer:
                names.add(line)
        names |= set(_uncommitted(repo, spec))
    names |= {n for n in stamp.uncommitted if covers(paths, n)}
    changed = []
    for name in sorted(n for n in names if n and covers(paths, n)):
        if name in stamp.uncommitted and stamp.uncommitted[name] == _blob(repo, name):
            continue  # measured as it is now
        changed.append(name)
    return changed


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "stamp":
        print("usage: python bench/provenance.py stamp RESULT.json", file=sys.stderr)
        return 2
    repo = Path(__file__).resolve().parents[1]
    stamp_file(Path(argv[1]), current(repo))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
