"""Documentation made from the code, so that a new game, bot or command appears without editing any page.

Two kinds of output:

- the README's generated blocks, tables made from the registries. ``python -m parlour.training.docs --check
  README.md`` says whether each block is current (a test runs it); ``--write README.md`` rewrites them. A block lies
  between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``.
- the documentation site's generated pages (:func:`site_pages`): one page per registered env (its module docstring
  as Markdown, the bots that play it, its shipped trained policies), a games overview and the command-line
  reference. The site's MkDocs hook (``docs/hooks.py``) adds them to every ``mkdocs build``; they are never
  written into the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

#: Folder of the per-env pages in the site, and the games overview in it.
GAMES_DIR = "games"
GAMES_INDEX = f"{GAMES_DIR}/index.md"
#: The command-line reference page.
CLI_PAGE = "cli.md"
#: The generated page of the JAX cores and their batched bots (each module's docstring).
JAX_PAGE = "jax-cores.md"
#: Width of the help text in the CLI reference: fixed, so that the page does not depend on the terminal that builds it.
HELP_COLUMNS = 100


def bots_for(name: str) -> list[str]:
    """The registered bots that can sit at ``name``'s table (``games`` None: every game)."""
    from parlour.baselines import BOTS

    return [b for b, cls in BOTS.items() if cls.games is None or name in cls.games]


def shipped_for(name: str) -> list[str]:
    """The shipped trained policies made for ``name``."""
    from parlour.baselines import SHIPPED

    return [s for s, e in SHIPPED.items() if e == name]


def games_table(link: Callable[[str], str] | None = None) -> str:
    """One row per registered env: its title, id, player counts, scripted bots and shipped trained policy.

    ``link`` maps an env id to the page its id links to (the site's overview); without it the id is plain code."""
    from parlour.envs import ENVIRONMENTS, make

    rows = ["| Game | Env id | Players | Scripted bots | Trained policy |", "|---|---|---|---|---|"]
    for name in ENVIRONMENTS:
        env = make(name)
        env_id = f"[`{name}`]({link(name)})" if link else f"`{name}`"
        rows.append(
            f"| {env.title} | {env_id} | {env.min_players}–{env.max_players} (default {env.num_players}) | "
            + ", ".join(f"`{b}`" for b in bots_for(name))
            + f" | {', '.join(f'`{s}`' for s in shipped_for(name)) or '—'} |"
        )
    return "\n".join(rows)


#: Block name -> what generates it.
BLOCKS: dict[str, Callable[[], str]] = {"games": games_table}


def render(text: str) -> str:
    """``text`` with every generated block made afresh."""
    for name, make_block in BLOCKS.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.DOTALL)
        if not pattern.search(text):
            raise ValueError(f"no generated block {name!r} (<!-- generated: {name} --> … <!-- end: {name} -->)")
        block = make_block().replace("\\", "\\\\")  # a replacement template: backslashes escaped
        text = pattern.sub(rf"\g<1>{block}\n\g<2>", text)
    return text


# ----------------------------------------------------------------------------------------------- the site's pages
_HEADING_RULE = re.compile(r"^(-{3,}|={3,})$")
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")  # Sphinx roles (:mod:`x`, :data:`x`): plain code on the site
_LITERAL = re.compile(r"``(.+?)``")


