"""Parlour environments: a registry of versioned PettingZoo AEC environments.

>>> from parlour.envs import make
>>> env = make("six_suspects_v0", num_players=4)
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from parlour.envs.declaration import Game, env_ids

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv

#: The games' packages (``parlour.envs.<game>``, each exporting its declaration ``GAME``), in the order Parlour lists
#: them.
GAME_PACKAGES = ("six_suspects", "goes_to_eleven", "lady_alice", "elevenses")

#: Game name -> its declaration (:mod:`parlour.envs.declaration`): the one registry the others derive from.
GAMES: dict[str, Game] = {}
#: Env id -> its versioned module (imported on first use, so that ``import parlour.envs`` stays cheap), every game's
#: versions newest first.
ENVIRONMENTS: dict[str, str] = {}
_GAME_OF: dict[str, Game] = {}


def register(game: Game) -> None:
    """Add a game's declaration (and so its env ids, ``<name>_v<number>``) to the registries; a name taken already is
    refused."""
    if game.name in GAMES:
        raise ValueError(f"a game named {game.name!r} is registered already")
    GAMES[game.name] = game
    for version, env_name in zip(game.versions, env_ids(game), strict=True):
        ENVIRONMENTS[env_name] = version.module
        _GAME_OF[env_name] = game


for _package in GAME_PACKAGES:
    register(importlib.import_module(f"parlour.envs.{_package}").GAME)


def game_of(name: str) -> Game:
    """The declaration of the game the env id ``name`` belongs to (``ValueError`` naming the env ids)."""
    if name not in _GAME_OF:
        raise ValueError(f"unknown environment {name!r}; available: {sorted(ENVIRONMENTS)}")
    return _GAME_OF[name]


def make(name: str, **kwargs: Any) -> ParlourEnv[Any]:
    """Create the environment registered as ``name`` with its keyword arguments."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; available: {sorted(ENVIRONMENTS)}")
    module = importlib.import_module(ENVIRONMENTS[name])
    env: ParlourEnv[Any] = module.env(**kwargs)
    return env


#: A record's ``format`` (``env.unwrapped.record()``).
RECORD_FORMAT = "parlour-record/1"
#: The range of a deal's seed (``reset(options={"game_seed": ...})``).
MAX_GAME_SEED = 2**63 - 2


def _shown(value: Any) -> str:
    """A value from a record, for an error message: one short line, control characters escaped (``repr``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return "an integer of over 70 digits"
    if value is None or isinstance(value, str | int | float):
        text = repr(value)
        return text if len(text) <= 60 else text[:56] + "...'"
    kinds = {dict: "an object", list: "a list", tuple: "a list"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), f"a {type(value).__name__}")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_record(record: Any) -> ParlourEnv[Any]:
    """The checks of :func:`replay` on a record's structure alone: its fields and their types. Returns the env the
    record is for, made from its ``options`` and not yet reset; raises ``ValueError`` naming the field."""
    if not isinstance(record, Mapping):
        raise ValueError(f"replay: a record is an object of named fields, not {_shown(record)}")
    if "format" in record and record["format"] != RECORD_FORMAT:
        raise ValueError(f"replay: format is {_shown(record['format'])}; expected {RECORD_FORMAT!r}")
    name = record.get("env")
    if not isinstance(name, str) or name not in ENVIRONMENTS:
        raise ValueError(f"replay: unknown environment {_shown(name)}; available: {sorted(ENVIRONMENTS)}")
    options = record.get("options")
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise ValueError(f"replay: options must be an object of keyword arguments, not {_shown(options)}")
    try:
        env = make(name, **options)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"replay: options: {exc}") from None
    if record.get("env_version") != env.env_version:
        raise ValueError(
            f"replay: the record is for {name} version {_shown(record.get('env_version'))}, this is {env.env_version}"
        )
    seed: Any = record.get("game_seed")
    if not _is_int(seed) or not 0 <= seed <= MAX_GAME_SEED:
        raise ValueError(f"replay: game_seed must be an integer in [0, 2**63 - 2], not {_shown(seed)}")
    _check_seats(record, env.num_players)
    _check_moves(record.get("actions"), env.num_players)
    return env


def _check_seats(record: Mapping[str, Any], n: int) -> None:
    """A record's optional ``players`` (``n`` names) and ``human_seat`` (a seat of ``n``)."""
    if "players" in record:
        players = record["players"]
        if not isinstance(players, list) or len(players) != n or not all(isinstance(p, str) for p in players):
            raise ValueError(f"replay: players must be a list of {n} names (strings), not {_shown(players)}")
    if "human_seat" in record and not (_is_int(record["human_seat"]) and 0 <= record["human_seat"] < n):
        raise ValueError(f"replay: human_seat must be a seat in [0, {n - 1}], not {_shown(record['human_seat'])}")


