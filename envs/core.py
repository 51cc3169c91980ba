"""The one generic PettingZoo AEC driver that every Parlour game runs on.

A game supplies its pure rules (``envs/<game>/rules.py``: a state object that knows whose turn it is, the
legal actions, how an action changes the state and when the game is over) and a thin subclass of
:class:`ParlourEnv` that encodes observations and state, decodes actions, draws the table and redraws hidden
information. Everything else -- agent order, reward bookkeeping, dead steps, seeding, masks, illegal-action
handling, the turn cap, terminal infos, records, cloning -- lives here, once.

The input checks live in the driver instead of PettingZoo's generic wrappers (``OrderEnforcingWrapper``,
``AssertOutOfBoundsWrapper``, ``TerminateIllegalWrapper``): stacked, those cost an order of magnitude more than
a small game's own step.
"""

from __future__ import annotations

import copy
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from parlour.envs.contract import RulesState, build_options, check_choice, check_int, copy_generator, options_record
from parlour.envs.declaration import Game
from parlour.envs.layout import Layout, Source

#: Keyword values of ``illegal_action``.
ILLEGAL_RAISE = "raise"
ILLEGAL_PENALIZE = "penalize"
ILLEGAL_ACTION_MODES = (ILLEGAL_RAISE, ILLEGAL_PENALIZE)

#: What a ParlourEnv sets at reset(): reading one before gives an error that says so (PettingZoo's
#: ``OrderEnforcingWrapper`` does this for its envs, at the cost of a wrapper on every call).
_EPISODE_ATTRIBUTES = frozenset(
    {"agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos", "game"}
)

#: What ``reset(options=...)`` understands: ``game_seed`` deals that deal (a record's ``game_seed``).
RESET_OPTIONS = ("game_seed",)


def normalise_name(text: str) -> str:
    """An action name as :meth:`ParlourEnv.parse_action` compares it: case-folded, runs of whitespace made one space,
    none at either end (``"  Peek   DENISE, bottom card "`` reads as ``"peek denise, bottom card"``)."""
    return " ".join(text.casefold().split())


#: Seeds ``reset(seed=...)`` takes: ``None`` or an integer in ``[0, SEED_LIMIT)`` (the range of ``train.seed``).
SEED_LIMIT = 2**63


def check_seed(where: str, seed: Any) -> int | None:
    """``seed`` as a Python ``int`` (a NumPy integer is the equal int: the same games), or ``None``; anything else --
    a bool, a float (even 3.0), a string, a sequence, a negative or too large integer -- a one-line ``ValueError``
    naming ``where``, the seed and the allowed range."""
    if seed is None:
        return None
    allowed = "expected None or an integer in [0, 2**63)"
    shown = " ".join(repr(seed).split())  # one line, whatever the value
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        kind = "bool" if isinstance(seed, np.bool_) else type(seed).__name__
        raise ValueError(f"{where}: seed={shown} ({kind}) is not valid: {allowed}")
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{where}: seed={shown} is out of range: {allowed}")
    return int(seed)


def package_version() -> str:
    try:
        return metadata.version("parlour")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


S = TypeVar("S", bound=RulesState)


def document(doc: str | None, env_cls: type[ParlourEnv[Any]]) -> str:
    """A versioned env module's docstring with its generated parts filled in from the env class (default keywords):
    ``{observation_table}`` (the layout's table), ``{observation_size}`` and ``{num_actions}``."""
    text = doc or ""
    for token, value in (
        ("{observation_table}", env_cls.observation_layout.markdown_table()),
        ("{observation_size}", str(env_cls.observation_layout.size)),
        ("{num_actions}", str(env_cls.num_actions)),
    ):
        if token == "{observation_table}" and token not in text:
            raise ValueError(f"{env_cls.__name__}: the module docstring has no {token} to fill")
        text = text.replace(token, value)
    return text


E = TypeVar("E", bound="ParlourEnv[Any]")


