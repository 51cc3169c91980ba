"""Every Parlour environment as an OpenSpiel Python game, so that OpenSpiel's algorithms run on our games.

>>> from parlour.envs.interop import openspiel as ps
>>> game = ps.load("six_suspects_v0", players=4, rng_seed=0)      # a pyspiel.Game
>>> state = game.new_initial_state()                                # the deal is drawn from the game's rng

Each env id is registered as ``parlour_<env id>`` (``pyspiel.load_game("parlour_six_suspects_v0", {...})`` works
once this module is imported). Game parameters: ``players``, ``rng_seed`` (-1: unseeded), ``options`` (the rule
keywords as a JSON object, e.g. ``'{"reward": "margin"}'``) and ``max_game_length``.

How the games map onto OpenSpiel's model:

- **Chance**: ``SAMPLED_STOCHASTIC``. Every random draw of a game comes from its deal seed (the rules never draw
  again), so there are no chance nodes: each ``new_initial_state()`` takes the next deal seed from the game's
  generator (seeded by ``rng_seed``), which makes a sequence of games reproducible.
- **Information state**: the env's observation of that player. It keeps everything the player has seen and the
  public history (the project's recall ruling), in a fixed-size encoding -- which may merge two histories that
  differ only in what the encoding does not keep (the order of some events), so it is not perfect recall in
  OpenSpiel's strict sense. ``information_state_tensor`` is that vector; ``information_state_string`` is the player
  and a SHA-1 of it (the key ISMCTS keys its nodes by). The observation tensor and string are the same. An
  algorithm whose correctness needs strict perfect recall (CFR, an exact best response) should key on the sequence
  of a seat's observations and its own actions, as :mod:`parlour.training.publish.exploit_exact` does.
- **Resampling**: ``resample_from_infostate(player, sampler)`` returns a state whose env is the env's own
  :meth:`~parlour.envs.core.ParlourEnv.resample_hidden` (the determinisation our hidden-information audit checks);
  its random draws are seeded from ``sampler()``.
- **Rewards**: ``RewardModel.REWARDS``: ``rewards()`` are the env's per-step rewards (dense reward modes give some
  before the end), ``returns()`` their sum. Utility is ``GENERAL_SUM`` (ties share a win) with the bounds of
  :meth:`~parlour.envs.core.GameEnv.return_bounds` for the chosen options.
- **Length**: OpenSpiel needs a bound on the number of decisions. The bridge ends a game after ``max_game_length``
  decisions (default :data:`MAX_GAME_LENGTH`) as a truncation, as the env's own turn caps do: every seat keeps the
  rewards it has and nobody wins. The rules' own caps end games far sooner (random play, 300 games per player
  count: at most 106 decisions in 6 Suspects, 120 in Goes to Eleven, 141 in Lady Alice, 378 in Elevenses).
- **Serialization**: OpenSpiel serialises a Python state by its action history, which cannot hold the deal seed of a
  sampled-stochastic game; use :meth:`ParlourState.env`'s ``record()`` (replayable with ``parlour.envs.replay``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pyspiel

from parlour.envs import ENVIRONMENTS, make
from parlour.envs.core import ParlourEnv

#: Decisions after which the bridge ends a game as a truncation (OpenSpiel needs a bound; no game comes near it).
MAX_GAME_LENGTH = 2000
#: Game parameter names with their defaults (``players`` defaults to the env's own default player count).
PARAMETERS = {"players": 0, "rng_seed": -1, "options": "{}", "max_game_length": MAX_GAME_LENGTH}


def short_name(env_id: str) -> str:
    """The name under which ``env_id`` is registered with OpenSpiel."""
    return f"parlour_{env_id}"


def _game_type(env_id: str) -> Any:
    cls = type(make(env_id)) if env_id in ENVIRONMENTS else None
    if cls is None:
        raise ValueError(f"unknown environment {env_id!r}; available: {sorted(ENVIRONMENTS)}")
    return pyspiel.GameType(
        short_name=short_name(env_id),
        long_name=f"Parlour {cls.title} ({env_id})",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=cls.max_players,
        min_num_players=cls.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(PARAMETERS),
    )


class ParlourGame(pyspiel.Game):
    """One Parlour env id, player count and rule options as an OpenSpiel game."""

    env_id: str = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        try:
            options = json.loads(params["options"])
        except json.JSONDecodeError as e:
            raise ValueError(
                f"{short_name(self.env_id)}: options={params['options']!r} is not a JSON object: {e}"
            ) from e
        if not isinstance(options, dict):
            raise ValueError(f"{short_name(self.env_id)}: options={params['options']!r} is not a JSON object")
        players = int(params["players"]) or None
        #: The env every state starts from (validates the player count and the rule keywords).
        self.template: ParlourEnv[Any] = make(self.env_id, num_players=players, **options)
        self.max_length = int(params["max_game_length"])
        if self.max_length < 1:
            raise ValueError(f"{short_name(self.env_id)}: max_game_length={self.max_length} must be at least 1")
        low, high = self.template.return_bounds()
        info = pyspiel.GameInfo(
            num_distinct_actions=self.template.num_actions,
            max_chance_outcomes=0,
            num_players=self.template.num_players,
            min_utility=low,
            max_utility=high,
            utility_sum=None,
            max_game_length=self.max_length,
        )
        super().__init__(_game_type(self.env_id), info, params)
        seed = int(params["rng_seed"])
        self._deals = np.random.default_rng(None if seed < 0 else seed)

    def new_initial_state(self) -> ParlourState:
        env = self.template.clone()
        env.reset(options={"game_seed": int(self._deals.integers(2**63 - 1))})
        return ParlourState(self, env)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> InformationStateObserver:
        # Every observation type gets the env's observation (it keeps all the player saw; see the module docstring).
        return InformationStateObserver(self.template.observation_layout.size)


class ParlourState(pyspiel.State):
    """A game in progress: a Parlour env plus the rewards OpenSpiel asks for."""

    def __init__(self, game: ParlourGame, env: ParlourEnv[Any]) -> None:
        super().__init__(game)
        self._env = env
        self._length = game.max_length
        self._decisions = 0
        self._cut = False
        self._returns = np.zeros(env.num_players)
        self._rewards = np.zeros(env.num_players)

    @property
    def env(self) -> ParlourEnv[Any]:
        """The Parlour env of this state (do not step it: apply actions to the state)."""
        return self._env

    def current_player(self) -> int:
        if self._env.game_over or self._cut:
            return int(pyspiel.PlayerId.TERMINAL)
        return self._env.possible_agents.index(self._env.agent_selection)

    def _legal_actions(self, player: int) -> list[int]:
        return [int(a) for a in np.flatnonzero(self._env.observe(self._env.possible_agents[player])["action_mask"])]

    def _apply_action(self, action: int) -> None:
        env = self._env
        env.step(int(action))
        self._rewards = np.array([env.rewards.get(a, 0.0) for a in env.possible_agents])
        self._returns += self._rewards
        self._decisions += 1
        self._cut = self._decisions >= self._length and not env.game_over

    def _action_to_string(self, player: int, action: int) -> str:
        return self._env.decode_action(int(action))

    def is_terminal(self) -> bool:
        return self._env.game_over or self._cut

    def returns(self) -> list[float]:
        return [float(x) for x in self._returns]

    def rewards(self) -> list[float]:
        return [float(x) for x in self._rewards]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> ParlourState:
        """A state in which everything hidden from ``player_id`` is redrawn (the env's ``resample_hidden``)."""
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        new = ParlourState(self.get_game(), self._env.resample_hidden(self._env.possible_agents[player_id], rng))
        new._decisions, new._cut = self._decisions, self._cut
        new._returns, new._rewards = self._returns.copy(), self._rewards.copy()
        return new

    def __str__(self) -> str:
        return self._env.render_text(None)


class InformationStateObserver:
    """OpenSpiel's observer protocol over the env's observation (``tensor``, ``dict``, ``set_from``, ``string_from``)."""

    def __init__(self, size: int) -> None:
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: ParlourState, player: int) -> None:
        env = state.env
        self.tensor[:] = env.observe(env.possible_agents[player])["observation"]

    def string_from(self, state: ParlourState, player: int) -> str:
        env = state.env
        agent = env.possible_agents[player]
        return f"{agent} {hashlib.sha1(env.observe(agent)['observation'].tobytes()).hexdigest()}"


def _game_class(env_id: str) -> type[ParlourGame]:
    return type(f"ParlourGame_{env_id}", (ParlourGame,), {"env_id": env_id})


def register(env_ids: list[str] | None = None) -> list[str]:
    """Register ``env_ids`` (default: every env) with OpenSpiel; returns their short names. Idempotent."""
    names = []
    known = set(pyspiel.registered_names())
    for env_id in sorted(ENVIRONMENTS) if env_ids is None else env_ids:
        name = short_name(env_id)
        if name not in known:
            pyspiel.register_game(_game_type(env_id), _game_class(env_id))
        names.append(name)
    return names


def load(env_id: str, **params: Any) -> ParlourGame:
    """``pyspiel.load_game`` for ``env_id``; ``options`` may be given as a dict of rule keywords."""
    if isinstance(params.get("options"), dict):
        params["options"] = json.dumps(params["options"])
    register([env_id])
    game: ParlourGame = pyspiel.load_game(short_name(env_id), params)
    return game


register()
