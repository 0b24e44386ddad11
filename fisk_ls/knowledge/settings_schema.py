"""The settings contract: every setting, its limits and default, defined once.

agent.yaml (``config.py``), the language server's options (``lsp/options.py``), the CLI's flags,
the ``knowledge_search`` tool and MCP all read their limits from here, and
``settings.schema.json`` beside this file is generated from it (``python -m
fisk_ls.knowledge.settings_schema --write``; a test fails when the checked-in file is stale) for
the VS Code ``package.json`` and the Neovim plugin, whose own copies of the limits
(``schema.generated.ts``, ``schema.lua``) ``scripts/editor_contracts.py`` generates from it.

One behaviour per boundary for a value out of range:

- a *request* (CLI flag, LSP command argument, tool/MCP argument): :class:`SettingError`, a
  clear error naming the limit (:func:`check_top_k`, :func:`check_query`);
- *agent.yaml*: a :class:`ConfigError` naming the file, the key and the limit;
- the language server's *initializationOptions / configuration*: the field keeps its default
  and one message names every bad field (:func:`check_value` returns the problem, the caller
  collects them).
"""

from __future__ import annotations

import json
import reprlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .errors import ConfigError

Kind = Literal["integer", "number", "string", "boolean", "array"]
SCHEMA_FILE = Path(__file__).with_name("settings.schema.json")


class SettingError(ConfigError):
    """A request argument is out of the contract's range (the message names the limit)."""


@dataclass(frozen=True)
class Setting:
    """One setting: its agent.yaml name, its camelCase wire name, its type and limits."""

    name: str
    wire: str
    kind: Kind
    description: str
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    items: Kind | None = None
    max_items: int | None = None
    item_max_length: int | None = None
    choices: tuple[str, ...] | None = None

    def limits(self) -> str:
        """The allowed values in words, for error messages."""
        noun = {"integer": "an integer", "number": "a number"}.get(self.kind, self.kind)
        if self.choices is not None:
            return "one of " + ", ".join(self.choices)
        if self.minimum is not None and self.maximum is not None:
            return f"{noun} from {_num(self.minimum)} to {_num(self.maximum)}"
        if self.minimum is not None:
            return f"{noun} of at least {_num(self.minimum)}"
        if self.kind == "string" and self.max_length is not None:
            return f"a string of at most {self.max_length:,} characters"
        if self.kind == "array":
            return f"a list of {self.items}s"
        return {"boolean": "true or false"}.get(self.kind, noun)

    def json_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "description": self.description}
        if self.items is not None:
            out["items"] = {"type": self.items}
            if self.item_max_length is not None:
                out["items"]["maxLength"] = self.item_max_length
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.default is not None:
            out["default"] = self.default
        return out


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


