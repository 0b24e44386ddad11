"""The built-in embeddings provider: an ONNX sentence encoder run in this process.

onnxruntime + tokenizers + numpy (the ``embed`` extra), no torch and no server. Vectors
are the mean of the last hidden state over the attention mask, L2-normalised, with the input
truncated to ``max_tokens`` (sentence-transformers' recipe; identical to it for MiniLM).

Polite CPU use: documents are embedded on one worker thread whose scheduling priority is lowered
(``NICE`` on Linux, where niceness is per thread) before it creates its onnxruntime session, so
the session's intra-op threads inherit it; the session gets ``threads`` threads (default: all
cores but one) and does not spin. Queries use a second, single-threaded session at normal
priority on the caller's thread, so a search is never queued behind an indexing batch.

The model name (``model``) is ``builtin:NAME@SHA12``: the name and the first 12 hex digits of the
weights' SHA-256, so other weights (int8 vs fp32, a retrained model) never share vectors. A file
that cannot be loaded or even read (damaged, truncated, swapped for a FIFO after the check, the
runtime missing) is a load fault (``misconfigured=False``): :meth:`BuiltinEmbedder.verify` raises
it, so the vector-space check calls it a fault rather than a model switch, and a search degrades to
lexical with the reason.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import ConfigError, EmbeddingsError
from .models import (
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelFiles,
    ModelSpec,
    Progress,
    cache_dir,
    cached_files,
    check_model_dir,
    ensure_model,
    file_sha256,
    load_fault,
    offline_hint,
    packaged_files,
)

log = logging.getLogger(__name__)

BATCH_TOKENS = 512
"""Token budget of one onnxruntime call (texts × longest text, after sorting by length): short
chunks go many at a time, 256-token ones two at a time. Bounds peak memory at no cost in speed
(127 OTel chunks, bench/embed_speed.py --phase model: 512 tokens 306 MB peak RSS and 10.4 CPU s,
1024: 376 MB and 10.6 s, 2048: 551 MB and 12.7 s)."""
MAX_BATCH = 64
NICE = 10
"""How much lower the document worker's priority is than the process's."""
DEFAULT_MAX_TOKENS = 256
PROBE_TEXT = "dimension probe"
EXTRA_HINT = (
    "install the embed extra into fisk-ls's environment: pip install '.[embed]' in a fisk-ls "
    "checkout (pipx: pipx inject fisk-ls onnxruntime tokenizers)"
)


def default_threads() -> int:
    """All cores this process may use but one, at least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def lower_thread_priority(nice: int = NICE) -> bool:
    """Lower the calling thread's priority (Linux: per thread); False where unsupported."""
    if not sys.platform.startswith("linux") or nice <= 0:
        return False
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + nice))
    except OSError:
        return False
    return True


