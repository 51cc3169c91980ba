"""A single-agent Gymnasium view of any Parlour environment, for Stable-Baselines3 and sb3-contrib.

One seat learns; every other seat is played by an opponent drawn from a pool (scripted bots, frozen checkpoints,
snapshots of the learner) inside :meth:`SingleAgentEnv.step`. The reward of a transition is everything the learner
earned since its previous move -- its own move's reward, every reward caused by opponents' moves, and a terminal
reward even when an opponent's move ended the game -- read from the AEC env's ``reward_since_last_move``, which
is PettingZoo's cumulative reward: exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from parlour.baselines.base import Policy
from parlour.baselines.features import field_index, with_features
from parlour.baselines.features import size as feature_size
from parlour.baselines.policy_file import table_of
from parlour.baselines.registry import lookup
from parlour.envs import make as make_env
from parlour.envs.core import ParlourEnv, check_seed

#: ``learner_seat`` value that draws the seat per episode from the env's generator.
RANDOM_SEAT = "random"


class SingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """``gymnasium.Env`` for one learning seat; opponents move inside ``step``.

    ``opponents`` is the pool: for each episode, every other seat gets a policy drawn uniformly from it (a pool of
    one fills the table with that policy); ``opponent_draw="table"`` draws once and fills every other seat with it. ``action_masks()`` serves sb3-contrib's ``MaskablePPO``.

    An illegal action raises, as the AEC env does. Checkers that step unmasked random actions (SB3's and
    Gymnasium's ``check_env``) need ``env_kwargs={"illegal_action": "penalize"}``: an illegal action then ends the
    episode with ``illegal_reward`` for the learner.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env_name: str,
        opponents: Sequence[Policy],
        *,
        env_kwargs: dict[str, Any] | None = None,
        learner_seat: int | str = RANDOM_SEAT,
        seed: int | None = None,
        features: Sequence[str] = (),
        observation_fields: Sequence[str] = (),
        opponent_draw: str = "seat",
    ) -> None:
        super().__init__()
        if not opponents:
            raise ValueError("SingleAgentEnv: the opponent pool is empty")
        self.env_name = env_name
        self.env_kwargs = dict(env_kwargs or {})
        self.aec: ParlourEnv[Any] = make_env(env_name, **self.env_kwargs)
        n = self.aec.num_players
        if learner_seat != RANDOM_SEAT and not (isinstance(learner_seat, int) and 0 <= learner_seat < n):
            raise ValueError(
                f"SingleAgentEnv: learner_seat={learner_seat!r} is not valid: expected an integer in "
                f"[0, {n - 1}] or {RANDOM_SEAT!r}"
            )
        if opponent_draw not in ("seat", "table"):
            raise ValueError(
                f"SingleAgentEnv: opponent_draw={opponent_draw!r} is not valid: expected 'seat' or 'table'"
            )
        self.opponent_draw = opponent_draw
        self.learner_seat_option = learner_seat
        self.table = table_of(self.aec)
        self.pool: list[Policy] = []
        self.set_opponents(opponents)
        space = self.aec.observation_space(self.aec.possible_agents[0])
        assert isinstance(space, spaces.Dict)
        # The learner's input: its observation (or the fields of it named), then the feature sets computed from it
        # (none by default).
        self.features = lookup(features, env_name)
        self.keep = field_index(
            env_name, n, {k: v for k, v in self.env_kwargs.items() if k != "num_players"}, observation_fields
        )
        base = space["observation"]
        assert isinstance(base, spaces.Box)
        extra = feature_size(self.features)
        low, high = (base.low, base.high) if self.keep is None else (base.low[self.keep], base.high[self.keep])
        self.observation_space = (
            spaces.Box(
                np.concatenate([low, np.full(extra, -np.inf, np.float32)]),
                np.concatenate([high, np.full(extra, np.inf, np.float32)]),
                dtype=np.float32,
            )
            if extra or self.keep is not None
            else base
        )
        self.action_space = spaces.Discrete(self.aec.num_actions)
        self._rng = np.random.default_rng(check_seed("SingleAgentEnv(seed=...)", seed))
        self.learner = self.aec.possible_agents[0]
        self.seats: list[Policy | None] = [None] * n
        self._last_obs: dict[str, np.ndarray] | None = None
        self.render_mode = "ansi"

    # ---------------------------------------------------------------------------------------- pool
    def add_opponent(self, policy: Policy) -> None:
        policy.check_table(self.table)  # before it plays a step
        self.pool.append(policy)

    def set_opponents(self, policies: Sequence[Policy]) -> None:
        if not policies:
            raise ValueError("SingleAgentEnv: the opponent pool is empty")
        for policy in policies:
            policy.check_table(self.table)
        self.pool = list(policies)

    # ---------------------------------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        seed = check_seed("SingleAgentEnv.reset()", seed)  # before anything moves: one line naming the seed
        super().reset(seed=seed)
        if options:
            raise ValueError(f"SingleAgentEnv.reset() takes no options (got {sorted(options)}); give env_kwargs")
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        while True:
            n = self.aec.num_players
            seat = (
                int(self._rng.integers(n)) if self.learner_seat_option == RANDOM_SEAT else int(self.learner_seat_option)
            )
            self.learner = self.aec.possible_agents[seat]
            if self.opponent_draw == "table":  # one opponent fills the table, as in the benchmark
                one = self.pool[int(self._rng.integers(len(self.pool)))]
                self.seats = [None if s == seat else one for s in range(n)]
            else:
                self.seats = [
                    None if s == seat else self.pool[int(self._rng.integers(len(self.pool)))] for s in range(n)
                ]
            self.aec.reset(seed=int(self._rng.integers(2**63 - 1)))
            self._play_opponents()
            if not self._done():
                break  # a game the learner never gets to act in teaches nothing: deal again
        return self._obs(), {"learner_seat": seat}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done():
            raise RuntimeError("SingleAgentEnv.step() called after the episode ended; call reset()")
        try:
            self.aec.step(int(action))
        except ValueError as exc:
            # the AEC env's message names the action and the legal ones; add what a checker's user needs
            raise ValueError(
                f"{exc}. (Checkers that step unmasked actions, such as check_env, need "
                "env_kwargs={'illegal_action': 'penalize'}.)"
            ) from None
        self._play_opponents()
        # Everything the learner earned since its last move (own move, opponents' moves, a terminal reward).
        reward = self.aec.reward_since_last_move(self.learner)
        terminated = bool(self.aec.terminations[self.learner])
        truncated = bool(self.aec.truncations[self.learner])
        info: dict[str, Any] = {}
        if terminated or truncated:
            info = dict(self.aec.infos[self.learner])
        return self._obs(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        mask = self._last_obs["action_mask"] if self._last_obs is not None else None
        if mask is None or self._done():
            return np.ones(self.aec.num_actions, bool)
        return mask.astype(bool)

    def render(self) -> Any:  # a text frame (Gymnasium's RenderFrame type differs between its releases)
        return self.aec.render_text(perspective=self.learner)

    # ---------------------------------------------------------------------------------------- resume
    def get_state(self) -> dict[str, Any]:
        """Everything the next step depends on, as JSON data (for a resume that equals a run that never stopped): the
        env's generator, the episode's learner seat and the pool entry at every other seat, and the game so far as
        its deal's seed and its moves (replayed by :meth:`set_state`; no game object is stored)."""
        aec = self.aec
        index = {id(p): i for i, p in enumerate(self.pool)}
        return {
            "rng": self._rng.bit_generator.state,
            "learner": aec.possible_agents.index(self.learner),
            "seats": [None if p is None else index.get(id(p)) for p in self.seats],
            "pool": [p.name for p in self.pool],
            "game_seed": aec.game_seed,
            "moves": [[int(s), int(a)] for s, a in aec._history],
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state` into this env (built with the same game, options and pool). Anything that does not
        fit -- another pool, a move the game refuses -- raises ``ValueError`` in one line."""
        pool = [p.name for p in self.pool]
        try:
            if state["pool"] != pool:
                raise ValueError(f"it was saved with the opponent pool {state['pool']}, this env has {pool}")
            rng = np.random.default_rng()
            rng.bit_generator.state = state["rng"]
            n = self.aec.num_players
            learner, seats = int(state["learner"]), list(state["seats"])
            if not 0 <= learner < n or len(seats) != n or seats[learner] is not None:
                raise ValueError(f"its seats {seats} and learner seat {learner} do not fit a table of {n}")
            table: list[Policy | None] = [None if k is None else self.pool[int(k)] for k in seats]
            self.aec.reset(options={"game_seed": int(state["game_seed"])})
            for seat, action in state["moves"]:
                if self.aec.game_over or self.aec.agent_selection != self.aec.possible_agents[int(seat)]:
                    raise ValueError(f"its move {action} by seat {seat} does not replay")
                self.aec.step(int(action))
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            raise ValueError(f"SingleAgentEnv.set_state: the saved env state does not fit ({exc})") from None
        self._rng, self.learner, self.seats = rng, self.aec.possible_agents[learner], table
        self._obs()

    # ---------------------------------------------------------------------------------------- internals
    def _done(self) -> bool:
        return bool(self.aec.terminations[self.learner] or self.aec.truncations[self.learner])

    def _play_opponents(self) -> None:
        aec = self.aec
        while not aec.game_over and aec.agent_selection != self.learner:
            agent = aec.agent_selection
            policy = self.seats[aec.possible_agents.index(agent)]
            assert policy is not None
            action = policy.act_with_env(aec, agent, self._rng)  # observes and acts, unless the policy needs more
            if aec.game_over:  # it ended the game itself (a language agent that forfeited)
                break
            aec.step(action)

    def _obs(self) -> np.ndarray:
        self._last_obs = self.aec.observe(self.learner)
        return with_features(self.features, self._last_obs["observation"], self.keep, self._last_obs["action_mask"])
