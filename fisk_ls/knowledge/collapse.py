"""Near-duplicate keys for search hits. Pure functions.

Versioned documentation keeps near-identical copies of a page (the PowerShell docs hold one per
Windows Server release, differing in link targets such as ``?view=windowsserver2019-ps`` or in a
link written as ``[text](url)`` in one copy and ``text (url)`` in another). Search shows such
copies as one hit with the other locations attached; two chunks are the same when their chunk
hashes are equal or their normalised text is: link targets and URLs dropped, case folded, runs
of anything but letters and digits collapsed to one space. The heading breadcrumb is part of the
text, so the same boilerplate under different headings (two cmdlets' "Inputs") stays apart.
"""

from __future__ import annotations

import hashlib
import re

_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")


def normalised(section: str, body: str) -> str:
    """The text two near-identical chunks share (see the module docstring)."""
    text = f"{section}\n{body}"
    text = _LINK_TARGET.sub("]", text)
    text = _URL.sub(" ", text)
    return _NON_WORD.sub(" ", text.casefold()).strip()


def text_key(section: str, body: str) -> str:
    """A short digest of ``normalised(section, body)``."""
    digest = hashlib.blake2b(normalised(section, body).encode(), digest_size=16)
    return "n:" + digest.hexdigest()
