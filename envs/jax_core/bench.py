"""Decisions per second of the JAX cores beside the scalar envs and Pgx's Leduc Hold'em (``parlour bench --jax``).

Every loop does the same work per decision: read the acting seat's legal mask and its observation, draw a uniformly
random legal action, step, and start a new game where one ended (in a batch: only where one ended, the same
way for every core and for Pgx). The scalar env does it one game at a time through
its own API (``observe`` of the acting agent, ``step``); a core and Pgx's ``leduc_holdem`` do it for ``B`` games at
once in one compiled program (``jax.vmap`` inside a ``jax.lax.scan`` of 64 decisions per call, so dispatch is paid
once per 64 × B decisions). Compilation is done before the clock starts; each rate is the best of
:data:`WINDOWS` windows, the windows of the scalar env and of the core at every B taken in turns. Figures hold for the machine and backend
they were measured on (``backend`` says which: ``cpu`` or ``gpu``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs import make
from parlour.envs.jax_core import Core, make_core, reset_where

#: Decisions per compiled call and game (the scan's length).
CHUNK = 64
BATCH_SIZES = (1, 64, 1024, 4096)


#: Each rate is the best of this many windows of ``seconds / WINDOWS``. The windows of the series compared in a
#: row (the scalar env and the core at every batch size; Pgx at every batch size) take turns, round by round, so
#: that a slow spell of a shared machine (a window can lose a third of its speed to a neighbour) falls on every
#: series alike rather than on whichever was measured then; the best window is the closest to what the code itself
#: costs (``timeit``'s rule).
WINDOWS = 3

Window = Callable[[float], float]
#: Told what the bench has just done (a compilation, a timing window), in a few words: the CLI's progress bar.
Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def stages(envs: Sequence[str], batch_sizes: Sequence[int], pgx: bool = True) -> int:
    """How many times :func:`run_jax_bench` reports progress: a compilation per core and batch size (Pgx's too), and
    every timing window."""
    per_env = len(batch_sizes) + WINDOWS * (1 + len(batch_sizes))
    return len(envs) * per_env + (len(batch_sizes) * (1 + WINDOWS) if pgx else 0)


def interleaved(
    series: dict[Any, Window], seconds: float, progress: Progress = _quiet, label: str = ""
) -> dict[Any, float]:
    """The best rate of each series' :data:`WINDOWS` windows of ``seconds / WINDOWS``, taken in turns."""
    best = dict.fromkeys(series, 0.0)
    for round_ in range(WINDOWS):
        for name, window in series.items():
            best[name] = max(best[name], window(seconds / WINDOWS))
            progress(f"{label} {name if name == 'scalar' else f'B={name}'}: window {round_ + 1} of {WINDOWS}")
    return best


def _windowed(run: Callable[[Any, jax.Array], tuple[Any, jax.Array]], states: Any, batch: int) -> Window:
    """A compiled loop's timing window (decisions/s over ``limit`` seconds), compiled before it is returned."""
    key = jax.random.PRNGKey(1)
    for _ in range(2):  # compiles (twice where the first call's output types differ from its input's: weak types)
        key, sub = jax.random.split(key)
        states, t = run(states, sub)
        t.block_until_ready()

    def window(limit: float) -> float:
        nonlocal states, key
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < limit:
            key, sub = jax.random.split(key)
            states, t = run(states, sub)
            t.block_until_ready()
            done += CHUNK * batch
        return done / (time.perf_counter() - start)

    return window


def _scan(
    decide: Callable[[Any, jax.Array], tuple[Any, jax.Array]], init: Callable[[jax.Array], Any], batch: int
) -> Any:
    """One compiled call of :data:`CHUNK` decisions of ``batch`` games: ``decide`` per game (``vmap``), then a new
    game from ``init`` wherever one ended (:func:`~parlour.envs.jax_core.reset_where`, which deals only those)."""

    @jax.jit
    def run(states: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        def body(carry: tuple[Any, jax.Array], _: Any) -> tuple[tuple[Any, jax.Array], jax.Array]:
            states, key = carry
            key, k_act, k_new = jax.random.split(key, 3)
            states, total = jax.vmap(decide)(states, jax.random.split(k_act, batch))
            states = reset_where(init, states, jax.random.split(k_new, batch), states.terminated | states.truncated)
            return (states, key), total.sum()

        (states, key), totals = jax.lax.scan(body, (states, key), None, length=CHUNK)
        return states, totals.sum()  # the observations' sum: they are computed, not optimised away

    return run


def random_legal(mask: jax.Array, key: jax.Array) -> jax.Array:
    """A uniformly random legal action from one uniform draw (the scalar loop's way; a draw per action, as
    ``jax.random.categorical`` makes, would cost more than a small game's step)."""
    count = mask.sum()
    k = jnp.floor(jax.random.uniform(key) * count).astype(jnp.int32)
    return jnp.argmax(jnp.cumsum(mask) > k).astype(jnp.int32)


def core_window(core: Core, batch: int) -> Window:
    """The timing window of ``core`` over ``batch`` games (random legal actions, autoreset)."""

    def decide(s: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        mask = core.legal_mask(s)
        obs = core.observe(s, jnp.maximum(s.current_player, 0))
        return core.step(s, random_legal(mask, key)), obs.sum()

    states = jax.vmap(core.init)(jax.random.split(jax.random.PRNGKey(0), batch))
    return _windowed(_scan(decide, core.init, batch), states, batch)


def pgx_window(batch: int, game: str = "leduc_holdem") -> Window:
    """The timing window of Pgx's ``game`` over ``batch`` games, the same loop (``ImportError`` without ``pgx``)."""
    import pgx

    env = pgx.make(game)

    def decide(s: Any, key: jax.Array) -> tuple[Any, jax.Array]:
        obs = s.observation  # Pgx computes the acting seat's observation inside step
        return env.step(s, random_legal(s.legal_action_mask, key)), obs.sum()

    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
    return _windowed(_scan(decide, env.init, batch), states, batch)


def scalar_window(env_id: str, num_players: int, options: dict[str, Any], seed: int = 0) -> Window:
    """The timing window of the scalar env: the acting agent's observation and a random legal action per step."""
    env = make(env_id, num_players=num_players, **options)
    rng = np.random.default_rng(seed)
    u = rng.random(1 << 16)
    env.reset(seed=seed)
    i = 0

    def window(limit: float) -> float:
        nonlocal i
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < limit:
            for _ in range(256):
                if env.game_over:
                    env.reset()
                legal = env.observe(env.agent_selection)["action_mask"].nonzero()[0]
                env.step(int(legal[int(u[i & 0xFFFF] * len(legal))]))
                i += 1
            done += 256
        return done / (time.perf_counter() - start)

    return window


def bench(
    env_id: str,
    batch_sizes: Sequence[int] = BATCH_SIZES,
    seconds: float = 3.0,
    num_players: int | None = None,
    progress: Progress = _quiet,
    **options: Any,
) -> dict[str, Any]:
    """Decisions/s of the scalar env and of the core at each batch size, and each ratio to the scalar env."""
    core = make_core(env_id, num_players, **options)
    series: dict[Any, Window] = {"scalar": scalar_window(env_id, core.num_players, options)}
    for b in batch_sizes:  # compiling takes most of the bench's time: each one is reported
        series[b] = core_window(core, b)
        progress(f"{env_id} B={b}: compiled")
    rates = interleaved(series, seconds, progress, env_id)
    scalar = rates.pop("scalar")
    rows = {b: rates[b] for b in batch_sizes}
    return {
        "env": env_id,
        "num_players": core.num_players,
        "backend": jax.default_backend(),
        "scalar": scalar,
        "core": rows,
        "ratio": {b: r / scalar for b, r in rows.items()},
    }


def run_jax_bench(
    envs: Sequence[str], batch_sizes: Sequence[int], seconds: float, progress: Progress = _quiet
) -> dict[str, Any]:
    """Every env's :func:`bench`, and Pgx's Leduc at the same batch sizes (``pgx`` missing: said so); ``progress``
    hears of each of the :func:`stages`."""
    out: dict[str, Any] = {"backend": jax.default_backend(), "device": str(jax.devices()[0]), "envs": []}
    try:
        windows = {}
        for b in batch_sizes:
            windows[b] = pgx_window(b)
            progress(f"leduc_holdem B={b}: compiled")
        out["pgx_leduc"] = interleaved(windows, seconds, progress, "leduc_holdem")
    except ImportError as exc:
        out["pgx_missing"] = str(exc)
    for env_id in envs:
        out["envs"].append(bench(env_id, batch_sizes, seconds, progress=progress))
    return out


def format_jax_bench(r: dict[str, Any]) -> str:
    sizes = list(r["envs"][0]["core"]) if r["envs"] else list(r.get("pgx_leduc", {}))
    head = " | ".join(f"B={b:,}" for b in sizes)
    lines = [
        f"Decisions/s on {r['device']} (backend {r['backend']}), each the best of {WINDOWS} windows; in brackets: "
        "× the scalar env, then × Pgx's leduc_holdem at the same B.",
        "",
        f"| env | players | scalar env | {head} |",
        "|---|---:|---:|" + "---:|" * len(sizes),
    ]
    pgx = r.get("pgx_leduc")
    for e in r["envs"]:
        cells = []
        for b in sizes:
            v = e["core"][b]
            vs_pgx = f", {v / pgx[b]:.2f}× Pgx" if pgx else ""
            cells.append(f"{v:,.0f} ({e['ratio'][b]:.1f}×{vs_pgx})")
        lines.append(f"| {e['env']} | {e['num_players']} | {e['scalar']:,.0f} | " + " | ".join(cells) + " |")
    if pgx:
        lines.append("| Pgx leduc_holdem | 2 | – | " + " | ".join(f"{pgx[b]:,.0f}" for b in sizes) + " |")
    else:
        lines += ["", f"Pgx's leduc_holdem: not measured ({r['pgx_missing']}); `pip install pgx` adds it."]
    return "\n".join(lines)
