"""Game records: written safely (no fixed temporary name, no link followed, nothing overwritten unasked) and read
without trust (every field checked, every move recomputed, nothing from the file printed raw); and the deal's seed,
which rebuilds every hidden card, kept from the person at the table until the game is over."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from parlour.envs import make, replay
from parlour.training.cli import main
from parlour.training.play import describe, play_game_with_person, positions

ENV = "six_suspects_v0"


class Person:
    """Plays the first legal action listed, every time."""

    def __init__(self) -> None:
        self.screen: list[str] = []

    def say(self, text: str) -> None:
        self.screen.append(text)

    def ask(self, prompt: str) -> str:
        listing = next(t for t in reversed(self.screen) if "Legal actions:" in t)
        return re.findall(r"\[(\d+)\]", listing)[0]


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A whole game of ``parlour play``, as saved."""
    path = tmp_path_factory.mktemp("rec") / "game.json"
    person = Person()
    play_game_with_person(ENV, seat=0, seed=1, record_path=path, ask=person.ask, say=person.say)
    saved: dict[str, Any] = json.loads(path.read_text())
    return saved


def write(path: Path, record: Any) -> Path:
    path.write_text(json.dumps(record))
    return path


def stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """What the person types (``input()`` reads ``sys.stdin``)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err


# ---------------------------------------------------------------------------------------------- writing
def test_a_planted_link_at_the_fixed_temporary_name_is_never_written_through(tmp_path: Path) -> None:
    folder, victim = tmp_path / "m", tmp_path / "victim.txt"
    folder.mkdir()
    victim.write_text("precious")
    (folder / "game_00000.json.tmp").symlink_to(victim)  # the old fixed temporary name
    (folder / "game_00001.json").symlink_to(victim)  # a link at the target itself: replaced, not written through
    # the folder holds files already, so only --overwrite writes into it (the links are still replaced, not followed)
    assert main(["match", ENV, "--bots", "random", "--games", "2", "--no-progress", "--records", str(folder)]) == 2
    assert (
        main(
            ["match", ENV, "--bots", "random", "--games", "2", "--no-progress", "--records", str(folder), "--overwrite"]
        )
        == 0
    )
    assert victim.read_text() == "precious"
    for name in ("game_00000.json", "game_00001.json"):
        path = folder / name
        assert not path.is_symlink()
        replay(json.loads(path.read_text()))
    # no temporary file left behind (the planted link is left alone)
    assert sorted(p.name for p in folder.iterdir()) == ["game_00000.json", "game_00000.json.tmp", "game_00001.json"]


def test_a_failed_record_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    from parlour.training.evaluation.games import save_record

    env = make(ENV)
    env.reset(seed=0)
    (tmp_path / "game.json").mkdir()  # the name is taken by a folder: the write fails
    with pytest.raises(OSError):
        save_record(env, tmp_path / "game.json", ["random"] * 4)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def test_save_record_without_overwrite_leaves_an_existing_file_alone(tmp_path: Path) -> None:
    from parlour.envs.fileio import FileSafetyError
    from parlour.training.evaluation.games import save_record

    env = make(ENV)
    env.reset(seed=0)
    path = tmp_path / "game.json"
    path.write_text("keep")
    with pytest.raises(FileSafetyError, match="exists already"):
        save_record(env, path, ["random"] * 4, overwrite=False)
    assert path.read_text() == "keep" and [p.name for p in tmp_path.iterdir()] == ["game.json"]
    save_record(env, path, ["random"] * 4)  # the default (match, evaluate): replaced
    assert json.loads(path.read_text())["env"] == ENV


PLAY = ["play", ENV, "--seat", "0", "--seed", "3"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p.write_text("keep"), "exists already; pass --overwrite to replace it, or choose another path"),
        (
            lambda p: p.symlink_to(p.parent / "nowhere"),
            "exists already; pass --overwrite to replace it, or choose another path",
        ),
        (lambda p: p.mkdir(), "is a folder; give the name of a file to write the game record to"),
    ],
    ids=["file", "dangling-link", "folder"],
)
def test_play_refuses_a_taken_record_path_before_the_game(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: Callable[[Path], object],
    message: str,
) -> None:
    path = tmp_path / "game.json"
    setup(path)
    stdin(monkeypatch, "q\n")
    assert main([*PLAY, "--record", str(path)]) == 2
    out, err = capsys.readouterr()
    assert one_line(err) == f"parlour play: --record {path} {message}\n"
    assert out == ""  # refused before the game: no table shown, no move asked for
    assert not path.is_file() or path.read_text() == "keep"


def test_play_refuses_a_record_path_under_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("keep")
    stdin(monkeypatch, "q\n")
    assert main([*PLAY, "--record", str(tmp_path / "notes.txt" / "game.json")]) == 2
    out, err = capsys.readouterr()
    assert "is not a folder" in one_line(err) and out == ""


def test_play_overwrite_replaces_an_existing_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.json"
    path.write_text("old")
    stdin(monkeypatch, "peek albert top\nq\n")
    assert main([*PLAY, "--record", str(path), "--overwrite"]) == 0
    record = json.loads(path.read_text())
    assert record["actions"][0]["text"] == "peek Albert, top card"
    replay(record)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary file left
    assert f"Game record saved to {path}" in capsys.readouterr().out


class FixedTime:
    @staticmethod
    def now() -> Any:
        from datetime import datetime

        return datetime(2024, 5, 6, 7, 8, 9)


@pytest.mark.parametrize(
    "setup",
    [lambda p: p.write_text("keep"), lambda p: p.mkdir(), lambda p: p.symlink_to(p.parent / "nowhere")],
    ids=["file", "folder", "dangling-link"],
)
def test_the_default_record_path_never_overwrites(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: Callable[[Path], object],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("parlour.training.play.datetime", FixedTime)
    taken = Path("records") / f"{ENV}_play_20240506-070809_seed3.json"
    taken.parent.mkdir()
    setup(taken)
    stdin(monkeypatch, "q\n")
    assert main(PLAY) == 0
    assert not taken.is_file() or taken.read_text() == "keep"
    saved = taken.with_name(f"{ENV}_play_20240506-070809_seed3_2.json")
    replay(json.loads(saved.read_text()))
    assert f"Game record saved to {saved}" in capsys.readouterr().out


def test_a_record_path_taken_during_the_game_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    person = Person()

    def ask(prompt: str) -> str:
        if not path.exists():
            path.write_text("keep")  # another program takes the name while the person thinks
        return "q"

    play_game_with_person(ENV, seat=0, seed=2, record_path=path, ask=ask, say=person.say)
    assert path.read_text() == "keep"
    replay(json.loads((tmp_path / "game_2.json").read_text()))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json", "game_2.json"]


# ---------------------------------------------------------------------------------------------- reading
def _set(where: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit of a record: ``where`` is a field, or ``actions.N.field``."""

    def edit(r: dict[str, Any]) -> None:
        *path, last = where.split(".")
        target: Any = r
        for key in path:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[int(last) if isinstance(target, list) else last] = value

    return edit


