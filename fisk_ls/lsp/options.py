"""Client settings: ``initializationOptions`` and ``workspace/configuration`` section ``fisk``.

Both take the same camelCase object (docs/lsp-protocol.md), whose fields and limits are the
core's settings contract (``knowledge/settings_schema.py``, exported as settings.schema.json). It
is parsed into a small tree of frozen, defaulted dataclasses. A bad field never stops the server:
it keeps its default and its dotted name is reported with the limit, so the caller can send one
message naming every bad field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..knowledge import (
    DEFAULT_BUILTIN_MODEL,
    EDITOR_SETTINGS,
    EMBEDDINGS,
    EMBEDDINGS_RULE,
    EXPANSION,
    EXPANSION_TIMEOUT,
    QUERY_TIMEOUT,
    TIMEOUT,
    ConfigError,
    EmbeddingsConfig,
    ExpansionConfig,
    Setting,
    Settings,
    absolute_roots,
    check_value,
    expansion_problem,
    rule_needs,
    rule_problems,
    validate_base_url,
)

SECTION = "fisk"


@dataclass(frozen=True)
class EmbeddingsOptions:
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout: float = TIMEOUT.default
    query_timeout: float = QUERY_TIMEOUT.default
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
            timeout=self.timeout,
            query_timeout=self.query_timeout,
            query_prefix=self.query_prefix,
            document_prefix=self.document_prefix,
            provider=self.provider,
            model_path=self.model_path,
            threads=self.threads,
        )


@dataclass(frozen=True)
class ExpansionOptions:
    provider: str = "none"
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout: float = EXPANSION_TIMEOUT.default

    def config(self) -> ExpansionConfig | None:
        if self.provider == "none":
            return None
        return ExpansionConfig(
            provider=self.provider,
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            timeout=self.timeout,
        )


@dataclass(frozen=True)
class Options:
    """Every key optional: None means "keep what agent.yaml (or zero-config) says"."""

    paths: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    top_k: int | None = None
    embeddings: EmbeddingsOptions | None = None
    expansion: ExpansionOptions | None = None
    watch: bool = True
    workspace_symbols: bool = True
    prebuilt: str | None = None
    """A knowledge pack the first index run adopts (relative to the project root)."""

    def apply(self, settings: Settings) -> Settings:
        """``settings`` of one root with these options laid over them."""
        root = settings.project_root
        laid = settings.with_overrides(
            roots=absolute_roots(list(self.paths), cwd=root) if self.paths else None,
            exclude=self.exclude,
            top_k=self.top_k,
            embeddings=self.embeddings.config() if self.embeddings else False,
            prebuilt=absolute_roots([self.prebuilt], cwd=root)[0] if self.prebuilt else None,
        )
        if self.expansion is None:
            return laid
        return laid._replace(expansion=self.expansion.config())


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


def _checked(setting: Setting) -> Check:
    """A field check driven by the contract: the value, or _BAD with the limit reported."""

    def check(value: object, key: str, errors: list[str]) -> object:
        if problem := check_value(setting, value):
            errors.append(f"{key} ({problem})")
            return _BAD
        if setting.kind == "array":
            assert isinstance(value, list)
            return tuple(p for p in value if p.strip()) or None
        if isinstance(value, str):
            return value.strip() or None
        return value

    return check


_STRIPPED = {"base_url", "model", "api_key_env", "provider", "model_path"}
_NUMBERS = {"timeout", "query_timeout"}


def _given(
    settings: tuple[Setting, ...], value: dict[str, Any], key: str, errors: list[str]
) -> dict[str, Any] | None:
    """The given fields of an object setting by name, each checked against the contract (names
    stripped, numbers as floats); None (the first problem reported) when one is bad."""
    fields: dict[str, Any] = {}
    for setting in settings:
        item = value.get(setting.wire)
        if item is None:
            continue
        if problem := check_value(setting, item):
            errors.append(f"{key}.{setting.wire} ({problem})")
            return None
        if isinstance(item, str) and setting.name in _STRIPPED:
            item = item.strip()
        if isinstance(item, int) and setting.name in _NUMBERS:
            item = float(item)
        fields[setting.name] = item
    return fields


def _embeddings(value: object, key: str, errors: list[str]) -> object:
    if not isinstance(value, dict):
        errors.append(f"{key} (expected an object with {rule_needs(EMBEDDINGS_RULE)})")
        return _BAD
    fields = _given(EMBEDDINGS, value, key, errors)
    if fields is None:
        return _BAD
    given = {s.wire: fields[s.name] for s in EMBEDDINGS if s.name in fields}
    fields["provider"] = fields.get("provider") or "openai"
    if problems := rule_problems(EMBEDDINGS_RULE, given):
        errors += [f"{key}{'.' + f if f else ''} ({problem})" for f, problem in problems]
        return _BAD
    return EmbeddingsOptions(**fields)


def _expansion(value: object, key: str, errors: list[str]) -> object:
    if not isinstance(value, dict):
        errors.append(f"{key} (expected an object with provider, baseUrl and model)")
        return _BAD
    fields = _given(EXPANSION, value, key, errors)
    if fields is None:
        return _BAD
    options = ExpansionOptions(**fields)
    if problem := expansion_problem(options.provider, options.base_url, options.model):
        errors.append(f"{key} ({problem.replace('base_url', 'baseUrl')})")
        return _BAD
    if options.base_url:
        try:
            validate_base_url(options.base_url, f"{key}.baseUrl")
        except ConfigError as exc:
            errors.append(str(exc))
            return _BAD
    return options


Check = Callable[[object, str, list[str]], object]
_FIELDS: tuple[tuple[str, str, Check], ...] = (
    *((s.wire, s.name, _checked(s)) for s in EDITOR_SETTINGS),
    ("embeddings", "embeddings", _embeddings),
    ("expansion", "expansion", _expansion),
)


def bad_options_message(errors: list[str]) -> str:
    return "fisk: ignoring invalid settings, using defaults for: " + "; ".join(errors)