TOP_K = Setting(
    "top_k", "topK", "integer", "How many sections a search returns.", 5, minimum=1, maximum=20
)
MAX_INJECTED_TOKENS = Setting(
    "max_injected_tokens",
    "maxInjectedTokens",
    "integer",
    "Budget of the knowledge_search tool's whole answer, in tokens (about 4 characters each).",
    6000,
    minimum=1,
    maximum=1_000_000,
)
QUERY = Setting(
    "query",
    "query",
    "string",
    "A search query (CLI, language server, knowledge_search, MCP).",
    max_length=2000,
)
ALSO = Setting(
    "also",
    "also",
    "array",
    "Extra search strings from a caller who knows the docs' vocabulary (a keyword query, a "
    "short hypothetical answer, a rephrasing), searched beside the query and fused with it.",
    items="string",
    max_items=4,
    item_max_length=2000,
)
PATHS = Setting(
    "paths",
    "paths",
    "array",
    "Folders or files to index, relative to the project root (default: the root).",
    items="string",
)
EXCLUDE = Setting(
    "exclude",
    "exclude",
    "array",
    "Extra ignore patterns in .gitignore syntax, relative to the project root "
    "(on top of .gitignore and .fiskignore).",
    items="string",
)
SCOPE = Setting(
    "scope",
    "scope",
    "array",
    "Folders, files or globs (.gitignore syntax, ** allowed) a search keeps to: relative to the "
    "current folder on the command line, else to the project root; several are a union "
    "(CLI --path / --exclude, language server and knowledge_search `paths`).",
    items="string",
    max_items=16,
    item_max_length=1000,
)
TAGS = Setting(
    "tags",
    "tags",
    "array",
    "Front-matter tags a search keeps to: only documents with at least one of them (several "
    "are a union; case and a leading # ignored), together with the paths "
    "(CLI --tag, language server and knowledge_search `tags`).",
    items="string",
    max_items=16,
    item_max_length=100,
)
SHOW_CONTEXT = Setting(
    "show_context",
    "context",
    "integer",
    "Chunks of the same document shown before and after a cited chunk (CLI show --context).",
    0,
    minimum=0,
    maximum=5,
)
TOOL_CONTEXT = Setting(
    "tool_context",
    "context",
    "integer",
    "Chunks before and after each of the best hits that knowledge_search adds (from the "
    "same budget).",
    0,
    minimum=0,
    maximum=2,
)
WATCH = Setting(
    "watch", "watch", "boolean", "Re-index files as they change on disk (language server).", True
)
WORKSPACE_SYMBOLS = Setting(
    "workspace_symbols",
    "workspaceSymbols",
    "boolean",
    "Offer document sections as workspace symbols (language server).",
    True,
)
PREBUILT = Setting(
    "prebuilt",
    "prebuilt",
    "string",
    "A knowledge pack (`fisk-ai knowledge pack`, e.g. built in CI) the first index run adopts: "
    "files whose content equals the pack's are taken from it, with its vectors when the vector "
    "space is the same; relative to the project root.",
    max_length=4096,
)

# -- embeddings (the optional vector tier) ----------------------------------------------------
PROVIDER = Setting(
    "provider",
    "provider",
    "string",
    "'builtin' runs an ONNX model in this process (the fisk-ls[embed] extra); 'openai' (the "
    "default) uses an OpenAI-compatible server at baseUrl.",
    "openai",
    choices=("openai", "builtin"),
)
MODEL_PATH = Setting(
    "model_path",
    "modelPath",
    "string",
    "builtin: a folder holding model.onnx and tokenizer.json (air-gapped use; no download).",
)
THREADS = Setting(
    "threads",
    "threads",
    "integer",
    "builtin: threads for the model (0: all cores but one).",
    0,
    minimum=0,
    maximum=256,
)
MAX_TOKENS = Setting(
    "max_tokens",
    "maxTokens",
    "integer",
    "builtin: tokens per chunk fed to the model (0: the model's own limit; agent.yaml only).",
    0,
    minimum=0,
    maximum=8192,
)
BASE_URL = Setting(
    "base_url",
    "baseUrl",
    "string",
    "OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:8080/v1.",
)
MODEL = Setting("model", "model", "string", "Embedding model name the server knows.")
API_KEY_ENV = Setting(
    "api_key_env", "apiKeyEnv", "string", "Name of an environment variable holding the API key."
)
TIMEOUT = Setting(
    "timeout",
    "timeout",
    "number",
    "Seconds an index-time embeddings request may take (agent.yaml also takes 30s, 500ms, 2m).",
    30.0,
    minimum=0.1,
    maximum=3600,
)
QUERY_TIMEOUT = Setting(
    "query_timeout",
    "queryTimeout",
    "number",
    "Seconds a query embedding may take before the search falls back to lexical only.",
    2.0,
    minimum=0.05,
    maximum=60,
)
QUERY_PREFIX = Setting(
    "query_prefix", "queryPrefix", "string", "Text put before every query (e.g. 'query: ')."
)
DOCUMENT_PREFIX = Setting(
    "document_prefix",
    "documentPrefix",
    "string",
    "Text put before every chunk embedded (e.g. 'passage: ').",
)