def _other_text(r: dict[str, Any]) -> None:
    r["actions"][0]["text"] = "\x1b[2Jannounce"


# (edit, what the one-line refusal names)
MALFORMED: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_set("actions", {"0": {"action": 0, "seat": 0}}), "actions must be a list of moves, not an object"),
    (_set("actions", None), "actions must be a list of moves, not None"),
    (_set("actions.0", None), "move 1 (actions[0]) must be an object with an integer action and seat, not None"),
    (_set("actions.0", [0, 0]), "move 1 (actions[0]) must be an object"),
    (_set("actions.1.action", None), "move 2 (actions[1]): action must be an integer, not None"),
    (_set("actions.1.action", True), "move 2 (actions[1]): action must be an integer, not True"),
    (_set("actions.1.action", "3"), "move 2 (actions[1]): action must be an integer, not '3'"),
    (_set("actions.1.action", 3.0), "move 2 (actions[1]): action must be an integer, not 3.0"),
    (_set("actions.1.action", {"a": 1}), "move 2 (actions[1]): action must be an integer, not an object"),
    (_set("actions.0.seat", False), "move 1 (actions[0]): seat must be an integer, not False"),
    (_set("actions.0.seat", 7), "move 1 (actions[0]): seat 7 is not a seat of this game"),
    (_set("actions.1.seat", 2), "move 2 (actions[1]): seat 2 is recorded, but player_1 is to act"),
    (_set("actions.1.agent", "player_3"), "move 2 (actions[1]): agent 'player_3' is recorded, but player_1 is to act"),
    (_other_text, "move 1 (actions[0]): text '\\x1b[2Jannounce' is recorded, but action 0 is 'peek Albert, top card'"),
    (_set("actions.0.action", 9999), "move 1 (actions[0]): illegal action 9999"),
    (_set("options", ["num_players", 4]), "options must be an object of keyword arguments, not a list"),
    (_set("options", "4 players"), "options must be an object of keyword arguments, not '4 players'"),
    (_set("options.num_players", "4"), "options: six_suspects: num_players='4' is not valid"),
    (_set("game_seed", "12"), "game_seed must be an integer in [0, 2**63 - 2], not '12'"),
    (_set("game_seed", 1.5), "game_seed must be an integer in [0, 2**63 - 2], not 1.5"),
    (_set("game_seed", -1), "game_seed must be an integer in [0, 2**63 - 2], not -1"),
    (_set("game_seed", 2**64), "game_seed must be an integer in [0, 2**63 - 2], not 18446744073709551616"),
    (_set("game_seed", None), "game_seed must be an integer"),
    (_set("players", "you"), "players must be a list of 4 names (strings), not 'you'"),
    (_set("players", ["you", 1, 2, 3]), "players must be a list of 4 names (strings), not a list"),
    (_set("players", ["you"]), "players must be a list of 4 names (strings)"),
    (_set("human_seat", 9), "human_seat must be a seat in [0, 3], not 9"),
    (_set("human_seat", True), "human_seat must be a seat in [0, 3], not True"),
    (_set("env", ["six_suspects_v0"]), "unknown environment a list"),
    (_set("env", "\x1b]0;pwned\x07"), "unknown environment '\\x1b]0;pwned\\x07'"),
    (_set("env_version", "\x1b[31m9"), "version '\\x1b[31m9', this is"),
    (_set("outcome", None), "the outcome differs from the record's"),
]