def markdown_from_docstring(doc: str, heading_level: int = 2) -> str:
    """A module docstring in the project's style (reST-like) as Markdown.

    Underlined section titles become headings of ``heading_level``, ``>>>`` examples fenced Python blocks,
    ``double-backtick`` literals and Sphinx roles code spans; Markdown tables and lists pass through unchanged."""
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _HEADING_RULE.match(underline) and len(underline) >= len(line.strip()):
            # Blank lines around a heading: Python-Markdown wants a list or table to start a block of its own.
            out += ["", f"{'#' * heading_level} {line.strip()}", ""]
            i += 2
            continue
        if line.startswith(">>>"):
            code = []
            while i < len(lines) and lines[i].startswith((">>>", "...")):
                code.append(lines[i][4:])
                i += 1
            out += ["```python", *code, "```"]
            continue
        out.append(_LITERAL.sub(r"`\1`", _ROLE.sub(r"``\1``", line)))
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def _first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line (for a table cell)."""
    if not doc:
        return ""
    paragraph = inspect.cleandoc(doc).split("\n\n")[0]
    return markdown_from_docstring(" ".join(paragraph.split())).strip().replace("|", "\\|")


def bot_summary(cls: type) -> str:
    """What a bot does, for a table cell: its entry in its module's docstring (each game's bot module lists its
    bots as ``- ``NAME``: …``), else the first paragraph of the class's own docstring."""
    module_doc = inspect.cleandoc(sys.modules[cls.__module__].__doc__ or "")
    name = getattr(cls, "name", cls.__name__)
    entry = re.search(rf"^- ``{re.escape(name)}``: (.*(?:\n  .*)*)", module_doc, re.MULTILINE)
    # Its own docstring, not one inherited from the Policy base.
    summary = _first_paragraph(entry.group(1) if entry else cls.__dict__.get("__doc__"))
    return summary[:1].upper() + summary[1:]


def _generated_note(source: str) -> str:
    return f"<!-- Generated at build time by parlour.training.docs from {source}: edit that, not this page. -->\n\n"


def env_page(name: str) -> str:
    """The site's page of env ``name``: its module docstring (rules, observation and action tables, rewards, rulings,
    version history), then the bots that can play it and its shipped trained policies."""
    from parlour.baselines import BOTS
    from parlour.envs import ENVIRONMENTS, make

    module = ENVIRONMENTS[name]
    env = make(name)
    doc = importlib.import_module(module).__doc__ or ""
    # The docstrings name the rulings file by its path; on the site it is a page of its own.
    body = markdown_from_docstring(doc).replace("`docs/rulings.md`", "[the rulings](../rulings.md)")
    parts = [
        _generated_note(f"the module docstring of `{module}` and the bot registries"),
        f"# {env.title}\n\n",
        f"Env id `{name}` (version {env.env_version}), {env.min_players}–{env.max_players} players (default "
        f'{env.num_players}). `parlour.envs.make("{name}")`, or `help({module})` for this page in Python.\n\n',
        body,
        "\n## Bots that play it\n\n",
        "Every bot below is a policy with `act(observation, action_mask, rng) -> int` that sees only what its seat "
        'sees: `parlour.baselines.make("NAME")`, or `NAME` wherever a command takes a policy '
        "([Scripted opponents](../opponents.md) says what each one does).\n\n",
        "| Bot | Class | Summary |\n|---|---|---|\n",
    ]
    for bot in bots_for(name):
        cls = BOTS[bot]
        summary = bot_summary(cls) or f"see the module `{cls.__module__}`"
        parts.append(f"| `{bot}` | `{cls.__module__}.{cls.__qualname__}` | {summary} |\n")
    parts.append("\n## Shipped trained policies\n\n")
    shipped = shipped_for(name)
    if shipped:
        parts.append(
            "Policy files shipped with the package (they play with NumPy alone); each is a policy name "
            "like a bot's ([Published baselines](../baselines.md) says how they were trained).\n\n"
            "| Policy | Env id |\n|---|---|\n" + "".join(f"| `{s}` | `{name}` |\n" for s in shipped)
        )
    else:
        parts.append(f"None is shipped for `{name}`.\n")
    return "".join(parts)


def games_index() -> str:
    """The site's games overview: the README's games table, with each env id linking to its page."""
    from parlour.envs import ENVIRONMENTS

    return (
        _generated_note("the env and bot registries")
        + "# Games\n\n"
        + f"{len(ENVIRONMENTS)} registered environments (`parlour.envs.ENVIRONMENTS`; `parlour list` prints the same). "
        "Each env's page is its module docstring: the rules summary, the observation table generated from its "
        "layout, the action table, the rewards, every ruling the project made and the version history.\n\n"
        + games_table(link=lambda name: f"{name}.md")
        + "\n"
    )


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommand parsers of ``parser``, by name, in the order they were added."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


