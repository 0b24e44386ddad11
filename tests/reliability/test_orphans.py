"""Processes die with their parent: ``kill -9`` of an index run (CLI or language server, both
chunk in the same worker pool) leaves no chunking worker and no resource tracker behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fisk_ls.knowledge.index import examine
from tests.support.waiting import HANG_GUARD

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


# A parent that starts the chunking worker (more than PARALLEL_MIN_FILES files), takes the first
# result (so the worker and the resource tracker are running), says so, and then blocks.
PARENT = """
import sys, time
from pathlib import Path
from fisk_ls.knowledge.index.examine import examine_all
from fisk_ls.knowledge.index.walk import Candidate
root = Path(sys.argv[1])
jobs = []
for p in sorted(root.iterdir()):
    st = p.stat()
    jobs.append((p.name, Candidate(str(p), st.st_size, st.st_mtime_ns, st.st_ino), None))
it = examine_all(jobs, batch=1, depth=1)
next(it)
print("ready", flush=True)
time.sleep(3600)
"""


def children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            out.append(int(entry))
    return out


def descendants_of(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children_of(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_kill_minus_nine_leaves_no_descendant(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(examine.PARALLEL_MIN_FILES + 50):
        (docs / f"d{i:04}.md").write_text(f"# Doc {i}\n\nbody text {i}\n")
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(docs)],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "ready"
        family = descendants_of(parent.pid)
        assert len(family) >= 2, "expected the chunking worker and the resource tracker"
        parent.send_signal(signal.SIGKILL)
        parent.wait(HANG_GUARD)
        deadline = time.monotonic() + HANG_GUARD
        while any(alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [p for p in family if alive(p)]
        for p in survivors:  # do not leave them behind for the rest of the suite
            os.kill(p, signal.SIGKILL)
        assert not survivors, f"orphaned processes: {survivors}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_kill_minus_nine_of_the_language_server_mid_run_leaves_no_descendant(
    tmp_path: Path, store_base: Path
) -> None:
    """The real ``fisk-ls`` indexing a workspace large enough for the chunking worker: caught
    while the worker runs, frozen there (SIGSTOP, so the family cannot change under the test),
    killed with SIGKILL; every descendant (the worker, the resource tracker) must go."""
    from tests.support.raw_lsp import RawClient, command

    project = tmp_path / "many"
    project.mkdir()
    for i in range(examine.PARALLEL_MIN_FILES * 10):
        (project / f"d{i:05}.md").write_text(f"# Doc {i}\n\n" + f"text {i} " * 300 + "\n")
    client = RawClient(project, {**os.environ, "FISK_AI_STORE_DIR": str(store_base)})
    server = client.proc
    try:
        init = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": project.as_uri(),
                "capabilities": {},
                "initializationOptions": {"watch": False},
            },
        )
        assert "result" in init, init
        client.notify("initialized", {})

        def workers() -> list[int]:
            return [p for p in descendants_of(server.pid) if "spawn_main" in cmdline(p)]

        def state() -> tuple[bool, int]:
            status = command(client, "fisk.knowledge.status")["result"]
            return bool(status["indexing"]), sum(r["documents"] for r in status["roots"])

        family: list[int] = []
        for attempt in range(3):
            deadline = time.monotonic() + HANG_GUARD
            started = False
            next_status = 0.0
            while not workers() and time.monotonic() < deadline:
                if time.monotonic() > next_status:  # a run may end without the worker seen
                    busy, documents = state()
                    # The first run starts on its own after `initialized` (it is over once
                    # documents are in); later ones are the rebuilds this loop asks for.
                    started = started or busy or (attempt == 0 and documents > 0)
                    if started and not busy and not workers():
                        break
                    next_status = time.monotonic() + 0.5
                time.sleep(0.005)
            if workers():
                server.send_signal(signal.SIGSTOP)  # freeze the family as it is now
                family = descendants_of(server.pid)
                if workers():
                    break
                family = []
                server.send_signal(signal.SIGCONT)
            # Missed (the run ended first): a rebuild chunks everything again; its reply is
            # not waited for, the loop above waits on the worker appearing.
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": 10_000 + attempt,
                    "method": "workspace/executeCommand",
                    "params": {
                        "command": "fisk.knowledge.reindex",
                        "arguments": [{"rebuild": True}],
                    },
                }
            )
        assert family and workers(), "the chunking worker was never seen running"
        server.send_signal(signal.SIGKILL)
        server.wait(HANG_GUARD)
        deadline = time.monotonic() + HANG_GUARD
        while any(alive(p) for p in family) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [p for p in family if alive(p)]
        for p in survivors:  # do not leave them behind for the rest of the suite
            os.kill(p, signal.SIGKILL)
        assert not survivors, f"orphaned processes: {[cmdline(p) for p in survivors]}"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_worker_exits_when_parent_id_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The portable watch (no PR_SET_PDEATHSIG): a changed parent id ends the process."""
    exits: list[int] = []

    class Exit(BaseException):
        pass

    def fake_exit(code: int) -> None:
        exits.append(code)
        raise Exit

    monkeypatch.setattr(os, "_exit", fake_exit)  # the module examine calls
    monkeypatch.setattr(sys, "platform", "other")
    with pytest.raises(Exit):
        examine.die_with_parent(os.getppid() + 1_000_000)  # "the parent is already gone"
    assert exits == [1]