@pytest.mark.parametrize(("edit", "message"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_replay_refuses_a_malformed_record_naming_the_field(
    record: dict[str, Any], edit: Callable[[dict[str, Any]], None], message: str
) -> None:
    bad = copy.deepcopy(record)
    edit(bad)
    with pytest.raises(ValueError) as info:
        replay(bad)
    assert str(info.value).startswith("replay: ") and message in str(info.value)
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


@pytest.mark.parametrize(("edit", "message"), MALFORMED, ids=[m[1][:40] for m in MALFORMED])
def test_parlour_replay_refuses_a_malformed_record_in_one_line_naming_the_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    record: dict[str, Any],
    edit: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    bad = copy.deepcopy(record)
    edit(bad)
    path = write(tmp_path / "g.json", bad)
    stdin(monkeypatch, "q\n")
    assert main(["replay", str(path), "--god"]) == 2
    out, err = capsys.readouterr()
    assert one_line(err).startswith(f"parlour replay: {path}: ") and message in err
    assert out == "" and "\x1b" not in err and "\x07" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "is not a game record (expected format 'parlour-record/1')"),
        ("null", "is not a game record"),
        ("{", "is not a valid game record (not JSON"),
        ('{"game_seed": 1' + "0" * 5000 + "}", "is not a valid game record (not JSON"),
        ("[" * 100_000, "is not a valid game record (not JSON"),
    ],
    ids=["list", "null", "truncated", "huge-int", "deep"],
)
def test_parlour_replay_refuses_a_file_that_is_no_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / "g.json"
    path.write_text(text)
    assert main(["replay", str(path)]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"parlour replay: {path}") and message in err


def test_parlour_replay_refuses_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path)]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"parlour replay: {tmp_path}: cannot read this game record")


