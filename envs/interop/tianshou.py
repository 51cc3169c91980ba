"""Tianshou's multi-agent path: :class:`TianshouEnv` wraps a Parlour env for ``tianshou.env.PettingZooEnv``'s users.

>>> from tianshou.env import DummyVectorEnv
>>> from parlour.envs import make
>>> from parlour.envs.interop.tianshou import TianshouEnv
>>> envs = DummyVectorEnv([lambda: TianshouEnv(make("six_suspects_v0")) for _ in range(4)])

Tianshou's own ``PettingZooEnv`` fails on two things, which this subclass fixes:

- **Terminal info.** Its array-based buffers stack every step's ``info``; our terminal ``infos[agent]["outcome"]``
  holds lists whose length varies (winners, votes…), which they cannot stack. Here every step's info has the same
  fixed-shape keys: ``returns`` (float, one per seat: the AEC returns so far), ``winners`` (bool, one per seat; all
  False until the end), ``game_over`` and ``truncated``. The whole outcome stays in ``env.final_outcome``.
- **Credit.** Tianshou's ``MultiAgentPolicyManager`` gives each agent the reward entries of *its own* transitions, but
  a turn-based game pays a seat on other seats' moves too (every terminal reward but the last mover's), so with the
  plain wrapper an agent loses them (about three quarters of all returns at four players). Here the reward vector of
  a step pays only the seat that moved: everything it earned since its previous transition (rewards caused by the
  others' moves in between) plus what its own move earned. When the game ends, each seat takes one last transition
  (its final observation, only action 0 legal, which this wrapper absorbs as the seat's PettingZoo dead step) that
  pays what it earned since; the episode ends (``terminated``, or ``truncated`` for a cut game) on the last of them.
  So each seat's rewards over its own transitions sum exactly to its AEC return (a test checks it).

For per-decision credit with one learning seat and scripted or frozen opponents, our single-agent Gymnasium view
(``parlour.training.single_agent.SingleAgentEnv``) is the better fit for Tianshou's single-agent algorithms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tianshou.env import PettingZooEnv

from parlour.envs.core import ParlourEnv

#: The action a seat takes on its last transition after the end (the only legal one there).
END_ACTION = 0


class TianshouEnv(PettingZooEnv):
    """A Parlour env for Tianshou's multi-agent collectors: fixed-shape info and each seat credited its whole return."""

    def __init__(self, env: ParlourEnv[Any]) -> None:
        self.parlour = env
        n = env.num_players
        self._owed = np.zeros(n)
        self._returns = np.zeros(n)
        self._closing: list[str] = []  # seats still to take their transition after the end
        self._end_mask = np.zeros(env.num_actions, bool)
        self._end_mask[END_ACTION] = True
        super().__init__(env)  # resets

    def reset(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        self.parlour.reset(*args, **kwargs)
        self._owed[:] = 0.0
        self._returns[:] = 0.0
        self._closing = []
        return self._observation(), self._info()

    def step(self, action: Any) -> Any:  # (obs, rewards: one per seat, terminated, truncated, info)
        env = self.parlour
        paid = np.zeros(env.num_players)
        if self._closing:  # a seat's last transition: its dead step, paying what it is still owed
            seat = env.possible_agents.index(self._closing.pop(0))
            paid[seat], self._owed[seat] = self._owed[seat], 0.0
            over = not self._closing
            truncated = over and self._info()["truncated"]
            return self._observation(), paid, over and not truncated, truncated, self._info()
        seat = env.possible_agents.index(env.agent_selection)
        env.step(int(action))
        step = np.array([env.rewards.get(a, 0.0) for a in env.possible_agents])
        self._owed += step
        self._returns += step
        paid[seat], self._owed[seat] = self._owed[seat], 0.0
        if env.game_over:
            while env.agents:  # PettingZoo's dead steps, taken now; Tianshou sees one per seat below
                env.step(None)
            self._closing = list(env.possible_agents)
        return self._observation(), paid, False, False, self._info()

    def _observation(self) -> dict[str, Any]:
        env = self.parlour
        if self._closing:
            agent = self._closing[0]
            return {"agent_id": agent, "obs": env.observe(agent)["observation"], "mask": self._end_mask.copy()}
        agent = env.agent_selection
        obs = env.observe(agent)
        return {"agent_id": agent, "obs": obs["observation"], "mask": obs["action_mask"].astype(bool)}

    def _info(self) -> dict[str, Any]:
        env = self.parlour
        outcome = env.final_outcome
        winners = np.zeros(env.num_players, bool)
        if outcome is not None:
            winners[list(outcome.get("winners", []))] = True
        return {
            "returns": self._returns.copy(),
            "winners": winners,
            "game_over": outcome is not None,
            "truncated": bool(outcome is not None and outcome.get("truncated")),
        }
