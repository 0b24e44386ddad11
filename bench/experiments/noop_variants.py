"""No-change re-index of the PS docs, in process, current code vs three changes (monkeypatched):
S string keys on the walk's hot path; P no worker when nothing needs reading (the stamp check
moves to the parent); both. Alternating, median of 3."""

import os
import statistics
import sys
import time
from pathlib import Path

from fisk_ls.knowledge import index, location, resolve_settings
from fisk_ls.knowledge.index import runs
from fisk_ls.knowledge.index.walk import walk

orig_collect = runs.Indexer._collect
orig_examine_all = runs.examine_all


def collect_str(self, roots, stats):
    found = {}
    base = str(self.root) + os.sep
    for r in roots:
        location.document_key(r, self.root)
        for cand in walk(r, self.writer.store_dir, stats.notes.append):
            p = str(cand.path)
            key = (
                p[len(base) :]
                if p.startswith(base)
                else location.document_key(cand.path, self.root)
            )
            found.setdefault(key, cand)
    stats.files = len(found)
    return list(found.items())


def examine_all_parent_check(jobs, batch=32, depth=4):
    todo = []
    for key, cand, ex in jobs:
        if (
            ex is not None
            and ex.size == cand.size
            and ex.mtime_ns == cand.mtime_ns
            and ex.inode == cand.inode
        ):
            yield runs._Outcome(key, cand, ex, "unchanged")
        else:
            todo.append((key, cand, ex))
    # (order changes: unchanged first; a real change keeps order by merging)
    yield from orig_examine_all(todo, batch, depth)


from fisk_ls.knowledge.index import walk as walk_mod  # noqa: E402

orig_walk_dir = walk_mod._walk_dir


def walk_dir_str(top, store_dir, note):
    stack = [top]
    exts = walk_mod.EXTENSIONS
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            note(f"skipping folder {folder}: {exc.strerror or exc}")
            continue
        subdirs = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not walk_mod.skip_dir(entry.name, entry.path, store_dir):
                        subdirs.append(entry.path)
                    continue
                name = entry.name
                dot = name.rfind(".")
                if (
                    dot <= 0
                    or name[dot:].lower() not in exts
                    or not entry.is_file(follow_symlinks=False)
                ):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                note(f"skipping {entry.path}: {exc.strerror or exc}")
                continue
            yield walk_mod.Candidate(entry.path, st.st_size, st.st_mtime_ns, st.st_ino)
        stack.extend(reversed(subdirs))


def setv(v):
    walk_mod._walk_dir = walk_dir_str if "W" in v else orig_walk_dir
    runs.Indexer._collect = collect_str if "S" in v else orig_collect
    runs.examine_all = examine_all_parent_check if "P" in v else orig_examine_all


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve()
    s = resolve_settings(cwd=root, store_base=Path(sys.argv[2]))
    times = {v: [] for v in ("base", "S", "P", "SP", "SPW")}
    index(s)  # warm
    for _ in range(3):
        for v in times:
            setv(v)
            t = time.perf_counter()
            st = index(s)
            times[v].append(time.perf_counter() - t)
            assert st.added == st.updated == 0, st
    for v, xs in times.items():
        print(f"{v:5s} median {statistics.median(xs):.3f} s  all {[round(x, 3) for x in xs]}")
