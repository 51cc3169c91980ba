"""``parlour bench``: random-play steps per second, through ``env()`` and through the raw rules.

Every loop is the same: read the acting agent's mask (``env.last()`` for AEC envs), pick a legal action uniformly
with a pre-drawn random number, step. PettingZoo's ``leduc_holdem_v4`` (when its ``classic`` extra is installed)
runs through the very same AEC loop in the same process, and each Parlour figure is given as a ratio to it.

The ``null game`` row is the floor of the AEC loop itself: a :class:`ParlourEnv` whose rules do nothing (four
seats, 100-step games, a constant mask) with a 400-entry gathered observation, so that each game's own cost -- its
rules, masks and encoding -- is the distance from it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from parlour.envs import ENVIRONMENTS, make
from parlour.envs.contract import Rules
from parlour.envs.core import ParlourEnv
from parlour.envs.layout import Field, Layout

_UNIFORM = np.random.default_rng(12345).random(1 << 16)


def aec_steps_per_second(env: Any, seconds: float, seed: int = 0) -> float:
    """Random play through the AEC API (``agent_iter`` / ``last`` / ``step``) for about ``seconds``."""
    u, i, steps = _UNIFORM, 0, 0
    env.reset(seed=seed)
    start = time.perf_counter()
    while True:  # at least one game, however short ``seconds``: a rate of 0 steps would divide the ratios by 0
        env.reset()
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            else:
                legal = obs["action_mask"].nonzero()[0]
                action = int(legal[int(u[i & 0xFFFF] * len(legal))])
                i += 1
            env.step(action)
            steps += 1
        if time.perf_counter() - start >= seconds:
            return steps / (time.perf_counter() - start)


def rules_steps_per_second(env: Any, seconds: float, seed: int = 0) -> float:
    """Random play on the pure rules state alone (no observation encoding, no AEC bookkeeping)."""
    u, i, steps = _UNIFORM, 0, 0
    rng = np.random.default_rng(seed)
    deal: Callable[[np.random.Generator], Any] = env.unwrapped.deal
    start = time.perf_counter()
    while True:  # at least one game, as above
        state = deal(rng)
        while not state.is_terminal():
            legal = state.legal_mask().nonzero()[0]
            state.play(int(legal[int(u[i & 0xFFFF] * len(legal))]))
            i += 1
            steps += 1
        if time.perf_counter() - start >= seconds:
            return steps / (time.perf_counter() - start)


class _NullGame(Rules):
    """Rules that do nothing: the seats take turns for 100 steps; five actions are always legal."""

    MASK = np.zeros(150, np.int8)
    MASK[:5] = 1
    MASK.flags.writeable = False
    LENGTH = 100

    def __init__(self, n: int) -> None:
        self.n, self.turns, self.current_player = n, 0, 0

    def legal_mask(self) -> np.ndarray:
        return self.MASK

    def play(self, action: int) -> None:
        self.turns += 1
        self.current_player = -1 if self.turns >= self.LENGTH else (self.current_player + 1) % self.n

    def is_terminal(self) -> bool:
        return self.current_player < 0

    def outcome(self) -> dict[str, Any]:
        return {"winners": []}

    def clone(self) -> _NullGame:
        new = _NullGame(self.n)
        new.turns, new.current_player = self.turns, self.current_player
        return new


_NULL_LAYOUT = Layout((Field("x", (400,), "zeros"),))


class NullEnv(ParlourEnv[Any]):
    """The AEC loop's floor: the generic driver over rules that do nothing (a gathered 400-entry observation)."""

    metadata = {"render_modes": ["ansi"], "name": "null game", "is_parallelizable": False}
    min_players, max_players, num_actions = 2, 8, 150
    observation_layout = state_layout = _NULL_LAYOUT

    def __init__(self, num_players: int = 4) -> None:
        super().__init__(num_players)
        self._src = np.zeros(_NULL_LAYOUT.size, np.float32)
        self._gather = np.arange(_NULL_LAYOUT.size)[::-1].copy()

    def _deal(self, rng: np.random.Generator) -> Any:
        return _NullGame(self.num_players)

    def _incremental_observation(self, seat: int) -> np.ndarray:
        return self._src[self._gather]

    def _reference_observation(self, seat: int) -> np.ndarray:
        return self._incremental_observation(seat)

    def _encode_state(self) -> np.ndarray:
        return self._src.copy()

    def decode_action(self, action: int) -> str:
        return str(action)

    def render_text(self, perspective: str | None = None) -> str:
        return ""

    def _resample_state(self, seat: int, rng: np.random.Generator) -> Any:
        return self.game.clone()

    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        return b"", b""

    def outcome(self) -> dict[str, Any]:
        return {}