def env_factory(env_cls: type[E]) -> Callable[..., E]:
    """A versioned module's ``env(**kwargs)``: the PettingZoo-style constructor of ``env_cls``."""

    def env(**kwargs: Any) -> E:
        return env_cls(**kwargs)

    env.__doc__ = f"Create the {env_cls.title} AEC environment ({env_cls.metadata['name']}; see its module docstring)."
    return env


def env_metadata(name: str) -> dict[str, Any]:
    """PettingZoo metadata of a Parlour env: text rendering, AEC only."""
    return {"render_modes": ["ansi"], "name": name, "is_parallelizable": False}


# ----------------------------------------------------------------------------------------------- driver
class ParlourEnv(AECEnv, ABC, Generic[S]):
    """Generic AEC driver. Subclasses set the class attributes and implement the abstract hooks."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "parlour",
        "is_parallelizable": False,
    }

    #: The game's name as people write it (docs, tables).
    title: ClassVar[str] = "Parlour game"
    #: Version of the env module (the ``_vN`` suffix); bump only when behaviour changes.
    env_version: ClassVar[int] = 0
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    num_actions: ClassVar[int]
    observation_layout: ClassVar[Layout]
    state_layout: ClassVar[Layout]
    #: The driver's turn cap when ``max_turns`` is not given (``None``: the rules end every game).
    default_max_turns: ClassVar[int | None] = None
    #: Whether the rules' own cap (the rules state's ``truncated``) scores the game. The ruling (RULINGS.md, general):
    #: a cap that scores the game is part of the game and ends it as a PettingZoo *termination* -- a trainer must
    #: not bootstrap a value on top of a final score; a cap that leaves it unscored (every reward 0) is a truncation.
    cap_scores: ClassVar[bool] = False
    #: ``False`` only in versions published before that ruling (``lady_alice_v0``/``v1``): their scored cap stays a
    #: truncation, as the policies trained on them saw it.
    scored_cap_terminates: ClassVar[bool] = True

    game: S

    def __init__(
        self,
        num_players: int,
        render_mode: str | None = None,
        *,
        illegal_action: str = ILLEGAL_RAISE,
        illegal_reward: float = -1.0,
        max_turns: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        name = self.metadata["name"]
        self.num_players = check_int(f"{name}: num_players", num_players, self.min_players, self.max_players)
        if render_mode is not None:
            check_choice(f"{name}: render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.render_mode = render_mode
        self.illegal_action = check_choice(f"{name}: illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if not isinstance(illegal_reward, int | float) or not np.isfinite(illegal_reward):
            raise ValueError(f"{name}: illegal_reward={illegal_reward!r} is not valid: expected a finite number")
        self.illegal_reward = float(illegal_reward)
        if max_turns is None:
            max_turns = self.default_max_turns
        self.max_turns = None if max_turns is None else check_int(f"{name}: max_turns", max_turns, 1)
        #: The keyword arguments of ``make()`` that recreate this env (a record's ``options``). Not to be confused
        #: with the rule keywords alone (``GameEnv.rules_options``) nor with ``reset(options=...)``.
        self.make_kwargs: dict[str, Any] = {
            "num_players": self.num_players,
            "illegal_action": self.illegal_action,
            "illegal_reward": self.illegal_reward,
            "max_turns": max_turns,
            **(options or {}),
        }
        if max_turns is not None:
            # the driver's cap is the one make(max_turns=...) sets, even where the rules have a keyword of that name
            # (Elevenses' own 200-turn cap): a record must replay the game it recorded
            self.make_kwargs["max_turns"] = max_turns

        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agents: list[str] = []
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.observation_layout.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
            }
        )
        self.observation_spaces: dict[str, spaces.Space] = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, spaces.Space] = {
            a: spaces.Discrete(self.num_actions) for a in self.possible_agents
        }
        self.state_space = spaces.Box(0.0, 1.0, (self.state_layout.size,), np.float32)
        self._zero_mask = np.zeros(self.num_actions, np.int8)
        self._zero_mask.flags.writeable = False
        #: The acting seat's legal mask, refreshed after every change of state (read-only: never mutate).
        self._mask = self._zero_mask
        self._seeder: np.random.Generator | None = None
        self.game_seed: int | None = None
        self._final_outcome: dict[str, Any] | None = None
        #: The game is the deal of ``game_seed`` played on by actions alone (so ``record()`` can replay it); False
        #: for a state set up by hand (``set_state``) or redrawn (``resample_hidden``).
        self._replayable = False
        # Over until the first reset(): a step before it reaches the checks of the finished-game branch.
        self._over = True
        self._started = False
        self._history: list[tuple[int, int]] = []
        #: The seat that forfeited the game (``forfeit``), if one did.
        self._forfeited: int | None = None
        self._rewards_dirty = False

    # ------------------------------------------------------------------------------------ game hooks
    @abstractmethod
    def _deal(self, rng: np.random.Generator) -> S:
        """A new rules state, every random draw from ``rng``."""

    @abstractmethod
    def _reference_observation(self, seat: int) -> np.ndarray:
        """The reference (from-scratch) observation of ``seat`` as a fresh ``float32`` vector."""

    @abstractmethod
    def _encode_state(self) -> np.ndarray:
        """The full-information vector."""

    @abstractmethod
    def decode_action(self, action: int) -> str:
        """A short readable description of ``action``."""

    @abstractmethod
    def render_text(self, perspective: str | None = None) -> str:
        """The table as ``perspective`` sees it (``None``: as an umpire sees it)."""

    @abstractmethod
    def _resample_state(self, seat: int, rng: np.random.Generator) -> S:
        """A copy of the rules state with everything hidden from ``seat`` redrawn consistently."""

    @abstractmethod
    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        """``(known, hidden)``: the true values of what ``agent`` knows and of what is hidden from it.

        Used by the hidden-information audit: resampling for ``agent`` must keep ``known`` and should change
        ``hidden``; any change of ``known`` must change ``agent``'s observation.
        """

    @abstractmethod
    def outcome(self) -> dict[str, Any]:
        """The result of a finished (or truncated) game, with the revealed hidden state; JSON-serialisable."""

    def invariants(self) -> None:
        """Raise ``AssertionError`` if the state breaks a rule invariant (checked by the seeded fuzz)."""

    def _incremental_observation(self, seat: int) -> np.ndarray:
        """The observation handed out by ``observe``; override with a cached/incremental version if needed."""
        return self._reference_observation(seat)

    def _apply(self, action: int) -> Sequence[float] | None:
        """Apply an action to the rules; override to update incremental encodings too."""
        return self.game.play(action)  # the driver has checked the mask

    def _on_new_state(self) -> None:
        """Called whenever ``self.game`` is replaced (reset, resample); rebuild any cached encodings."""

    # ------------------------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    if not TYPE_CHECKING:  # at run time only: to a type checker every attribute would exist

        def __getattr__(self, name: str) -> Any:
            # Only reached for attributes not set yet: the episode's bookkeeping before the first reset().
            if name in _EPISODE_ATTRIBUTES:
                raise AttributeError(
                    f"{self.metadata['name']}: {name} is not set before reset(); call reset() before "
                    "step(), last() or observe()"
                )
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        # checked before anything changes; NumPy would take a bool, a sequence or a huge integer as entropy
        seed = check_seed(f"{self.metadata['name']}: reset()", seed)
        if seed is not None:
            self._seeder = np.random.default_rng(seed)
        elif self._seeder is None:
            self._seeder = np.random.default_rng()
        if options:
            name = self.metadata["name"]
            unknown = sorted(set(options) - set(RESET_OPTIONS))
            if unknown:
                # warned, not refused: PettingZoo's api_test passes an option of its own, which envs must accept
                warnings.warn(
                    f"{name}: reset() ignores the options {unknown}; it understands {list(RESET_OPTIONS)} (the player "
                    "count and rule keywords are given when the env is made: env(num_players=..., ...))",
                    stacklevel=2,
                )
            if "game_seed" in options:
                self._start_game(check_int(f"{name}: reset option game_seed", options["game_seed"], 0, 2**63 - 2))
                return
        self._start_game(int(self._seeder.integers(2**63 - 1)))

    def _start_game(self, game_seed: int) -> None:
        self._begin(self._deal(np.random.default_rng(game_seed)), game_seed)

    def _begin(self, game: S, game_seed: int | None) -> None:
        """Start an episode on ``game`` (``game_seed``: the deal's seed, ``None`` for a state set up by hand)."""
        self.game_seed = game_seed
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._history = []
        self._forfeited = None
        self._rewards_dirty = False
        self._replayable = game_seed is not None
        self._over = False
        self._started = True
        self._final_outcome = None
        self.game = game
        self._on_new_state()
        self.agent_selection = self.possible_agents[self.game.current_player]
        self._mask = self.game.legal_mask()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        # Masks are read-only arrays made afresh by the rules for every state (or shared constants), so they are
        # handed out without a copy; the observation is a new array on every call. An agent that has left after the
        # end may still be observed (its final view, mask all zeros): adapters show each seat its last observation.
        mask = self._mask if agent == self.agent_selection and not self._over else self._zero_mask
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):  # free on the happy path
            seat = self._seat_of(agent)
        return {"observation": self._incremental_observation(seat), "action_mask": mask}

    def reward_since_last_move(self, agent: str) -> float:
        """What ``agent`` has earned since it last acted (its own move's reward, the others' moves', a terminal
        one): the reward ``last()`` reports when it is ``agent``'s turn, readable at any time."""
        try:
            return float(self._cumulative_rewards[agent])
        except KeyError:
            raise ValueError(self._left_message(agent)) from None

    def deal(self, rng: np.random.Generator) -> S:
        """A fresh rules state, every draw from ``rng``, outside this env's bookkeeping (the env is untouched): for
        measuring the pure rules."""
        return self._deal(rng)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # PettingZoo's ``last`` with ``observe`` inlined (the hot path of every AEC loop).
        agent = self.agent_selection
        try:
            reward = self._cumulative_rewards[agent]
        except KeyError:  # free on the happy path
            raise ValueError(self._left_message(agent)) from None
        obs = None
        if observe:
            mask = self._zero_mask if self._over else self._mask
            obs = {"observation": self._incremental_observation(self._seat[agent]), "action_mask": mask}
        return (obs, reward, self.terminations[agent], self.truncations[agent], self.infos[agent])

    def _seat_of(self, agent: Any) -> int:
        """The seat of ``agent``; a clear ``ValueError`` for a name that is not one of this env's agents."""
        try:
            return self._seat[agent]
        except (KeyError, TypeError):
            raise ValueError(
                f"{self.metadata['name']}: {agent!r} is not an agent of this env; agents: {self.possible_agents}"
            ) from None

    def _left_message(self, agent: str) -> str:
        return (
            f"{self.metadata['name']}: {agent} has left the game (it is over); agents still to step: {self.agents}; "
            "call reset()"
        )

    @property
    def game_over(self) -> bool:
        """The episode's game has ended (terminated or truncated; also before the first ``reset()``)."""
        return self._over

    @property
    def final_outcome(self) -> dict[str, Any] | None:
        """The terminal ``infos[agent]["outcome"]`` of a finished game (``None`` while it goes on)."""
        return self._final_outcome

    def state(self) -> np.ndarray:
        return self._encode_state()

    def observation_dict(self, agent: str) -> dict[str, np.ndarray]:
        """The observation of ``agent`` decoded through the layout into named arrays."""
        return self.observation_layout.decode(self._incremental_observation(self._seat_of(agent)))

    def legal_actions(self, agent: str | None = None) -> list[int]:
        agent = self.agent_selection if agent is None else agent
        return [int(a) for a in np.flatnonzero(self.observe(agent)["action_mask"])]

    # ------------------------------------------------------------------------------------ named actions
    @property
    def action_names(self) -> tuple[str, ...]:
        """Every action's stable, human-readable name at this table (index = action id): the game's
        :meth:`decode_action` text, which depends on the table (players, rule keywords), never on the state. Names
        are unique after :func:`normalise_name`; a game whose names collide is refused here (a bug in the game)."""
        names: tuple[str, ...] | None = getattr(self, "_action_names", None)
        if names is None:
            names = tuple(self.decode_action(a) for a in range(self.num_actions))
            index: dict[str, int] = {}
            for a, name in enumerate(names):
                key = normalise_name(name)
                if key in index:
                    raise AssertionError(
                        f"{self.metadata['name']}: actions {index[key]} and {a} share the name {name!r}; action names "
                        "must be unique"
                    )
                index[key] = a
            self._action_names, self._name_index = names, index
        return names

    def parse_action(self, text: str) -> int:
        """The action id that ``text`` names (case and whitespace aside: :func:`normalise_name`), whether or not it is
        legal now; a text that names no action at this table is a ``ValueError``. The message names no legal action:
        those can depend on the acting seat's hand, and whoever asks need not be that seat."""
        if not isinstance(text, str):
            raise ValueError(f"an action name is a string; got {type(text).__name__} {text!r}")
        self.action_names  # noqa: B018 -- builds the index on first use
        found = self._name_index.get(normalise_name(text))
        if found is None:
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise ValueError(
                f"{shown!r} names no action of {self.metadata['name']} (names are as legal_action_names() gives them; "
                "case and spacing aside)"
            )
        return found

    def legal_action_names(self, agent: str | None = None) -> list[str]:
        """The names of ``agent``'s legal actions now (default: the acting agent's), in action-id order."""
        names = self.action_names
        return [names[a] for a in self.legal_actions(agent)]

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self._over:
            if not self.agents:
                raise ValueError(f"{self.metadata['name']}: the game is over and every agent has left; call reset()")
            if action is not None:
                raise ValueError(f"{agent} is done: its step must be step(None), got {action!r}")
            self._dead_step(agent)
            return
        mask = self._mask
        if type(action) is int and 0 <= action < self.num_actions and mask[action]:
            act = action  # the common case, checked cheaply (and first: the env is benchmarked)
        else:
            # A value that is not an integer is a programming error, not a move: it raises in both modes, and the
            # penalty mode penalises only integers the mask forbids. Checked before anything changes.
            act = self._integer(agent, action)
            if not (0 <= act < self.num_actions and mask[act]):
                self._illegal(agent, act, mask)  # raises, or ends the game with the penalty
                return
        if self._rewards_dirty:
            for a in self.agents:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        deltas = self._apply(act)
        self._history.append((self._seat[agent], act))
        if deltas is not None:
            self._add_rewards(deltas)
        game = self.game
        player = game.current_player
        if player < 0:
            # The rules' own cap (they set ``truncated``): a truncation unless it scores the game (the ruling above).
            self._finish(truncated=game.truncated and not (self.cap_scores and self.scored_cap_terminates))
        elif self.max_turns is not None and game.turns >= self.max_turns:
            self._finish(truncated=True)  # nobody won or lost: no reward
        else:
            self.agent_selection = self.possible_agents[player]
            self._mask = game.legal_mask()

    def _add_rewards(self, deltas: Sequence[float]) -> None:
        for i, d in enumerate(deltas):
            if d:
                a = self.possible_agents[i]
                self.rewards[a] += float(d)
                self._cumulative_rewards[a] += float(d)
                self._rewards_dirty = True

    def _integer(self, agent: str, action: Any) -> int:
        """``action`` as an ``int`` if it is an integer (Python's or NumPy's, not a ``bool``); else a ``ValueError``."""
        if isinstance(action, int | np.integer) and not isinstance(action, bool):
            return int(action)
        if action is None:
            reason = "step(None) is only for an agent whose game is over"
        else:
            shown = repr(action) if isinstance(action, str) else str(action)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            kind = "bool" if isinstance(action, np.bool_) else type(action).__name__
            reason = f"actions are integers; got {kind} {shown}"
        raise ValueError(f"illegal action {action!r} for {agent}: {reason}; legal actions: {self._named_legal()}")

    def _named_legal(self) -> str:
        names = self.action_names
        return ", ".join(f"{x} ({names[x]})" for x in np.flatnonzero(self._mask).tolist())

    def _illegal(self, agent: str, action: int, mask: np.ndarray) -> None:
        """An integer that is not a legal action of ``agent``: raise, or end the game with the penalty."""
        if 0 <= action < self.num_actions:
            text = self.decode_action(action)
        else:  # never decoded: a game's table would name some other action, or a nonsense one
            text = f"not an action (expected 0..{self.num_actions - 1})"
        message = f"illegal action {action} ({text}) for {agent}; legal actions: {self._named_legal()}"
        if self.illegal_action == ILLEGAL_RAISE:
            raise ValueError(message)
        told = {"agent": agent, "action": action, "message": message, "legal": np.flatnonzero(mask).tolist()}
        self._penalise(agent, "illegal_action", told)

    def forfeit(self, reason: str) -> None:
        """The acting agent forfeits (a language agent whose answers were refused too often, say): the game ends as an
        illegal action ends it under ``illegal_action="penalize"``, whatever that keyword is -- ``illegal_reward`` to
        the agent, nothing to the others, a termination. Every seat's outcome says who forfeited; ``reason`` reaches
        that agent's infos alone. A record of the game keeps the forfeit, and :func:`parlour.envs.replay` replays it."""
        if not self._started or self._over:
            raise ValueError("forfeit(): no game is on (call reset(), or the game is over)")
        if not isinstance(reason, str):
            raise ValueError(f"forfeit(): the reason is a string; got {type(reason).__name__}")
        agent = self.agent_selection
        self._forfeited = self._seat[agent]
        self._penalise(agent, "forfeit", {"agent": agent, "reason": reason})

    def _penalise(self, agent: str, key: str, told: dict[str, Any]) -> None:
        """End the game with ``illegal_reward`` for ``agent``: the outcome names it under ``key``; ``told`` goes to its
        infos alone."""
        if self._rewards_dirty:
            for a in self.agents:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        penalty = [0.0] * self.num_players
        penalty[self._seat[agent]] = self.illegal_reward
        self._add_rewards(penalty)
        # Only the offender hears what it did wrong and what it could have done (its legal actions can name its
        # hand): the outcome every seat gets says who offended, nothing more.
        self._finish(truncated=False, offender=(key, agent))
        self.infos[agent][key] = told

    def _finish(self, truncated: bool, offender: tuple[str, str] | None = None) -> None:
        outcome = self.outcome()
        outcome["truncated"] = truncated
        if self.cap_scores and self.scored_cap_terminates:
            # the cap's end is a termination here: the outcome still says whether the cap ended the game
            outcome["capped"] = bool(getattr(self.game, "truncated", False))
        if offender is not None:
            outcome[offender[0]] = {"agent": offender[1]}
        self._final_outcome = outcome
        self._over = True
        for a in self.agents:
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
            # every seat its own info dict and outcome dict: what is added to one seat's (the offender's explanation)
            # reaches no other, nor the env's final outcome. The values inside are the same public objects for all
            # (a deep copy per seat would cost a small game's env ~30% of its speed in the benchmark): read-only.
            self.infos[a] = {"outcome": dict(outcome)}
        self.agent_selection = self.agents[0]

    def _dead_step(self, agent: str) -> None:
        # PettingZoo's dead-step protocol: the finished agent leaves; per-step rewards are cleared once.
        if self._rewards_dirty:
            for a in self.agents:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        for d in (self.rewards, self._cumulative_rewards, self.terminations, self.truncations, self.infos):
            del d[agent]
        self.agents.remove(agent)
        if self.agents:
            self.agent_selection = self.agents[0]

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use env(render_mode='ansi').")
            return None
        return self.render_text(None)

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------------------------ search & records
    def clone(self) -> ParlourEnv[S]:
        """An exact, independent copy (same state, same future random draws).

        The spaces are shared with the original: they describe the game, and the generator behind their
        ``sample()`` is not part of it."""
        return copy.deepcopy(self)

    #: Attributes a copy shares with its original: fixed once the env is made (the spaces, the layouts' index
    #: arrays and slices, the frozen options) or replaced rather than changed (``_mask``, read-only). A game adds
    #: its own with ``_SHARED_ON_COPY = ParlourEnv._SHARED_ON_COPY | {...}``.
    _SHARED_ON_COPY: ClassVar[frozenset[str]] = frozenset(
        {"observation_spaces", "action_spaces", "state_space", "possible_agents", "rules_options", "make_kwargs"}
        | {"_zero_mask", "_mask", "_gather", "observation_layout", "state_layout"}
    )
    #: Attributes a shallow copy copies in full: lists and dicts of immutable values (seat-action pairs, names,
    #: rewards, flags).
    _FLAT_ON_COPY: ClassVar[frozenset[str]] = frozenset(
        {"_history", "agents", "_seat", "rewards", "_cumulative_rewards", "terminations", "truncations"}
    )

    def __deepcopy__(self, memo: dict[int, Any]) -> ParlourEnv[S]:
        """``copy.deepcopy`` (``clone()``, ``resample_hidden``): a plain deep copy of each attribute but those above,
        and generators copied by state. A plain ``deepcopy`` of the whole env walked every space and every history
        pair -- most of the hidden-information audit's time, which makes a copy per redraw and per illegal try."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        shared, flat = self._SHARED_ON_COPY, self._FLAT_ON_COPY
        for key, value in self.__dict__.items():
            if key in shared:
                new.__dict__[key] = value
            elif key in flat:
                new.__dict__[key] = copy.copy(value)
            elif isinstance(value, np.random.Generator):
                new.__dict__[key] = memo[id(value)] = copy_generator(value)
            else:
                new.__dict__[key] = copy.deepcopy(value, memo)
        return new

    def set_state(self, game: S) -> None:
        """Start a fresh episode from a rules state set up by hand (tests, puzzles, analysis).

        Such an episode has no deal seed, so ``record()`` refuses it, as for ``resample_hidden`` copies.
        """
        self._begin(game, None)

    def resample_state(self, agent: str, rng: np.random.Generator) -> S:
        """The rules state of :meth:`resample_hidden` alone (no copy of the env): cheap determinisation for search."""
        return self._resample_state(self._seat_of(agent), rng)

    def resample_hidden(self, agent: str, rng: np.random.Generator) -> ParlourEnv[S]:
        """A copy in which everything hidden from ``agent`` is redrawn consistently with what it observed."""
        new = self.clone()
        new.game = self._resample_state(self._seat_of(agent), rng)
        new._replayable = False
        new._on_new_state()
        if not new._over:
            new._mask = new.game.legal_mask()
        return new

    def record(self) -> dict[str, Any]:
        """A JSON-serialisable record of the game so far; ``parlour.envs.replay`` reproduces it."""
        if not self._started:
            raise ValueError("record(): call reset() first")
        if not self._replayable:
            raise ValueError(
                "record(): this game was set up by resample_hidden() or set_state(); its deal has no seed to replay"
            )
        return {
            "format": "parlour-record/1",
            "package_version": package_version(),
            "env": self.metadata["name"],
            "env_version": self.env_version,
            "options": dict(self.make_kwargs),
            "game_seed": self.game_seed,
            "actions": [
                {"seat": s, "agent": self.possible_agents[s], "action": a, "text": self.decode_action(a)}
                for s, a in self._history
            ],
            **({} if self._forfeited is None else {"forfeit": {"seat": self._forfeited}}),
            "outcome": copy.deepcopy(self._final_outcome),
        }

    def __str__(self) -> str:
        return f"{self.metadata['name']}({self.num_players} players)"


class GameEnv(ParlourEnv[S]):
    """A :class:`ParlourEnv` whose rules take keywords: the one constructor every game shares.

    ``env(num_players=…, render_mode=…, illegal_action=…, illegal_reward=…, max_turns=…, **rule_options)``: the
    rule keywords are validated into ``options_class`` (``self.rules_options``; unknown ones are refused with the
    allowed ones listed). A game sets ``options_class`` and ``default_players``, and may override
    :meth:`_configure` (before the spaces are made: per-keyword layouts or action counts) and :meth:`_setup`
    (after the driver is ready: its encoders).
    """

    options_class: ClassVar[Callable[..., Any]]
    default_players: ClassVar[int] = 4
    #: The game's declaration (:mod:`parlour.envs.declaration`); ``None`` for a game of a user's own that has none
    #: (its messages then name the env id).
    declaration: ClassVar[Game | None] = None

    def __init__(
        self,
        num_players: int | None = None,
        render_mode: str | None = None,
        *,
        illegal_action: str = ILLEGAL_RAISE,
        illegal_reward: float = -1.0,
        max_turns: int | None = None,
        **rule_options: Any,
    ) -> None:
        n = self.default_players if num_players is None else num_players
        game = self.declaration.name if self.declaration is not None else self.metadata["name"]
        self.rules_options: Any = build_options(self.options_class, game, {"num_players": n, **rule_options})
        self._configure(self.rules_options)
        super().__init__(
            n,
            render_mode,
            illegal_action=illegal_action,
            illegal_reward=illegal_reward,
            max_turns=max_turns,
            options=options_record(self.rules_options),
        )
        self._setup()

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return one seat can get in an episode under these options (for libraries that
        declare them, e.g. OpenSpiel's utility range); an illegal-action penalty widens them by its value."""
        low, high = self.rules_options.return_bounds()
        if self.illegal_action != ILLEGAL_RAISE:
            # the penalised seat keeps what it earned so far (within the bounds) and gets the penalty on top
            low, high = low + min(0.0, self.illegal_reward), high + max(0.0, self.illegal_reward)
        return float(low), float(high)

    def _configure(self, options: Any) -> None:
        """Set per-instance ``num_actions``/layouts that depend on the rule keywords (before spaces are made)."""

    def _setup(self) -> None:
        """Build the game's encoders once the driver is initialised (``_use_source``)."""

    # ------------------------------------------------------------------------------------ incremental encoding
    # One mechanism for every game: the rules note what each action changed (``Rules.changes``); the env keeps a
    # source vector (:class:`~parlour.envs.layout.Source`: public fields once, private fields once per seat) and
    # hands each seat its observation as one gather from it (``_incremental_observation``). A game's ``_apply`` plays the action
    # (``game.play``), applies ``game.changes`` to ``self.src`` and empties the list -- in one method, because this
    # is the hot path of every step. Its from-scratch writer (``_write_source``) builds the source at a reset and is
    # the reference the fuzz checks the incremental one against at every step (``_reference_observation``); the state
    # vector derives from the source too (:func:`~parlour.envs.layout.state_from_source`).
    src: Source

    def _use_source(self, layout: Layout, gather: list[np.ndarray]) -> None:
        """Encode incrementally into a source vector of ``layout``; ``gather[seat]``: that seat's observation."""
        self.src = Source(layout)
        self._gather = gather

    def _write_source(self, src: Source) -> None:
        """Write everything the source shows of ``self.game`` into ``src`` (reset: zero but ``one``)."""
        raise NotImplementedError

    def _on_new_state(self) -> None:
        self.src.reset()
        self._write_source(self.src)
        self.game.changes = []  # the rules note their changes from now on

    def _incremental_observation(self, seat: int) -> np.ndarray:
        return self.src.vector[self._gather[seat]]

    def _reference_observation(self, seat: int) -> np.ndarray:
        fresh = Source(self.src.layout)
        fresh.reset()
        self._write_source(fresh)
        return fresh.vector[self._gather[seat]]
