"""Every figure printed in README.md and docs/ has a guard (issue 38, item 5), so that a figure cannot go stale again.

A *figure* is a decimal with three places (``0.692``, ``-0.039``, ``1.000``), an interval of two (``0.640–0.743``),
a count with thousands separators (``200,000``) or a ratio (``3.6×``); where a figure is quoted from a source, a
percentage (``99%``) is one too. Each stretch of a page that prints figures is registered in one of three tables:

- ``QUOTES``: figures quoted from a file the suite guards -- BASELINES.md (itself the rendering of the committed
  results, ``tests/test_baselines_table.py::test_baselines_md_is_what_the_stored_results_render``), a config, or
  another page's table. Every figure there must be one its source prints, compared as strings formatted as there.
- ``COMMAND_OUTPUTS``: what a deterministic command printed. The command must be named beside it; where a test
  reruns it (slow tier) the entry names that test, otherwise its reason says why not.
- ``TIMINGS_ALLOW_LIST``: timings, which vary from machine to machine and run to run, so no value is checked: the
  command that measured them must be named beside them, and the reason says so.

``test_every_figure_in_the_docs_has_a_guard`` fails on a figure outside all three, so a new figure needs an entry.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GETTING_STARTED = ROOT / "docs" / "getting-started.md"

#: A figure: a decimal with three places or an interval of two, a count with thousands separators, a ratio.
FIGURE = re.compile(
    r"(?<![\d.])[+-]?\d+\.\d{3}(?:–[+-]?\d+\.\d{3})?(?![\d])"
    r"|(?<![\d,.\[])\d{1,3}(?:,\d{3})+(?![\d,\]])"
    r"|(?<![\d.])\d+(?:\.\d+)?×"
)
#: A percentage, or a range of them: a figure where it is quoted from a source.
PERCENT = re.compile(r"(?<![\d.])\d+(?:–\d+)?%")


@dataclass(frozen=True)
class Span:
    """A stretch of a file (``path`` from the repository root): from ``start`` -- a heading line, or text that occurs
    once in the file -- to ``until``: ``"block"``, the end of the paragraph, list item or table ``start`` is in;
    ``"section"``, the next heading (of the same or a higher level, for a heading ``start``); or a text that follows
    ``start`` (the span stops before it). An empty ``start`` is the whole file; ``after``, a heading line, looks for
    ``start`` only below it."""

    path: str
    start: str = ""
    until: str = "block"
    after: str = ""


@dataclass(frozen=True)
class Quote:
    """Figures in ``span`` quoted from ``sources``: each must be a figure one of the sources prints."""

    span: Span
    sources: tuple[Span, ...]


@dataclass(frozen=True)
class Output:
    """What the command (or commands) matching ``commands`` printed, named inside ``span``; ``rerun`` names the test
    in this file that reruns it and compares, or is empty, and ``reason`` then says why no test does."""

    span: Span
    commands: tuple[str, ...]
    rerun: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Measurement:
    """Timings in ``span``, measured by the commands matching ``commands`` (each named inside ``span``): not
    checked, for ``reason``."""

    span: Span
    commands: tuple[str, ...]
    reason: str


def _baselines(game: str = "") -> Span:
    """BASELINES.md, or one game's section of it (its rl track, distilled track and exploitability table)."""
    return Span("BASELINES.md", f"## {game}", "section") if game else Span("BASELINES.md")


BASELINES_DOC = "docs/baselines.md"
RL_RESULTS, EXPLOIT = "## The rl track's results", "## Approximate exploitability"
RL_QUICK = Span("configs/six_suspects/rl_quick.yaml")
ISMCTS = Span("docs/interop.md", "`ISMCTSPolicy` seats that search", "heuristic itself wins")
MAIN_JOB_TABLE = Span("docs/getting-started.md", "| policy | opponent (other seats)")

