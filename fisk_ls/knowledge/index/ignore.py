"""Which paths a project ignores: .gitignore, .fiskignore and ``exclude`` patterns.

One object, one question (``IgnoreRules.for_project(root, ...).ignored(path)``), asked by the
walk, the watcher and the language server's didSave, so every front end skips the same files.

The rules, lowest precedence first (a later source overrides an earlier one, ``!`` negations
included, as in git):

1. inside a git repository: git's global excludes file (``core.excludesFile``, default
   ``$XDG_CONFIG_HOME/git/ignore``), the repository's ``.git/info/exclude``, then every
   ``.gitignore`` from the repository's top down to the file's folder (deeper wins);
2. ``.fiskignore`` files (same syntax, anywhere, also outside git), from the top down, so a
   ``.fiskignore`` can re-include what git ignores (``!site/``);
3. the ``exclude`` patterns of agent.yaml (``harness.knowledge.exclude``) and the editor setting
   (``fisk.exclude``), relative to the project root.

As in git, a file below an ignored folder stays ignored whatever a negation says. Patterns are
read and matched as git does (``wildmatch.py``: in linear time, whatever the pattern; a broken
line matches nothing and the others still count). Ignore files are re-read
when their size or mtime changes, so a long-lived object (the watcher's) stays current;
``is_source`` tells the update queue that a changed path is one of them (it then runs a full
run, which removes what became ignored and adds what no longer is).
"""

from __future__ import annotations

import codecs
import os
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..regular import read_regular
from ..wildmatch import Globs

GITIGNORE = ".gitignore"
FISKIGNORE = ".fiskignore"
MAX_IGNORE_FILE_BYTES = 1 << 20
"""An ignore file larger than this is not read (it is not a hand-written ignore file)."""


@dataclass(frozen=True, slots=True)
class _Spec:
    base: str
    """Absolute folder the patterns are relative to."""
    globs: Globs
    """The file's patterns (the last matching one decides)."""

    def verdict(self, path: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included, None no pattern matched (``path`` absolute).

        Git decides each folder on the way down and never looks inside an ignored one, so a
        pattern counts only when it matches ``path`` itself; a folder above is an ancestor's
        business, already decided.
        """
        if path == self.base or not path.startswith(self.base.rstrip("/") + "/"):
            return None
        found = self.globs.last_match(path[len(self.base.rstrip("/")) + 1 :], is_dir)
        return None if found is None else not found.negated


def _spec(base: str, lines: Iterable[str]) -> _Spec | None:
    """The patterns of ``lines`` relative to ``base``; None when there are none."""
    globs = Globs.of(lines)
    return _Spec(base, globs) if globs.globs else None


def _read_lines(path: Path, *, follow: bool = True) -> list[str] | None:
    """The lines of an ignore file; None when it is missing, too large, or not a regular file
    (a FIFO, a device, ``/dev/stdin`` behind a link: opened without blocking, then refused)."""
    try:
        data = read_regular(path, MAX_IGNORE_FILE_BYTES, follow=follow)
    except OSError:
        return None
    if len(data) > MAX_IGNORE_FILE_BYTES:
        return None
    return data.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace").splitlines()


def git_top(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder or a worktree file)."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _git_common_dir(top: Path) -> Path | None:
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    lines = _read_lines(dot_git) or []
    if not lines or not lines[0].startswith("gitdir:"):
        return None
    gitdir = Path(lines[0][len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else (top / gitdir)
    common = _read_lines(gitdir / "commondir")  # a linked worktree shares info/ with its main
    if common:
        rel = Path(common[0].strip())
        return rel if rel.is_absolute() else (gitdir / rel)
    return gitdir


def global_excludes_file(top: Path) -> Path | None:
    """git's ``core.excludesFile`` (asked of git when it is installed), else the XDG default."""
    try:
        proc = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=top,
            capture_output=True,
            text=True,
            timeout=5,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip()).expanduser()
    except (OSError, subprocess.SubprocessError):
        pass
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "git" / "ignore"


