"""The language server and the project rules of issue 16: a workspace folder below the project
root finds the project's index; .gitignore, .fiskignore and ``fisk.exclude`` apply to the walk
and to didSave, and a file that becomes ignored leaves the index."""

from __future__ import annotations

from pathlib import Path

from tests.support.waiting import wait_until_async

from .conftest import command, copy_fixture, lsp_session, save, search, wait_indexed


async def test_exclude_setting_gitignore_and_fiskignore(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "ws")
    (root / ".git").mkdir()  # a repository top: .gitignore applies
    (root / ".gitignore").write_text("links.md\n", encoding="utf-8")
    (root / ".fiskignore").write_text("notes.txt\n", encoding="utf-8")
    options = {"exclude": ["docs/"], "watch": False}
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        status = await wait_indexed(client)
        assert status["roots"][0]["documents"] == 1  # guide.md only
        assert (await search(client, "quokka"))["results"] == []  # notes.txt is ignored
        (root / ".fiskignore").write_text("notes.txt\nguide.md\n", encoding="utf-8")
        save(client, root / "guide.md")  # didSave of a file that is now ignored: it leaves

        async def emptied() -> bool:
            st = await command(client, "fisk.knowledge.status")
            return st["roots"][0]["documents"] == 0 and not st["indexing"]

        await wait_until_async(emptied)


async def test_a_folder_below_the_root_uses_the_projects_index(tmp_path: Path) -> None:
    root = copy_fixture("basic", tmp_path / "ws")
    (root / "agent.yaml").write_text("harness:\n  knowledge:\n    enabled: true\n")
    async with lsp_session([root / "docs"], tmp_path, "neovim") as client:
        status = await wait_indexed(client)
        (entry,) = status["roots"]
        assert entry["root"] == str(root) and entry["documents"] == 4
        assert entry["store"] == str(tmp_path / "stores" / "knowledge" / "fisk-ai")