QUOTES: tuple[Quote, ...] = (
    # docs/baselines.md: the rl track's results, one game a list item.
    Quote(Span(BASELINES_DOC, "`BASELINES.md` opens with an at-a-glance table"), (_baselines(),)),
    Quote(Span(BASELINES_DOC, "- **6 Suspects**: MaskablePPO"), (_baselines("six_suspects_v0"),)),
    Quote(Span(BASELINES_DOC, "- **This Game Goes to Eleven**", after=RL_RESULTS), (_baselines("goes_to_eleven_v0"),)),
    Quote(Span(BASELINES_DOC, "- **Lady Alice** (`lady_alice_v2`"), (_baselines("lady_alice_v2"),)),
    Quote(Span(BASELINES_DOC, "- **Elevenses** (scenario set `v2`)"), (_baselines("elevenses_v0"),)),
    # docs/baselines.md: the distilled track's results, one paragraph cut at each game.
    Quote(
        Span(BASELINES_DOC, "For 6 Suspects the policy", "For This Game Goes to Eleven (`full.yaml`"),
        (_baselines("six_suspects_v0"),),
    ),
    Quote(
        Span(BASELINES_DOC, "For This Game Goes to Eleven (`full.yaml`", "For Lady Alice (`lady_alice_v2`"),
        (_baselines("goes_to_eleven_v0"),),
    ),
    Quote(
        Span(BASELINES_DOC, "For Lady Alice (`lady_alice_v2`", "For Elevenses (`full.yaml`"),
        (_baselines("lady_alice_v2"),),
    ),
    Quote(Span(BASELINES_DOC, "For Elevenses (`full.yaml`"), (_baselines("elevenses_v0"),)),
    # docs/baselines.md: what learning adds, one paragraph cut at each game.
    Quote(
        Span(BASELINES_DOC, "At the heuristic's table: in 6 Suspects", "in Goes to Eleven (no feature set"),
        (_baselines("six_suspects_v0"),),
    ),
    Quote(
        Span(BASELINES_DOC, "in Goes to Eleven (no feature set", "in Lady Alice the clone alone"),
        (_baselines("goes_to_eleven_v0"),),
    ),
    Quote(
        Span(BASELINES_DOC, "in Lady Alice the clone alone", "Elevenses the clone ("),
        (_baselines("lady_alice_v2"),),
    ),
    Quote(Span(BASELINES_DOC, "Elevenses the clone ("), (_baselines("elevenses_v0"),)),
    # docs/baselines.md: approximate exploitability, one game a list item.
    Quote(Span(BASELINES_DOC, "Each game's exploitability table in `BASELINES.md`"), (_baselines(),)),
    Quote(Span(BASELINES_DOC, "- **This Game Goes to Eleven**", after=EXPLOIT), (_baselines("goes_to_eleven_v0"),)),
    Quote(Span(BASELINES_DOC, "- **Lady Alice** (the bound, on"), (_baselines("lady_alice_v2"),)),
    Quote(Span(BASELINES_DOC, "- **Elevenses** (the bound)"), (_baselines("elevenses_v0"),)),
    Quote(Span(BASELINES_DOC, "- **6 Suspects** (the bound)"), (_baselines("six_suspects_v0"),)),
    # docs/interop.md: the bots' own rates beside the ISMCTS evaluation.
    Quote(Span("docs/interop.md", "heuristic itself wins", "(BASELINES.md)"), (_baselines("six_suspects_v0"),)),
    # docs/getting-started.md: the main job's budget, and the prose under its table.
    Quote(Span("docs/getting-started.md", "Set up, then train reinforcement learning from scratch on 6"), (RL_QUICK,)),
    Quote(
        Span("docs/getting-started.md", "From the environment alone", "On our 2-core machine the command took"),
        (MAIN_JOB_TABLE, RL_QUICK),
    ),
    Quote(
        Span("docs/getting-started.md", "The distilled quick run,", "it reaches"),
        (Span("configs/six_suspects/quick.yaml"),),
    ),
    # docs/jax.md: the shipped jitted seed's scalar evaluation, beside its JAX evaluation at 500 deals.
    Quote(
        Span("docs/jax.md", "beside its final scalar evaluation", "the two backends agree"),
        (_baselines("six_suspects_v0"),),
    ),
    # README.md: the JAX speed figures are docs/jax.md's (where they are measured).
    Quote(Span("README.md", "## At accelerator scale (JAX)", "section"), (Span("docs/jax.md", "## Speed", "section"),)),
)

#: The bot matches docs/opponents.md shows: env and games.
MATCHES = (("six_suspects_v0", 300), ("goes_to_eleven_v0", 300), ("lady_alice_v2", 100), ("elevenses_v0", 100))

JAX_POINT = Span("docs/jax.md", "A curve point is one draw at", "the two backends agree")

