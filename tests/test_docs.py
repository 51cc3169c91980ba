"""The generated documentation: the README's blocks are current, the site's generated pages cover every env, bot,
shipped policy and command, and the README and docs stay short and inside the repository.

``python -m parlour.training.docs --write README.md`` rewrites the README's blocks; ``--pages DIR`` writes the site's
generated pages out to read.
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

from parlour.baselines import BOTS, SHIPPED
from parlour.envs import ENVIRONMENTS
from parlour.training import docs
from parlour.training.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The README's promised size (``wc -m``): the rest lives in docs/.
README_MAX_CHARS = 12_000
#: A pointer out of the repository: the shared folder beside it, or a rulebook folder, which is not shipped.
OUTSIDE = re.compile(r"\.\./shared|(?<![\w-])shared/|(?<![\w.-])rules/")


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


def test_a_docstring_becomes_markdown() -> None:
    doc = "Title (``x_v0``): a game.\n\nRules\n-----\nSee :mod:`parlour.envs.x` and ``y``.\n\n>>> env = x()\n>>> env.reset()\n"
    assert docs.markdown_from_docstring(doc) == (
        "Title (`x_v0`): a game.\n\n## Rules\n\nSee `parlour.envs.x` and `y`.\n\n"
        "```python\nenv = x()\nenv.reset()\n```\n"
    )


def test_every_env_has_a_page_with_its_observation_table_bots_and_shipped_policies() -> None:
    pages = docs.site_pages()
    assert docs.GAMES_INDEX in pages and docs.CLI_PAGE in pages
    for name, module in ENVIRONMENTS.items():
        page = pages[f"{docs.GAMES_DIR}/{name}.md"]
        assert "| Index | Field | Shape | Meaning |" in page
        # The table is the env's own layout's (at the default keywords), not another game's.
        assert importlib.import_module(module).raw_env.observation_layout.markdown_table() in page
        assert all(f"## {s}" in page for s in ("Rules summary", "Observation", "Actions", "Rulings", "Version history"))
        assert not re.search(r"(?<!`)``(?!`)", page)  # every reST literal became Markdown (fences are three)
        for bot, cls in BOTS.items():
            assert (f"| `{bot}` |" in page) == (cls.games is None or name in cls.games), (name, bot)
        for policy, env in SHIPPED.items():
            assert (f"| `{policy}` |" in page) == (env == name), (name, policy)
        assert f"[`{name}`]({name}.md)" in pages[docs.GAMES_INDEX]


def test_the_cli_reference_has_every_subcommand_and_option() -> None:
    parser = build_parser()
    reference = docs.cli_reference(parser)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert "accusations" in sub.choices  # the command the old README lacked
    for name, command in sub.choices.items():
        assert f"## `parlour {name}`" in reference, name
        shown = [a for a in command._actions if a.help != argparse.SUPPRESS]  # hidden options stay hidden
        options = [s for a in shown for s in a.option_strings if s.startswith("--")]
        assert options, name
        assert all(option in reference.split(f"## `parlour {name}`")[1] for option in options), name


def test_the_readme_is_short_and_carries_the_ci_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text) < README_MAX_CHARS, f"README.md has {len(text)} characters; move detail into docs/"
    ci = (ROOT / ".ci" / "run").read_text()
    (command,) = [line for line in ci.splitlines() if line.startswith("python3 -m venv")]
    assert f"\n{command}\n" in text  # the very line CI runs, alone on its line as a user copies it


def test_the_test_command_installs_into_an_environment_of_its_own() -> None:
    """The test install (its ``interop`` extra brings Ray RLlib, which pins gymnasium) never changes what the main job's
    install put in its environment: the two commands make and use two virtual environments, each only its own."""
    text = README.read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if line.startswith("python3 -m venv ")]
    assert len(commands) == 2, commands  # the main job, then the tests
    folders = [line.split()[3] for line in commands]
    assert folders[0] != folders[1], folders
    for folder, line in zip(folders, commands, strict=True):
        assert set(re.findall(r"(\.venv[\w-]*)/bin/", line)) == {folder}, line


def test_the_readmes_links_lead_to_files_in_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    assert targets
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, missing


def test_no_readme_or_docs_page_points_outside_the_repository() -> None:
    assert OUTSIDE.search("the shared `rules/` folder") and OUTSIDE.search("see ../shared/RULINGS.md")
    assert not OUTSIDE.search("envs/six_suspects/rules.py, parameter-shared self-play")
    texts = {"README.md": README.read_text(encoding="utf-8"), "mkdocs.yml": (ROOT / "mkdocs.yml").read_text()}
    texts.update(
        {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "docs").rglob("*.md")) if p.is_file()}
    )
    texts.update({f"generated {path}": page for path, page in docs.site_pages().items()})
    assert "docs/rulings.md" in texts
    offenders = {name: m.group(0) for name, text in texts.items() if (m := OUTSIDE.search(text))}
    assert not offenders, offenders


def test_the_jax_page_has_every_core_and_its_batched_bots() -> None:
    pytest.importorskip("jax")
    from parlour.baselines import GAME_SPECS
    from parlour.envs.jax_core import CORES

    page = docs.jax_cores_page()
    for env_id, module in CORES.items():
        assert f"`{env_id}`" in page and f"`{module}`" in page
    batched = [spec.jax_bots for spec in GAME_SPECS.values() if spec.jax_bots is not None]
    assert len(batched) == len(GAME_SPECS) == 4
    for module in batched:
        assert page.count(f"### Batched bots (`{module}`)") == 1
    assert "What differs structurally" in page  # each core's docstring, not only its name