@contextlib.contextmanager
def _help_columns(columns: int) -> Iterator[None]:
    """argparse wraps help to the terminal's width (``COLUMNS``): fix it while the reference is made."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _help_text(parser: argparse.ArgumentParser) -> str:
    # Newer Pythons may colour help text: the page wants plain text.
    return re.sub(r"\x1b\[[0-9;]*m", "", parser.format_help()).rstrip()


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The command-line reference: ``parlour --help`` and each subcommand's help, from the argparse parser."""
    if parser is None:
        from parlour.training.cli import build_parser

        parser = build_parser()
    helps: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps.update({choice.dest: choice.help or "" for choice in action._choices_actions})
    parts = [
        _generated_note("the argparse parser of `parlour.training.cli.build_parser()`"),
        "# Command-line reference\n\n",
        f"The `{parser.prog}` command, installed with the package. Each section is the command's own `--help`.\n\n",
        f"## `{parser.prog}`\n\n```text\n",
    ]
    with _help_columns(HELP_COLUMNS):
        parts.append(_help_text(parser) + "\n```\n")
        for name, sub in subcommands(parser).items():
            summary = helps.get(name, "")
            parts.append(f"\n## `{parser.prog} {name}`\n\n")
            if summary:
                parts.append(summary[0].upper() + summary[1:] + ".\n\n")
            parts.append(f"```text\n{_help_text(sub)}\n```\n")
    return "".join(parts)


def jax_cores_page() -> str:
    """The site's page of the JAX cores: per game, its core's module docstring (what it supports, what it refuses and
    what differs structurally from the scalar rules) and its batched bots' (which bots, and why not the others)."""
    from parlour.baselines import game_spec
    from parlour.envs.jax_core import CORES

    parts = [
        _generated_note("the module docstrings of `parlour.envs.jax_core.*` and `parlour.baselines.jax_bots.*`"),
        "# JAX cores, game by game\n\n",
        "What each game's batched core expresses, how it differs in structure from the scalar rules, and which bots "
        "play batched beside it. How to use them, the lock-step checks and the measured speed: [JAX](jax.md).\n\n",
    ]
    shown: set[str] = set()
    for module in dict.fromkeys(CORES.values()):
        doc = importlib.import_module(module).__doc__ or ""
        ids = [e for e, m in CORES.items() if m == module]
        envs = ", ".join(f"`{e}`" for e in ids)
        parts += [f"## {envs}\n\n", f"`{module}`\n\n", markdown_from_docstring(doc, heading_level=3), "\n"]
        spec = game_spec(ids[0])
        if spec is not None and spec.jax_bots is not None and spec.name not in shown:  # under the game's newest core
            shown.add(spec.name)
            bots = importlib.import_module(spec.jax_bots).__doc__ or ""
            parts += [f"### Batched bots (`{spec.jax_bots}`)\n\n", markdown_from_docstring(bots, 4), "\n"]
    return "".join(parts)


def site_pages() -> dict[str, str]:
    """Every generated page of the documentation site: path under ``docs/`` -> Markdown."""
    from parlour.envs import ENVIRONMENTS

    pages = {GAMES_INDEX: games_index(), CLI_PAGE: cli_reference()}
    try:
        pages[JAX_PAGE] = jax_cores_page()
    except ImportError as exc:  # the jax extra is not installed: the page says how to get it
        pages[JAX_PAGE] = f'# JAX cores, game by game\n\nNot built here ({exc}): `pip install ".[jax]"`.\n'
    pages.update({f"{GAMES_DIR}/{name}.md": env_page(name) for name in ENVIRONMENTS})
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parlour.training.docs", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", help="rewrite the generated blocks of FILE")
    mode.add_argument("--check", metavar="FILE", help="exit 1 if a generated block of FILE is stale")
    mode.add_argument("--pages", metavar="DIR", help="write the site's generated pages into DIR (to read them)")
    args = parser.parse_args(argv)
    if args.pages:
        for rel, text in site_pages().items():
            out = Path(args.pages) / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
        print(f"wrote the site's generated pages into {args.pages}")
        return 0
    path = Path(args.write or args.check)
    text = path.read_text()
    new = render(text)
    if args.write:
        path.write_text(new)
        print(f"wrote the generated blocks of {path}")
        return 0
    if new != text:
        print(f"{path}: generated blocks are stale; run python -m parlour.training.docs --write {path}")
        return 1
    print(f"{path}: generated blocks are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
