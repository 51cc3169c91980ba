"""The text views (``render_text(perspective)``) that language-model agents read: each seat's view must determine
everything that seat's observation and action mask carry, and must not change when what is hidden from the seat is
redrawn (``resample_hidden``).

"The text view determines the observation": over the golden traces' games (``tests/golden``), seeded random games
and resampled copies, for every env id, player count and declared variant, states are grouped by (seat, that seat's
text); within a group every observation vector and action mask must be identical. A collision means the text leaves
out something the seat knows. The umpire view (``perspective=None``) must likewise determine the full state vector.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, golden, make
from parlour.envs.core import ParlourEnv
from parlour.envs.text import CHARSET

FOLDER = Path(__file__).parent / "golden"
#: Every traced case: (env id, keyword arguments), as the golden traces hold them.
CASES = [(name, kwargs) for name in sorted(ENVIRONMENTS) for kwargs in golden.cases(name)]


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, kwargs = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


def _golden_game(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    data = json.loads((FOLDER / f"{name}.json").read_text())
    return next(g for g in data["games"] if g["kwargs"] == kwargs)


def _golden_states(name: str, kwargs: dict[str, Any]) -> Iterator[ParlourEnv[Any]]:
    """The golden trace's game, replayed from its seed and actions: the env before every live step and at the end."""
    game = _golden_game(name, kwargs)
    env = make(name, **game["kwargs"])
    env.reset(seed=game["seed"])
    for row in game["steps"]:
        if env.game_over:
            break
        yield env
        env.step(row[1])
    yield env


def _random_states(name: str, kwargs: dict[str, Any], seed: int) -> Iterator[ParlourEnv[Any]]:
    """A seeded random game: the env before every step and at the end."""
    env = make(name, **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng([seed, 7])
    while not env.game_over:
        yield env
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    yield env


def _swapped_states(name: str, kwargs: dict[str, Any], seed: int, swaps: int) -> Iterator[ParlourEnv[Any]]:
    """Near twins of random game ``seed``: its moves replayed from the same deal with two moves of one seat swapped,
    as far as they stay legal, yielding the states from the first swapped move to a few after the second. They reach
    the same tallies in another order: a text that shows tallies but not what the observation keeps of the order
    (a last peek, the last suspicion, ...) fails on them."""
    env = deque(_random_states(name, kwargs, seed), maxlen=1)[0]  # the game, played to its end
    moves = [(m["agent"], m["action"]) for m in env.record()["actions"]]
    rng = np.random.default_rng([seed, 9])
    for _ in range(swaps):
        seat = moves[int(rng.integers(len(moves)))][0]
        mine = [k for k, (agent, _) in enumerate(moves) if agent == seat]
        if len(mine) < 2:
            continue
        i, j = sorted(int(k) for k in rng.choice(mine, 2, replace=False))
        swapped = moves[:]
        swapped[i], swapped[j] = moves[j], moves[i]
        twin = make(name, **kwargs)
        twin.reset(seed=seed)
        for k, (agent, action) in enumerate(swapped[: j + 4]):
            if twin.game_over or twin.agent_selection != agent or not twin.observe(agent)["action_mask"][action]:
                break
            twin.step(action)
            if k >= i:
                yield twin


@dataclass
class Views:
    """What each (seat, text) and each umpire text have been seen with: the first observation, mask and state."""

    seen: dict[tuple[str, str], tuple[bytes, bytes]] = field(default_factory=dict)
    umpire: dict[str, bytes] = field(default_factory=dict)
    samples: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    states: int = 0

    def add(self, env: ParlourEnv[Any], where: str) -> None:
        """Every seat's view of ``env`` (and the umpire's), checked against what the same text was seen with."""
        self.states += 1
        for agent in env.possible_agents:
            view = env.observe(agent)
            text = env.render_text(agent)
            if agent == env.agent_selection:  # the wording of one seat's view per state: enough, and cheaper
                _check_wording(text, where)
            assert f"You are {agent}." in text, f"{where}: {agent}'s view does not say who it is\n{text}"
            obs, mask = view["observation"].tobytes(), view["action_mask"].tobytes()
            key = (agent, text)
            first = self.seen.setdefault(key, (obs, mask))
            if first == (obs, mask):
                self.samples.setdefault(key, view["observation"])
                continue
            what = "action mask" if first[0] == obs else "observation"
            fields = _differing_fields(env, self.samples[key], view["observation"]) if what == "observation" else []
            pytest.fail(
                f"{where}: {agent}'s text view is the same for two states whose {what} differs "
                f"(fields {fields}): the text leaves out something the seat knows.\n{text}"
            )
        text = env.render_text(None)
        _check_wording(text, where)
        state = env.state().tobytes()
        assert self.umpire.setdefault(text, state) == state, (
            f"{where}: the umpire's text is the same for two states whose state vector differs\n{text}"
        )


#: A count of one with a plural noun ("1 cards"): the views write "1 card", "2 cards".
_BAD_PLURAL = re.compile(
    r"(?<![\d./])1 (cards|turns|smiles|counters|cubes|teaspoons|places|seats|moves|games|times|peeks|clues)\b"
)


def _check_wording(text: str, where: str) -> None:
    """Plurals right, and only the characters a prompt may hold (:data:`parlour.envs.text.CHARSET`)."""
    bad = _BAD_PLURAL.search(text)
    assert bad is None, f"{where}: {bad.group(0)!r} in the text view (a plural after 1)\n{text}"
    odd = set(text) - CHARSET
    assert not odd, f"{where}: characters {sorted(odd)} in the text view are not in the prompts' character set"


def _differing_fields(env: ParlourEnv[Any], a: np.ndarray, b: np.ndarray) -> list[str]:
    layout = env.observation_layout
    da, db = layout.decode(a), layout.decode(b)
    return [name for name in da if not np.array_equal(da[name], db[name])]


def _check_case(name: str, kwargs: dict[str, Any], games: int, resample_every: int, swaps: int = 4) -> Views:
    """Group the views of the golden game, ``games`` random games, their near twins (``swaps`` each) and resampled
    copies of ``name(**kwargs)``."""
    views = Views()
    rng = np.random.default_rng(0)
    sources: list[tuple[str, Iterator[ParlourEnv[Any]]]] = [("golden game", _golden_states(name, kwargs))]
    for s in range(games):
        sources.append((f"random game {s}", _random_states(name, kwargs, s)))
        sources.append((f"random game {s} with two moves swapped", _swapped_states(name, kwargs, s, swaps)))
    for label, states in sources:
        for i, env in enumerate(states):
            where = f"{name} {kwargs}, {label}, decision {i}"
            views.add(env, where)
            if i % resample_every or env.game_over:
                continue
            for agent in env.possible_agents:
                copy = env.resample_hidden(agent, rng)
                assert copy.render_text(agent) == env.render_text(agent), (
                    f"{where}: hidden information leaks into {agent}'s text view (it changes under resample_hidden)"
                )
                views.add(copy, where + f", resampled for {agent}")
    return views


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_text_view_determines_observation_and_mask(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    views = _check_case(name, kwargs, games=4, resample_every=3)
    assert views.states > 50


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_text_view_determines_observation_and_mask_many_games(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _check_case(name, kwargs, games=24, resample_every=2, swaps=8)
