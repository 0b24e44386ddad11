"""`fisk-ai knowledge search` in the real process: a paragraph repeated in three documents whose
chunks differ around it is one hit, the two others under ``copies`` (--json and text)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import js, run
from tests.support.repeated import PAGES, QUERY, option_lines, write_repeated


def test_a_repeated_paragraph_is_one_hit_with_two_under_copies(
    tmp_path: Path, store_base: Path
) -> None:
    root = write_repeated(tmp_path / "site")
    (root / ".git").mkdir()
    js(root, "index")
    out = js(root, "search", QUERY)
    option = [r for r in out["results"] if r["path"] in PAGES]
    assert len(option) == 1, out["results"]
    (top,) = option
    assert tuple(top["match_lines"]) == option_lines(root, top["path"])
    assert {top["path"], *(a["path"] for a in top["copies"])} == set(PAGES)
    assert len(top["copies"]) == 2
    for other in top["copies"]:
        assert other["citation"] == f"{other['path']}#0"
        assert tuple(other["match_lines"]) == option_lines(root, other["path"])
    text = run(root, "knowledge", "search", QUERY).stdout
    assert text.count("> Configuration > cache-tarballs") == 1
    assert "Also in 2 files: " in text