class IgnoreRules:
    """The ignore rules of one project. Thread-safe for reads (the cache is a plain dict)."""

    def __init__(
        self,
        root: Path,
        *,
        repo_top: Path | None,
        base_sources: tuple[Path, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> None:
        """``base_sources``: the repository-wide ignore files (git's global excludes file, then
        ``.git/info/exclude``), read now and again whenever one of them changes."""
        self.root = Path(os.path.abspath(root))
        self.repo_top = repo_top
        self.base_sources = tuple(Path(os.path.abspath(p)) for p in base_sources)
        self._base_stamp: tuple[tuple[int, int], ...] | None = None
        self._base: tuple[_Spec, ...] = ()
        self._base_lock = threading.Lock()
        self._exclude = _spec(str(self.root), exclude)
        self._folders: dict[str, tuple[tuple[int, int, int, int], tuple[_Spec, ...]]] = {}
        self._base_specs()

    @classmethod
    def for_project(cls, root: Path, exclude: Iterable[str] = ()) -> IgnoreRules:
        """Rules for the project at ``root``: git's (in a repository), .fiskignore, ``exclude``."""
        root = Path(os.path.abspath(root))
        top = git_top(root)
        sources: list[Path] = []
        if top is not None:
            if (excludes := global_excludes_file(top)) is not None:
                sources.append(excludes)
            common = _git_common_dir(top)
            if common is not None:
                sources.append(common / "info" / "exclude")
        return cls(root, repo_top=top, base_sources=tuple(sources), exclude=tuple(exclude))

    def is_source(self, path: Path | str) -> bool:
        """Is ``path`` one of the files these rules come from (a ``.gitignore`` or
        ``.fiskignore`` in the project or its repository, ``.git/info/exclude``, git's global
        excludes file)? A change to one changes which documents the project has: the update
        queue answers it with a full run (see queue.py)."""
        full = os.path.abspath(path)
        name = os.path.basename(full)
        if name in (GITIGNORE, FISKIGNORE):
            folder, root = os.path.dirname(full), str(self.root)
            if folder == root or folder.startswith(root.rstrip("/") + "/"):
                # One inside an ignored folder (node_modules/…/.gitignore) changes nothing.
                return not self.ignored(folder, True)
            top = str(self.repo_top) if self.repo_top is not None else root
            # Above the root, only the folders on the way down from the repository's top count.
            on_the_way = folder == top or folder.startswith(top.rstrip("/") + "/")
            return on_the_way and root.startswith(folder.rstrip("/") + "/")
        return any(full == str(p) for p in self.base_sources)

    def _base_specs(self) -> tuple[_Spec, ...]:
        """The repository-wide specs, re-read when a source file's size or mtime changed."""
        stamp = tuple(_stamp(str(p)) for p in self.base_sources)
        with self._base_lock:
            if stamp == self._base_stamp:
                return self._base
            top = str(self.repo_top if self.repo_top is not None else self.root)
            specs = []
            for source in self.base_sources:
                lines = _read_lines(source)
                if lines and (spec := _spec(top, lines)):
                    specs.append(spec)
            self._base, self._base_stamp = tuple(specs), stamp
            return self._base

    # -- the question ----------------------------------------------------------------------

    def ignored(self, path: Path | str, is_dir: bool | None = None) -> bool:
        """True when ``path`` (absolute, or relative to the root) or a folder above it is ignored.

        ``is_dir`` None asks the file system. Paths outside the project are never ignored here.
        """
        full = os.path.abspath(os.path.join(self.root, path))
        root = str(self.root)
        if full == root or not full.startswith(root.rstrip("/") + "/"):
            return False
        parts = full[len(root.rstrip("/")) + 1 :].split("/")
        rules = self.folder(root)
        for part in parts[:-1]:
            if rules.ignored(part, True):
                return True
            rules = rules.child(part)
        if is_dir is None:
            is_dir = os.path.isdir(full)
        return rules.ignored(parts[-1], is_dir)

    def folder(self, folder: str | Path) -> FolderRules:
        """The rules in effect inside ``folder`` (absolute, at or below the root)."""
        folder = os.path.abspath(folder)
        top = str(self.repo_top) if self.repo_top is not None else str(self.root)
        if not (folder == top or folder.startswith(top.rstrip("/") + "/")):
            top = folder
        rules = FolderRules(self, top, self._base_specs(), ())._with_own_files()
        rest = folder[len(top.rstrip("/")) + 1 :] if folder != top else ""
        for part in rest.split("/") if rest else []:
            rules = rules.child(part)
        return rules

    # -- internals -------------------------------------------------------------------------

    def _folder_specs(self, folder: str) -> tuple[tuple[_Spec, ...], tuple[_Spec, ...]]:
        """(.gitignore specs, .fiskignore specs) of one folder, re-read when either changes."""
        stamp = (
            *_stamp(os.path.join(folder, GITIGNORE)),
            *_stamp(os.path.join(folder, FISKIGNORE)),
        )
        cached = self._folders.get(folder)
        if cached is not None and cached[0] == stamp:
            return _split(cached[1])
        specs: list[_Spec] = []
        for name in (GITIGNORE, FISKIGNORE):
            if name == GITIGNORE and self.repo_top is None:
                specs.append(_EMPTY)  # git's rules apply only inside a repository
                continue
            # Not through a symlink, as git (2.32 on) does not follow a linked .gitignore.
            lines = _read_lines(Path(folder) / name, follow=False) if stamp != _NO_FILES else None
            specs.append((lines and _spec(folder, lines)) or _EMPTY)
        self._folders[folder] = (stamp, tuple(specs))
        return _split(tuple(specs))


@dataclass(frozen=True, slots=True)
class FolderRules:
    """The specs in effect inside one folder; ``child`` extends them one level down (a walk)."""

    rules: IgnoreRules
    path: str
    git: tuple[_Spec, ...]
    fisk: tuple[_Spec, ...]

    def _with_own_files(self) -> FolderRules:
        g, f = self.rules._folder_specs(self.path)
        return FolderRules(self.rules, self.path, self.git + g, self.fisk + f)

    def child(self, name: str) -> FolderRules:
        """The rules inside the subfolder ``name`` (its own ignore files added)."""
        return FolderRules(
            self.rules, f"{self.path.rstrip('/')}/{name}", self.git, self.fisk
        )._with_own_files()

    def ignored(self, name: str, is_dir: bool) -> bool:
        """Is the entry ``name`` of this folder ignored (the last matching pattern decides)?"""
        path = f"{self.path.rstrip('/')}/{name}"
        verdict = False
        exclude = self.rules._exclude
        for spec in (*self.git, *self.fisk, *((exclude,) if exclude is not None else ())):
            result = spec.verdict(path, is_dir)
            if result is not None:
                verdict = result
        return verdict


_EMPTY = _Spec("\0", Globs(()))
_NO_FILES = (-1, -1, -1, -1)


def _split(specs: tuple[_Spec, ...]) -> tuple[tuple[_Spec, ...], tuple[_Spec, ...]]:
    git, fisk = specs
    return (() if git is _EMPTY else (git,)), (() if fisk is _EMPTY else (fisk,))


def _stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)
