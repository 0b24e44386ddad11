"""Git's glob patterns matched in linear time: .gitignore, .fiskignore, ``exclude`` and scopes.

A line is read as git reads a line of an ignore file (``#`` starts a comment, unescaped trailing
spaces go, ``!`` negates, one trailing ``/`` asks for a folder, a pattern with no other ``/``
matches a name at any depth, one with a ``/`` is anchored at its base) and matched as git's
``wildmatch`` with ``WM_PATHNAME`` would, on the path's UTF-8 bytes: ``*``, ``?`` and ``[...]``
(ranges, ``!``/``^``, ``[:alpha:]`` and the other classes) never match ``/``; ``**`` between
slashes is any number of folders, at the end everything inside; ``\\`` escapes. A class left
open, an unknown ``[:name:]`` or a trailing ``\\`` makes git's matcher give up: such a pattern
matches nothing (:attr:`Glob.broken` says why).

Nothing here backtracks. A path is split at ``/`` and the pattern's segments are matched against
its names with the classic wildcard scan, which, on a mismatch, only goes back to the last
``**`` (and inside a name to the last ``*``): that is enough because every other segment matches
exactly one name and every other token exactly one byte. One match therefore costs at most
about ``len(pattern) × len(path)`` steps whatever the pattern (:meth:`Glob.cost` counts them);
a pattern needing more names or bytes than the path has is refused before any step. Python's
``re``, which these patterns used to be compiled into, takes exponential time on
``**/*?*?*?…x`` and holds the GIL meanwhile (SECURITY.md).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass, field

_SLASH, _STAR, _QUESTION, _BACKSLASH = ord("/"), ord("*"), ord("?"), ord("\\")
_OPEN, _CLOSE, _COLON, _DASH = ord("["), ord("]"), ord(":"), ord("-")

_ANY_BYTE = -1
"""A ``*`` inside a name: any run of bytes (a name holds no ``/``)."""
_SEP = -2
"""A ``/`` of the pattern (escaped or not) while it is being split into segments."""
_GLOBSTAR = -3
"""A ``**`` that is a whole segment, while the pattern is being split."""

Token = int | bytes
"""A byte to match exactly (an int), a 256-entry table of the bytes a ``?`` or class accepts,
or ``_ANY_BYTE``."""


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


class _Broken(ValueError):
    """A pattern git's matcher abandons (it then matches nothing)."""


