"""The README's generated blocks are current (``python -m parlour.training.docs --write README.md`` rewrites them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parlour.envs import ENVIRONMENTS
from parlour.training import docs

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_tables_are_generated_and_current() -> None:
    assert docs.main(["--check", str(README)]) == 0


def test_the_games_table_has_a_row_per_registered_env() -> None:
    table = docs.games_table()
    assert all(f"| `{name}` |" in table for name in ENVIRONMENTS)
    assert len(table.splitlines()) == 2 + len(ENVIRONMENTS)


def test_a_stale_or_missing_block_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "stale.md"
    stale.write_text("intro\n<!-- generated: games -->\n| old |\n<!-- end: games -->\n")
    assert docs.main(["--check", str(stale)]) == 1
    assert "stale" in capsys.readouterr().out
    assert docs.main(["--write", str(stale)]) == 0 and docs.main(["--check", str(stale)]) == 0
    (tmp_path / "none.md").write_text("no blocks\n")
    with pytest.raises(ValueError, match="no generated block 'games'"):
        docs.main(["--check", str(tmp_path / "none.md")])
