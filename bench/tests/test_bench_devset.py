"""The dev-set harness (bench/devset*.py): question validation, copy groups, bootstrap intervals
and the paired comparison. Runs on small fixtures; the real question files are checked by
``test_real_question_files_are_valid`` when the shared corpora are present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import devset
import devset_compare
import devset_questions as dq
import devset_stats as ds
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fisk_ls.knowledge import Hit

CMDLET = """\
---
title: Get-Thing
---

# Get-Thing

## SYNOPSIS
Gets {what}.

## DESCRIPTION
The Get-Thing cmdlet gets things.

### Example 1: Get a thing
Get-Thing -Name a
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def ps_root(tmp_path: Path) -> Path:
    root = tmp_path / "ps"
    _write(root, "docset/winserver2016-ps/Mod/Get-Thing.md", CMDLET.format(what="one thing"))
    _write(root, "docset/winserver2025-ps/Mod/Get-Thing.md", CMDLET.format(what="one thing"))
    # A module renamed between versions: same file name and SYNOPSIS, other folder.
    _write(root, "docset/winserver2019-ps/OldMod/Get-Thing.md", CMDLET.format(what="one  thing"))
    # Same file name, another SYNOPSIS: a different page, not a copy.
    _write(root, "docset/winserver2019-ps/Other/Get-Thing.md", CMDLET.format(what="other"))
    # A copy without the example section.
    _write(
        root,
        "docset/winserver2022-ps/Mod/Get-Thing.md",
        CMDLET.format(what="one thing").split("### Example")[0],
    )
    return root


def _corpus(root: Path, questions: Path, versioned: bool = True) -> dq.Corpus:
    return dq.Corpus(
        "t", root, questions, ("en", "ja"), lambda p, lang: lang in p or lang == "en", versioned
    )


def _questions(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _q(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "q1",
        "lang": "en",
        "kind": "howto",
        "query": "how do I get a thing",
        "path": "docset/winserver2025-ps/Mod/Get-Thing.md",
        "heading": "Example 1: Get a thing",
    }
    base.update(over)
    return base


def test_copy_groups_join_versions_and_renamed_modules(ps_root: Path) -> None:
    groups = dq.copy_groups(ps_root)
    want = (
        "docset/winserver2016-ps/Mod/Get-Thing.md",
        "docset/winserver2019-ps/OldMod/Get-Thing.md",
        "docset/winserver2022-ps/Mod/Get-Thing.md",
        "docset/winserver2025-ps/Mod/Get-Thing.md",
    )
    assert groups["docset/winserver2025-ps/Mod/Get-Thing.md"] == want
    assert groups["docset/winserver2019-ps/OldMod/Get-Thing.md"] == want
    assert groups["docset/winserver2019-ps/Other/Get-Thing.md"] == (
        "docset/winserver2019-ps/Other/Get-Thing.md",
    )


def test_targets_are_the_heading_in_every_copy_that_has_it(ps_root: Path, tmp_path: Path) -> None:
    (q,) = dq.load(_corpus(ps_root, _questions(tmp_path, _q())))
    assert [t.path for t in q.targets] == [
        "docset/winserver2025-ps/Mod/Get-Thing.md",
        "docset/winserver2016-ps/Mod/Get-Thing.md",
        "docset/winserver2019-ps/OldMod/Get-Thing.md",
    ]
    hit = Hit(1, "docset/winserver2016-ps/Mod/Get-Thing.md", 0, "", "", 12, 15, 1.0)
    assert devset.section_match(q, hit)
    other = Hit(2, "docset/winserver2019-ps/Other/Get-Thing.md", 0, "", "", 12, 15, 1.0)
    assert not devset.section_match(q, other)
    assert not devset.file_match(q, other)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (_q(kind="trivia"), "kind must be one of"),
        (_q(lang="de"), "lang must be one of"),
        (_q(heading="Example 9"), "not found"),
        (_q(path="docset/winserver2025-ps/Mod/Nope.md"), "no file"),
        (_q(kind="short", query="four words are too many"), "1-3 words"),
        (_q(extra=1), "want exactly the fields"),
        (_q(query=" "), "query must be a non-empty string"),
    ],
)
def test_broken_questions_are_refused(
    ps_root: Path, tmp_path: Path, row: dict[str, object], message: str
) -> None:
    with pytest.raises(dq.BrokenQuestion, match=message):
        dq.load(_corpus(ps_root, _questions(tmp_path, row)))