COMMAND_OUTPUTS: tuple[Output, ...] = (
    Output(
        Span("docs/jax.md", "A curve point is one draw at", "beside its final scalar evaluation"),
        (
            r"python -m parlour\.training\.jax_points docs/archive/seeds/six_suspects_v0_rl_jaxppo_seed0\.json --tables "
            r"random,six_suspects_heuristic --deals 500",
        ),  # fmt: skip
        rerun="test_the_jax_evaluation_of_the_shipped_seed_prints_what_jax_md_shows",
    ),
    Output(
        Span(BASELINES_DOC, "### Coverage of the intervals", "section"),
        (r"python -m parlour\.training\.coverage",),
        rerun="test_the_coverage_tables_are_what_the_simulation_prints",
    ),
    Output(
        Span("docs/exploitability.md", "## The exact check", "section"),
        (r"python -m parlour\.training\.publish\.exploit_exact",),
        reason="the exact figures (tree size, own and best-response values, gains, NashConv, the omniscient gain) are "
        "rechecked by tests/test_exploit_exact.py::test_the_pages_exact_figures_are_current (slow tier); the "
        "approximate ones come from training best responses (about 5 minutes) and are not rerun",
    ),
    Output(
        Span("docs/getting-started.md", "## Train a first policy", "From the environment alone"),
        (r"parlour train configs/six_suspects/rl_quick\.yaml",),
        rerun="test_the_main_job_prints_the_table_getting_started_shows",
    ),
    Output(
        Span("docs/opponents.md", "## Bot matches", "section"),
        tuple(rf"parlour match {env} --players 4 --games {games} --seed 0 --no-progress" for env, games in MATCHES),
        rerun="test_the_bot_matches_print_the_tables_opponents_shows",
    ),
    Output(
        Span("docs/getting-started.md", "The distilled quick run,"),
        (r"parlour train configs/six_suspects/quick\.yaml",),
        rerun="test_the_distilled_quick_run_reaches_what_getting_started_says",
    ),
    Output(
        ISMCTS,
        (
            r"parlour evaluate six_suspects_v0 --policies parlour\.baselines\.ismcts:ISMCTSPolicy,search "
            r"--opponents six_suspects_heuristic --games 10",
        ),
        rerun="test_the_ismcts_evaluation_prints_what_interop_quotes",
    ),
    Output(
        Span("docs/jax.md", "## Exactness: lock-step checks", "section"),
        (r"python -m parlour\.envs\.jax_core\.lockstep", r"--games 2000 --seed 11"),
        reason="the lock-step check's counts at 2,000 games per table; tests/test_jax_cores.py runs the same check "
        "(4,000 games a table in the slow tier) and asserts agreement, not these counts",
    ),
)

#: Allow-list of timings: machine-dependent, so their values are not checked; each is regenerated by the command
#: named beside it (the test checks that it is named).
TIMINGS_ALLOW_LIST: tuple[Measurement, ...] = (
    Measurement(
        Span("README.md", "## At accelerator scale (JAX)", "section"),
        (
            r"parlour bench --jax --seconds 3",
            r"parlour bench --train configs/six_suspects/rl\.yaml --trainers sb3,jax --threads 1 --beside 0 "
            r"--steps 32768",
        ),
        "timings: machine-dependent, regenerated by `parlour bench --jax` and `parlour bench --train` (docs/jax.md's)",
    ),
    Measurement(
        Span("docs/jax.md", "`parlour bench --jax` measures decisions per second", "Training, `parlour bench --train"),
        (r"parlour bench --jax --seconds 3",),
        "timings: machine-dependent, regenerated by `parlour bench --jax --seconds 3`",
    ),
    Measurement(
        Span("docs/jax.md", "Training, `parlour bench --train", "section"),
        (
            r"parlour bench --train configs/six_suspects/rl\.yaml --trainers sb3,jax --threads 1 --beside 0 "
            r"--steps 32768",
        ),
        "timings: machine-dependent, regenerated by `parlour bench --train ... --trainers sb3,jax`",
    ),
    Measurement(
        Span("docs/jax.md", "### Where the jitted trainer's time goes", "section"),
        (
            r"parlour bench --train CONFIG\[,CONFIG…\] --profile",
            r"parlour bench --train configs/lady_alice/rl\.yaml --profile --updates 2",
        ),
        "timings: machine-dependent, regenerated by `parlour bench --train ... --profile`",
    ),
    Measurement(
        Span("docs/training.md", "**Past snapshots**", "block"),
        (
            r"parlour bench --train configs/lady_alice/rl_jax_ablation\.yaml --trainers jax --threads 1 --beside 0 "
            r"--steps 32768",
        ),
        "timings: machine-dependent, regenerated by `parlour bench --train configs/lady_alice/rl_jax_ablation.yaml ...`",
    ),
    Measurement(
        Span("docs/speed.md", "# Speed", "The null game shows"),
        (r"parlour bench --seconds 3",),
        "timings: machine-dependent, regenerated by `parlour bench --seconds 3`",
    ),
    Measurement(
        Span("docs/speed.md", "## What the incremental observations save", "section"),
        (r"parlour bench --observer --seconds 6",),
        "timings: machine-dependent, regenerated by `parlour bench --observer --seconds 6`",
    ),
    Measurement(
        Span("docs/speed.md", "## When Ray pays off", "section"),
        (
            r"parlour bench --train configs/six_suspects/plain\.yaml --trainers sb3,rllib --threads 1 --beside 0 "
            r"--steps 32768",
            r"parlour bench six_suspects_v0 elevenses_v0 --eval-workers 1,2 --games 40",
        ),
        "timings: machine-dependent, regenerated by `parlour bench --train` and `parlour bench --eval-workers`",
    ),
    Measurement(
        Span("docs/getting-started.md", "On our 2-core machine the command took"),
        (r"metrics\.json",),
        "timings: machine-dependent, the main job's own (its run folder's metrics.json)",
    ),
    Measurement(
        Span("docs/getting-started.md", "The learner's thread count matters on a shared machine"),
        (r"parlour bench --train configs/six_suspects/plain\.yaml --steps 8192 --threads 1,2 --beside 1",),
        "timings: machine-dependent, regenerated by `parlour bench --train ... --threads 1,2 --beside 1`",
    ),
)


