"""agent.yaml's ``harness.knowledge`` block → frozen settings, validated.

Only the knowledge block, its ``embeddings`` block and ``expose.agent.mcp.builtins`` are ours;
inside them unknown keys are errors (a typo must not silently turn a feature off). Other keys of
agent.yaml belong to the rest of fisk-ai and are left alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from . import settings_schema as contract
from .errors import ConfigError
from .regular import read_regular
from .settings_checks import check_value, rule_problems, shown
from .vectors.url import validate_base_url

DEFAULT_TOP_K: int = contract.TOP_K.default
DEFAULT_MAX_INJECTED_TOKENS: int = contract.MAX_INJECTED_TOKENS.default
DEFAULT_EMBED_TIMEOUT: float = contract.TIMEOUT.default
DEFAULT_QUERY_TIMEOUT: float = contract.QUERY_TIMEOUT.default
KNOWLEDGE_SEARCH = "knowledge_search"
"""The one built-in tool that may be exposed over MCP."""

MAX_CONFIG_BYTES = 4 << 20
"""A larger agent.yaml is refused unread (it is not a hand-written configuration)."""
_IDENTITY = re.compile(r"^[A-Za-z0-9_-]+$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_KNOWLEDGE_KEYS = {
    "enabled",
    "paths",
    "exclude",
    "directory",
    "prebuilt",
    "top_k",
    "max_injected_tokens",
    "embeddings",
    "expansion",
}
_EMBEDDINGS_KEYS = {s.name for s in (*contract.EMBEDDINGS, *contract.AGENT_ONLY_EMBEDDINGS)}
_EXPANSION_KEYS = {s.name for s in contract.EXPANSION}


_YAML_NAMES = {s.wire: s.name for s in contract.EMBEDDINGS}
"""The embeddings' wire names as agent.yaml spells them (baseUrl: base_url)."""
DEFAULT_BUILTIN_MODEL = "all-MiniLM-L6-v2"


class EmbeddingsConfig(NamedTuple):
    """The embeddings block of agent.yaml: the provider of the vector tier and its settings."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = DEFAULT_EMBED_TIMEOUT
    query_timeout: float = DEFAULT_QUERY_TIMEOUT
    query_prefix: str = ""
    document_prefix: str = ""
    provider: str = "openai"
    model_path: str = ""
    """builtin: a directory holding ``model.onnx`` and ``tokenizer.json`` (nothing is
    downloaded); empty: the named model is fetched once into the user cache."""
    threads: int = 0
    """builtin: onnxruntime threads for indexing; 0 = all cores but one (at least one)."""
    max_tokens: int = 0
    """builtin: truncation in tokens; 0 = the model's own (256 for all-MiniLM-L6-v2)."""

    @property
    def builtin(self) -> bool:
        return self.provider == "builtin"


class ExpansionConfig(NamedTuple):
    """Where a person's question gets its extra search strings (expansion.py).

    ``openai``: an OpenAI-compatible chat server at ``base_url``; ``editor``: the editor's own
    language model, asked through the language server's client (no URL here)."""

    provider: str = "openai"
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout: float = contract.EXPANSION_TIMEOUT.default


class KnowledgeConfig(NamedTuple):
    """The ``harness.knowledge`` block of agent.yaml (its defaults: no agent.yaml)."""

    enabled: bool = False
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    directory: str = ""
    prebuilt: str = ""
    """A knowledge pack (pack.py) the first index run adopts, relative to agent.yaml's folder."""
    top_k: int = DEFAULT_TOP_K
    max_injected_tokens: int = DEFAULT_MAX_INJECTED_TOKENS
    embeddings: EmbeddingsConfig | None = None
    expansion: ExpansionConfig | None = None


class AgentConfig(NamedTuple):
    """What fisk-ls reads of an agent.yaml."""

    identity: str = "fisk-ai"
    knowledge: KnowledgeConfig = KnowledgeConfig()
    mcp_builtins: tuple[str, ...] = ()