EMBEDDINGS: tuple[Setting, ...] = (
    PROVIDER,
    MODEL_PATH,
    THREADS,
    BASE_URL,
    MODEL,
    API_KEY_ENV,
    TIMEOUT,
    QUERY_TIMEOUT,
    QUERY_PREFIX,
    DOCUMENT_PREFIX,
)
EMBEDDINGS_REQUIRED = ("baseUrl", "model")
"""What the ``openai`` provider needs (``builtin`` runs a model in-process and takes no baseUrl)."""

EMBEDDINGS_RULE: dict[str, Any] = {
    # provider builtin: no server, so no baseUrl; otherwise (openai) baseUrl and model.
    "if": {"properties": {PROVIDER.wire: {"const": "builtin"}}, "required": [PROVIDER.wire]},
    "then": {"properties": {BASE_URL.wire: {"const": ""}}},
    "else": {
        "properties": {name: {"minLength": 1} for name in EMBEDDINGS_REQUIRED},
        "required": list(EMBEDDINGS_REQUIRED),
    },
}
"""The embeddings' provider rule as JSON Schema ``if``/``then``/``else``, the one place it is
written: the schema file carries it, :func:`rule_problems` applies it for the language server and
the editors apply the generated copy the same way, with the same messages."""

# -- question expansion (a language model's search strings for a person's question) -----------
EXPANSION_PROVIDER = Setting(
    "provider",
    "provider",
    "string",
    "'openai': an OpenAI-compatible chat server at baseUrl writes the extra search strings; "
    "'editor': the editor's own language model (VS Code); 'none' (the default): no expansion.",
    "none",
    choices=("none", "openai", "editor"),
)
EXPANSION_BASE_URL = Setting(
    "base_url",
    "baseUrl",
    "string",
    "OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:11434/v1 (Ollama).",
)
EXPANSION_MODEL = Setting("model", "model", "string", "Chat model name the server knows.")
EXPANSION_TIMEOUT = Setting(
    "timeout",
    "timeout",
    "number",
    "Seconds the model may take before the search keeps its plain results.",
    10.0,
    minimum=0.1,
    maximum=120,
)
EXPANSION: tuple[Setting, ...] = (
    EXPANSION_PROVIDER,
    EXPANSION_BASE_URL,
    EXPANSION_MODEL,
    API_KEY_ENV,
    EXPANSION_TIMEOUT,
)
EXPANSION_RULE: dict[str, Any] = {
    "if": {
        "properties": {EXPANSION_PROVIDER.wire: {"const": "openai"}},
        "required": [EXPANSION_PROVIDER.wire],
    },
    "then": {
        "properties": {name: {"minLength": 1} for name in EMBEDDINGS_REQUIRED},
        "required": list(EMBEDDINGS_REQUIRED),
    },
}
"""provider openai needs baseUrl and model (the other providers take neither)."""
EXPAND = Setting(
    "expand",
    "expand",
    "boolean",
    "Ask the configured language model for extra search strings when the plain results are "
    "weak (CLI --expand, language server `expand`).",
    False,
)

EDITOR_SETTINGS: tuple[Setting, ...] = (
    PATHS,
    EXCLUDE,
    TOP_K,
    WATCH,
    WORKSPACE_SYMBOLS,
    PREBUILT,
)
"""The language server's ``fisk`` section (besides ``embeddings``), in schema order."""

AGENT_ONLY: tuple[Setting, ...] = (MAX_INJECTED_TOKENS,)
AGENT_ONLY_EMBEDDINGS: tuple[Setting, ...] = (MAX_TOKENS,)
"""Settings only agent.yaml has (the tool's budget means nothing to an editor)."""


# -- checks -------------------------------------------------------------------------------------


def check_value(setting: Setting, value: object) -> str | None:
    """None when ``value`` fits ``setting``, else what is wrong ("expected …, got …")."""
    ok: bool
    if setting.kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif setting.kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif setting.kind == "boolean":
        ok = isinstance(value, bool)
    elif setting.kind == "string":
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if ok and isinstance(value, int | float):
        if setting.minimum is not None and value < setting.minimum:
            ok = False
        if setting.maximum is not None and value > setting.maximum:
            ok = False
    if ok and isinstance(value, str) and setting.max_length is not None:
        ok = len(value) <= setting.max_length
    if ok and setting.choices is not None:
        ok = value in setting.choices
    if ok:
        return None
    return f"expected {setting.limits()}, got {shown(value)}"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 60, 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4