def _bytes(text: str) -> bytes:
    """``text`` as the file system's bytes (undecodable bytes come back as they were)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _text(data: bytes) -> str:
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
        raise _Broken("a '[' is never closed")
    member = bytearray(256)
    ch, prev = body[p], 0
    while True:
        if ch == _BACKSLASH:
            p += 1
            if p >= n:
                raise _Broken("a '[' is never closed")
            ch = body[p]
            member[ch] = 1
        elif ch == _DASH and prev and p + 1 < n and body[p + 1] != _CLOSE:
            p += 1
            ch = body[p]
            if ch == _BACKSLASH:
                p += 1
                if p >= n:
                    raise _Broken("a '[' is never closed")
                ch = body[p]
            for c in range(prev, ch + 1):
                member[c] = 1
            ch = 0
        elif ch == _OPEN and p + 1 < n and body[p + 1] == _COLON:
            end = body.find(b"]", p + 2)
            if end < 0:
                raise _Broken("a '[' is never closed")
            if end - (p + 2) - 1 < 0 or body[end - 1] != _COLON:
                member[_OPEN] = 1  # not a [:name:]: the '[' is a member, read on after it
            else:
                name = body[p + 2 : end - 1]
                table = _CLASSES.get(name)
                if table is None:
                    raise _Broken(f"[:{_text(name)}:] is not a character class")
                for c in range(256):
                    member[c] |= table[c]
                p, ch = end, 0
        else:
            member[ch] = 1
        prev = ch
        p += 1
        if p >= n:
            raise _Broken("a '[' is never closed")
        ch = body[p]
        if ch == _CLOSE:
            break
    if negated:
        member = bytearray(1 - m for m in member)
    member[_SLASH] = 0
    return bytes(member), p + 1


def _tokens(body: bytes, *, pathname: bool) -> list[Token]:
    """The tokens of ``body``: bytes, tables, ``_ANY_BYTE``, and with ``pathname`` ``_SEP`` and
    ``_GLOBSTAR`` (a ``**`` after the start or a ``/`` and before the end or a ``/``: git's
    rule; any other run of ``*`` is one ``*``)."""
    out: list[Token] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == _BACKSLASH:
            if i + 1 >= n:
                raise _Broken("it ends in a '\\'")
            c = body[i + 1]
            out.append(_SEP if c == _SLASH and pathname else c)
            i += 2
        elif c == _SLASH and pathname:
            out.append(_SEP)
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
                out.append(_GLOBSTAR)
            elif not out or out[-1] != _ANY_BYTE:
                out.append(_ANY_BYTE)
            i = j
        else:
            out.append(c)
            i += 1
    return out


_LITERAL, _SUFFIX, _PREFIX, _ANY, _GENERAL = range(5)


@dataclass(frozen=True, slots=True)
class _Segment:
    """The pattern for one name (no ``/``); the common shapes are compared as strings."""

    tokens: tuple[Token, ...]
    kind: int = field(init=False)
    text: str = field(init=False)
    """The literal (``_LITERAL``), the end (``_SUFFIX``, ``*.md``) or the start (``_PREFIX``)."""
    need: int = field(init=False)
    """Bytes a name needs at least (every token but ``*`` takes one)."""

    def __post_init__(self) -> None:
        toks = self.tokens
        literal = [t for t in toks if isinstance(t, int) and t >= 0]
        stars = toks.count(_ANY_BYTE)
        kind, text = _GENERAL, ""
        if len(literal) == len(toks):
            kind = _LITERAL
        elif stars == 1 and len(literal) == len(toks) - 1:
            kind = {0: _SUFFIX, len(toks) - 1: _PREFIX}.get(toks.index(_ANY_BYTE), _GENERAL)
            kind = _ANY if len(toks) == 1 else kind
        if kind != _GENERAL:
            text = _text(bytes(t for t in literal if isinstance(t, int)))
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "need", len(toks) - stars)

    def test(self, name: str) -> bool:
        """Does the name match (:meth:`match` without counting)?"""
        kind = self.kind
        if kind == _LITERAL:
            return name == self.text
        if kind == _SUFFIX:
            return name.endswith(self.text)
        if kind == _PREFIX:
            return name.startswith(self.text)
        return kind == _ANY or _scan_bytes(self.tokens, _bytes(name), self.need)[0]

    def anywhere(self, path: str, last: bool) -> bool | None:
        """Does a folder name of ``path`` match, or with ``last`` its last name? Answered with
        string searches for the literal shapes; None for the others (scan the names)."""
        kind, t = self.kind, self.text
        if kind == _SUFFIX:
            return (last and path.endswith(t)) or (t + "/") in path
        if kind == _LITERAL:
            if last and (path == t or path.endswith("/" + t)):
                return True
            return path.startswith(t + "/") or ("/" + t + "/") in path
        if kind == _PREFIX:
            if last and path[path.rfind("/") + 1 :].startswith(t):
                return True
            if path.startswith(t) and "/" in path:
                return True
            i = path.find("/" + t)  # the first name starting with t after the first
            return i >= 0 and path.find("/", i + 1) >= 0
        if kind == _ANY:
            return last or "/" in path
        return None

    def match(self, name: str) -> tuple[bool, int]:
        """Does the name match, and in how many steps."""
        kind = self.kind
        if kind == _LITERAL:
            return name == self.text, 1
        if kind == _SUFFIX:
            return name.endswith(self.text), 1
        if kind == _PREFIX:
            return name.startswith(self.text), 1
        if kind == _ANY:
            return True, 1
        return _scan_bytes(self.tokens, _bytes(name), self.need)

    def ends(self) -> tuple[str, str]:
        """The literal text every matching name starts with, and the one it ends with."""
        lead = []
        for t in self.tokens:
            if not isinstance(t, int) or t < 0:
                break
            lead.append(t)
        tail = []
        for t in reversed(self.tokens):
            if not isinstance(t, int) or t < 0:
                break
            tail.append(t)
        return _text(bytes(lead)), _text(bytes(reversed(tail)))


def _scan_bytes(tokens: tuple[Token, ...], text: bytes, need: int) -> tuple[bool, int]:
    """The wildcard scan of one name: on a mismatch, back to the last ``*`` only, one byte
    further. Every (token, byte) pair is visited at most once: O(len(tokens) × len(text))."""
    if need > len(text):
        return False, 1
    p = t = steps = 0
    star, mark = -1, 0
    m, n = len(tokens), len(text)
    while t < n:
        steps += 1
        if p < m:
            tok = tokens[p]
            if tok == _ANY_BYTE:
                star, mark = p, t
                p += 1
                continue
            if (tok == text[t]) if isinstance(tok, int) else tok[text[t]]:
                p += 1
                t += 1
                continue
        if star < 0:
            return False, steps
        p, mark = star + 1, mark + 1
        t = mark
    while p < m and tokens[p] == _ANY_BYTE:
        steps += 1
        p += 1
    return p == m, steps + 1


_ANY_NAME = _Segment((_ANY_BYTE,))
Unit = _Segment | None
"""A segment of a pattern with a ``/``: a name's pattern, or None for ``**`` (any names)."""


