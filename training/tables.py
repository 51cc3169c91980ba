"""Table sessions: one seat of a game for whoever sits there -- a person at the browser page, a language agent over the
Model Context Protocol or HTTP -- with the other seats played by Parlour policies (the game's heuristic by default:
never only random; any bot of the ladder, shipped network or policy file by name).

A :class:`TableSession` is the one interface every front end serves (:mod:`parlour.training.serve`): a new game at a
seat; the seat's payload (:func:`seat_payload`: its prompt, its view, its legal actions by name, whose turn, and at the
end the outcome every seat is told); act by a legal action's name or list number; the record once the game is over.
Everything a payload holds is a function of what the seat knows -- :func:`seat_payload` reads the env only through the
seat's view and legal actions, and the tests compare it across redraws of everything hidden from the seat -- and the
record (every move of every seat) is served only once the game is over.

:class:`Tables` keeps the sessions of one server: each under an unguessable id (sessions are isolated: one table's id
gives nothing of another), at most ``limit`` at once, the least recently used dropped first.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parlour.baselines import available, resolve
from parlour.baselines.base import MixedTable, Policy
from parlour.envs import ENVIRONMENTS, MAX_GAME_SEED, make
from parlour.envs.core import ParlourEnv
from parlour.envs.text import prompt, read_answer
from parlour.training.play import default_opponent


class TableError(ValueError):
    """A request a table refuses: one line saying what was wrong and what is allowed."""


#: The keys a new table takes (the HTTP API's and the MCP tool's arguments).
NEW_TABLE_KEYS = ("env", "seat", "opponents", "seed", "num_players")


def seat_payload(env: ParlourEnv[Any], agent: str) -> dict[str, Any]:
    """What the seat ``agent`` is shown now: a function of what it knows only (audited across hidden redraws)."""
    over = env.game_over
    to_act = not over and env.agent_selection == agent
    payload: dict[str, Any] = {
        "env": env.metadata["name"],
        "seat": agent,
        "players": list(env.possible_agents),
        "prompt": prompt(env, agent),
        "view": env.render_text(perspective=agent),
        "to_act": env.agent_selection if not over else None,
        "your_turn": to_act,
        "legal": env.legal_action_names(agent) if to_act else [],
        "over": over,
    }
    if over:
        # what every seat is told at the end (its terminal infos' outcome); the offender's explanation is not in it
        payload["outcome"] = env.final_outcome
    return payload


@dataclass
class TableSession:
    """One game: ``seat`` is the caller's, every other seat a policy of ``opponents`` (in turn, rotated by seat)."""

    env: ParlourEnv[Any]
    agent: str
    opponents: Sequence[Policy]
    rng: np.random.Generator
    moves: int = 0
    refused: list[str] = field(default_factory=list)
    #: One request at a time per table (the servers answer requests on several threads).
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def payload(self) -> dict[str, Any]:
        with self.lock:
            return seat_payload(self.env, self.agent)

    def act(self, answer: Any) -> dict[str, Any]:
        """Play the seat's move (a legal action's name or its number in the legal list), then the other seats until
        it is the seat's turn again or the game is over; a refused answer changes nothing and says why."""
        with self.lock:
            return self._act(answer)

    def _act(self, answer: Any) -> dict[str, Any]:
        if self.env.game_over:
            raise TableError("the game is over: start a new table")
        if self.env.agent_selection != self.agent:
            raise TableError(f"it is {self.env.agent_selection}'s turn, not yours ({self.agent})")
        action, reason = read_answer(self.env, self.agent, answer)
        if action is None:
            self.refused.append(reason)
            raise TableError(f"{reason}; legal actions: {'; '.join(self.env.legal_action_names(self.agent))}")
        self.env.step(action)
        self.moves += 1
        self._play_others()
        return self.payload()

    def record(self) -> dict[str, Any]:
        """The game's record (every seat's moves), once the game is over."""
        with self.lock:
            return self._record()

    def _record(self) -> dict[str, Any]:
        if not self.env.game_over:
            raise TableError("the record is served once the game is over (it holds every seat's moves)")
        names = [p.name if p is not None else "caller" for p in self._seats()]
        return self.env.record() | {"players": names, "human_seat": self.env.possible_agents.index(self.agent)}

    def _seats(self) -> list[Policy | None]:
        n, mine = self.env.num_players, self.env.possible_agents.index(self.agent)
        others = [s for s in range(n) if s != mine]
        table: list[Policy | None] = [None] * n
        for k, s in enumerate(others):
            table[s] = self.opponents[k % len(self.opponents)]
        return table

    def _play_others(self) -> None:
        seats = self._seats()
        env = self.env
        while not env.game_over and env.agent_selection != self.agent:
            agent = env.agent_selection
            policy = seats[env.possible_agents.index(agent)]
            assert policy is not None
            if policy.needs_env:
                action = policy.act_with_env(env, agent, self.rng)
                if env.game_over:
                    break
            else:
                obs = env.observe(agent)
                action = policy.act(obs["observation"], obs["action_mask"], self.rng)
            env.step(action)


