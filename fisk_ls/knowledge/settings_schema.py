"""The settings contract: every setting, its limits and default, defined once.

agent.yaml (``config.py``), the language server's options (``lsp/options.py``), the CLI's flags,
the ``knowledge_search`` tool and MCP all read their limits from here. ``settings_checks.py``
checks a value against a setting (one behaviour per boundary, described there);
``settings_json.py`` exports the contract as ``settings.schema.json`` beside this file (``python -m
fisk_ls.knowledge.settings_schema --write``; a test fails when the checked-in file is stale), which
VS Code's ``package.json`` states for its settings editor (``scripts/editor_contracts.py`` checks
that the two agree). The editors validate nothing of it: they send their settings and show the
language server's message.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

Kind = Literal["integer", "number", "string", "boolean", "array"]


class Setting(NamedTuple):
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
written: the schema file carries it (VS Code's settings editor shows it) and
``settings_checks.rule_problems`` applies it to the language server's options and to agent.yaml
(``config.py``), each in its own spelling."""

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


if __name__ == "__main__":  # pragma: no cover - ``python -m fisk_ls.knowledge.settings_schema``
    from .settings_json import main

    raise SystemExit(main())