def parse_duration(value: object, key: str, setting: contract.Setting | None = None) -> float:
    """Seconds from "30s", "500ms", "2m", "1h" or a number; > 0 and within ``setting``'s range."""
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a duration such as 30s, got {shown(value)}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2) or "s"]
        seconds = float(m.group(1)) * scale
    else:
        raise ConfigError(f"{key}: expected a duration such as 30s or 500ms, got {shown(value)}")
    if seconds <= 0:
        raise ConfigError(f"{key}: must be greater than zero, got {shown(value)}")
    if setting is not None and check_value(setting, seconds):
        raise ConfigError(f"{key}: expected {setting.limits()} seconds, got {shown(value)}")
    return seconds


def _mapping(value: object, key: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{key}: expected a mapping, got {type(value).__name__}")
    return value


def _unknown(block: dict[str, Any], allowed: set[str], key: str) -> None:
    extra = sorted(set(block) - allowed)
    if extra:
        raise ConfigError(
            f"{key}: unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(str, extra))} "
            f"(known: {', '.join(sorted(allowed))})"
        )


def _no_nul(value: str, key: str) -> str:
    if "\x00" in value:
        raise ConfigError(f"{key}: contains a NUL byte (\\0), which no path or name may hold")
    return value


def _string(block: dict[str, Any], name: str, key: str, default: str = "") -> str:
    value = block.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError(f"{key}.{name}: expected a string, got {shown(value)}")
    return _no_nul(value, f"{key}.{name}")


def _int(block: dict[str, Any], setting: contract.Setting, key: str) -> int:
    """An integer setting within the contract's limits (absent or null: its default)."""
    value = block.get(setting.name)
    if value is None:
        return int(setting.default)
    if problem := check_value(setting, value):
        raise ConfigError(f"{key}.{setting.name}: {problem}")
    assert isinstance(value, int)
    return value


def _globs(block: dict[str, Any], name: str, key: str) -> tuple[str, ...]:
    raw = block.get(name) or []
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise ConfigError(f"{key}.{name}: expected a list of strings")
    return tuple(_no_nul(p, f"{key}.{name}") for p in raw if p.strip())


def parse_embeddings(raw: object, key: str = "harness.knowledge.embeddings") -> EmbeddingsConfig:
    block = _mapping(raw, key)
    _unknown(block, _EMBEDDINGS_KEYS, key)
    provider = _string(block, "provider", key, "openai").strip() or "openai"
    if problem := check_value(contract.PROVIDER, provider):
        raise ConfigError(f"{key}.provider: {problem}")
    base_url = _string(block, "base_url", key).strip()
    model = _string(block, "model", key).strip()
    model_path = _string(block, "model_path", key).strip()
    given = {"provider": provider, "baseUrl": base_url, "model": model}
    for field_name, problem in rule_problems(contract.EMBEDDINGS_RULE, given, _YAML_NAMES):
        where = f"{key}.{field_name}" if field_name else key
        raise ConfigError(
            f"{where}: {problem} (base_url: an OpenAI-compatible server such as "
            "http://127.0.0.1:8080/v1; provider: builtin runs a model in this process)"
        )
    if provider == "builtin":
        model = model or DEFAULT_BUILTIN_MODEL
    else:
        for name in ("model_path", "threads", "max_tokens"):
            if block.get(name) is not None:
                raise ConfigError(f"{key}.{name} is only used with provider: builtin")
    threads = _int(block, contract.THREADS, key)
    max_tokens = _int(block, contract.MAX_TOKENS, key)
    timeout = DEFAULT_EMBED_TIMEOUT
    if block.get("timeout") is not None:
        timeout = parse_duration(block["timeout"], f"{key}.timeout", contract.TIMEOUT)
    query_timeout = DEFAULT_QUERY_TIMEOUT
    if block.get("query_timeout") is not None:
        query_timeout = parse_duration(
            block["query_timeout"], f"{key}.query_timeout", contract.QUERY_TIMEOUT
        )
    if provider != "builtin":
        base_url = validate_base_url(base_url, f"{key}.base_url")
    return EmbeddingsConfig(
        base_url=base_url,
        model=model,
        api_key_env=_string(block, "api_key_env", key).strip(),
        timeout=timeout,
        query_timeout=query_timeout,
        query_prefix=_string(block, "query_prefix", key),
        document_prefix=_string(block, "document_prefix", key),
        provider=provider,
        model_path=model_path,
        threads=threads,
        max_tokens=max_tokens,
    )


def expansion_problem(provider: str, base_url: str, model: str) -> str | None:
    """What is missing for ``provider`` (None: nothing), in the words every front end uses."""
    if provider == "openai" and (not base_url or not model):
        return "provider openai needs base_url and model (an OpenAI-compatible chat server)"
    if provider != "openai" and base_url:
        return f"base_url is only used with provider openai (provider is {provider})"
    return None


def parse_expansion(
    raw: object, key: str = "harness.knowledge.expansion"
) -> ExpansionConfig | None:
    """The expansion block: None for provider ``none``; ``provider`` defaults to openai (a
    block with a base_url asks for a chat server)."""
    block = _mapping(raw, key)
    _unknown(block, _EXPANSION_KEYS, key)
    provider = _string(block, "provider", key, "openai").strip() or "openai"
    if problem := check_value(contract.EXPANSION_PROVIDER, provider):
        raise ConfigError(f"{key}.provider: {problem}")
    base_url = _string(block, "base_url", key).strip()
    model = _string(block, "model", key).strip()
    if problem := expansion_problem(provider, base_url, model):
        raise ConfigError(f"{key}: {problem}")
    timeout = contract.EXPANSION_TIMEOUT.default
    if block.get("timeout") is not None:
        timeout = parse_duration(block["timeout"], f"{key}.timeout", contract.EXPANSION_TIMEOUT)
    if provider == "none":
        return None
    if base_url:
        base_url = validate_base_url(base_url, f"{key}.base_url")
    return ExpansionConfig(
        provider=provider,
        base_url=base_url,
        model=model,
        api_key_env=_string(block, "api_key_env", key).strip(),
        timeout=timeout,
    )


def parse_knowledge(raw: object, key: str = "harness.knowledge") -> KnowledgeConfig:
    block = _mapping(raw, key)
    _unknown(block, _KNOWLEDGE_KEYS, key)
    enabled = block.get("enabled", True)  # a block asks for knowledge; `enabled: false` not
    if not isinstance(enabled, bool):
        raise ConfigError(f"{key}.enabled: expected true or false, got {shown(enabled)}")
    paths_raw = block.get("paths") or []
    if not isinstance(paths_raw, list) or not all(isinstance(p, str) for p in paths_raw):
        raise ConfigError(f"{key}.paths: expected a list of paths")
    top_k = _int(block, contract.TOP_K, key)
    budget = _int(block, contract.MAX_INJECTED_TOKENS, key)
    embeddings = None
    if "embeddings" in block and block["embeddings"] is not None:
        embeddings = parse_embeddings(block["embeddings"], f"{key}.embeddings")
    elif "embeddings" in block:
        raise ConfigError(
            f"{key}.embeddings is empty: give provider: builtin, or base_url and model, "
            "or remove it"
        )
    expansion = None
    if block.get("expansion") is not None:
        expansion = parse_expansion(block["expansion"], f"{key}.expansion")
    return KnowledgeConfig(
        enabled=enabled,
        paths=tuple(_no_nul(p, f"{key}.paths") for p in paths_raw if p.strip()),
        exclude=_globs(block, "exclude", key),
        directory=_string(block, "directory", key).strip(),
        prebuilt=_string(block, "prebuilt", key).strip(),
        top_k=top_k,
        max_injected_tokens=budget,
        embeddings=embeddings,
        expansion=expansion,
    )


def parse_mcp_builtins(raw: object, knowledge_enabled: bool) -> tuple[str, ...]:
    key = "expose.agent.mcp.builtins"
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{key}: expected a list of tool names")
    names: list[str] = []
    for name in (x.strip() for x in raw):
        if name and name not in names:
            names.append(name)
    for name in names:
        if name != KNOWLEDGE_SEARCH:
            raise ConfigError(
                f"{key}: {shown(name)} cannot be exposed over MCP; the only built-in that can "
                f"be is {KNOWLEDGE_SEARCH!r} (memory and human-in-the-loop tools need operator "
                "state)"
            )
    if names and not knowledge_enabled:
        raise ConfigError(
            f"{key} lists {KNOWLEDGE_SEARCH!r} but knowledge is not enabled: set "
            "harness.knowledge.enabled: true or remove the entry"
        )
    return tuple(names)


def parse_agent_config(data: object) -> AgentConfig:
    """Validate an already-decoded agent.yaml document."""
    top = _mapping(data, "agent.yaml")
    identity = top.get("identity")
    if identity is None:
        app = top.get("application_path")
        identity = Path(app).name if isinstance(app, str) and app.strip() else "fisk-ai"
    if not isinstance(identity, str) or not _IDENTITY.match(identity):
        raise ConfigError(f"identity: must match [A-Za-z0-9_-]+, got {shown(identity)}")
    harness = _mapping(top.get("harness"), "harness")
    knowledge = (
        parse_knowledge(harness["knowledge"]) if "knowledge" in harness else KnowledgeConfig()
    )
    expose = _mapping(top.get("expose"), "expose")
    agent = _mapping(expose.get("agent"), "expose.agent")
    mcp = _mapping(agent.get("mcp"), "expose.agent.mcp")
    builtins = parse_mcp_builtins(mcp.get("builtins"), knowledge.enabled)
    return AgentConfig(identity=identity, knowledge=knowledge, mcp_builtins=builtins)


def load_agent_config(path: Path) -> AgentConfig:
    """Read and validate agent.yaml; errors name the file."""
    import yaml  # imported here: only commands that read a config pay for it

    try:
        raw = read_regular(path, MAX_CONFIG_BYTES)
    except OSError as exc:  # a FIFO or device is refused, never waited on
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB; not an agent.yaml")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    try:
        if (hostile := _hostile(text, yaml)) is not None:
            raise ConfigError(f"{path}: {hostile[0] or 'the document'}: {hostile[1]}")
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {_first_line(exc)}") from None
    try:
        return parse_agent_config(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


MAX_DEPTH = 100
"""Deeper nesting is refused before it is built (PyYAML's composer recurses per level)."""


def _first_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:300] + "..."


MAX_NUMBER_DIGITS = 4000
"""A longer plain number is refused before Python's own limit (4,300 digits) raises."""


def _hostile(text: str, yaml: Any) -> tuple[str, str] | None:
    """(key path such as ``harness.knowledge.paths[0]``, what is wrong) where ``text`` nests
    deeper than ``MAX_DEPTH`` or holds a number too long to convert; None when it does not.
    PyYAML's event parser is iterative, so this costs no recursion and builds no tree."""
    frames: list[list[Any]] = []  # [is_mapping, expecting_key, key or index, path]
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            where = _child_path(frames)
            if len(frames) >= MAX_DEPTH:
                return where, (
                    f"nested more than {MAX_DEPTH} levels deep; agent.yaml settings are a few "
                    "levels deep"
                )
            frames.append([isinstance(event, yaml.MappingStartEvent), True, 0, where])
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            frames.pop()
            _advance(frames)
        elif isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            value = getattr(event, "value", "*")
            is_key = bool(frames) and frames[-1][0] and frames[-1][1]
            if (
                isinstance(event, yaml.ScalarEvent)
                and event.style is None
                and len(value) > MAX_NUMBER_DIGITS
                and value.lstrip("+-")[:1].isdigit()
            ):
                return _child_path(frames), f"a number of {len(value):,} digits"
            if is_key:
                frames[-1][1], frames[-1][2] = False, value
            else:
                _advance(frames)
    return None


def _child_path(frames: list[list[Any]]) -> str:
    if not frames:
        return ""
    is_mapping, _, slot, path = frames[-1]
    if is_mapping:
        return f"{path}.{str(slot)[:40]}" if path else str(slot)[:40]
    return f"{path}[{slot}]" if len(path) < 200 else path


def _advance(frames: list[list[Any]]) -> None:
    """The value of the innermost container's current entry is done."""
    if not frames:
        return
    top = frames[-1]
    if top[0]:
        top[1] = True
    else:
        top[2] += 1