def new_session(request: dict[str, Any]) -> TableSession:
    """A new table from a request's keys (:data:`NEW_TABLE_KEYS`): ``env`` (required), ``seat`` (0-based, default
    0), ``opponents`` (policy specs, default the game's heuristic), ``seed`` (the deal's, default drawn),
    ``num_players`` (default the game's). Every key is checked before anything is made; one line per refusal."""
    if not isinstance(request, dict):
        raise TableError(f"a new table is an object with the keys {list(NEW_TABLE_KEYS)}")
    unknown = sorted(set(request) - set(NEW_TABLE_KEYS))
    if unknown:
        raise TableError(f"unknown key(s) {unknown}; a new table takes {list(NEW_TABLE_KEYS)}")
    name = request.get("env")
    if name not in ENVIRONMENTS:
        raise TableError(f"env {name!r} is not a Parlour environment; available: {sorted(ENVIRONMENTS)}")
    kwargs: dict[str, Any] = {}
    if request.get("num_players") is not None:
        kwargs["num_players"] = _whole(request["num_players"], "num_players")
    try:
        env = make(name, **kwargs).unwrapped
    except ValueError as exc:
        raise TableError(str(exc)) from None
    seat = _whole(request.get("seat", 0), "seat")
    if not 0 <= seat < env.num_players:
        raise TableError(
            f"seat {seat} is not a seat of a {env.num_players}-player table: expected 0..{env.num_players - 1}"
        )
    seed = request.get("seed")
    if seed is not None and not 0 <= _whole(seed, "seed") <= MAX_GAME_SEED:
        raise TableError(f"seed {seed} is out of range: expected 0..{MAX_GAME_SEED}")
    opponents = _opponents(name, env.num_players, request.get("opponents"))
    draw = np.random.SeedSequence(seed) if seed is not None else np.random.SeedSequence()
    game_seed = int(draw.generate_state(1, np.uint64)[0] >> np.uint64(1)) if seed is None else int(seed)
    env.reset(options={"game_seed": game_seed})
    session = TableSession(env, env.possible_agents[seat], opponents, np.random.default_rng([game_seed, 1]))
    session._play_others()
    return session


def _whole(value: Any, key: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TableError(f"{key} must be a whole number, not {value!r}")
    return value


def _opponents(env_name: str, num_players: int, specs: Any) -> list[Policy]:
    """The policies of the other seats, each resolved for this table (a language agent too: ``chat:``/``text:``)."""
    if specs is None:
        specs = [default_opponent(env_name)]
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, list) or not specs or not all(isinstance(s, str) for s in specs):
        raise TableError(f"opponents must be a list of policy names; available for {env_name}: {available(env_name)}")
    out = []
    for spec in specs:
        try:
            policy = resolve(spec, env_name, num_players)
        except (ValueError, TypeError, ImportError) as exc:
            raise TableError(f"opponent {spec!r}: {exc}") from None
        if isinstance(policy, MixedTable):
            raise TableError(f"opponent {spec!r} is a table of several players; list them one by one")
        out.append(policy)
    return out


class Tables:
    """The sessions of one server, each under an unguessable id; at most ``limit``, the least recently used dropped."""

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self._sessions: OrderedDict[str, TableSession] = OrderedDict()
        self._lock = threading.Lock()

    def new(self, request: dict[str, Any]) -> tuple[str, TableSession]:
        session = new_session(request)
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._sessions[key] = session
            while len(self._sessions) > self.limit:
                self._sessions.popitem(last=False)
        return key, session

    def get(self, key: Any) -> TableSession:
        with self._lock:
            session = self._sessions.get(key) if isinstance(key, str) else None
            if session is None:
                raise TableError(f"no table {str(key)[:40]!r}: start one first (tables are kept while the server runs)")
            self._sessions.move_to_end(key)
            return session

    def close(self, key: Any) -> None:
        with self._lock:
            if self._sessions.pop(key if isinstance(key, str) else "", None) is None:
                raise TableError(f"no table {str(key)[:40]!r}")

    def __len__(self) -> int:
        return len(self._sessions)


def record_frames(record: Any) -> dict[str, Any]:
    """A finished (or stopped) game's record as the replay viewer steps through it: before every move and after the
    last, each seat's view and legal actions (and the umpire's view, everything revealed); each move named. Built by
    replaying the record (:func:`parlour.envs.replay` checks it first: a record that does not reproduce is refused)."""
    from parlour.envs import check_record, replay

    try:
        replay(record)  # every check first: malformed, another version, a move that does not replay
        env = check_record(record).unwrapped
    except ValueError as exc:
        raise TableError(str(exc)) from None
    env.reset(options={"game_seed": int(record["game_seed"])})
    frames = []
    for move in [*record["actions"], None]:
        seats = {a: {"view": env.render_text(perspective=a), "legal": _legal_if_acting(env, a)} for a in env.agents}
        frames.append({"to_act": None if env.game_over else env.agent_selection, "seats": seats,
                       "umpire": env.render_text(perspective=None)})  # fmt: skip
        if move is None:
            break
        frames[-1]["move"] = {"agent": env.agent_selection, "action": int(move["action"]),
                              "name": env.action_names[int(move["action"])]}  # fmt: skip
        env.step(int(move["action"]))
    if "forfeit" in record:
        frames[-1]["forfeit"] = record["forfeit"]
    return {
        "env": record["env"],
        "players": list(record.get("players") or env.possible_agents),
        "agents": list(env.possible_agents),
        "game_seed": record["game_seed"],
        "frames": frames,
        "outcome": record.get("outcome"),
    }


def _legal_if_acting(env: ParlourEnv[Any], agent: str) -> list[str]:
    return env.legal_action_names(agent) if not env.game_over and env.agent_selection == agent else []