def shown(value: object) -> str:
    """``value`` as an error message may quote it: a long string as its length, anything else a
    short repr (at most 2 levels, 4 items, 60 characters a string), so no message echoes a huge
    or deeply nested input back whole."""
    if isinstance(value, str) and len(value) > 80:
        return f"{len(value):,} characters"
    try:
        return _REPR.repr(value)[:100]
    except RecursionError:  # pragma: no cover - reprlib stops at maxlevel
        return type(value).__name__


def rule_condition(rule: dict[str, Any]) -> str:
    """The ``if`` of a rule in words: "provider builtin"."""
    return " and ".join(f"{k} {p['const']}" for k, p in rule["if"]["properties"].items())


def rule_needs(rule: dict[str, Any]) -> str:
    """What the ``else`` branch requires, or the condition: "baseUrl and model, or provider
    builtin"."""
    return f"{' and '.join(rule['else']['required'])}, or {rule_condition(rule)}"


def rule_problems(rule: dict[str, Any], value: dict[str, Any]) -> list[tuple[str | None, str]]:
    """What ``value`` (an object's given fields, wire names) breaks of ``rule``, as (field or
    None for the whole object, problem) pairs.

    The subset of JSON Schema the rule uses: ``if`` holds ``const`` properties that must all be
    given; ``then`` holds ``const ""`` properties (not used under the condition); ``else``
    holds ``required`` properties with ``minLength`` 1.
    """
    condition = rule["if"]
    if all(k in value for k in condition.get("required", ())) and all(
        value.get(k) == p["const"] for k, p in condition["properties"].items() if k in value
    ):
        unused = rule["then"].get("properties", {})
        return [
            (k, f"not used with {rule_condition(rule)}")
            for k, p in unused.items()
            if value.get(k) not in (None, p["const"])
        ]
    if any(value.get(k) in (None, "") for k in rule["else"].get("required", ())):
        needed = " and ".join(rule["else"]["required"])
        return [(None, f"{needed} are required, or {rule_condition(rule)}")]
    return []


def check_top_k(value: object, flag: str = "top_k") -> int | None:
    """A requested hit count: None (use the configured one) or 1–20; SettingError otherwise."""
    if value is None:
        return None
    if problem := check_value(TOP_K, value):
        raise SettingError(f"{flag}: {problem}")
    assert isinstance(value, int)
    return value


def check_query(value: object, name: str = "query") -> str:
    """A query string of at most 2,000 characters; SettingError otherwise.

    A blank query is allowed here (the search answers ``no_terms``); the model-facing tool
    additionally refuses it, so a model learns to send words.
    """
    if not isinstance(value, str):
        raise SettingError(f"{name}: expected a string")
    if problem := check_value(QUERY, value):
        raise SettingError(f"{name}: {problem}; shorten it")
    return value


def check_strings(
    setting: Setting, value: object, name: str, noun: str = "string", *, nul: bool = False
) -> tuple[str, ...]:
    """A request's list of strings (``setting``'s ``max_items`` and ``item_max_length``): None
    or a list; SettingError otherwise, naming the limit (``noun``: what one item is; ``nul``:
    a NUL byte is refused too, as agent.yaml refuses it in a path or name)."""
    if value is None:
        return ()
    most, longest = setting.max_items, setting.item_max_length
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise SettingError(f"{name}: expected a list of at most {most} strings, got {shown(value)}")
    if most is not None and len(value) > most:
        raise SettingError(f"{name}: at most {most} {noun}s, got {len(value)}")
    for i, text in enumerate(value):
        if longest is not None and len(text) > longest:
            raise SettingError(
                f"{name}[{i}]: expected a {noun} of at most {longest:,} characters, got "
                f"{len(text):,} characters; shorten it"
            )
        if nul and "\0" in text:
            raise SettingError(f"{name}[{i}]: contains a NUL byte (\\0), which no {noun} may hold")
    return tuple(value)


