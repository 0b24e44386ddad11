"""The glob matcher (wildmatch.py): git's verdicts on generated patterns and trees, and a cost
that grows linearly with the pattern and the path, whatever the pattern (Python's ``re``, which
the patterns were compiled into before, took exponential time on ``**/*?*?…x``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import IgnoreRules
from fisk_ls.knowledge.scope import Scope
from fisk_ls.knowledge.settings_checks import SettingError
from fisk_ls.knowledge.wildmatch import Glob, Globs, parse
from tests.support.git_repo import git, needs_git, touch


def glob(line: str) -> Glob:
    g = parse(line)
    assert g is not None
    return g


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.md", "a/b.md", False, True),
        ("/a", "b/a", False, False),
        ("a/*", "a/b/c", False, False),
        ("a/**", "a", True, False),
        ("a/**", "a/b/c", False, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("a/**/b", "a/xb", False, False),
        ("**/b", "b", False, True),
        ("a**b", "a/x/b", False, False),  # not between slashes: one '*'
        ("a/**b", "a/x/b", False, False),
        ("doc/", "doc", False, False),
        ("doc/", "x/doc", True, True),
        ("?", "é", False, False),  # one byte, as git: é is two
        ("??", "é", False, True),
        ("[!a]", "/", False, False),
        ("[]a]", "]", False, True),
        ("[a-c-e]", "-", False, True),
        ("[a-c-e]", "d", False, False),
        ("[[:alpha:]][[:digit:]]", "a1", False, True),
        ("[[:alpha:]", "[", False, False),  # not a class name: '[' ':' 'a' ... then no ']'
        ("\\[a]", "[a]", False, True),
        ("\\!x", "!x", False, True),
        ("a\\ ", "a ", False, True),
        ("a ", "a", False, True),
        ("*", "a/b", False, True),
        ("/**", "a/b", False, True),
    ],
)
def test_git_wildmatch_cases(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    assert glob(pattern).matches(path, is_dir) is expected


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a[bc", "never closed"),
        ("[!", "never closed"),
        ("a[[:letters:]]", "not a character class"),
        ("a\\", "ends in"),
    ],
)
def test_a_pattern_git_gives_up_on_matches_nothing(pattern: str, reason: str) -> None:
    g = glob(pattern)
    assert g.broken is not None and reason in g.broken
    assert not g.matches(pattern, False) and not g.within("a/b", True)


def test_scope_refuses_a_broken_pattern_by_name() -> None:
    with pytest.raises(SettingError, match=r"paths: 'docs/\[draft' .*never closed"):
        Scope.build(["docs/[draft"])


def test_blank_lines_and_comments_are_not_patterns() -> None:
    assert parse("") is None and parse("# note") is None and parse("   ") is None
    assert parse("!") is None and parse("/") is None
    assert glob(" #x").matches(" #x", False)  # only a '#' first starts a comment
    assert [g.line for g in Globs.of(["a", "", "#b", "!c"]).globs] == ["a", "!c"]


# -- the same verdicts as git on generated patterns and trees --------------------------------

FOLDERS = ("a", "b", "dé", "x[1]", "ab.d")
FILES = ("a.md", "b.txt", "ab", "é.md", "x*y", "[a]", "a b", "c")
"""Folder and file names never coincide, so any generated set of paths is a tree."""

SEGMENTS = st.sampled_from(
    [
        "a",
        "b",
        "ab",
        "c",
        "*",
        "**",
        "***",
        "?",
        "??",
        "a*",
        "*b",
        "*.md",
        "?.md",
        "[ab]",
        "[!a]*",
        "[a-c]?",
        "[^b]",
        "\\[a]",
        "x\\[1]",
        "x[[]1]",
        "*?*",
        "[[:alpha:]]*",
        "[[:digit:]]]",
        "é*",
        "d?",
        "x*",
        "[]a]",
        "a\\ b",
        "a b",
        "*[1]",
        "[a",
        "[[:bogus:]]",
        "\\*",
        "x\\*y",
    ]
)
PATTERNS = st.builds(
    lambda neg, anchor, segs, slash: (
        ("!" if neg else "") + ("/" if anchor else "") + "/".join(segs) + ("/" if slash else "")
    ),
    st.booleans(),
    st.booleans(),
    st.lists(SEGMENTS, min_size=1, max_size=4),
    st.booleans(),
)
PATHS = st.builds(
    lambda folders, name: "/".join([*folders, name]),
    st.lists(st.sampled_from(FOLDERS), max_size=3),
    st.sampled_from(FILES),
)


def git_verdicts(repo: Path, paths: list[str]) -> dict[str, bool]:
    """Is each path ignored, says ``git check-ignore`` (its last matching pattern, a folder
    above included; a ``!`` pattern re-includes)."""
    args = ("check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
    out = git(repo, *args, stdin="\0".join(paths), check=False)
    fields = out.split("\0")
    verdicts = {}
    for i in range(0, len(fields) - 1, 4):
        _source, _line, pattern, path = fields[i : i + 4]
        verdicts[path] = bool(pattern) and not pattern.startswith("!")
    return verdicts


@pytest.mark.slow
@needs_git
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    patterns=st.lists(PATTERNS, min_size=1, max_size=4),
    files=st.lists(PATHS, min_size=1, max_size=8, unique=True),
)
def test_generated_patterns_agree_with_git_check_ignore(
    tmp_path_factory: pytest.TempPathFactory, git_env: Path, patterns: list[str], files: list[str]
) -> None:
    repo = tmp_path_factory.mktemp("wm")
    touch(repo, *files)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
    asked = sorted({"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 2)})
    rules = IgnoreRules.for_project(repo)
    ours = {p: rules.ignored(p) for p in asked}
    assert ours == git_verdicts(repo, asked), patterns


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pattern=PATTERNS, path=PATHS, is_dir=st.booleans())
def test_the_string_shortcuts_answer_as_the_scan(pattern: str, path: str, is_dir: bool) -> None:
    """``matches`` and ``within`` answer the literal shapes (``*.md``, ``docs``, ``/a/b``) with
    string searches; the counted scan (what :meth:`Glob.cost` runs) gives the same verdicts."""
    g = parse(pattern)
    assume(g is not None)
    assert g is not None
    assert g.matches(path, is_dir) is g._match(path, is_dir, within=False)[0]
    assert g.within(path, is_dir) is g._match(path, is_dir, within=True)[0]
    names = path.split("/")
    above = any(g.matches("/".join(names[:i]), True) for i in range(1, len(names)))
    assert g.within(path, is_dir) is (above or g.matches(path, is_dir))


# -- the cost is linear ------------------------------------------------------------------------


def hostile(k: int) -> str:
    """The pattern that took ``re`` about ten times longer per repetition."""
    return "**/" + "*?" * k + "x"


def spaced(n: int, name: int) -> str:
    """A path of about ``n`` characters made of names ``name`` characters long."""
    return "/".join(["a" * name] * max(1, n // (name + 1)))


def worst(pattern: str, path: str) -> int:
    g = glob(pattern)
    return max(g.cost(path), g.cost(path, within=True))


FAMILIES = {
    "**/*?*?…x": hostile,
    "*a*a…b": lambda k: "*a" * k + "b",
    "**/a**/a…/b": lambda k: "**/a" * k + "/b",
    "**/a*/**/a*…/b": lambda k: "/".join(["**", "a*"] * k) + "/b",
    "[a-z]*[a-z]*…?": lambda k: "[a-z]*" * k + "?",
    "**/??…?*b": lambda k: "**/" + "?" * k + "*b",
}


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_cost_is_at_most_the_pattern_times_the_path(family: Callable[[int], str]) -> None:
    for k in (5, 20, 80):
        for n in (100, 400, 1600):
            for name in (1, 9, 99):
                pattern, path = family(k), spaced(n, name)
                assert worst(pattern, path) <= (len(pattern) + 2) * (len(path) + 2), (k, n, name)


def test_the_reported_pattern_costs_the_same_whatever_its_length() -> None:
    """``**/`` then ``*?`` k times then a literal: ``re`` took ten times longer per repetition;
    here the cost does not grow with k and at most doubles with the path."""
    for name in (1, 9, 99, 999):
        short, long = spaced(2000, name), spaced(4000, name)
        assert worst(hostile(1), long) <= 2.1 * worst(hostile(1), short)
        for k in (10, 100, 498):
            assert worst(hostile(k), long) <= worst(hostile(1), long), (name, k)


@pytest.mark.slow
def test_a_pattern_longer_than_the_path_costs_nothing() -> None:
    g = glob("/".join(["a"] * 100_000))
    assert g.cost("a/a/a") == 1 and not g.matches("a/a/a", False)
    many = glob("?" * 1_000_000)
    assert many.cost("a" * 100) == 1


def test_the_worst_patterns_the_limits_allow_finish(tmp_path: Path) -> None:
    """The length limits allow about 500 repetitions: every front end's matcher finishes, with
    a work measure that a backtracking matcher exceeds by orders of magnitude."""
    pattern = hostile(498)
    path = "/".join(["a" * 60] * 60) + "/" + "b" * 1000
    assert glob(pattern).cost(path, within=True) <= 4 * len(pattern) * len(path)
    (tmp_path / ".fiskignore").write_text(pattern + "\n", encoding="utf-8")
    assert not IgnoreRules.for_project(tmp_path).ignored(path, False)
    scope = Scope.build([pattern[: 2 + 2 * 400]])
    assert scope is not None and scope.contains(path)
