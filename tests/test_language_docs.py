"""docs/language-agents.md shows a prompt exactly as ``python -m parlour.envs.text`` prints it (the command named in
the comment above the block)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

from parlour.envs import text

DOC = Path(__file__).resolve().parents[1] / "docs" / "language-agents.md"
BLOCK = re.compile(r"<!-- prompt: python -m parlour\.envs\.text (.+?) -->\n```text\n(.*?)\n```", re.S)


def printed(args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        text.main(shlex.split(args))
    return out.getvalue().rstrip("\n")


def test_the_prompt_in_the_docs_is_what_the_command_prints() -> None:
    blocks = BLOCK.findall(DOC.read_text())
    assert blocks, "no prompt block in docs/language-agents.md"
    for args, shown in blocks:
        assert shown == printed(args), f"regenerate the block of `python -m parlour.envs.text {args}`"


def rewrite() -> None:
    """Rewrite every block from its command (``python tests/test_language_docs.py``)."""
    doc = DOC.read_text()
    DOC.write_text(BLOCK.sub(lambda m: m[0].replace(m[2], printed(m[1])), doc))


if __name__ == "__main__":
    rewrite()
