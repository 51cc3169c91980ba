"""`parlour play` (a person at the table, driven here through its input) and `parlour replay`."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, make, replay
from parlour.training.cli import main
from parlour.training.play import describe, parse_choice, play_game_with_person, plural, positions, replay_game

#: A line of the list of legal moves: ``  [3] peek Charles, top card``.
LISTED = re.compile(r"^  \[(\d+)\] (.+)$", re.MULTILINE)


class Person:
    """Answers each prompt: first some bad input, then a move of the list the screen showed last, chosen by
    ``answer(listed)`` from the ``(position, name)`` pairs listed. Keeps the names of the moves it meant to make."""

    def __init__(self, bad: list[str] | None = None, answer: Callable[[list[tuple[int, str]]], str] | None = None):
        self.screen: list[str] = []
        self.bad = list(bad or [])
        self.answer = answer or (lambda listed: str(listed[0][0]))
        self.meant: list[str] = []

    def say(self, text: str) -> None:
        self.screen.append(text)

    def listed(self) -> list[tuple[int, str]]:
        listing = next(t for t in reversed(self.screen) if "Legal actions:" in t)
        return [(int(k), name) for k, name in LISTED.findall(listing)]

    def ask(self, prompt: str) -> str:
        assert prompt == "> "
        if self.bad:
            return self.bad.pop(0)
        listed = self.listed()
        assert [k for k, _ in listed] == list(range(1, len(listed) + 1)), "the list is numbered 1, 2, 3, ..."
        answer = self.answer(listed)
        self.meant.append(next(name for k, name in listed if answer in (str(k), _odd_case(name))))
        return answer


def _odd_case(name: str) -> str:
    """``name`` as a careless typist might give it: case swapped, runs of spaces, spaces at both ends."""
    return "  " + "   ".join(name.swapcase().split(" ")) + " \t"


def _persons_moves(record: dict[str, Any], seat: int) -> list[str]:
    return [step["text"] for step in record["actions"] if step["seat"] == seat]


@pytest.mark.parametrize(
    ("how", "answer"),
    [
        ("last place on the list", lambda listed: str(listed[-1][0])),
        ("second place on the list", lambda listed: str(listed[min(1, len(listed) - 1)][0])),
        ("its name in odd case and spacing", lambda listed: _odd_case(listed[-1][1])),
    ],
    ids=["last-position", "second-position", "odd-name"],
)
@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_a_person_plays_a_whole_game_by_list_position_or_name(
    name: str, how: str, answer: Callable[[list[tuple[int, str]]], str], tmp_path: Path
) -> None:
    person = Person(answer=answer)
    path = tmp_path / "game.json"
    record = play_game_with_person(name, seat=1, seed=4, record_path=path, ask=person.ask, say=person.say)
    screen = "\n".join(person.screen)
    assert "The game is over." in screen and f"Game record saved to {path}" in screen
    assert person.meant and _persons_moves(record, 1) == person.meant, f"played by {how}: not the moves meant"
    saved = json.loads(path.read_text())
    assert saved["players"][1] == "person" and saved["human_seat"] == 1 and saved["outcome"] == record["outcome"]
    replay(saved)  # the record reproduces the game
    # another seat's move is announced, never named: its text may hold what only that seat knows
    for step in saved["actions"]:
        if step["seat"] != 1:
            assert f"moved: {step['text']}" not in screen
    assert sum(line.endswith(") moved.") for line in screen.splitlines()) == sum(
        s["seat"] != 1 for s in saved["actions"]
    )


def test_the_prompt_says_what_is_accepted_and_help_explains_numbers(tmp_path: Path) -> None:
    said: list[str] = []
    answers = iter(["?", "q"])
    path = tmp_path / "g.json"
    play_game_with_person(
        "six_suspects_v0", seat=0, seed=1, record_path=path, ask=lambda p: next(answers), say=said.append
    )
    screen = "\n".join(said)
    assert "Type a number from 1 to 12 (a place on the list) or a move's name; '?' for help, 'q' to stop." in screen
    assert "A bare number is always a list position; '#N' plays the move whose action id is N" in screen
    assert "  [2] peek Beatrice, top card  (#1)" in screen  # '?' lists the ids beside the places


SIX = "six_suspects_v0"
ELEVEN = "goes_to_eleven_v0"
PILES = ["play 7 on pile 1", "play 7 on pile 10"]


# At 6 Suspects' first decision (seed 0, seat 0) the 12 peeks are legal, ids 0 .. 11, listed in that order; ``legal``
# None is that list, else the names of the moves taken as legal.
@pytest.mark.parametrize(
    ("game", "legal", "text", "move", "message"),
    [
        (SIX, None, "1", "peek Albert, top card", ""),  # a place on the list, though 1 is also a legal action id
        (SIX, None, "12", "peek Francine, bottom card", ""),
        (SIX, None, " 3 ", "peek Charles, top card", ""),
        (SIX, None, "#1", "peek Beatrice, top card", ""),  # an action id
        (SIX, None, "# 11", "peek Francine, bottom card", ""),
        (SIX, None, "peek Beatrice, top card", "peek Beatrice, top card", ""),
        (SIX, None, "  PEEK   beatrice,   TOP card \t", "peek Beatrice, top card", ""),
        (SIX, None, "peek beatrice bottom", "peek Beatrice, bottom card", ""),  # starts of words, one move fits
        # a whole name wins where the starts of its words fit another legal move too ("1" starts "10")
        (ELEVEN, PILES, "PLAY 7 on   pile 1", "play 7 on pile 1", ""),
        (ELEVEN, PILES, "play 7 pile 1", None, "'play 7 pile 1' fits 2 legal moves (1, 2 on the list); type more"),
        (
            SIX,
            None,
            "0",
            None,
            "0 is not on the list; type a number from 1 to 12 or a listed move's name ('?' for help)",
        ),
        (SIX, None, "13", None, "13 is not on the list; type a number from 1 to 12"),
        (SIX, None, "-1", None, "-1 is not on the list; type a number from 1 to 12"),
        (SIX, None, "9" * 5000, None, "99999999999999999999... is not on the list"),  # int() would refuse it
        (SIX, None, "#12", None, "#12 is not the id of a legal move now; type a number from 1 to 12"),
        (SIX, None, "vote albert", None, "'vote Albert' is not a legal move now; type a number from 1 to 12"),
        (SIX, None, "no such move", None, "'no such move' names no legal move; type a number from 1 to 12"),
        (SIX, None, "²", None, "'²' names no legal move"),  # str.isdigit() takes it, int() does not
        (SIX, None, "!!!", None, "'!!!' names no legal move"),
        (SIX, None, "", None, "Nothing typed; type a number from 1 to 12 or a listed move's name ('?' for help)"),
        (SIX, None, "Peek Bea", None, "'Peek Bea' fits 2 legal moves (2, 8 on the list); type more of the name, or"),
        (SIX, ["vote Edgar"], "2", None, "2 is not on the list; type 1 or a listed move's name ('?' for help)"),
    ],
)
def test_an_entry_names_one_legal_move_or_gets_one_line(
    game: str, legal: list[str] | None, text: str, move: str | None, message: str
) -> None:
    env = make(game)
    env.reset(seed=0)
    raw = env.unwrapped
    ids = env.legal_actions() if legal is None else [raw.parse_action(name) for name in legal]
    if legal is None:
        assert ids == list(range(12))
    chosen, said = parse_choice(env, ids, text)
    assert (None if chosen is None else raw.action_names[chosen]) == move
    if move is not None:
        assert said == ""
    else:
        assert said.startswith(message) and "\n" not in said, said


@pytest.mark.parametrize(
    ("bad", "complaint"),
    [
        ("0", "0 is not on the list"),
        ("13", "13 is not on the list"),
        ("no such move", "'no such move' names no legal move"),
        ("vote Edgar", "'vote Edgar' is not a legal move now"),
        ("#13", "#13 is not the id of a legal move now"),
    ],
)
def test_a_bad_entry_gets_one_line_and_the_question_again(bad: str, complaint: str, tmp_path: Path) -> None:
    person = Person(bad=[bad])
    path = tmp_path / "g.json"
    record = play_game_with_person("six_suspects_v0", seat=0, seed=1, record_path=path, ask=person.ask, say=person.say)
    (said,) = [t for t in person.screen if complaint in t]
    assert said.startswith(complaint) and said.endswith(
        "type a number from 1 to 12 or a listed move's name ('?' for help)"
    )
    assert "\n" not in said  # one line
    # then the question again (the next answer, place 1, is played) and the game to its end
    assert _persons_moves(record, 0)[0] == "peek Albert, top card"
    assert any("The game is over." in t for t in person.screen) and record["outcome"]


# ---------------------------------------------------------------------------------------------- over a pipe
def _read_until(proc: subprocess.Popen[bytes], marker: bytes, seen: bytearray, timeout: float = 90) -> bytes:
    """The child's output up to ``marker`` (appended to ``seen``), read as it comes: fails, not hangs, if the marker
    is not written within ``timeout`` seconds -- a prompt written only after a line is read never comes."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    start = len(seen)
    while marker not in seen[start:]:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"no {marker!r} within {timeout} s; the child wrote: {bytes(seen[-500:])!r}")
        ready, _, _ = select.select([proc.stdout], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                pytest.fail(f"the child closed its output before {marker!r}: {bytes(seen[-500:])!r}")
            seen += chunk
    return bytes(seen[start:])


def _child(*argv: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the child's stdout is block-buffered
    return subprocess.Popen(
        [sys.executable, "-m", "parlour.training.cli", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def test_over_a_pipe_each_prompt_is_readable_before_the_answer_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    proc = _child("play", "six_suspects_v0", "--seat", "0", "--seed", "4", "--record", str(path))
    assert proc.stdin is not None
    seen = bytearray()
    try:
        first = _read_until(proc, b"\n> ", seen)  # nothing sent yet
        assert b"[12] peek Francine, bottom card" in first and first.endswith(b"'q' to stop.\n> ")
        proc.stdin.write(b"2\n")
        proc.stdin.flush()
        _read_until(proc, b"\n> ", seen)  # the next prompt, before the next answer
        proc.stdin.write(b"q\n")
        proc.stdin.close()
        assert proc.wait(timeout=90) == 0
        seen += proc.stdout.read() if proc.stdout else b""
    finally:
        proc.kill()
    lines = seen.decode().splitlines()
    assert "> 2" in lines and "> q" in lines  # each answer echoed after its prompt
    assert json.loads(path.read_text())["actions"][0]["text"] == "peek Beatrice, top card"
    proc = _child("replay", str(path))
    try:
        _read_until(proc, b"\n> ", seen)  # replay's prompt too
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_a_replay_whose_reader_goes_away_stops_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    person = Person()
    play_game_with_person("six_suspects_v0", seat=0, seed=1, record_path=path, ask=person.ask, say=person.say)
    proc = subprocess.Popen(
        [sys.executable, "-m", "parlour.training.cli", "replay", str(path), "--god"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        _read_until(proc, b"\n> ", bytearray())  # the replay waits at its first prompt
        proc.stdout.close()  # the reader goes away (`parlour replay ... | head`)
        proc.stdin.write(b"\n" * 100)  # then the next moves are asked for
        proc.stdin.close()
        assert proc.wait(timeout=90) == 1
        assert proc.stderr.read() == b""
    finally:
        proc.kill()


def test_play_through_its_standard_input(tmp_path: Path) -> None:
    parlour = Path(sys.executable).parent / "parlour"
    path = tmp_path / "g.json"
    cmd = [str(parlour), "play", "six_suspects_v0", "--seat", "0", "--seed", "7", "--record", str(path)]
    done = subprocess.run(cmd, input="peek albert top\n?\nq\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "You are player_0" in done.stdout and "Game stopped." in done.stdout
    record = json.loads(path.read_text())
    assert record["actions"][0] == {"seat": 0, "agent": "player_0", "action": 0, "text": "peek Albert, top card"}
    replay(record)
    bad = subprocess.run([*cmd[:3], "--seat", "9"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "parlour play: --seat 9 is out of range: expected a seat in [0, 3]" in bad.stderr


def test_play_over_a_pipe_echoes_each_move_after_its_prompt(tmp_path: Path) -> None:
    """Driven from a pipe (a script, a test), each answer is shown after its prompt on a line of its own."""
    path = tmp_path / "game.json"
    answers = "\n".join(["?", "q"]) + "\n"
    proc = subprocess.run(
        [sys.executable, "-m", "parlour.training.cli", "play", "six_suspects_v0", "--seat", "0", "--seed", "4",
         "--record", str(path)],
        input=answers, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    assert "> ?" in lines and "> q" in lines, proc.stdout[-2000:]
    assert not any(line.startswith("> ") and line not in ("> ?", "> q") for line in lines)


# ---------------------------------------------------------------------------------------------- the seed
def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


@pytest.mark.parametrize("seed", [["--seed", "3"], []], ids=["given", "drawn"])
def test_play_and_the_replay_of_its_record_show_one_seed(
    seed: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "g.json"
    _stdin(monkeypatch, "1\nq\n")
    assert main(["play", "six_suspects_v0", "--seat", "0", *seed, "--record", str(path)]) == 0
    (played,) = re.findall(r"The deal's seed was (\d+) \(--seed \1 deals this game again", capsys.readouterr().out)
    if seed:
        assert played == seed[1]
    _stdin(monkeypatch, "q\n")
    assert main(["replay", str(path)]) == 0
    (replayed,) = re.findall(r"^six_suspects_v0, 4 players, seed (\d+), ", capsys.readouterr().out, re.MULTILINE)
    assert replayed == played == str(json.loads(path.read_text())["game_seed"])
    # --seed N deals the game again: the same answers give the same record
    again = tmp_path / "again.json"
    _stdin(monkeypatch, "1\nq\n")
    assert main(["play", "six_suspects_v0", "--seat", "0", "--seed", played, "--record", str(again)]) == 0
    capsys.readouterr()
    first, second = json.loads(path.read_text()), json.loads(again.read_text())
    assert first["actions"] == second["actions"] and first["game_seed"] == second["game_seed"]


def test_a_seed_out_of_range_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for seed in ("-1", str(2**63 - 1)):
        assert main(["play", "six_suspects_v0", "--seed", seed, "--record", str(tmp_path / "g.json")]) == 2
        err = capsys.readouterr().err
        assert err == f"parlour play: --seed {seed} is out of range: expected an integer in [0, 2**63 - 2]\n"


# ---------------------------------------------------------------------------------------------- plurals
@pytest.mark.parametrize(
    ("count", "word", "expected"),
    [(0, "card", "0 cards"), (1, "card", "1 card"), (2, "card", "2 cards"), (1, "legal action", "1 legal action")],
)
def test_plural(count: int, word: str, expected: str) -> None:
    assert plural(count, word) == expected


def test_what_play_and_replay_print_reads_right_for_one(tmp_path: Path) -> None:
    """One move in the record, one legal action at a decision: "1 move", "from 1 legal action"."""
    path = tmp_path / "one.json"
    person = Person()
    play_game_with_person(  # player_0, a bot, moves; the person quits at once
        "six_suspects_v0", seat=1, seed=2, record_path=path, ask=lambda p: "q", say=person.say
    )
    screens: list[str] = []
    replay_game(path, ask=lambda p: "q", say=screens.append)
    assert "six_suspects_v0, 4 players, seed 2, 1 move; as player_1 saw it." in screens[0]
    # a game of random moves, to a decision with one legal action
    env = make("goes_to_eleven_v0")
    env.reset(options={"game_seed": 0})
    rng = np.random.default_rng(0)
    while len(env.legal_actions()) != 1:
        env.step(int(rng.choice(env.legal_actions())))
    k = len(env.record()["actions"])
    env.step(env.legal_actions()[0])
    record = env.record() | {"players": ["random"] * env.num_players}
    shown = describe(record, positions(record), k, None)
    assert shown.endswith(", from 1 legal action") and "1 legal actions" not in shown


# ---------------------------------------------------------------------------------------------- replay
def test_replay_steps_forward_and_back_and_hides_other_seats_moves(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    person = Person()
    play_game_with_person("goes_to_eleven_v0", seat=0, seed=2, record_path=path, ask=person.ask, say=person.say)
    record = json.loads(path.read_text())
    states = positions(record)
    assert len(states) == len(record["actions"]) + 1
    for k, step in enumerate(record["actions"]):
        seen = describe(record, states, k, "player_0")
        assert seen.splitlines()[1:-1] == states[k].render_text(perspective="player_0").splitlines()
        if step["agent"] == "player_0":
            assert f"chose [{step['action']}] {step['text']}" in seen
        else:
            assert step["text"] not in seen.splitlines()[-1] and seen.endswith(" moves")
        assert f"chose [{step['action']}] {step['text']}" in describe(record, states, k, None)  # god view
    screens: list[str] = []
    n = len(record["actions"])
    answers = iter(["n", "n", "b", "5", "?", "bogus", str(n + 2), "²", "q"])
    replay_game(path, ask=lambda p: next(answers), say=screens.append)
    moves = [s.splitlines()[0] for s in screens if s.startswith("--- ")]
    assert moves == [f"--- move {k} of {n} ---" for k in (1, 2, 3, 2, 5, 5, 5, 5, 5)]
    said = "\n".join(screens)
    assert "not a command: 'bogus'" in said and "not a command: '²'" in said
    assert f"no move {n + 2}: type a number from 1 to {n + 1} ({n + 1} is the end)" in said


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["actions"].__setitem__(0, r["actions"][0] | {"action": 9999}), "illegal action 9999"),
        (lambda r: r.__setitem__("format", "something"), "is not a game record"),
    ],
)
def test_replay_refuses_a_record_that_does_not_reproduce(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, message: str
) -> None:
    path = tmp_path / "g.json"
    person = Person()
    play_game_with_person("six_suspects_v0", seat=0, seed=1, record_path=path, ask=person.ask, say=person.say)
    record = json.loads(path.read_text())
    edit(record)  # type: ignore[operator]
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 2
    assert message in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "none.json")]) == 2
    assert "game record not found" in capsys.readouterr().err


def test_a_replay_calls_the_person_you_only_from_their_own_seat(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    person = Person()
    play_game_with_person("six_suspects_v0", seat=0, seed=4, record_path=path, ask=person.ask, say=person.say)
    saved = json.loads(path.read_text())
    states = positions(saved)
    first = next(k for k, step in enumerate(saved["actions"]) if step["seat"] == 0)
    assert "player_0 (you) chose" in describe(saved, states, first, "player_0")
    watched = describe(saved, states, first, "player_2")
    assert watched.splitlines()[-1] == "player_0 (person) moves"  # not "(you)": player_2 watches
    assert "player_0 (person) chose" in describe(saved, states, first, None)  # the god view