def _scan_names(units: tuple[Unit, ...], names: list[str], need: int) -> tuple[bool, int]:
    """The same scan one level up: ``**`` (None) takes any number of names, every other
    segment exactly one; on a mismatch, back to the last ``**`` only, one name further."""
    if need > len(names):
        return False, 1
    p = t = steps = 0
    star, mark = -1, 0
    m, n = len(units), len(names)
    while t < n:
        steps += 1
        if p < m:
            unit = units[p]
            if unit is None:
                star, mark = p, t
                p += 1
                continue
            ok, cost = unit.match(names[t])
            steps += cost
            if ok:
                p += 1
                t += 1
                continue
        if star < 0:
            return False, steps
        p, mark = star + 1, mark + 1
        t = mark
    while p < m and units[p] is None:
        steps += 1
        p += 1
    return p == m, steps + 1


def _split(tokens: list[Token]) -> tuple[Unit, ...]:
    """Tokens of a pattern with a ``/`` → its segments (a trailing ``**``: one name or more)."""
    units: list[Unit] = []
    current: list[Token] = []
    for tok in [*tokens, _SEP]:
        if tok != _SEP:
            current.append(tok)
            continue
        if current == [_GLOBSTAR]:
            if not units or units[-1] is not None:  # "a/**/**/b" is "a/**/b"
                units.append(None)
        else:
            units.append(_Segment(tuple(current)))
        current = []
    if units and units[-1] is None:
        units[-1:] = [_ANY_NAME, None]  # "a/**" is what is inside a, not a itself; "**" one name+
    return tuple(units)


def _trim(line: str) -> str:
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


@dataclass(frozen=True, slots=True, eq=False)
class Glob:
    """One pattern, parsed once (:func:`parse`); paths it is asked about are relative to its
    base, ``/``-separated, without a leading or trailing ``/``."""

    line: str
    negated: bool
    dir_only: bool
    """A trailing ``/``: only folders match (a file below one still does for :meth:`within`)."""
    broken: str | None
    """Why git's matcher gives up on this pattern (it matches nothing); None when it does not."""
    name: _Segment | None
    """The pattern of a last name, for a pattern without ``/`` (or ``**/`` and one name)."""
    units: tuple[Unit, ...]
    """The segments of any other pattern."""
    _need: int = field(init=False)
    _inside: tuple[Unit, ...] = field(init=False)
    """The segments matching below a folder the pattern matches (``a`` → ``a/**``)."""
    _inside_need: int = field(init=False)
    _path: str | None = field(init=False)
    """The path, for a pattern of literal names only (``/content/en``)."""

    def __post_init__(self) -> None:
        inside = (*self.units, _ANY_NAME, None)
        object.__setattr__(self, "_need", sum(u is not None for u in self.units))
        object.__setattr__(self, "_inside", inside)
        object.__setattr__(self, "_inside_need", sum(u is not None for u in inside))
        literal = self.name is None and all(
            u is not None and u.kind == _LITERAL for u in self.units
        )
        path = "/".join(u.text for u in self.units if u is not None) if literal else None
        object.__setattr__(self, "_path", path)

    def matches(self, path: str, is_dir: bool) -> bool:
        """Does the pattern match ``path`` itself (git's verdict on one entry of a walk)?"""
        if self.broken is not None or (self.dir_only and not is_dir):
            return False
        if self.name is not None:
            return self.name.test(path[path.rfind("/") + 1 :])
        if self._path is not None:
            return path == self._path
        return _scan_names(self.units, path.split("/"), self._need)[0]

    def within(self, path: str, is_dir: bool = False) -> bool:
        """Does it match ``path`` or a folder above it (a scope: everything below a folder)?"""
        if (lit := self._path) is not None:  # the commonest scope: a folder or a file
            if not path.startswith(lit):
                return False
            end = len(lit)
            return path[end : end + 1] == "/" or (
                len(path) == end and (not self.dir_only or is_dir)
            )
        if self.broken is not None:
            return False
        last = not self.dir_only or is_dir
        if self.name is not None and (found := self.name.anywhere(path, last)) is not None:
            return found
        return self._match(path, is_dir, within=True)[0]

    def cost(self, path: str, is_dir: bool = False, *, within: bool = False) -> int:
        """The steps one match takes: a deterministic measure of its work, at most about
        ``len(pattern) × len(path)``."""
        return self._match(path, is_dir, within=within)[1]

    def _match(self, path: str, is_dir: bool, *, within: bool) -> tuple[bool, int]:
        if self.broken is not None:
            return False, 1
        last = not self.dir_only or is_dir
        if self.name is not None and not within:
            return self.name.match(path[path.rfind("/") + 1 :]) if last else (False, 1)
        names = path.split("/")
        if self.name is not None:
            steps = 0
            for name in names[:-1] if within else ():
                ok, cost = self.name.match(name)
                steps += cost
                if ok:
                    return True, steps
            if not last:
                return False, steps + 1
            ok, cost = self.name.match(names[-1])
            return ok, steps + cost
        ok, steps = _scan_names(self.units, names, self._need) if last else (False, 1)
        if ok or not within:
            return ok, steps
        ok, more = _scan_names(self._inside, names, self._inside_need)
        return ok, steps + more

    def ends(self) -> tuple[str, str, bool]:
        """(literal start, literal end, of the last name?): the text every match has, for a
        quick test before the scan (a pattern on the whole path: its anchored start)."""
        if self.name is not None:
            lead, tail = self.name.ends()
            return lead, tail, True
        starts: list[str] = []
        for unit in self.units:
            if unit is None:
                break
            starts.append(unit.ends()[0])
            if unit.kind != _LITERAL:
                break
        return "/".join(starts), "", False


