"""Where things are: the project root, the store directory, and document keys.

A document's key (the path part of a citation) is its path relative to the project root with
``/`` separators, however the root or the file was spelled on the command line or by the editor.
The project root is the folder of agent.yaml, or the current directory without one.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from .config import (
    AgentConfig,
    EmbeddingsConfig,
    KnowledgeConfig,
    load_agent_config,
)
from .errors import ConfigError

CONFIG_NAME = "agent.yaml"
STORE_DIR_ENV = "FISK_AI_STORE_DIR"


@dataclass(frozen=True)
class Settings:
    """Everything a store, an index run or a search needs, resolved to absolute paths."""

    project_root: Path
    store_dir: Path
    roots: tuple[Path, ...]
    top_k: int
    max_injected_tokens: int
    embeddings: EmbeddingsConfig | None
    config_path: Path | None = None
    mcp_builtins: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    """Extra ignore patterns (.gitignore syntax, relative to the project root)."""

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
    ) -> Settings:
        """A copy with some fields replaced (``embeddings=False`` keeps the current value).

        ``exclude`` adds to the configured patterns (an editor setting never un-ignores).
        """
        return replace(
            self,
            roots=self.roots if roots is None else roots,
            exclude=self.exclude if exclude is None else (*self.exclude, *exclude),
            top_k=self.top_k if top_k is None else top_k,
            embeddings=self.embeddings if embeddings is False else embeddings,  # type: ignore[arg-type]
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
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
    return (base or default_cache_base()) / f"{root.name or 'root'}-{digest}"


def configured_store(config_dir: Path, agent: AgentConfig, base: Path | None) -> Path:
    directory = agent.knowledge.directory or f"knowledge/{agent.identity}"
    path = Path(directory).expanduser()
    if path.is_absolute():
        return path
    return (base or config_dir) / path


def find_config(cwd: Path) -> Path | None:
    candidate = cwd / CONFIG_NAME
    return candidate if candidate.is_file() else None


def resolve_settings(
    config_path: Path | None = None,
    *,
    cwd: Path | None = None,
    store_base: Path | None = None,
    discover: bool = True,
) -> Settings:
    """Settings for the project at ``cwd`` (or of ``config_path``).

    With no config (and none discovered in ``cwd``), knowledge is on, lexical, rooted at ``cwd``,
    and the store lives in the per-user cache directory.
    """
    cwd = (cwd or Path.cwd()).resolve()
    base = _checked_base(store_base if store_base is not None else store_base_from_env())
    if config_path is None and discover:
        config_path = find_config(cwd)
    if config_path is None:
        knowledge = KnowledgeConfig(enabled=True)
        return _settings(cwd, zero_config_store(cwd, base), knowledge, None, ())
    config_path = config_path.expanduser().resolve()
    if not config_path.is_file():
        raise ConfigError(f"config file {config_path} does not exist")
    agent = load_agent_config(config_path)
    if not agent.knowledge.enabled:
        raise ConfigError(
            f"knowledge is not enabled in {config_path}: add a harness.knowledge block with "
            "enabled: true"
        )
    root = config_path.parent
    store = configured_store(root, agent, base)
    return _settings(root, store, agent.knowledge, config_path, agent.mcp_builtins)


def _settings(
    root: Path,
    store: Path,
    knowledge: KnowledgeConfig,
    config_path: Path | None,
    builtins: tuple[str, ...],
) -> Settings:
    roots = tuple(_absolute(root, p) for p in knowledge.paths) or (root,)
    return Settings(
        project_root=root,
        store_dir=Path(os.path.abspath(store)),
        roots=roots,
        top_k=knowledge.top_k,
        max_injected_tokens=knowledge.max_injected_tokens,
        embeddings=knowledge.embeddings,
        config_path=config_path,
        mcp_builtins=builtins,
        exclude=knowledge.exclude,
    )


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