def _read(path: str, files: Mapping[str, str] | None = None) -> str:
    """A file's text, or the one ``files`` gives in its place (to check a changed copy)."""
    if files is not None and path in files:
        return files[path]
    return (ROOT / path).read_text(encoding="utf-8")


def _heading_level(line: str) -> int:
    match = re.match(r"(#+) ", line)
    return len(match.group(1)) if match else 0


def _loose(anchor: str) -> str:
    """A pattern for ``anchor`` wherever the text's lines break: each space matches any whitespace."""
    return r"\s+".join(re.escape(word) for word in anchor.split())


def bounds(span: Span, files: Mapping[str, str] | None = None) -> tuple[str, int, int]:
    """The file's text and where ``span`` begins and ends in it."""
    text = _read(span.path, files)
    if not span.start:
        return text, 0, len(text)
    heading = _heading_level(span.start)
    below, above = bounds(Span(span.path, span.after, "section"), files)[1:] if span.after else (0, len(text))
    pattern = rf"^{re.escape(span.start)}$" if heading else _loose(span.start)  # a heading is a whole line
    starts = [m.start() for m in re.finditer(pattern, text[below:above], flags=re.MULTILINE)]
    where = f"{span.path} (under {span.after!r})" if span.after else span.path
    assert len(starts) == 1, f"{where}: {span.start!r} occurs {len(starts)} times; an anchor must occur once"
    begin = below + starts[0]
    if span.until not in ("block", "section"):
        until = re.compile(_loose(span.until)).search(text, begin + 1)
        assert until, f"{span.path}: {span.until!r} does not follow {span.start!r}"
        return text, begin, until.start()
    end, fenced = begin, False
    for k, line in enumerate(text[begin:].splitlines(keepends=True)):
        if k and not fenced:
            level = _heading_level(line)
            if span.until == "section" and level and (not heading or level <= heading):
                break
            if span.until == "block" and (not line.strip() or level or line.startswith("- ")):
                break
        if line.startswith("```"):
            fenced = not fenced
        end += len(line)
    return text, begin, end


def span_text(span: Span, files: Mapping[str, str] | None = None) -> str:
    text, begin, end = bounds(span, files)
    return text[begin:end]


def figures(text: str) -> list[str]:
    """The figures in a quoting text, percentages included, in order."""
    return [m.group() for m in sorted([*FIGURE.finditer(text), *PERCENT.finditer(text)], key=lambda m: m.start())]


def printed(text: str) -> set[str]:
    """What a source prints, as figures: its figures, and each integer written out with thousands separators as
    a quoting text writes it (a config's ``total_timesteps: 200000`` is ``200,000``)."""
    found = set(figures(text))
    found.update(f"{int(n):,}" for n in re.findall(r"(?<![\d.,])\d{4,}(?![\d.,])", text))
    return found


