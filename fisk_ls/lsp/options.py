"""Client settings: ``initializationOptions`` and ``workspace/configuration`` section ``fisk``.

Both take the same camelCase object (docs/lsp-protocol.md). It is parsed into a small tree of
frozen, defaulted dataclasses. A bad field never stops the server: it keeps its default and its
dotted name is reported, so the caller can send one message naming every bad field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..knowledge.config import DEFAULT_BUILTIN_MODEL, PROVIDERS, TOP_K_CEILING, EmbeddingsConfig
from ..knowledge.location import Settings, absolute_roots

SECTION = "fisk"


@dataclass(frozen=True)
class Embeddings:
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    query_prefix: str = ""
    document_prefix: str = ""
    provider: str = "openai"
    model_path: str = ""
    threads: int = 0

    def config(self) -> EmbeddingsConfig:
        return EmbeddingsConfig(
            base_url=self.base_url,
            model=self.model or (DEFAULT_BUILTIN_MODEL if self.provider == "builtin" else ""),
            api_key_env=self.api_key_env,
            query_prefix=self.query_prefix,
            document_prefix=self.document_prefix,
            provider=self.provider,
            model_path=self.model_path,
            threads=self.threads,
        )


@dataclass(frozen=True)
class Options:
    """Every key optional: None means "keep what agent.yaml (or zero-config) says"."""

    paths: tuple[str, ...] | None = None
    top_k: int | None = None
    embeddings: Embeddings | None = None
    watch: bool = True
    workspace_symbols: bool = True

    def apply(self, settings: Settings) -> Settings:
        """``settings`` of one root with these options laid over them."""
        root = settings.project_root
        return settings.with_overrides(
            roots=absolute_roots(list(self.paths), cwd=root) if self.paths else None,
            top_k=self.top_k,
            embeddings=self.embeddings.config() if self.embeddings else False,
        )


@dataclass
class Parsed:
    options: Options
    errors: list[str] = field(default_factory=list)


def parse_options(raw: object, base: Options | None = None) -> Parsed:
    """Options from a decoded JSON object laid over ``base``; bad fields keep their value."""
    base = base or Options()
    errors: list[str] = []
    if raw is None:
        return Parsed(base, errors)
    if not isinstance(raw, dict):
        return Parsed(base, [f"{SECTION} (expected an object)"])
    values: dict[str, Any] = {}
    for key, name, check in _FIELDS:
        if raw.get(key) is None:
            continue
        value = check(raw[key], f"{SECTION}.{key}", errors)
        if value is not _BAD:
            values[name] = value
    return Parsed(replace(base, **values), errors)


_BAD = object()


def _paths(value: object, key: str, errors: list[str]) -> object:
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(p for p in value if p.strip()) or None
    errors.append(f"{key} (expected a list of paths)")
    return _BAD


def _top_k(value: object, key: str, errors: list[str]) -> object:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= TOP_K_CEILING:
        return value
    errors.append(f"{key} (expected an integer from 1 to {TOP_K_CEILING})")
    return _BAD


def _flag(value: object, key: str, errors: list[str]) -> object:
    if isinstance(value, bool):
        return value
    errors.append(f"{key} (expected true or false)")
    return _BAD


_EMBEDDING_KEYS = {
    "provider": "provider",
    "modelPath": "model_path",
    "baseUrl": "base_url",
    "model": "model",
    "apiKeyEnv": "api_key_env",
    "queryPrefix": "query_prefix",
    "documentPrefix": "document_prefix",
}


def _embeddings(value: object, key: str, errors: list[str]) -> object:
    if not isinstance(value, dict):
        errors.append(f"{key} (expected an object with baseUrl and model, or provider builtin)")
        return _BAD
    fields: dict[str, Any] = {}
    for wire, name in _EMBEDDING_KEYS.items():
        item = value.get(wire)
        if item is None:
            continue
        if not isinstance(item, str):
            errors.append(f"{key}.{wire} (expected a string)")
            return _BAD
        stripped = ("base_url", "model", "api_key_env", "provider", "model_path")
        fields[name] = item.strip() if name in stripped else item
    threads = value.get("threads")
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            errors.append(f"{key}.threads (expected 0 for automatic, or a positive integer)")
            return _BAD
        fields["threads"] = threads
    provider = fields.get("provider") or "openai"
    fields["provider"] = provider
    if provider not in PROVIDERS:
        errors.append(f"{key}.provider (expected one of {', '.join(PROVIDERS)})")
        return _BAD
    if provider == "builtin":
        if fields.get("base_url"):
            errors.append(f"{key}.baseUrl (not used with provider builtin)")
            return _BAD
    elif not fields.get("base_url") or not fields.get("model"):
        errors.append(f"{key} (baseUrl and model are required, or provider builtin)")
        return _BAD
    return Embeddings(**fields)


_FIELDS = (
    ("paths", "paths", _paths),
    ("topK", "top_k", _top_k),
    ("embeddings", "embeddings", _embeddings),
    ("watch", "watch", _flag),
    ("workspaceSymbols", "workspace_symbols", _flag),
)


def bad_options_message(errors: list[str]) -> str:
    return "fisk: ignoring invalid settings, using defaults for: " + "; ".join(errors)
