"""The editors' `prebuilt` setting: the language server's first index run adopts the pack, so
a fresh checkout gets its vectors without embedding them again."""

from __future__ import annotations

import shutil
from pathlib import Path

from fisk_ls.knowledge import Project, resolve_settings
from fisk_ls.knowledge.pack import write_pack
from tests.support.fake_embed_server import FakeEmbedServer

from .conftest import copy_fixture, lsp_session, search, wait_embedded, wait_indexed


async def test_the_first_run_adopts_the_prebuilt_pack(
    tmp_path: Path, fake_embed: FakeEmbedServer
) -> None:
    packer = copy_fixture("basic", tmp_path / "ci" / "basic")
    (packer / "agent.yaml").write_text(
        "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n"
        f"      base_url: {fake_embed.base_url}\n      model: fake-embed\n",
        encoding="utf-8",
    )
    with Project(resolve_settings(packer / "agent.yaml")) as project:
        project.index()
    pack = write_pack(project.settings, tmp_path / "docs.pack.gz").path
    (packer / "agent.yaml").unlink()
    root = tmp_path / "checkout" / "basic"
    shutil.copytree(packer, root, ignore=shutil.ignore_patterns("knowledge"))
    fake_embed.reset_stats()
    options = {
        "embeddings": {"baseUrl": fake_embed.base_url, "model": "fake-embed"},
        "prebuilt": str(pack),
    }
    async with lsp_session([root], tmp_path, "neovim", init_options=options) as client:
        await wait_indexed(client)
        status = await wait_embedded(client)
        assert status["roots"][0]["chunks"] > 4
        result = await search(client, "zeppelin airship")
        assert result["results"][0]["citation"] == "guide.md#1"
    assert fake_embed.stats()["inputs"] <= 2  # the dimension probe and the first query