def stale(quote: Quote, files: Mapping[str, str] | None = None) -> list[str]:
    """The figures ``quote`` prints that none of its sources does."""
    sources = set().union(*(printed(span_text(source, files)) for source in quote.sources))
    return [figure for figure in figures(span_text(quote.span, files)) if figure not in sources]


def _name(span: Span) -> str:
    return f"{span.path}:{span.after[3:] + ':' if span.after else ''}{span.start[:40] or '(whole file)'}"


@pytest.mark.parametrize("quote", QUOTES, ids=[_name(q.span) for q in QUOTES])
def test_every_quoted_figure_is_one_its_source_prints(quote: Quote) -> None:
    """A figure quoted from BASELINES.md (or a config, or another page's table) is one the source now prints."""
    assert figures(span_text(quote.span)), f"{_name(quote.span)} quotes no figure: its entry is out of date"
    assert not stale(quote), f"{_name(quote.span)} quotes figures its sources do not print: {stale(quote)}"


@pytest.mark.parametrize(
    "entry",
    [*COMMAND_OUTPUTS, *TIMINGS_ALLOW_LIST],
    ids=[_name(e.span) for e in (*COMMAND_OUTPUTS, *TIMINGS_ALLOW_LIST)],
)
def test_every_output_and_timing_names_its_command_beside_it(entry: Output | Measurement) -> None:
    """The command that printed or measured a figure is written beside it, so a reader can regenerate it."""
    text = " ".join(span_text(entry.span).split())
    missing = [command for command in entry.commands if not re.search(command, text)]
    assert not missing, f"{_name(entry.span)} does not name the command that produced its figures: {missing}"
    if isinstance(entry, Output):
        assert bool(entry.rerun) != bool(entry.reason), "an output is rerun by a test, or says why not"
        assert not entry.rerun or callable(globals().get(entry.rerun)), f"no test {entry.rerun} in this file"
    else:
        assert entry.reason.startswith("timings:"), entry.reason


def _generated(text: str) -> list[tuple[int, int]]:
    """The README's generated blocks (``python -m parlour.training.docs --write README.md`` rewrites and
    ``tests/test_docs.py`` checks them)."""
    return [(m.start(), m.end()) for m in re.finditer(r"<!-- generated: (\S+) -->.*?<!-- end: \1 -->", text, re.S)]


def test_every_figure_in_the_docs_has_a_guard() -> None:
    """A figure in README.md or a page of docs/ outside every registered span has no guard: register it above."""
    spans = [e.span for e in (*QUOTES, *COMMAND_OUTPUTS, *TIMINGS_ALLOW_LIST)]
    unguarded = []
    for path in ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]:
        text = _read(path)
        covered = [bounds(span)[1:] for span in spans if span.path == path] + _generated(text)
        for match in FIGURE.finditer(text):
            if not any(begin <= match.start() < end for begin, end in covered):
                line = text.count("\n", 0, match.start()) + 1
                unguarded.append(f"{path}:{line}: {match.group()}")
    assert not unguarded, "figures with no entry in QUOTES, COMMAND_OUTPUTS or TIMINGS_ALLOW_LIST:\n" + "\n".join(
        unguarded
    )


def test_a_changed_digit_is_caught() -> None:
    """The check can fail: one digit changed in a quoted win rate, or in a quoted interval, is reported."""
    quote = next(q for q in QUOTES if q.span.start == "For 6 Suspects the policy")
    text, begin, end = bounds(quote.span)
    sources = set().union(*(printed(span_text(source)) for source in quote.sources))
    for kind in ("0.", "–"):
        match = next(m for m in FIGURE.finditer(text, begin, end) if kind in m.group())
        figure = next(
            f"{match.group()[:-1]}{digit}" for digit in "0123456789" if f"{match.group()[:-1]}{digit}" not in sources
        )
        changed = text[: match.start()] + figure + text[match.end() :]
        assert stale(quote, {quote.span.path: changed}) == [figure]
    assert stale(quote) == []


