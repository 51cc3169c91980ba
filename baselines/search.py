"""A generic determinised-search bot (perfect-information Monte Carlo) that plays every Parlour game.

For each decision it draws ``worlds`` determinisations -- copies of the game in which everything hidden from its
seat is redrawn consistently with what the seat has seen (``env.unwrapped.resample_state``, the rules-level part
of ``resample_hidden``) -- and in each world plays every legal action followed by ``rollouts`` playouts to the
end of the game on the pure rules: random, or with the game's own quick playout policy where it registers one
(``rollout_policy`` in its :class:`~parlour.baselines.spec.GameSpec`), and, for games that run long before anyone
is rewarded, only to a horizon at which the game scores the position (``rollout_horizon``). An action's value is how often the seat is among the winners at
the end of its playouts (``objective="win"``; a shared win counts, as in every win rate Parlour reports), or its
summed reward in the env's reward mode (``objective="reward"``); the best is played. Playing to win by default keeps
the bot the same opponent whatever reward shaping a training config chose: with Goes to Eleven's dense
``margin`` reward as its objective it won clearly less often. Every action of a (world, playout) pair is played out with the same random
numbers (common random numbers), so the comparison between actions is not drowned by the playouts' noise.

It is not an oracle: the true hidden state reaches it only through ``resample_state``, whose output the
hidden-information audit checks depends on nothing the seat cannot know. It needs the env to redraw worlds, so
it plays through ``act_with_env`` (``needs_env``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from parlour.baselines.base import Policy, choose_best
from parlour.baselines.registry import game_spec
from parlour.baselines.spec import Horizon, RolloutPolicy

if TYPE_CHECKING:
    from parlour.envs.contract import RulesState
    from parlour.envs.core import ParlourEnv


def random_rollout(state: RulesState, u: float) -> int:
    """A uniformly random legal action."""
    legal = state.legal_mask().nonzero()[0]
    return int(legal[int(u * len(legal))])


OBJECTIVES = ("win", "reward")


def won(state: RulesState, seat: int) -> float:
    """1 when ``seat`` is among the winners of the finished game (a shared win counts, as in every win rate
    Parlour reports), else 0 (also for an unfinished game)."""
    if state.current_player >= 0:
        return 0.0
    return float(seat in state.outcome()["winners"])


def informed_playouts(env_name: str) -> tuple[RolloutPolicy, Horizon | None]:
    """The game's own playout policy (random where it declares none) and horizon, from its
    :class:`~parlour.baselines.spec.GameSpec`."""

    spec = game_spec(env_name)
    if spec is None:
        return random_rollout, None
    return spec.rollout_policy or random_rollout, spec.rollout_horizon


def playout(
    state: RulesState,
    seat: int,
    rng: np.random.Generator,
    max_steps: int,
    policy: RolloutPolicy = random_rollout,
    horizon: Horizon | None = None,
) -> float:
    """Play ``policy`` for every seat on ``state`` (mutated) to the end, or to the horizon, where the game's
    ``finish`` scores it; the reward ``seat`` collects."""
    total = 0.0
    steps = max_steps if horizon is None else min(max_steps, horizon.steps)
    uniform = rng.random(steps)
    for step in range(steps):
        if state.current_player < 0:
            return total
        deltas = state.play(policy(state, float(uniform[step])))
        if deltas is not None:
            total += deltas[seat]
    if horizon is not None and state.current_player >= 0:
        deltas = horizon.finish(state)
        if deltas is not None:
            total += deltas[seat]
    return total


class DeterminizedSearch(Policy):
    """Flat Monte Carlo over determinised worlds with random playouts (any game)."""

    name = "search"
    games = None
    needs_env = True

    def __init__(
        self,
        worlds: int = 12,
        rollouts: int = 2,
        max_rollout_steps: int = 5000,
        informed: bool = True,
        objective: str = "win",
    ) -> None:
        if worlds < 1 or rollouts < 1 or max_rollout_steps < 1:
            raise ValueError("search: worlds, rollouts and max_rollout_steps must be at least 1")
        if objective not in OBJECTIVES:
            raise ValueError(f"search: objective={objective!r} is not valid: expected one of {list(OBJECTIVES)}")
        self.objective = objective
        self.worlds = worlds
        self.rollouts = rollouts
        self.max_rollout_steps = max_rollout_steps
        #: Use the game's own playout policy (its GameSpec's ``rollout_policy``) when it has one; else random playouts.
        self.informed = informed

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        raise TypeError("search redraws hidden information through the env: call act_with_env(env, agent, rng)")

    def action_values(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> dict[int, float]:
        """Mean playout value (win share or reward, per ``objective``) of every legal action of ``agent``."""
        base = env.unwrapped
        legal = np.flatnonzero(base.observe(agent)["action_mask"])
        seat = base.possible_agents.index(agent)
        name = base.metadata["name"]
        policy, horizon = informed_playouts(name) if self.informed else (random_rollout, None)
        totals = np.zeros(len(legal))
        for _ in range(self.worlds):
            world = base.resample_state(agent, rng)
            for _ in range(self.rollouts):
                seed = int(rng.integers(2**63 - 1))
                for i, action in enumerate(legal):
                    state = world.clone()
                    deltas = state.play(int(action))
                    value = 0.0 if deltas is None else deltas[seat]
                    if state.current_player >= 0:
                        rng_i = np.random.default_rng(seed)
                        value += playout(state, seat, rng_i, self.max_rollout_steps, policy, horizon)
                    totals[i] += won(state, seat) if self.objective == "win" else value
        n = self.worlds * self.rollouts
        return {int(a): float(t) / n for a, t in zip(legal, totals, strict=True)}

    def act_with_env(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> int:
        mask = env.unwrapped.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        values = self.action_values(env, agent, rng)
        scores = np.full(len(mask), -np.inf)
        for a, v in values.items():
            scores[a] = v
        return choose_best(scores, mask, rng)
