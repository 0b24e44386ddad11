"""Files that change between the walk and the read: a skip note, never a hang, never an
unbounded read, never a lost document."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from fisk_ls.knowledge import (
    IndexReporter,
    IndexStats,
    Knowledge,
    SearchRequest,
    Settings,
    index_project,
)
from fisk_ls.knowledge.index import files
from fisk_ls.knowledge.index.walk import Candidate
from tests.support.waiting import HANG_GUARD


class SwapAfterWalk(IndexReporter):
    """Runs ``swap`` once the walk is done and before any file is read."""

    def __init__(self, swap: Callable[[], None]) -> None:
        self.swap = swap

    def on_plan(self, files: int) -> None:
        self.swap()


def run_guarded(settings: Settings, reporter: IndexReporter) -> IndexStats:
    """``index_project`` in a thread; fail (instead of hanging the suite) if it does not finish."""
    out: list[IndexStats] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            out.append(index_project(settings, reporter=reporter))
        except BaseException as exc:  # re-raised below
            errors.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(HANG_GUARD)
    if t.is_alive():
        # Unblock a FIFO reader, if that is where it hangs, so the thread can end.
        for fifo in settings.project_root.rglob("*.md"):
            if fifo.is_fifo():
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
        pytest.fail("index run hung on a file that changed under the walk")
    if errors:
        raise errors[0]
    return out[0]


def _fifo(p: Path) -> None:
    p.unlink()
    os.mkfifo(p)


def _folder(p: Path) -> None:
    p.unlink()
    p.mkdir()


def _symlink(p: Path) -> None:
    target = p.parent / "elsewhere.bin"
    target.write_text("# secret\n")
    p.unlink()
    p.symlink_to(target)


def _socket(p: Path) -> None:
    p.unlink()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(p))
    s.close()


def _grow(p: Path) -> None:
    with p.open("a") as fh:
        fh.write("more text appended after the walk\n" * 10)


def _huge(p: Path) -> None:
    with p.open("ab") as fh:
        fh.truncate(64 * 1024 * 1024)  # sparse: a 64 MiB file appears after the walk


SWAPS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "folder": _folder,
    "symlink": _symlink,
    "socket": _socket,
    "growth": _grow,
    "huge": _huge,
}


@pytest.mark.parametrize("kind", list(SWAPS))
def test_change_between_walk_and_read_is_a_skip_note(
    settings: Settings, project: Path, kind: str
) -> None:
    if kind == "socket" and len(str(project / "notes.txt")) > 100:
        pytest.skip("temporary path too long for a unix socket")
    target = project / "docs" / "design.md"
    stats = run_guarded(settings, SwapAfterWalk(lambda: SWAPS[kind](target)))
    notes = [n for n in stats.notes if "design.md" in n]
    assert len(notes) == 1, stats.notes
    assert "skipping" in notes[0]
    # The other documents are indexed as usual.
    hits = Knowledge(settings).search(SearchRequest("restart the broker")).hits
    assert hits and hits[0].path == "docs/ops/runbook.md"


def test_indexed_version_survives_a_change_during_the_read(
    settings: Settings, project: Path
) -> None:
    index_project(settings)
    target = project / "docs" / "design.md"
    target.write_text("# Design\n\n## Backpressure\n\nProducers block when full.\n")
    stats = run_guarded(settings, SwapAfterWalk(lambda: _grow(target)))
    assert any(files.CHANGED_NOTE in n for n in stats.notes)
    # The old version is kept until the next run reads a settled file.
    assert Knowledge(settings).search(SearchRequest("backpressure")).hits
    stats = index_project(settings)
    assert stats.updated == 1 and not stats.notes
    assert Knowledge(settings).search(SearchRequest("appended after the walk")).hits


def test_read_document_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    p = tmp_path / "pipe.md"
    os.mkfifo(p)
    result = files.read_document(p)
    assert isinstance(result, str) and "FIFO" in result


def test_read_document_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file growing during the read is read at most limit + 1 bytes."""
    p = tmp_path / "big.md"
    p.write_bytes(b"a" * 10)
    cand = Candidate(str(p), 10, 0, os.stat(p).st_ino)
    real_read = os.read
    given: list[int] = []

    def growing_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n) or b"b" * n  # an endless file
        given.append(len(data))
        return data

    monkeypatch.setattr(os, "read", growing_read)  # the module files reads with
    result = files.read_document(p, limit=1000, expected=cand)
    assert isinstance(result, str)
    assert sum(given) <= 1001


def test_device_is_skipped(tmp_path: Path) -> None:
    if not Path("/dev/null").exists():
        pytest.skip("no /dev/null")
    # A hard link to a device node needs privileges; opening the device path itself shows the
    # same check (fstat says character device, nothing is read).
    result = files.read_document(Path("/dev/null"))
    assert isinstance(result, str) and "device" in result


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ("# Título\n".encode("utf-16"), "UTF-16"),
        ("# Título\n".encode("utf-16-be").join([b"\xfe\xff", b""]), "UTF-16 BE"),
        ("# Título\n".encode("utf-32"), "UTF-32"),
    ],
)
def test_utf16_and_utf32_are_named(tmp_path: Path, data: bytes, name: str) -> None:
    p = tmp_path / "wide.md"
    p.write_bytes(data)
    result = files.read_document(p)
    assert isinstance(result, str)
    assert name in result and "binary" not in result


def test_utf8_bom_is_indexed(settings: Settings, project: Path) -> None:
    (project / "bom.md").write_bytes(b"\xef\xbb\xbf# Bommed heading\n\nzanzibar text\n")
    index_project(settings)
    hits = Knowledge(settings).search(SearchRequest("zanzibar")).hits
    assert hits and hits[0].section == "Bommed heading"


# -- names that are not text ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["new\nline.md", "esc\x1b[31mape.md", "bell\x07.txt", "c1\x9b.md"])
def test_control_characters_in_names_are_skipped_with_an_escaped_note(
    settings: Settings, project: Path, name: str
) -> None:
    (project / name).write_text("# Forged\n\nquixotic text\n")
    ctrl = next(c for c in name if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F)
    folder = project / ("dir" + ctrl + "x")
    folder.mkdir()
    (folder / "inside.md").write_text("# Inside\n\nquixotic folder text\n")
    stats = index_project(settings)
    bad = [n for n in stats.notes if "control characters" in n]
    assert len(bad) == 2, stats.notes
    for note in bad:
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in note), note
    assert not Knowledge(settings).search(SearchRequest("quixotic")).hits
    # The per-file path (didSave, watcher) applies the same rule.
    from fisk_ls.knowledge import update_paths

    stats = update_paths(settings, [project / name])
    assert any("control characters" in n for n in stats.notes)
    assert not Knowledge(settings).search(SearchRequest("quixotic")).hits
