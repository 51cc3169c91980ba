"""Named actions (issue 41): every action of every game has a stable, unique, human-readable name at its table
(``action_names``), and ``parse_action`` reads a name back whatever its case and spacing -- checked at every decision
of the golden traces, for every legal action."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parlour.envs import ENVIRONMENTS, game_of, make
from parlour.envs.core import normalise_name

GOLDEN = Path(__file__).parent / "golden"


def tables() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in sorted(ENVIRONMENTS):
        game = game_of(name)
        out += [(name, {"num_players": n}) for n in range(game.min_players, game.max_players + 1)]
        out += [(name, dict(v)) for v in game.variants]
    return out


@pytest.mark.parametrize(("name", "kwargs"), tables(), ids=lambda x: str(x))
def test_every_action_has_a_unique_name_at_every_table(name: str, kwargs: dict[str, Any]) -> None:
    env = make(name, **kwargs).unwrapped
    names = env.action_names
    assert len(names) == env.num_actions
    assert len({normalise_name(n) for n in names}) == env.num_actions  # unique, case and spacing aside
    assert all(n == n.strip() and n and "\n" not in n for n in names)
    # every name parses back to its own id, however it is cased and spaced
    for a, n in enumerate(names):
        assert env.parse_action(n) == a
        assert env.parse_action(f"  {n.upper()} ") == a
        assert env.parse_action(n.replace(" ", "   ").swapcase()) == a


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_every_legal_actions_name_parses_to_itself_at_every_decision_of_the_golden_traces(name: str) -> None:
    stored = json.loads((GOLDEN / f"{name}.json").read_text())
    decisions = 0
    for game in stored["games"]:
        env = make(name, **game["kwargs"])
        env.reset(seed=game["seed"])
        raw = env.unwrapped
        for row in game["steps"]:
            agent, action = row[0], row[1]
            assert env.agent_selection == agent
            if action is not None:
                legal = raw.legal_actions()
                assert raw.legal_action_names() == [raw.action_names[a] for a in legal]
                for a, text in zip(legal, raw.legal_action_names(), strict=True):
                    assert raw.parse_action(text) == a
                assert raw.parse_action(raw.action_names[action].lower()) == action
                decisions += 1
            env.step(action)
    assert decisions > 100


#: Names people and language agents type: fixed, so prompts and records stay readable across versions.
STABLE = [
    ("six_suspects_v0", 0, "peek Albert, top card"),
    ("six_suspects_v0", 12, "announce"),
    ("goes_to_eleven_v0", 149, "answer the Eleven with Quiet!"),
    ("lady_alice_v2", 36, "accuse"),
    ("elevenses_v0", 84, "pass the turn (no legal play)"),
]


@pytest.mark.parametrize(("name", "action", "text"), STABLE)
def test_names_are_stable(name: str, action: int, text: str) -> None:
    assert make(name).unwrapped.action_names[action] == text


@pytest.mark.parametrize("bad", ["dance", "", "peek", "peek Albert top card", "12"])
def test_a_text_that_names_no_action_is_refused_in_one_line_that_names_no_legal_action(bad: str) -> None:
    env = make("elevenses_v0")
    env.reset(seed=3)
    with pytest.raises(ValueError, match="names no action of elevenses_v0") as info:
        env.unwrapped.parse_action(bad)
    message = str(info.value)
    assert "\n" not in message
    # the legal actions can depend on the acting seat's hand, and whoever asks need not be that seat
    assert not any(n in message for n in env.unwrapped.legal_action_names())


def test_a_name_that_is_not_a_string_is_refused() -> None:
    env = make("six_suspects_v0").unwrapped
    with pytest.raises(ValueError, match="an action name is a string; got int 3"):
        env.parse_action(3)  # type: ignore[arg-type]