def trim_heap() -> None:
    """Return freed heap pages to the system (glibc's ``malloc_trim``; nothing elsewhere):
    onnxruntime's buffers are freed into malloc's arenas, which keep them otherwise."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # musl, or no libc.so.6
        pass


def _modules() -> tuple[Any, Any, Any]:
    # tokenizers would otherwise tokenize on a thread pool of its own at normal priority; the
    # model's cost dwarfs tokenizing, so one thread (the caller's) is enough.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise load_fault(
            f"embeddings provider builtin needs onnxruntime, tokenizers and numpy "
            f"({exc.name} is missing); {EXTRA_HINT}"
        ) from exc
    return np, ort, Tokenizer


def _first_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message as one short line (onnxruntime's run to several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


RUN_TOKENS = 8
"""What one more model run costs on the query session, in padded tokens (all-MiniLM-L6-v2 int8,
one thread: about 2.1 ms a run plus 0.24 ms a token, bench/tuning.md "Agent strings with hybrid
search: the embedding"): :func:`query_groups` pads a short string to a longer one only when that
wastes fewer tokens than a run of its own costs."""


def query_groups(lengths: Sequence[int], run_tokens: int = RUN_TOKENS) -> list[list[int]]:
    """Positions of ``lengths`` (token counts, in any order) grouped into model runs of the
    least cost, a run costing ``run_tokens`` plus its size times its longest length: the
    positions sorted by length, cut where that pays (exact, over every cut of the sorted
    order). Groups are in ascending length, each in ascending length."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    sizes = [max(lengths[i], 1) for i in order]
    # best[j]: the least cost of the first j sorted positions; cut[j]: where its last run starts
    best = [0] + [0] * len(order)
    cut = [0] * (len(order) + 1)
    for j in range(1, len(order) + 1):
        best[j], cut[j] = min((best[i] + run_tokens + (j - i) * sizes[j - 1], i) for i in range(j))
    groups: list[list[int]] = []
    j = len(order)
    while j > 0:
        groups.append(order[cut[j] : j])
        j = cut[j]
    return groups[::-1]


def batches(lengths: Sequence[int], budget: int, most: int = MAX_BATCH) -> list[list[int]]:
    """Consecutive positions of ascending ``lengths`` grouped so that each group's size times
    its longest length stays within ``budget`` (a group holds at least one, at most ``most``)."""
    groups: list[list[int]] = []
    current: list[int] = []
    for pos, length in enumerate(lengths):
        if current and ((len(current) + 1) * max(length, 1) > budget or len(current) >= most):
            groups.append(current)
            current = []
        current.append(pos)
    if current:
        groups.append(current)
    return groups


class BuiltinEmbedder:
    """Same surface as the OpenAI-compatible client: ``embed_documents``, ``embed_query``,
    ``probe_dimension``, ``close``. Loads nothing until first used; thread-safe."""

    def __init__(
        self,
        name: str,
        *,
        model_dir: Path | None = None,
        spec: ModelSpec | None = None,
        cache: Path | None = None,
        threads: int = 0,
        max_tokens: int = 0,
        query_prefix: str = "",
        document_prefix: str = "",
        batch_tokens: int = BATCH_TOKENS,
        nice: int = NICE,
        progress: Progress | None = None,
    ) -> None:
        if model_dir is None and spec is None:
            raise ConfigError("the builtin provider needs a model_path or a known model name")
        files: ModelFiles | None
        self._fault: str | None = None
        """Why the model file could not even be read: raised as a load fault when it is used."""
        if model_dir is not None:
            model_dir = check_model_dir(model_dir)
            onnx = model_dir / MODEL_FILE
            try:
                weights_sha256 = file_sha256(onnx)
            except OSError as exc:  # swapped for a FIFO, removed or unreadable since the check
                self._fault = f"cannot read {onnx}: {exc.strerror or exc}"
                weights_sha256 = "unreadable"
            files = ModelFiles(onnx, model_dir / TOKENIZER_FILE, weights_sha256, "model_path")
        else:
            assert spec is not None
            files = cached_files(spec, cache) or packaged_files(spec)
        weights = files.weights_sha256 if files is not None else spec.weights_sha256  # type: ignore[union-attr]
        default_tokens = spec.max_tokens if spec is not None else DEFAULT_MAX_TOKENS
        self.max_tokens = max_tokens or default_tokens
        tail = "" if self.max_tokens == default_tokens else f"/{self.max_tokens}"
        self.model = f"builtin:{name}@{weights[:12]}{tail}"
        self.name = name
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.threads = threads or default_threads()
        self.batch_tokens = max(1, batch_tokens)
        self.nice = nice
        self._files = files
        self._checked = False
        self._spec = spec
        self._cache = cache
        self._progress = progress
        self._lock = threading.Lock()
        self._query: tuple[Any, Any] | None = None  # (session, tokenizer)
        self._docs: tuple[Any, Any] | None = None
        self._dim: int | None = None
        self._worker: ThreadPoolExecutor | None = None
        self._pad_id = 0
        self._closed = False

    def __repr__(self) -> str:
        return f"BuiltinEmbedder(model={self.model!r}, threads={self.threads})"

    # -- public operations -------------------------------------------------------------------

    def embed_documents(
        self, texts: Sequence[str], titles: Sequence[str] | None = None
    ) -> list[list[float]]:
        """Unit vectors for chunks, in input order (computed on the low-priority worker)."""
        if titles is not None and len(titles) != len(texts):
            raise ValueError(f"{len(titles)} titles for {len(texts)} texts")
        inputs = [
            self._document_input(t, titles[i] if titles is not None else "")
            for i, t in enumerate(texts)
        ]
        if not inputs:
            return []
        future = self._pool().submit(self._embed_on_worker, inputs)
        return future.result()

    def embed_query(self, text: str) -> list[float]:
        query = text.strip()
        if not query:
            raise ValueError("query is empty")
        session, tokenizer = self._query_parts()
        return self._run(session, [tokenizer.encode(self.query_prefix + query)])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for several queries, in order. Strings of similar length share a model
        run and others get their own (:func:`query_groups`): a padded batch spends the model's
        time on its short strings' padding (a question of 13 tokens beside agent strings of 40)."""
        queries = [t.strip() for t in texts]
        if not all(queries):
            raise ValueError("a query is empty")
        session, tokenizer = self._query_parts()
        encoded = tokenizer.encode_batch([self.query_prefix + q for q in queries])
        out: list[list[float]] = [[] for _ in queries]
        for group in query_groups([len(e.ids) for e in encoded]):
            for i, vec in zip(group, self._run(session, [encoded[i] for i in group]), strict=True):
                out[i] = vec
        return out

    def ready(self) -> bool:
        """The query session is loaded: a query embeds in milliseconds on this machine, with no
        load or download first, so a search may embed it while it holds its read snapshot
        (query_vectors.embeds_beside)."""
        with self._lock:
            return self._query is not None and not self._closed

    def probe_dimension(self) -> int:
        """The vector length: one probe at normal priority on the caller's thread (a lowered
        worker can starve on a busy machine, and the probe runs before any file is written).
        Uses the query session when it is loaded, else a short-lived one."""
        with self._lock:
            query = self._query
        if self._dim is None:
            session, tokenizer = query or self._load(1)
            self._dim = len(self._run(session, [tokenizer.encode(PROBE_TEXT)])[0])
        return self._dim

    def release_documents(self) -> None:
        """The backlog is empty: free the indexing session and give the heap back (about 300
        MB of the language server's RSS, bench/lsp_embed.py); the next batch of documents loads
        it again (a fraction of a second). Queries keep their own session."""
        with self._lock:
            worker = None if self._closed else self._worker
        if worker is not None:
            worker.submit(self._drop_documents).result()

    def _drop_documents(self) -> None:
        self._docs = None  # on the worker: the only thread that uses it
        gc.collect()
        trim_heap()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            worker, self._worker = self._worker, None
            self._query = self._docs = None
        if worker is not None:
            worker.shutdown(wait=True)

    # -- loading -----------------------------------------------------------------------------

    def model_files(self) -> ModelFiles:
        """The model's files, downloaded into the user cache on first use if needed, and
        checked against their pinned SHA-256 (packaged files) once. A model file that could
        not be read is a load fault here."""
        if self._fault is not None:
            raise load_fault(self._fault)
        if self._files is None:
            assert self._spec is not None
            directory = ensure_model(self._spec, self._cache, self._progress)
            self._files = ModelFiles(
                directory / MODEL_FILE,
                directory / TOKENIZER_FILE,
                self._spec.weights_sha256,
                "cache",
            )
        if not self._checked:
            self._files.verify()
            self._checked = True
        return self._files

    def describe_files(self) -> str:
        """Which model files are used and from where (doctor, stats); no download, no load."""
        if self._files is not None:
            return self._files.describe()
        assert self._spec is not None
        names = " and ".join(f.name for f in self._spec.files)
        return (
            f"not downloaded yet: {names} are fetched into {cache_dir(self._spec, self._cache)} "
            f"on first use ({offline_hint(self._spec)})"
        )

    def verify(self) -> None:
        """Load the model (the query session): its load error, if any, is raised. The vector-space
        check calls this before it reports another model (space.require_match)."""
        self._query_parts()

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._closed:
                raise EmbeddingsError("permanent", "the builtin embedder was closed")
            if self._worker is None:
                self._worker = ThreadPoolExecutor(
                    max_workers=1,
                    thread_name_prefix="fisk-embed",
                    initializer=lower_thread_priority,
                    initargs=(self.nice,),
                )
            return self._worker

    def _load(self, threads: int) -> tuple[Any, Any]:
        _, ort, Tokenizer = _modules()
        files = self.model_files()
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(files.model), so, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types
            raise load_fault(f"cannot load {files.model}: {_first_line(exc)}") from exc
        try:
            tokenizer = Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:
            raise load_fault(f"cannot load {files.tokenizer}: {_first_line(exc)}") from exc
        tokenizer.no_padding()  # batches are padded here, to their own longest text
        tokenizer.enable_truncation(max_length=self.max_tokens)
        pad = tokenizer.token_to_id("[PAD]")
        self._pad_id = int(pad) if pad is not None else 0
        return session, tokenizer

    def _query_parts(self) -> tuple[Any, Any]:
        with self._lock:
            if self._query is None:
                self._query = self._load(1)
            return self._query

    def _embed_on_worker(self, inputs: list[str]) -> list[list[float]]:
        if self._docs is None:
            self._docs = self._load(self.threads)  # here, so its threads inherit the priority
        session, tokenizer = self._docs
        encoded = tokenizer.encode_batch(inputs)
        order = sorted(range(len(inputs)), key=lambda i: len(encoded[i].ids))
        out: list[list[float]] = [[] for _ in inputs]
        for part in batches([len(encoded[i].ids) for i in order], self.batch_tokens):
            idx = [order[j] for j in part]
            for i, vec in zip(idx, self._run(session, [encoded[i] for i in idx]), strict=True):
                out[i] = vec
        return out

    # -- inference ---------------------------------------------------------------------------

    def _run(self, session: Any, encoded: list[Any]) -> list[list[float]]:
        np, _, _ = _modules()
        width = max(len(e.ids) for e in encoded)
        ids = np.full((len(encoded), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        names = {i.name for i in session.get_inputs()}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        try:
            hidden = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
        except Exception as exc:
            raise EmbeddingsError("permanent", f"the model failed to run: {exc}") from exc
        if hidden.ndim == 3:  # last hidden state: mean over the real tokens
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        else:  # the model pools itself
            pooled = hidden
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        if not np.all(np.isfinite(pooled)) or np.any(norms == 0):
            raise EmbeddingsError(
                "invalid_response", "the model returned a zero or non-finite vector"
            )
        result: list[list[float]] = (pooled / norms).astype(np.float32).tolist()
        return result

    def _document_input(self, text: str, title: str) -> str:
        if not self.document_prefix:
            return text
        return self.document_prefix.replace("{title}", title if title.strip() else "none") + text