def _check_moves(actions: Any, n: int) -> None:
    """A record's ``actions``: a list of moves, each an integer action and a seat of ``n``."""
    if not isinstance(actions, list):
        raise ValueError(f"replay: actions must be a list of moves, not {_shown(actions)}")
    for i, step in enumerate(actions):
        where = f"replay: move {i + 1} (actions[{i}])"
        if not isinstance(step, Mapping):
            raise ValueError(f"{where} must be an object with an integer action and seat, not {_shown(step)}")
        for field in ("action", "seat"):
            if not _is_int(step.get(field)):
                raise ValueError(f"{where}: {field} must be an integer, not {_shown(step.get(field))}")
        if not 0 <= step["seat"] < n:
            raise ValueError(f"{where}: seat {_shown(step['seat'])} is not a seat of this game: expected [0, {n - 1}]")


def replay(record: dict[str, Any]) -> ParlourEnv[Any]:
    """Rebuild the game of a record (``env.unwrapped.record()``) and play its actions; returns the env.

    Nothing in the record is trusted: its fields are checked (:func:`check_record`), and each move's seat, agent and
    text are recomputed from the game as it is replayed. Raises ``ValueError`` (one line naming the field, and the
    move for a move's) if the record is malformed, for an unknown env or version, or does not reproduce: an action
    is illegal, a move's stored seat, agent or text is not the game's, or the outcome differs.
    """
    env = check_record(record)
    env.reset(options={"game_seed": int(record["game_seed"])})
    for i, step in enumerate(record["actions"]):
        where = f"replay: move {i + 1} (actions[{i}])"
        if env.game_over:
            raise ValueError(f"{where}: the game is over before this move")
        agent = env.agent_selection
        seat, action = int(step["seat"]), int(step["action"])
        if env.possible_agents[seat] != agent:
            raise ValueError(f"{where}: seat {seat} is recorded, but {agent} is to act")
        if "agent" in step and step["agent"] != agent:
            raise ValueError(f"{where}: agent {_shown(step['agent'])} is recorded, but {agent} is to act")
        try:
            env.step(action)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if (env.final_outcome or {}).get("illegal_action"):
            # the env penalises illegal actions instead of raising: still not a move of this game (the message with
            # the legal actions is the offender's alone, in its own infos)
            mine = env.infos.get(agent, {}).get("illegal_action", {})
            raise ValueError(f"{where}: {mine.get('message', 'illegal action')}")
        if "text" in step and step["text"] != (text := env.decode_action(action)):
            raise ValueError(f"{where}: text {_shown(step['text'])} is recorded, but action {action} is {text!r}")
    if "forfeit" in record:
        _replay_forfeit(env, record["forfeit"])
    if "outcome" in record and env.final_outcome != record["outcome"]:
        raise ValueError("replay: the outcome differs from the record's")
    return env


def _replay_forfeit(env: ParlourEnv[Any], forfeit: Any) -> None:
    """A record's ``forfeit`` (``{"seat": S}``): the seat to act after the last move forfeited the game."""
    seat = forfeit.get("seat") if isinstance(forfeit, Mapping) else None
    if not isinstance(seat, int) or not _is_int(seat) or not 0 <= seat < env.num_players:
        raise ValueError(f"replay: forfeit must be an object with the seat that forfeited, not {_shown(forfeit)}")
    if env.game_over:
        raise ValueError("replay: forfeit: the game is over before the forfeit")
    if env.agent_selection != env.possible_agents[seat]:
        raise ValueError(f"replay: forfeit: seat {seat} is recorded, but {env.agent_selection} is to act")
    env.forfeit("replayed from a record")


def __getattr__(name: str) -> Any:
    # ``ParlourEnv`` on first use: ``import parlour.envs.<game>.rules`` must not import gymnasium and PettingZoo.
    if name == "ParlourEnv":
        from parlour.envs.core import ParlourEnv

        return ParlourEnv
    raise AttributeError(f"module 'parlour.envs' has no attribute {name!r}")


__all__ = [
    "ENVIRONMENTS",
    "GAMES",
    "GAME_PACKAGES",
    "RECORD_FORMAT",
    "Game",
    "ParlourEnv",
    "check_record",
    "game_of",
    "make",
    "register",
    "replay",
]
