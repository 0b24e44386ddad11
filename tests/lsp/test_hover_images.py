"""Hovers leave out images that would be broken away from the cited file."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fisk_ls.lsp.convert import without_relative_images


def test_relative_and_absolute_images_become_their_alt_text() -> None:
    text = 'See ![the pipeline](img/pipeline.png) and ![](../x.svg "t") and ![abs](/tmp/a.png).'
    assert without_relative_images(text) == (
        "See *[image: the pipeline]* and *[image]* and *[image: abs]*."
    )


def test_web_and_data_images_and_plain_links_stay() -> None:
    text = "![logo](https://example.org/l.png) ![d](data:image/png;base64,AA==) [a link](doc.md)"
    assert without_relative_images(text) == text


@given(st.text())
def test_no_relative_image_survives(text: str) -> None:
    out = without_relative_images(text)
    assert without_relative_images(out) == out
