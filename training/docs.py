"""The README's generated parts: tables made from the registries, so that a new game appears without editing them.

``python -m parlour.training.docs --check README.md`` says whether each generated block is current (a test runs it);
``--write README.md`` rewrites them. A block lies between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def games_table() -> str:
    """One row per registered env: its title, id, player counts, scripted bots and shipped trained policy."""
    from parlour.baselines import BOTS, SHIPPED
    from parlour.envs import ENVIRONMENTS, make

    rows = ["| Game | Env id | Players | Scripted bots | Trained policy |", "|---|---|---|---|---|"]
    for name in ENVIRONMENTS:
        env = make(name)
        bots = [b for b, cls in BOTS.items() if cls.games is None or name in cls.games]
        shipped = [s for s, e in SHIPPED.items() if e == name]
        rows.append(
            f"| {env.title} | `{name}` | {env.min_players}–{env.max_players} (default {env.num_players}) | "
            + ", ".join(f"`{b}`" for b in bots)
            + f" | {', '.join(f'`{s}`' for s in shipped) or '—'} |"
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parlour.training.docs", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", help="rewrite the generated blocks of FILE")
    mode.add_argument("--check", metavar="FILE", help="exit 1 if a generated block of FILE is stale")
    args = parser.parse_args(argv)
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
