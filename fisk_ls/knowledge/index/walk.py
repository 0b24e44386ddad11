"""Which files are documents: the walk rules.

Only ``.md .markdown .txt .text`` files; symlinks inside a root are never followed; dot
directories, any ``memory`` directory, ``node_modules``, ``__pycache__``, virtual environments and
the store directory are skipped, and so is whatever the project's ignore rules (``ignore.py``:
.gitignore, .fiskignore, ``exclude``) ignore. A folder that cannot be read, and a file or folder
whose name holds control characters, are skipped with a note and the walk goes on.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .ignore import FolderRules, IgnoreRules

EXTENSIONS = frozenset({".md", ".markdown", ".txt", ".text"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SKIP_DIRS = frozenset({"memory", "node_modules", "__pycache__"})


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    """As the walk saw it: a string (building 14k ``Path`` objects was a third of the walk in a
    run where nothing changed)."""
    size: int
    mtime_ns: int
    inode: int


def is_document_name(name: str) -> bool:
    return os.path.splitext(name)[1].lower() in EXTENSIONS


def unprintable_name(path: str, name: str | None = None) -> str | None:
    """A skip note when a file or folder name holds control characters (newline, ESC, …), else
    None. Such a name cannot be cited or printed faithfully (a newline could forge output lines,
    an ESC would be stripped for display and the citation no longer resolve), so every front end
    skips it, with this note, which shows the name escaped."""
    if not _CONTROL.search(path if name is None else name):
        return None
    return (
        f"skipping {escaped(path)}: its name contains control characters (newline, escape, ...);"
        " rename it to index it"
    )


def escaped(path: str) -> str:
    """``path`` with control characters written as escapes (``\\n``, ``\\x1b``), for notes."""
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], path)


def skip_dir(name: str, path: str, store_dir: str) -> bool:
    """True for directories that never hold documents (shared with the watcher)."""
    if name.startswith(".") or name in SKIP_DIRS:
        return True
    if path == store_dir:
        return True
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def in_skipped_dir(path: Path, root: Path, store_dir: Path) -> bool:
    """True when a file below ``root`` sits in a directory the walk would skip."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return True
    current = root
    for part in rel.parts[:-1]:
        current = current / part
        if skip_dir(part, str(current), str(store_dir)):
            return True
    return False


def walk(
    root: Path,
    store_dir: Path,
    note: Callable[[str], None],
    ignore: IgnoreRules | None = None,
) -> Iterator[Candidate]:
    """Documents under ``root`` (a folder or a single file), in a stable (sorted) order."""
    try:
        st = os.stat(root)  # the root itself may be a symlink the user chose
    except OSError as exc:
        note(f"skipping {root}: {exc.strerror or exc}")
        return
    if ignore is not None and ignore.ignored(root, stat.S_ISDIR(st.st_mode)):
        note(f"skipping {root}: ignored (.gitignore, .fiskignore or exclude)")
        return
    if stat.S_ISREG(st.st_mode):
        if (bad := unprintable_name(str(root))) is not None:
            note(bad)
        elif is_document_name(root.name):
            yield Candidate(str(root), st.st_size, st.st_mtime_ns, st.st_ino)
        else:
            note(f"skipping {root}: not a .md, .markdown, .txt or .text file")
        return
    if not stat.S_ISDIR(st.st_mode):
        note(f"skipping {root}: not a file or folder")
        return
    rules = ignore.folder(root) if ignore is not None else None
    yield from _walk_dir(str(root), str(store_dir), note, rules)


def _walk_dir(
    top: str, store_dir: str, note: Callable[[str], None], top_rules: FolderRules | None
) -> Iterator[Candidate]:
    stack: list[tuple[str, FolderRules | None]] = [(top, top_rules)]
    while stack:
        folder, rules = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            note(f"skipping folder {folder}: {exc.strerror or exc}")
            continue
        subdirs: list[tuple[str, FolderRules | None]] = []
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if skip_dir(entry.name, entry.path, store_dir):
                        continue
                    if (bad := unprintable_name(entry.path, entry.name)) is not None:
                        note(bad)
                        continue
                    if rules is None:
                        subdirs.append((entry.path, None))
                    elif not rules.ignored(entry.name, True):
                        subdirs.append((entry.path, rules.child(entry.name)))
                    continue
                if not is_document_name(entry.name) or not entry.is_file(follow_symlinks=False):
                    continue
                if (bad := unprintable_name(entry.path, entry.name)) is not None:
                    note(bad)
                    continue
                if rules is not None and rules.ignored(entry.name, False):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                note(f"skipping {entry.path}: {exc.strerror or exc}")
                continue
            yield Candidate(entry.path, st.st_size, st.st_mtime_ns, st.st_ino)
        stack.extend(reversed(subdirs))
