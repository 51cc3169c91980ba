"""Figures printed in the docs come from a command, and these tests rerun the command (slow tier) so that a figure
cannot go stale: first the README's main job, whose evaluation table docs/getting-started.md shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GETTING_STARTED = ROOT / "docs" / "getting-started.md"


def _table(text: str, head: str) -> list[str]:
    """The Markdown table whose header row starts with ``head``, row by row."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_getting_started_prose_quotes_its_own_table() -> None:
    """The paragraph under the main job's table quotes win rates from that table, not from an older run."""
    text = GETTING_STARTED.read_text()
    table = "\n".join(_table(text, "| policy | opponent (other seats)"))
    paragraph = text[text.index("From the environment alone") :].split("\n\n")[0]
    quoted = re.findall(r"\b0\.\d{3}\b", paragraph)
    assert quoted and all(q in table for q in quoted), quoted


@pytest.mark.slow
def test_the_main_job_prints_the_table_getting_started_shows(tmp_path: Path) -> None:
    """The README's main job, as a user runs it (about 5 minutes on 2 cores), prints exactly the documented table."""
    parlour = Path(sys.executable).parent / "parlour"
    config = ROOT / "configs" / "six_suspects" / "rl_quick.yaml"
    done = subprocess.run(
        [str(parlour), "train", str(config), "--out", str(tmp_path / "run"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    head = "| policy | opponent (other seats)"
    assert _table(done.stdout, head) == _table(GETTING_STARTED.read_text(), head)
