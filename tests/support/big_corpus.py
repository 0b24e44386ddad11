"""A generated documentation tree, large enough that an index run lasts while requests come in:
``files`` pages in 20 folders, each of 25 sections, ``unique{i}`` on page i."""

from __future__ import annotations

from pathlib import Path

FILES = 2000
PARAGRAPH = "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor. " * 8


def make_corpus(root: Path, files: int = FILES) -> Path:
    for i in range(files):
        folder = root / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(
            f"\n\n## Section {j} of page {i}\n\n{PARAGRAPH}topic{(i * 7 + j) % 97}\n"
            for j in range(25)
        )
        (folder / f"page{i}.md").write_text(f"# Page {i}\n\nunique{i}\n{body}")
    return root.resolve()