def run_bench(games: list[str] | None, num_players: int | None, seconds: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    leduc: float | None = None
    try:
        from pettingzoo.classic import leduc_holdem_v4

        leduc = aec_steps_per_second(leduc_holdem_v4.env(), seconds)
        rows.append({"env": "leduc_holdem_v4 (PettingZoo)", "players": 2, "api": "env()", "steps_per_s": leduc})
    except ImportError as exc:
        rows.append({"env": "leduc_holdem_v4 (PettingZoo)", "players": 2, "api": "env()", "missing": str(exc)})
    floor = NullEnv()
    rows.append(
        {
            "env": "null game (the AEC loop's floor)",
            "players": 4,
            "api": "env()",
            "steps_per_s": aec_steps_per_second(floor, seconds),
        }
    )
    for name in games or list(ENVIRONMENTS):
        kwargs = {} if num_players is None else {"num_players": num_players}
        env = make(name, **kwargs)
        for api, fn in (("env()", aec_steps_per_second), ("rules", rules_steps_per_second)):
            rows.append({"env": name, "players": env.num_players, "api": api, "steps_per_s": fn(env, seconds)})
    for r in rows:
        r["x_leduc"] = None if not leduc or "missing" in r else r["steps_per_s"] / leduc
    return rows


def from_scratch(env: Any) -> Any:
    """``env`` with its incremental encoding switched off: each action is applied to the rules alone, and every
    observation is written from the rules state by the game's pure observer (``envs/<game>/observer.py``'s
    ``observe``, the reference the fuzz holds the incremental encoding to). For measuring what the incremental path
    saves."""
    cls = type(env.unwrapped)

    class FromScratch(cls):  # type: ignore[valid-type,misc]
        def _apply(self, action: int) -> Any:
            return self.game.play(action)  # the rules alone (the driver has checked the mask), no source to update

        def _incremental_observation(self, seat: int) -> np.ndarray:
            # every game's _reference_observation is its observer's observe(game, seat, params): called through the
            # env's hook, so that a from-scratch writer patched there is the one measured and compared
            return self._reference_observation(seat)

    FromScratch.__name__ = FromScratch.__qualname__ = f"{cls.__name__}FromScratch"
    env.unwrapped.__class__ = FromScratch
    return env


def _same_observations(name: str, kwargs: dict[str, Any], seed: int = 0) -> int:
    """Plays one game in ``name`` as shipped and :func:`from_scratch` side by side; raises if any observation differs
    (the two paths must do the same work), returns the steps played."""
    a, b = make(name, **kwargs), from_scratch(make(name, **kwargs))
    a.reset(seed=seed)
    b.reset(seed=seed)
    rng, steps = np.random.default_rng(seed), 0
    for _ in a.agent_iter():
        obs, _, term, trunc, _ = a.last()
        if not np.array_equal(obs["observation"], b.last()[0]["observation"]):
            raise RuntimeError(f"{name}: the from-scratch observation differs at step {steps}")
        action = None if term or trunc else int(rng.choice(obs["action_mask"].nonzero()[0]))
        a.step(action)
        b.step(action)
        steps += 1
    return steps


def run_observer_bench(games: list[str] | None, num_players: int | None, seconds: float) -> list[dict[str, Any]]:
    """Steps/s through the AEC API of each env as shipped (incremental observations) and :func:`from_scratch`, the
    windows taken in turns (best of three each), after checking that both give the same observations."""
    rows = []
    for name in games or list(ENVIRONMENTS):
        kwargs = {} if num_players is None else {"num_players": num_players}
        _same_observations(name, kwargs)
        envs = {"incremental": make(name, **kwargs), "from_scratch": from_scratch(make(name, **kwargs))}
        best = dict.fromkeys(envs, 0.0)
        for _ in range(3):
            for kind, env in envs.items():
                best[kind] = max(best[kind], aec_steps_per_second(env, seconds / 3))
        rows.append({"env": name, "players": envs["incremental"].num_players, **best})
    return rows


def format_observer_bench(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| env | players | incremental steps/s | from scratch steps/s | cost of writing each observation from scratch |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        cost = 1 - r["from_scratch"] / r["incremental"]
        lines.append(
            f"| {r['env']} | {r['players']} | {r['incremental']:,.0f} | {r['from_scratch']:,.0f} | {cost:.0%} |"
        )
    return "\n".join(lines)


#: Why the leduc column can be empty, and how to fill it.
LEDUC_MISSING = (
    "× leduc_holdem_v4: not measured: PettingZoo's classic games are not installed ({reason}); "
    "`pip install 'pettingzoo[classic]'` (or the project's dev extra) adds them"
)


def format_bench(rows: list[dict[str, Any]]) -> str:
    lines = ["| env | players | through | steps/s | × leduc_holdem_v4 |", "|---|---:|---|---:|---:|"]
    missing = [r["missing"] for r in rows if "missing" in r]
    for r in rows:
        if "missing" in r:
            continue
        ratio = "n/a" if r["x_leduc"] is None else f"{r['x_leduc']:.1f}"
        lines.append(f"| {r['env']} | {r['players']} | {r['api']} | {r['steps_per_s']:,.0f} | {ratio} |")
    if missing:
        lines += ["", LEDUC_MISSING.format(reason=missing[0])]
    return "\n".join(lines)
