"""Cost of the ignore rules, and agreement with git, on the shared corpora.

    python bench/ignore.py > ignore.json

1. The PowerShell docs: the walk alone and a no-change re-index, without ignore rules and with
   them (the rules of a real repository: eight ``exclude`` patterns matched at every entry plus
   the per-folder .gitignore/.fiskignore look-ups), best of N.
2. A copy of the OpenTelemetry docs in a temporary git repository with nested .gitignore files:
   the documents our walk keeps against ``git ls-files --cached --others --exclude-standard``,
   and the time of each.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fisk_ls.knowledge import IgnoreRules, index_project, resolve_settings
from fisk_ls.knowledge.index.walk import walk

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
PS = CORPORA / "windows-powershell-docs"
OTEL = CORPORA / "opentelemetry-io"
EXCLUDE = [
    "site/",
    "build/",
    "dist/",
    "vendor/",
    "third_party/",
    "**/generated/",
    "CHANGELOG*.md",
    "*.min.md",
]
ROUNDS = 5


def best(fn: Callable[[], Any], rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return round(min(times), 4)


def count_walk(root: Path, rules: IgnoreRules | None) -> int:
    return sum(1 for _ in walk(root, root / ".none", lambda _m: None, rules))


def powershell(work: Path) -> dict[str, Any]:
    os.environ["FISK_AI_STORE_DIR"] = str(work / "stores")
    plain = resolve_settings(cwd=PS)
    ruled = plain.with_overrides(exclude=tuple(EXCLUDE))
    index_project(plain)
    rules = IgnoreRules.for_project(PS, EXCLUDE)
    return {
        "files": count_walk(PS, None),
        "walk_no_rules_s": best(lambda: count_walk(PS, None)),
        "walk_rules_s": best(lambda: count_walk(PS, IgnoreRules.for_project(PS, EXCLUDE))),
        "walk_rules_warm_s": best(lambda: count_walk(PS, rules)),
        "no_change_reindex_no_rules_s": best(
            lambda: index_project(plain.with_overrides(exclude=()))
        ),
        "no_change_reindex_rules_s": best(lambda: index_project(ruled)),
    }


GITIGNORES = {
    ".gitignore": "/content/en/blog/\n*.tmp.md\n",
    "content/en/docs/.gitignore": "concepts/\n!concepts/signals/\n",
    "content/en/docs/languages/.gitignore": "*/api*.md\n",
}


def otel(work: Path) -> dict[str, Any]:
    repo = work / "otel"
    shutil.copytree(OTEL, repo)
    for rel, text in GITIGNORES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": str(work / "none"), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)

    def git_docs() -> list[str]:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        return sorted(
            p for p in out.split("\0") if p.lower().endswith((".md", ".markdown", ".txt", ".text"))
        )

    def ours() -> list[str]:
        rules = IgnoreRules.for_project(repo)
        return sorted(
            Path(c.path).relative_to(repo).as_posix()
            for c in walk(repo, repo / ".none", lambda _m: None, rules)
        )

    os.environ.update(GIT_CONFIG_GLOBAL=env["GIT_CONFIG_GLOBAL"], GIT_CONFIG_NOSYSTEM="1")
    g, o = git_docs(), ours()
    return {
        "documents_git": len(g),
        "documents_ours": len(o),
        "documents_without_rules": count_walk(repo, None),
        "same_list": g == o,
        "only_git": [p for p in g if p not in set(o)][:10],
        "only_ours": [p for p in o if p not in set(g)][:10],
        "git_ls_files_s": best(git_docs),
        "our_walk_with_rules_s": best(ours),
    }


def main() -> None:
    for corpus in (PS, OTEL):
        if not corpus.is_dir():
            sys.exit(f"corpus not found: {corpus}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out = {
            "load_average": os.getloadavg(),
            "cpus": os.cpu_count(),
            "powershell": powershell(work),
            "opentelemetry_in_git": otel(work),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
