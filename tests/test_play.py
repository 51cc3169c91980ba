"""`parlour play` (a person at the table, driven here through its input) and `parlour replay`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parlour.envs import ENVIRONMENTS, make, replay
from parlour.training.cli import main
from parlour.training.play import describe, parse_choice, play_game_with_person, positions, replay_game


class Person:
    """Answers each prompt: first some bad input, then the first legal action the screen listed."""

    def __init__(self, bad: list[str] | None = None) -> None:
        self.screen: list[str] = []
        self.bad = list(bad or [])

    def say(self, text: str) -> None:
        self.screen.append(text)

    def ask(self, prompt: str) -> str:
        if self.bad:
            return self.bad.pop(0)
        listing = next(t for t in reversed(self.screen) if "Legal actions:" in t)
        return re.findall(r"\[(\d+)\]", listing)[0]


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_a_person_plays_a_whole_game_and_its_record_replays(name: str, tmp_path: Path) -> None:
    person = Person(bad=["?", "no such move", "9999"])
    path = tmp_path / "game.json"
    record = play_game_with_person(name, seat=1, seed=4, record_path=path, ask=person.ask, say=person.say)
    screen = "\n".join(person.screen)
    assert "Type the number of a legal action" in screen  # '?'
    assert "no legal action matches 'no such move'" in screen
    assert "9999 is not a legal action now" in screen
    assert "The game is over." in screen and f"Game record saved to {path}" in screen
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


def test_words_pick_the_one_action_they_name() -> None:
    env = make("six_suspects_v0")
    env.reset(seed=0)
    legal = env.legal_actions()
    assert parse_choice(env, legal, "peek beatrice bottom") == (legal[7], "")
    action, message = parse_choice(env, legal, "peek bea")
    assert action is None and "'peek bea' matches 2 actions; be more specific" in message
    assert parse_choice(env, legal, "3") == (3, "")


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
    answers = iter(["n", "n", "b", "5", "?", "bogus", "q"])
    replay_game(path, ask=lambda p: next(answers), say=screens.append)
    moves = [s.splitlines()[0] for s in screens if s.startswith("--- ")]
    n = len(record["actions"])
    assert moves == [f"--- move {k} of {n} ---" for k in (1, 2, 3, 2, 5, 5, 5)]
    assert "not a command: 'bogus'" in "\n".join(screens)


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


def test_a_replay_calls_the_person_you_only_from_their_own_seat(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    person = Person()
    play_game_with_person("six_suspects_v0", seat=0, seed=4, record_path=path, ask=person.ask, say=person.say)
    saved = json.loads(path.read_text())
    states = positions(saved)
    first = next(k for k, step in enumerate(saved["actions"]) if step["seat"] == 0)
    assert "player_0 (you) chose" in describe(saved, states, first, "player_0")
    watched = describe(saved, states, first, "player_2")
    assert "player_0 (person) moves" in watched and "(you)" not in watched
    assert "player_0 (person) chose" in describe(saved, states, first, None)  # the god view


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
