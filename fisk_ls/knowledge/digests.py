"""The digests a search takes (the store's name, a body's key, a near-duplicate key), without
importing ``hashlib``: hashlib loads OpenSSL's libcrypto when it is imported (about 2 ms of a
whole-process search), for digests CPython also builds in. ``blake2b`` is hashlib's own (it is
always the built-in one); SHA-256 is the built-in module's where the interpreter has it, else
hashlib's. The bytes are the same either way."""

from __future__ import annotations

import contextlib
import importlib
from _blake2 import blake2b

__all__ = ["blake2b", "sha256_hex"]


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex; for short data (a path): the built-in module is about ten
    times slower than OpenSSL's on a file's bytes."""
    for builtin in ("_sha2", "_sha256"):  # the built-in module's name from 3.12, before it
        with contextlib.suppress(ImportError):
            return str(importlib.import_module(builtin).sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()