def test_names_from_the_file_reach_the_terminal_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], record: dict[str, Any]
) -> None:
    named = copy.deepcopy(record)
    named["players"] = ["you", "\x1b[2Jbot", "evil\u202eedoc", "two\nlines"]
    path = write(tmp_path / "g.json", named)
    stdin(monkeypatch, "\n" * (len(record["actions"]) + 1))
    assert main(["replay", str(path), "--god"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "two\nlines" not in out
    assert "player_1 (\\x1b[2Jbot)" in out and "(evil\\u202eedoc)" in out and "(two\\nlines)" in out


def test_a_move_is_shown_as_the_game_makes_it_not_as_the_file_says(record: dict[str, Any]) -> None:
    states = positions(record)
    lying = copy.deepcopy(record)
    lying["actions"][0] |= {"text": "vote Wilma", "agent": "player_2"}
    shown = describe(lying, states, 0, None)
    assert "player_0 (person) chose [0] peek Albert, top card" in shown and "Wilma" not in shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("peek Albert, top card", "peek Albert, top card"),
        ("Zoë — café", "Zoë — café"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\nb\tc\r", "a\\nb\\tc\\r"),
        ("\x7f\x9b", "\\x7f\\x9b"),
        ("\u202eabc\u200b", "\\u202eabc\\u200b"),
        ("\U000e0001", "\\U000e0001"),
    ],
)
def test_shown_escapes_every_control_character(text: str, expected: str) -> None:
    from parlour.training.play import shown

    assert shown(text) == expected


# ---------------------------------------------------------------------------------------------- the seed
def _before_the_end(screen: list[str]) -> str:
    end = next(i for i, t in enumerate(screen) if "The game is over." in t or "Game stopped." in t)
    return "\n".join(screen[:end])


@pytest.mark.parametrize("quit_at_once", [False, True], ids=["whole-game", "quit"])
def test_play_never_shows_the_seed_while_the_game_runs(tmp_path: Path, quit_at_once: bool) -> None:
    seed = 987654321
    person = Person()
    ask = (lambda prompt: "q") if quit_at_once else person.ask
    path = tmp_path / "g.json"
    record = play_game_with_person(ENV, seat=1, seed=seed, record_path=path, ask=ask, say=person.say)
    early = _before_the_end(person.screen)
    assert "You are player_1" in early
    for secret in (str(seed), str(record["game_seed"])):  # either one rebuilds the whole deal
        assert secret not in early
    assert f"The deal's seed was {seed}" in "\n".join(person.screen)  # shown once the game is over
    assert json.loads(path.read_text())["game_seed"] == record["game_seed"]


def test_parlour_play_with_a_drawn_seed_hides_it_until_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    stdin(monkeypatch, "peek albert top\nq\n")
    assert main(["play", ENV, "--seat", "0"]) == 0
    out = capsys.readouterr().out
    early, end = out.split("Game stopped.")
    (saved,) = Path("records").iterdir()
    seed = int(re.findall(r"_seed(\d+)\.json$", saved.name)[0])
    game_seed = json.loads(saved.read_text())["game_seed"]
    assert not re.search(rf"\b({seed}|{game_seed})\b", early)
    assert f"The deal's seed was {seed}" in end and str(saved) in end


def test_an_error_before_the_game_does_not_tell_the_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("records").write_text("not a folder")
    stdin(monkeypatch, "q\n")
    monkeypatch.setattr("numpy.random.default_rng", _rng_with_seed(424242))
    assert main(["play", ENV, "--seat", "0"]) == 2
    out, err = capsys.readouterr()
    assert "records is not a folder" in one_line(err) and "424242" not in err and out == ""


def _rng_with_seed(seed: int) -> Callable[..., Any]:
    """``numpy.random.default_rng`` whose unseeded generators draw ``seed`` first (the seed ``parlour play``
    draws), so that a test knows it."""
    import numpy as np

    real = np.random.default_rng

    class Drawn:
        def __init__(self) -> None:
            self.rng = real(0)

        def integers(self, *args: Any, **kwargs: Any) -> Any:
            return seed

        def __getattr__(self, name: str) -> Any:
            return getattr(self.rng, name)

    def default_rng(*args: Any, **kwargs: Any) -> Any:
        return Drawn() if not args and not kwargs else real(*args, **kwargs)

    return default_rng


def test_no_temporary_file_is_left_after_play(tmp_path: Path) -> None:
    person = Person()
    play_game_with_person(ENV, seat=0, seed=5, record_path=tmp_path / "g.json", ask=person.ask, say=person.say)
    assert os.listdir(tmp_path) == ["g.json"]