def _table(text: str, head: str) -> list[str]:
    """The Markdown table whose header row starts with ``head``, row by row (the first one, or ``[]``)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(head)), len(lines))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def _parlour(args: list[str], cwd: Path, timeout: int) -> str:
    """What a ``parlour`` command prints, as a user runs it."""
    parlour = Path(sys.executable).parent / "parlour"
    done = subprocess.run([str(parlour), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_main_job_prints_the_table_getting_started_shows(tmp_path: Path) -> None:
    """The README's main job, as a user runs it (about 5 minutes on 2 cores), prints exactly the documented table."""
    config = ROOT / "configs" / "six_suspects" / "rl_quick.yaml"
    out = _parlour(["train", str(config), "--out", str(tmp_path / "run"), "--no-progress"], tmp_path, 1800)
    assert _table(out, MAIN_JOB_TABLE.start) == _table(GETTING_STARTED.read_text(), MAIN_JOB_TABLE.start)


@pytest.mark.slow
def test_the_distilled_quick_run_reaches_what_getting_started_says(tmp_path: Path) -> None:
    """The distilled quick run (6 to 14 minutes on 2 cores) reaches the win rate and interval the page quotes."""
    config = ROOT / "configs" / "six_suspects" / "quick.yaml"
    out = _parlour(["train", str(config), "--out", str(tmp_path / "run"), "--no-progress"], tmp_path, 3600)
    row = next(r for r in _table(out, MAIN_JOB_TABLE.start) if r.startswith("| ppo | six_suspects_heuristic |"))
    rate, ci = (cell.strip() for cell in row.split("|")[4:6])
    paragraph = " ".join(span_text(Span("docs/getting-started.md", "The distilled quick run,")).split())
    assert f"it reaches {rate} ({ci}) at the heuristic's table" in paragraph


@pytest.mark.slow
def test_the_jax_evaluation_of_the_shipped_seed_prints_what_jax_md_shows() -> None:
    """docs/jax.md's JAX evaluation of 6 Suspects' shipped jitted seed (about 20 s; the jax extra) is what the
    command prints."""
    pytest.importorskip("jax")
    args = ["docs/archive/seeds/six_suspects_v0_rl_jaxppo_seed0.json", "--tables", "random,six_suspects_heuristic"]
    done = subprocess.run(
        [sys.executable, "-m", "parlour.training.jax_points", *args, "--deals", "500"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    head = "| table | games |"
    assert _table(done.stdout, head) == _table(span_text(JAX_POINT), head)


@pytest.mark.slow
def test_the_coverage_tables_are_what_the_simulation_prints() -> None:
    """docs/baselines.md's coverage tables (about 20 s) are what ``python -m parlour.training.coverage`` prints."""
    done = subprocess.run(
        [sys.executable, "-m", "parlour.training.coverage"], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    section = span_text(Span(BASELINES_DOC, "### Coverage of the intervals", "section"))
    for head in ("| intra-deal correlation |", "| spread |", "| seeds |", "| win rate |"):
        assert _table(done.stdout, head) and _table(done.stdout, head) == _table(section, head), head


@pytest.mark.slow
def test_the_bot_matches_print_the_tables_opponents_shows(tmp_path: Path) -> None:
    """Each ``parlour match`` of docs/opponents.md (about 10 minutes in all on 2 cores) prints the table under it."""
    section = span_text(Span("docs/opponents.md", "## Bot matches", "section"))
    head = "| bot | games |"
    parts = re.split(r"`(parlour match \S+ --players \d+ --games \d+ --seed 0 --no-progress)`", section)
    assert len(parts) == 9, "four match commands, each followed by its table"
    for command, after in zip(parts[1::2], parts[2::2], strict=True):
        out = _parlour(command.split()[1:], tmp_path, 3600)
        assert _table(out, head) == _table(after, head), command


@pytest.mark.slow
def test_the_ismcts_evaluation_prints_what_interop_quotes(tmp_path: Path) -> None:
    """docs/interop.md's ISMCTS evaluation (about 4 minutes on 2 cores; OpenSpiel, the interop extra) prints the
    win rates and intervals the page quotes."""
    pytest.importorskip("open_spiel")
    text = " ".join(span_text(ISMCTS).split())
    command = re.search(r"`(parlour evaluate six_suspects_v0 [^`]+)`", text)
    assert command, "the page names its evaluate command"
    out = _parlour(command.group(1).split()[1:], tmp_path, 1800)
    rates = {}
    for row in _table(out, MAIN_JOB_TABLE.start)[2:]:
        cells = [cell.strip() for cell in row.split("|")]
        rates[cells[1]] = f"{cells[4]} ({cells[5]})"
    assert f"rate of {rates['ismcts']} against {rates['search']} for `search`" in text
