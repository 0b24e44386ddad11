from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.knowledge.sanitize import one_line, strip_controls


def test_escape_sequences_removed() -> None:
    evil = "a\x1b[2J\x1b]0;pwned\x07b\x1b[31mc\x9b1md\x00e\tf\ng\r"
    assert strip_controls(evil) == "abc1mde\tf\ng"


@given(st.text())
def test_no_control_survives(text: str) -> None:
    out = strip_controls(text)
    assert not any(ord(c) < 32 and c not in "\t\n" for c in out)
    assert "\x1b" not in out and not any(0x7F <= ord(c) <= 0x9F for c in out)


def test_one_line() -> None:
    assert one_line("a\n\n  b   c", 100) == "a b c"
    assert one_line("x" * 50, 10) == "xxxxxxx..."
