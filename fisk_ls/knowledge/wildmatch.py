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
``**/*?*?*?…x`` and holds the GIL meanwhile (SECURITY.md). Reading a pattern into tokens is
glob_syntax.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .glob_syntax import ANY_BYTE, GLOBSTAR, SEP, Broken, Token, decode, encode, tokens, trim

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
        stars = toks.count(ANY_BYTE)
        kind, text = _GENERAL, ""
        if len(literal) == len(toks):
            kind = _LITERAL
        elif stars == 1 and len(literal) == len(toks) - 1:
            kind = {0: _SUFFIX, len(toks) - 1: _PREFIX}.get(toks.index(ANY_BYTE), _GENERAL)
            kind = _ANY if len(toks) == 1 else kind
        if kind != _GENERAL:
            text = decode(bytes(t for t in literal if isinstance(t, int)))
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
        return kind == _ANY or _scan_bytes(self.tokens, encode(name), self.need)[0]

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
        return _scan_bytes(self.tokens, encode(name), self.need)

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
        return decode(bytes(lead)), decode(bytes(reversed(tail)))


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
            if tok == ANY_BYTE:
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
    while p < m and tokens[p] == ANY_BYTE:
        steps += 1
        p += 1
    return p == m, steps + 1


_ANY_NAME = _Segment((ANY_BYTE,))
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
    for tok in [*tokens, SEP]:
        if tok != SEP:
            current.append(tok)
            continue
        if current == [GLOBSTAR]:
            if not units or units[-1] is not None:  # "a/**/**/b" is "a/**/b"
                units.append(None)
        else:
            units.append(_Segment(tuple(current)))
        current = []
    if units and units[-1] is None:
        units[-1:] = [_ANY_NAME, None]  # "a/**" is what is inside a, not a itself; "**" one name+
    return tuple(units)


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
    text = trim(line)
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    if not body:
        return None
    raw = encode(body)
    broken: str | None = None
    name: _Segment | None = None
    units: tuple[Unit, ...] = ()
    try:
        if b"/" not in raw:
            name = _Segment(tuple(tokens(raw, pathname=False)))
        else:
            units = _split(tokens(raw[1:] if raw.startswith(b"/") else raw, pathname=True))
            if len(units) == 2 and units[0] is None and units[1] is not None:
                name, units = units[1], ()  # "**/x" is "x" at any depth
    except Broken as err:
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
