"""git's glob pattern syntax, read into tokens for the matcher (wildmatch.py).

A pattern is read on its UTF-8 bytes: a byte matches itself, ``?`` any byte but ``/``,
``[...]`` the bytes of its class (ranges, ``!``/``^``, ``[:alpha:]`` and the other ASCII classes
git knows; never ``/``), ``*`` any run of bytes inside a name, ``**`` between slashes any number
of folders, ``\\`` escapes. A class left open, an unknown ``[:name:]`` or a trailing ``\\``
make git's matcher give up (``Broken``); unescaped trailing spaces of a line go (``trim``).
"""

from __future__ import annotations

import string

_SLASH, _STAR, _QUESTION, _BACKSLASH = ord("/"), ord("*"), ord("?"), ord("\\")
_OPEN, _CLOSE, _COLON, _DASH = ord("["), ord("]"), ord(":"), ord("-")

ANY_BYTE = -1
"""A ``*`` inside a name: any run of bytes (a name holds no ``/``)."""
SEP = -2
"""A ``/`` of the pattern (escaped or not) while it is being split into segments."""
GLOBSTAR = -3
"""A ``**`` that is a whole segment, while the pattern is being split."""

Token = int | bytes
"""A byte to match exactly (an int), a 256-entry table of the bytes a ``?`` or class accepts,
or ``ANY_BYTE``."""


def _ascii(test: str) -> bytes:
    return bytes(1 if c < 128 and chr(c) in test else 0 for c in range(256))


_CLASSES: dict[bytes, bytes] = {
    b"alnum": _ascii(string.ascii_letters + string.digits),
    b"alpha": _ascii(string.ascii_letters),
    b"blank": _ascii(" \t"),
    b"cntrl": bytes(1 if c < 32 or c == 127 else 0 for c in range(256)),
    b"digit": _ascii(string.digits),
    b"graph": bytes(1 if 33 <= c <= 126 else 0 for c in range(256)),
    b"lower": _ascii(string.ascii_lowercase),
    b"print": bytes(1 if 32 <= c <= 126 else 0 for c in range(256)),
    b"punct": _ascii(string.punctuation),
    b"space": _ascii(" \t\n\r"),
    b"upper": _ascii(string.ascii_uppercase),
    b"xdigit": _ascii(string.hexdigits),
}
"""git's ``[:name:]`` classes: ASCII only, as its ``sane_ctype`` table (``space``: " \\t\\n\\r")."""

_NOT_SLASH = bytes(0 if c == _SLASH else 1 for c in range(256))


class Broken(ValueError):
    """A pattern git's matcher abandons (it then matches nothing)."""


def encode(text: str) -> bytes:
    """``text`` as the file system's bytes (undecodable bytes come back as they were)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _class(body: bytes, start: int) -> tuple[bytes, int]:
    """The table of the class opening at ``body[start]`` (``[``) and the index after its ``]``:
    git's ``wildmatch`` read of it, step for step (a ``]`` first is a member; ``a-z`` a range
    unless the ``-`` ends the class; ``\\`` escapes; ``[:name:]``; never ``/``)."""
    n = len(body)
    p = start + 1
    if p < n and body[p] in (ord("!"), ord("^")):
        negated = True
        p += 1
    else:
        negated = False
    if p >= n:
        raise Broken("a '[' is never closed")
    member = bytearray(256)
    ch, prev = body[p], 0
    while True:
        if ch == _BACKSLASH:
            p += 1
            if p >= n:
                raise Broken("a '[' is never closed")
            ch = body[p]
            member[ch] = 1
        elif ch == _DASH and prev and p + 1 < n and body[p + 1] != _CLOSE:
            p += 1
            ch = body[p]
            if ch == _BACKSLASH:
                p += 1
                if p >= n:
                    raise Broken("a '[' is never closed")
                ch = body[p]
            for c in range(prev, ch + 1):
                member[c] = 1
            ch = 0
        elif ch == _OPEN and p + 1 < n and body[p + 1] == _COLON:
            end = body.find(b"]", p + 2)
            if end < 0:
                raise Broken("a '[' is never closed")
            if end - (p + 2) - 1 < 0 or body[end - 1] != _COLON:
                member[_OPEN] = 1  # not a [:name:]: the '[' is a member, read on after it
            else:
                name = body[p + 2 : end - 1]
                table = _CLASSES.get(name)
                if table is None:
                    raise Broken(f"[:{decode(name)}:] is not a character class")
                for c in range(256):
                    member[c] |= table[c]
                p, ch = end, 0
        else:
            member[ch] = 1
        prev = ch
        p += 1
        if p >= n:
            raise Broken("a '[' is never closed")
        ch = body[p]
        if ch == _CLOSE:
            break
    if negated:
        member = bytearray(1 - m for m in member)
    member[_SLASH] = 0
    return bytes(member), p + 1


def tokens(body: bytes, *, pathname: bool) -> list[Token]:
    """The tokens of ``body``: bytes, tables, ``ANY_BYTE``, and with ``pathname`` ``SEP`` and
    ``GLOBSTAR`` (a ``**`` after the start or a ``/`` and before the end or a ``/``: git's
    rule; any other run of ``*`` is one ``*``)."""
    out: list[Token] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == _BACKSLASH:
            if i + 1 >= n:
                raise Broken("it ends in a '\\'")
            c = body[i + 1]
            out.append(SEP if c == _SLASH and pathname else c)
            i += 2
        elif c == _SLASH and pathname:
            out.append(SEP)
            i += 1
        elif c == _QUESTION:
            out.append(_NOT_SLASH)
            i += 1
        elif c == _OPEN:
            table, i = _class(body, i)
            out.append(table)
        elif c == _STAR:
            j = i
            while j < n and body[j] == _STAR:
                j += 1
            after = body[j : j + 2]
            whole = (
                pathname
                and j - i >= 2
                and (i == 0 or body[i - 1] == _SLASH)
                and (j == n or after[:1] == b"/" or after == b"\\/")
            )
            if whole:
                out.append(GLOBSTAR)
            elif not out or out[-1] != ANY_BYTE:
                out.append(ANY_BYTE)
            i = j
        else:
            out.append(c)
            i += 1
    return out


def trim(line: str) -> str:
    """git's ``trim_trailing_spaces``: unescaped trailing spaces go (tabs stay)."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = 0
        while end - 1 - backslashes > 0 and line[end - 2 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]