def check_also(value: object, name: str = "also") -> tuple[str, ...]:
    """Extra search strings: at most 4 of at most 2,000 characters each (blank ones are
    dropped: they find nothing)."""
    return tuple(v for v in check_strings(ALSO, value, name) if v.strip())


def check_scope(value: object, name: str = "paths") -> tuple[str, ...]:
    """A search's scope patterns: at most 16 of at most 1,000 characters each (an empty list
    is no scope)."""
    return check_strings(SCOPE, value, name, "path", nul=True)


def normal_tag(text: str) -> str:
    """A tag as the index stores it and a filter compares it: no leading ``#``, inner whitespace
    collapsed, case-folded ("#Getting Started" and "getting started" are one tag)."""
    return " ".join(text.strip().lstrip("#").split()).casefold()


def check_tags(value: object, name: str = "tags") -> tuple[str, ...]:
    """A search's tag filter: at most 16 tags of at most 100 characters each, returned as the
    index stores them (no leading ``#``, case-folded, blank ones and repeats dropped; an empty
    list is no filter)."""
    tags = [normal_tag(t) for t in check_strings(TAGS, value, name, "tag", nul=True)]
    return tuple(dict.fromkeys(t for t in tags if t))


def check_context(value: object, setting: Setting = SHOW_CONTEXT, name: str = "context") -> int:
    """A neighbour count (``setting``: the CLI's 0-5 or the tool's 0-2); None is 0."""
    if value is None:
        return 0
    if problem := check_value(setting, value):
        raise SettingError(f"{name}: {problem}")
    assert isinstance(value, int)
    return value


def resolve_top_k(value: int | None, default: int = TOP_K.default) -> int:
    """The hit count to use: ``value`` when given (checked), else ``default``."""
    checked = check_top_k(value)
    return default if checked is None else checked


# -- the JSON Schema ----------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The editors' ``fisk`` settings object as JSON Schema (draft 2020-12), camelCase names."""
    props: dict[str, Any] = {s.wire: s.json_schema() for s in EDITOR_SETTINGS}
    props["embeddings"] = {
        "type": "object",
        "description": "The optional vector tier; without it search is lexical (BM25) only.",
        "properties": {s.wire: s.json_schema() for s in EMBEDDINGS},
        **EMBEDDINGS_RULE,
    }
    props["expansion"] = {
        "type": "object",
        "description": "Question expansion: a language model writes extra search strings for a "
        "person's question (palette and picker searches, CLI --expand).",
        "properties": {s.wire: s.json_schema() for s in EXPANSION},
        **EXPANSION_RULE,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "fisk-ls settings",
        "description": (
            "The language server's `fisk` settings (initializationOptions and "
            "workspace/configuration). Generated from fisk_ls/knowledge/settings_schema.py; "
            "do not edit by hand. $defs holds the request limits and agent.yaml-only settings."
        ),
        "type": "object",
        "properties": props,
        "$defs": {
            "query": QUERY.json_schema(),
            "also": ALSO.json_schema(),
            "scope": SCOPE.json_schema(),
            "tags": TAGS.json_schema(),
            "showContext": SHOW_CONTEXT.json_schema(),
            "toolContext": TOOL_CONTEXT.json_schema(),
            **{s.wire: s.json_schema() for s in AGENT_ONLY},
        },
    }


def render_schema() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates settings.schema.json; ``--check`` exits 1 when it is stale."""
    args = sys.argv[1:] if argv is None else argv
    text = render_schema()
    if args == ["--write"]:
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        return 0
    if args == ["--check"]:
        stale = not SCHEMA_FILE.is_file() or SCHEMA_FILE.read_text(encoding="utf-8") != text
        if stale:
            print(f"{SCHEMA_FILE} is stale: python -m fisk_ls.knowledge.settings_schema --write")
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