def parse(line: str) -> Glob | None:
    """``line`` as git reads a line of an ignore file; None for a blank line or a comment."""
    if not line or line.startswith("#"):
        return None
    text = _trim(line)
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    if not body:
        return None
    raw = _bytes(body)
    broken: str | None = None
    name: _Segment | None = None
    units: tuple[Unit, ...] = ()
    try:
        if b"/" not in raw:
            name = _Segment(tuple(_tokens(raw, pathname=False)))
        else:
            units = _split(_tokens(raw[1:] if raw.startswith(b"/") else raw, pathname=True))
            if len(units) == 2 and units[0] is None and units[1] is not None:
                name, units = units[1], ()  # "**/x" is "x" at any depth
    except _Broken as err:
        broken = str(err)
    return Glob(line, negated, dir_only, broken, name, units or (_ANY_NAME,))


class Globs:
    """Patterns in file order: the last one matching an entry decides (negations included), as
    in git; a quick test of the literal text each needs skips most entries at once."""

    def __init__(self, globs: Iterable[Glob]) -> None:
        self.globs = tuple(globs)
        self._last_first = tuple(reversed(self.globs))
        name_ends: list[str] = []
        name_starts: list[str] = []
        path_starts: list[str] = []
        self._always = False
        for g in self.globs:
            if g.broken is not None:
                continue
            lead, tail, of_name = g.ends()
            if of_name and tail and len(tail) >= len(lead):
                name_ends.append(tail)
            elif of_name and lead:
                name_starts.append(lead)
            elif not of_name and lead:
                path_starts.append(lead)
            else:
                self._always = True
        self._name_ends = tuple(name_ends)
        self._name_starts = tuple(name_starts)
        self._path_starts = tuple(path_starts)

    @classmethod
    def of(cls, lines: Iterable[str]) -> Globs:
        """The patterns of ``lines`` (blank lines and comments dropped)."""
        return cls(g for line in lines if (g := parse(line)) is not None)

    def _may_match(self, path: str) -> bool:
        if self._always:
            return True
        name = path[path.rfind("/") + 1 :]
        return (
            name.endswith(self._name_ends)
            or name.startswith(self._name_starts)
            or path.startswith(self._path_starts)
        )

    def last_match(self, path: str, is_dir: bool) -> Glob | None:
        """The last pattern matching ``path`` itself (None: none does)."""
        if not self._may_match(path):
            return None
        for g in self._last_first:
            if g.matches(path, is_dir):
                return g
        return None

    def any_within(self, path: str, is_dir: bool = False) -> bool:
        """Does any pattern match ``path`` or a folder above it (negations are not read)?"""
        if len(self.globs) == 1:  # the usual scope: spare the generator
            return self.globs[0].within(path, is_dir)
        return any(g.within(path, is_dir) for g in self.globs)