def test_duplicate_ids_and_queries_are_refused(ps_root: Path, tmp_path: Path) -> None:
    rows = (_q(), _q(query="another"), _q(id="q2", query="How do I  get a THING"))
    with pytest.raises(dq.BrokenQuestion) as e:
        dq.load(_corpus(ps_root, _questions(tmp_path, *rows)))
    assert "duplicate id q1" in str(e.value)
    assert "q2 repeats the query of q1" in str(e.value)


def test_ambiguous_heading_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    _write(root, "en/a.md", "# A\n\n## None\n\nx\n\n## None\n\ny\n")
    path = _questions(tmp_path, _q(path="en/a.md", heading="None"))
    with pytest.raises(dq.BrokenQuestion, match="ambiguous"):
        dq.load(_corpus(root, path, versioned=False))


def test_version_free_and_synopsis() -> None:
    assert dq.version_free("docset/winserver2019-ps/M/X.md") == "docset/*/M/X.md"
    assert dq.version_free("content/en/x.md") == "content/en/x.md"
    assert dq.synopsis("# X\n\n## SYNOPSIS\nGets\n  a  thing.\n\n## SYNTAX\n") == "gets a thing."
    assert dq.synopsis("# X\n") == ""


def test_bootstrap_is_deterministic_and_degenerate_on_constants() -> None:
    values = [0.0, 1.0, 1.0, 0.5, 0.0, 1.0]
    assert ds.bootstrap_ci(values) == ds.bootstrap_ci(values)
    assert ds.bootstrap_ci([0.25] * 10) == pytest.approx((0.25, 0.25))
    with pytest.raises(ValueError):
        ds.bootstrap_ci([])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30))
def test_bootstrap_interval_is_ordered_and_within_the_values(values: list[float]) -> None:
    lo, hi = ds.bootstrap_ci(values, resamples=200)
    assert min(values) - 1e-9 <= lo <= hi <= max(values) + 1e-9


def test_paired_diff() -> None:
    assert ds.paired_diff([1.0, 0.0], [1.0, 0.0]) == (0.0, 0.0, 0.0)
    mean, lo, hi = ds.paired_diff([0.0] * 20, [1.0] * 20)
    assert (mean, lo, hi) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="unpaired"):
        ds.paired_diff([1.0], [1.0, 0.0])


def test_summarize_metrics() -> None:
    s = ds.summarize([1, 2, None, 10, 6], resamples=100)
    assert s["n"] == 5
    assert s["mrr@10"] == round((1 + 0.5 + 0.1 + 1 / 6) / 5, 4)
    assert s["hit@5"] == 0.4
    assert s["hit@10"] == 0.8
    lo, hi = cast("tuple[float, float]", s["mrr@10_ci"])
    assert lo <= s["mrr@10"] <= hi


def _result(ranks: dict[str, int | None]) -> dict[str, object]:
    per = {
        i: {"lang": "en", "kind": "exact" if n % 2 else "short", "rank": r}
        for n, (i, r) in enumerate(ranks.items())
    }
    return {"corpora": {"otel": {"runs": {"lexical": {"per_question": per}}}}}


def test_compare_pairs_questions_and_flags_noise() -> None:
    before = _result({"a": 1, "b": None, "c": 3, "d": 2})
    after = _result({"a": 1, "b": 1, "c": 3, "d": 2, "e": 1})
    rows = devset_compare.compare(before, after, resamples=200)
    overall = rows[0]
    assert (overall["slice"], overall["n"], overall["changed"]) == ("overall", 4, 1)
    assert overall["mrr@10"]["diff"] == 0.25
    lo, hi = overall["mrr@10"]["ci"]
    assert lo == 0.0 < hi
    assert {r["slice"] for r in rows} == {"overall", "lang en", "kind exact", "kind short"}
    assert "noise" in devset_compare.render(rows)


@pytest.mark.corpus
def test_real_question_files_are_valid() -> None:
    for corpus in dq.CORPORA.values():
        if not corpus.root.is_dir():
            pytest.skip(f"shared corpus not found at {corpus.root}")
        questions = dq.load(corpus)
        assert {q.kind for q in questions} == set(dq.KINDS)


@pytest.mark.corpus
def test_held_out_questions_are_valid_and_new() -> None:
    corpus = dq.CORPORA["otel"]
    if not corpus.root.is_dir():
        pytest.skip(f"shared corpus not found at {corpus.root}")
    held = dq.load(corpus, dq.HELD_OUT)
    dev = dq.load(corpus)
    assert len(held) >= 30
    assert not {q.id for q in held} & {q.id for q in dev}
    assert not {q.query for q in held} & {q.query for q in dev}
