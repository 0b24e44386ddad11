"""Where things are: the project root, the store directory, and document keys.

A document's key (the path part of a citation) is its path relative to the project root with
``/`` separators, however the root or the file was spelled on the command line or by the editor.

The project root, one rule for every front end (:func:`find_root`): from the starting folder
(the CLI's and MCP's current directory, the language server's workspace folder) upwards, the
nearest folder holding ``agent.yaml``, looking no higher than the top of the git repository
(the nearest folder holding ``.git``); else that repository top; else, with neither marker,
the nearest folder (the starting one or one above it, no higher than the home folder) that
already has an index in the per-user store (its store is keyed by that folder:
:func:`indexed_ancestor`); else the starting folder itself. ``--config`` overrides it (the root
is then the config's folder). The store key follows the root, so every subfolder of a project
finds the same index.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from .config import (
    AgentConfig,
    EmbeddingsConfig,
    ExpansionConfig,
    KnowledgeConfig,
    load_agent_config,
)
from .digests import sha256_hex
from .errors import ConfigError, KnowledgeDisabled

CONFIG_NAME = "agent.yaml"
REPO_MARKER = ".git"
STORE_DIR_ENV = "FISK_AI_STORE_DIR"
DB_NAME = "knowledge.db"  # store.DB_NAME (not imported: store sits above this module)


class Settings(NamedTuple):
    """Everything a store, an index run or a search needs, resolved to absolute paths."""

    project_root: Path
    store_dir: Path
    roots: tuple[Path, ...]
    top_k: int
    max_injected_tokens: int
    embeddings: EmbeddingsConfig | None
    config_path: Path | None = None
    expansion: ExpansionConfig | None = None
    """Where a person's question gets extra search strings (None: no expansion)."""
    mcp_builtins: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Extra ignore patterns (.gitignore syntax, relative to the project root)."""
    root_reason: str = ""
    """Why ``project_root`` is the root (for stats / doctor)."""
    store_reason: str = ""
    """Why the store is where it is (for stats / doctor)."""
    prebuilt: Path | None = None
    """A knowledge pack the first index run adopts (an empty index: index/adopt.py)."""

    @property
    def hybrid(self) -> bool:
        return self.embeddings is not None

    def with_overrides(
        self,
        *,
        roots: tuple[Path, ...] | None = None,
        exclude: tuple[str, ...] | None = None,
        top_k: int | None = None,
        embeddings: EmbeddingsConfig | bool | None = False,
        prebuilt: Path | None = None,
    ) -> Settings:
        """A copy with some fields replaced (``embeddings=False`` keeps the current value).

        ``exclude`` adds to the configured patterns (an editor setting never un-ignores).
        """
        return self._replace(
            roots=self.roots if roots is None else roots,
            exclude=self.exclude if exclude is None else (*self.exclude, *exclude),
            top_k=self.top_k if top_k is None else top_k,
            embeddings=self.embeddings if embeddings is False else embeddings,  # type: ignore[arg-type]
            prebuilt=self.prebuilt if prebuilt is None else prebuilt,
        )


def default_cache_base() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("fisk-ls", appauthor=False)) / "stores"


def store_base_from_env() -> Path | None:
    value = os.environ.get(STORE_DIR_ENV, "").strip()
    return Path(value) if value else None


def _checked_base(base: Path | None) -> Path | None:
    if base is None:
        return None
    if not base.is_absolute():
        raise ConfigError(f"--store-dir / {STORE_DIR_ENV} must be an absolute path, got {base}")
    return base


def zero_config_store(root: Path, base: Path | None) -> Path:
    """The store of a project with no agent.yaml: outside the repository, keyed by its root."""
    digest = sha256_hex(os.fsencode(root))[:12]
    return (base or default_cache_base()) / f"{root.name or 'root'}-{digest}"


def configured_store(config_dir: Path, agent: AgentConfig, base: Path | None) -> Path:
    directory = agent.knowledge.directory or f"knowledge/{agent.identity}"
    path = Path(directory).expanduser()
    if path.is_absolute():
        return path
    return (base or config_dir) / path


def _has_index(store: Path) -> bool:
    return (store / DB_NAME).is_file()


def store_for_config(config_dir: Path, agent: AgentConfig, base: Path | None) -> tuple[Path, str]:
    """The store of a configured project and why it is there.

    An agent.yaml that names no ``directory`` would put the store at ``knowledge/<identity>``
    beside it; when nothing is there yet but the project already has an index in the per-user
    cache (built before agent.yaml was added), that index is kept, so adding agent.yaml loses
    no work.
    """
    store = configured_store(config_dir, agent, base)
    if agent.knowledge.directory:
        return store, f"harness.knowledge.directory in {config_dir / CONFIG_NAME}"
    cached = zero_config_store(config_dir, base)
    if not _has_index(store) and _has_index(cached):
        return cached, (
            "the index this project had before agent.yaml was added; agent.yaml names no "
            "harness.knowledge.directory (set one to move it)"
        )
    where = f"under {base} (--store-dir / {STORE_DIR_ENV})" if base else f"beside {CONFIG_NAME}"
    return store, f"knowledge/{agent.identity} {where}; no directory configured"


class ProjectRoot(NamedTuple):
    """Where a project starts, found from a folder (see the module docstring for the rule)."""

    root: Path
    config: Path | None
    reason: str
    marked: bool = True
    """Found by a marker (agent.yaml, .git); False: the starting folder, for want of one."""


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def find_root(start: Path) -> ProjectRoot:
    """Where the project ``start`` (a folder, absolute) belongs to starts."""
    start = start.resolve()
    home = _home()
    for folder in (start, *start.parents):
        config = folder / CONFIG_NAME
        if config.is_file():
            return ProjectRoot(folder, config, f"nearest folder holding {CONFIG_NAME}")
        if (folder / REPO_MARKER).exists():
            return ProjectRoot(
                folder, None, f"top of the git repository; no {CONFIG_NAME} below it"
            )
        if folder == home:
            break  # a folder above $HOME is nobody's project root
    return ProjectRoot(
        start, None, f"the starting folder; no {CONFIG_NAME} or .git above it", marked=False
    )


def indexed_ancestor(start: Path, base: Path | None) -> Path | None:
    """The nearest of ``start`` (resolved) and the folders above it, no higher than the home
    folder, whose zero-config store already holds an index; None when none does. A docs tree
    without agent.yaml or .git indexed at its top is found from any subfolder, instead of a
    second index being started there. One ``stat`` per folder."""
    home = _home()
    for folder in (start, *start.parents):
        if _has_index(zero_config_store(folder, base)):
            return folder
        if folder == home:
            break
    return None


def resolve_settings(
    config_path: Path | None = None,
    *,
    cwd: Path | None = None,
    store_base: Path | None = None,
    discover: bool = True,
) -> Settings:
    """Settings for the project ``cwd`` belongs to (or of ``config_path``).

    With no config (and none discovered from ``cwd``), knowledge is on, lexical, rooted at the
    discovered root, and the store lives in the per-user cache directory, keyed by that root.
    ``discover=False`` takes ``cwd`` itself as the root.
    """
    cwd = (cwd or Path.cwd()).resolve()
    base = _checked_base(store_base if store_base is not None else store_base_from_env())
    reason = "given with --config"
    if config_path is None:
        top = find_root(cwd) if discover else ProjectRoot(cwd, None, "the given folder")
        indexed = None if top.marked else indexed_ancestor(top.root, base)
        if indexed is not None and indexed != top.root:
            reason = f"nearest folder above with an index; no {CONFIG_NAME} or .git above it"
            top = ProjectRoot(indexed, None, reason)
        config_path, reason = top.config, top.reason
        if config_path is None:
            knowledge = KnowledgeConfig(enabled=True)
            store = zero_config_store(top.root, base)
            where = f"under {base} (--store-dir / {STORE_DIR_ENV})" if base else "per-user cache"
            why = f"{where}, keyed by the project root; no {CONFIG_NAME}"
            return _settings(top.root, store, knowledge, None, (), (reason, why))
    try:
        config_path = config_path.expanduser().resolve()
        found = config_path.exists()
    except OSError as exc:  # a name too long, a loop of links
        raise ConfigError(f"config file {config_path}: {exc.strerror or exc}") from None
    if not found:
        raise ConfigError(f"config file {config_path} does not exist")
    agent = load_agent_config(config_path)
    if not agent.knowledge.enabled:
        raise KnowledgeDisabled(config_path)
    root = config_path.parent
    store, why = store_for_config(root, agent, base)
    return _settings(
        root, store, agent.knowledge, config_path, agent.mcp_builtins, (f"{reason}", why)
    )


def _settings(
    root: Path,
    store: Path,
    knowledge: KnowledgeConfig,
    config_path: Path | None,
    builtins: tuple[str, ...],
    reasons: tuple[str, str],
) -> Settings:
    where = f"{config_path}: harness.knowledge.paths" if config_path else "paths"
    roots = tuple(inside_root(_absolute(root, p), root, where) for p in knowledge.paths) or (root,)
    return Settings(
        project_root=root,
        store_dir=store_path(store),
        roots=roots,
        top_k=knowledge.top_k,
        max_injected_tokens=knowledge.max_injected_tokens,
        embeddings=knowledge.embeddings,
        expansion=knowledge.expansion,
        config_path=config_path,
        mcp_builtins=builtins,
        exclude=knowledge.exclude,
        root_reason=reasons[0],
        store_reason=reasons[1],
        prebuilt=_absolute(root, knowledge.prebuilt) if knowledge.prebuilt else None,
    )


def store_path(store: Path) -> Path:
    """The store folder with every symlink above it resolved (SQLite's no-follow open refuses a
    link anywhere in the path, and a home folder or cache reached through a link is common); a
    link at the store folder itself stays, for the store to refuse."""
    full = Path(os.path.abspath(store))
    return Path(os.path.realpath(full.parent)) / full.name


def inside_root(path: Path, root: Path, what: str = "") -> Path:
    """``path`` with every symlink in it resolved, which must be inside the project ``root``
    (itself resolved); ConfigError otherwise. Every root an index run walks and every path it
    is handed goes through here, so a link (``docs -> /etc``, a cloned repository can carry one)
    never takes a run outside the project."""
    full = Path(os.path.abspath(path))
    real = Path(os.path.realpath(full))
    if real == root or root in real.parents:
        return real
    shown = f"{full} (a symlink to {real})" if real != full else str(full)
    raise ConfigError(
        f"{what + ': ' if what else ''}{shown} is outside the project root {root}; every "
        "path indexed must stay inside the project (index it from a project that contains it, "
        "or give --config for that project)"
    )


def resolved_parent(path: Path | str) -> Path:
    """``path`` made absolute with the folders above it resolved, its own name kept (a symlink
    there stays one: the index never follows it)."""
    full = os.path.abspath(path)
    return Path(os.path.realpath(os.path.dirname(full)), os.path.basename(full))


def _absolute(root: Path, path: str | Path) -> Path:
    p = Path(path).expanduser()
    return Path(os.path.abspath(p if p.is_absolute() else root / p))


def absolute_roots(paths: list[str] | tuple[str, ...], cwd: Path | None = None) -> tuple[Path, ...]:
    """Paths typed by a person (relative to ``cwd``) as absolute paths."""
    base = (cwd or Path.cwd()).resolve()
    return tuple(_absolute(base, p) for p in paths)


def document_key(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators; ConfigError when outside the root."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(root)
    except ValueError:
        raise ConfigError(
            f"{path} is outside the project root {root}; index it from a project that contains "
            "it (or give --config for that project)"
        ) from None
    key = PurePosixPath(*rel.parts).as_posix()
    return "" if key == "." else key


def key_prefix(path: Path, root: Path) -> str:
    """The key of a folder, ending in ``/`` ("" for the root itself), for prefix matching."""
    key = document_key(path, root)
    return f"{key}/" if key else ""
