"""`fisk-ai mcp --project A --project B`: one knowledge_search over several projects, hits
merged by score, each naming its project; citations `show --project` opens."""

from __future__ import annotations

import json
from pathlib import Path

from fisk_ls.agent.tool import NAME

from .conftest import index, outcome, run_cli, stdio, write_config


def _project(root: Path, name: str, text: str, allow: bool = True) -> Path:
    folder = root / name
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "deploy.md").write_text(text, encoding="utf-8")
    config = write_config(folder, builtins=["knowledge_search"] if allow else None)
    own = f"    enabled: true\n    directory: {root / 'stores' / name}\n"  # one store each
    config.write_text(config.read_text().replace("    enabled: true\n", own), encoding="utf-8")
    index(folder)
    return folder


async def test_one_tool_over_several_projects(tmp_path: Path, store_base: Path) -> None:
    a = _project(tmp_path, "alpha", "# Deploy alpha\n\nHow we deploy alpha: helm upgrade.\n")
    b = _project(tmp_path, "beta", "# Deploy beta\n\nHow we deploy beta: terraform apply.\n")
    c = _project(tmp_path, "gamma", "# Deploy gamma\n\nHow we deploy gamma.\n", allow=False)
    args = ("--project", str(a), "--project", str(b), "--project", str(c))
    async with stdio(tmp_path, *args) as client:
        res = outcome(await client.call_tool(NAME, {"query": "how do we deploy", "top_k": 5}))
    assert res["status"] == "ok"
    projects = {hit["project"] for hit in res["results"]}
    assert projects == {"alpha", "beta"}  # gamma does not allowlist the tool
    for hit in res["results"]:
        assert hit["citation"].startswith(f"{hit['project']}:docs/deploy.md#")
        shown = run_cli(tmp_path, "knowledge", "show", hit["citation"], *args[:4], "--json")
        assert shown.returncode == 0, shown.stderr
        assert hit["project"] in json.loads(shown.stdout)["content"]
