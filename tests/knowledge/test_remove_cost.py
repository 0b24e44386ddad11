"""`rm` is linear in the documents removed: 14k paths took 117 s of CPU (a scan of every path per
path given, and every typed path checked against every removal). Measured in work counted,
not time: SQLite virtual-machine steps and Python function calls, for n and 2n documents."""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path
from typing import Any

import pytest

from fisk_ls.knowledge import index_project, opening, remove, resolve_settings


def _work(tmp_path: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> int:
    project = tmp_path / f"p{n}"
    (project / "docs").mkdir(parents=True)
    for i in range(n):
        (project / "docs" / f"d{i:05}.md").write_text(f"# Doc {i}\n\nword{i}\n")
    settings = resolve_settings(cwd=project, store_base=tmp_path / "stores", discover=False)
    index_project(settings)
    steps = [0]
    real = opening.connect_writer  # type: ignore[attr-defined]  # the name opening calls

    def counted(store_dir: Path) -> Any:
        conn = real(store_dir)

        def tick() -> bool:
            steps[0] += 1
            return False

        conn.set_progress_handler(tick, 1000)
        return conn

    monkeypatch.setattr(opening, "connect_writer", counted)
    profile = cProfile.Profile()
    profile.enable()
    result = remove(settings, [f"docs/d{i:05}.md" for i in range(n)], cwd=project)
    profile.disable()
    monkeypatch.setattr(opening, "connect_writer", real)
    assert result is not None and len(result.removed) == n and not result.missing
    calls = sum(row[1] for row in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    return calls + steps[0] * 1000


@pytest.mark.slow
def test_rm_of_many_paths_is_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = _work(tmp_path, 400, monkeypatch)
    large = _work(tmp_path, 1600, monkeypatch)
    assert large < 6 * small, (small, large)  # linear: about 4x; quadratic: about 16x
