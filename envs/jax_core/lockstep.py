"""The lock-step checks of a JAX core against its scalar env, for every game (:mod:`parlour.envs.jax_core`).

:func:`check` plays a batch of scalar games and the core side by side on the same deals and the same actions, and
compares at every step: the acting seat, the legal mask, every seat's observation, the per-seat rewards of the step,
termination and truncation, and the state vector. A new deal within a match (drawn by the scalar env's generator)
is copied into the core (the game module's ``DEAL_FIELDS``), as the first deal is (``from_rules``).

:func:`check_hidden` is the hidden-information audit's idea applied to the core: it redraws what a seat cannot see
(the scalar env's ``resample_hidden``), maps the redrawn table into the core and checks that the seat's JAX
observation does not move.

``python -m parlour.envs.jax_core.lockstep`` runs the long checks from the command line (``--help``; ``--bench``:
:func:`parlour.envs.jax_core.bench.bench`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs import make
from parlour.envs.jax_core import Core, module


class Mismatch(AssertionError):
    """The core and the scalar env disagree (the message says where)."""


def _stack(states: Sequence[Any]) -> Any:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def _row(batch: Any, i: int) -> Any:
    return jax.tree.map(lambda x: x[i], batch)


def _set_rows(batch: Any, rows: Sequence[int], states: Sequence[Any]) -> Any:
    idx = jnp.asarray(np.asarray(rows, np.int32))
    new = _stack(states)
    return jax.tree.map(lambda b, s: b.at[idx].set(s), batch, new)


class _Batch:
    """The jitted, batched functions of one core."""

    def __init__(self, core: Core) -> None:
        seats = jnp.arange(core.num_players)
        self.step = jax.jit(jax.vmap(core.step))
        self.view = jax.jit(
            jax.vmap(
                lambda s: (
                    jax.vmap(lambda seat: core.observe(s, seat))(seats),
                    core.legal_mask(s),
                    core.state_vector(s),
                )
            )
        )


def _compare(env: Any, row: Any, obs: np.ndarray, mask: np.ndarray, state: np.ndarray, where: str) -> None:
    n = env.num_players
    over = env.game_over
    seat = -1 if over else env.possible_agents.index(env.agent_selection)
    if int(row.current_player) != seat:
        raise Mismatch(f"{where}: acting seat: core {int(row.current_player)}, scalar {seat}")
    want_mask = np.zeros(env.num_actions, bool) if over else np.asarray(env.observe(env.agent_selection)["action_mask"])
    if not np.array_equal(mask.astype(bool), want_mask.astype(bool)):
        raise Mismatch(f"{where}: legal mask: core {np.flatnonzero(mask)}, scalar {np.flatnonzero(want_mask)}")
    for s in range(n):
        want = env.observe(env.possible_agents[s])["observation"]
        if not np.array_equal(obs[s], want):
            bad = np.flatnonzero(obs[s] != want)
            fields = sorted(
                {env.observation_layout.fields[_field_of(env.observation_layout, int(i))].name for i in bad}
            )
            raise Mismatch(f"{where}: seat {s}'s observation differs in {fields} (entries {bad[:8].tolist()})")
    rewards = np.array([env.rewards[a] for a in env.possible_agents], np.float32)
    if not np.array_equal(np.asarray(row.rewards), rewards):
        raise Mismatch(f"{where}: rewards: core {np.asarray(row.rewards)}, scalar {rewards}")
    term = any(env.terminations.values())
    trunc = any(env.truncations.values())
    if bool(row.terminated) != term or bool(row.truncated) != trunc:
        raise Mismatch(
            f"{where}: terminated/truncated: core {bool(row.terminated)}/{bool(row.truncated)}, scalar {term}/{trunc}"
        )
    want_state = env.state()
    if not np.array_equal(state, want_state):
        bad = np.flatnonzero(state != want_state)
        fields = sorted({env.state_layout.fields[_field_of(env.state_layout, int(i))].name for i in bad})
        raise Mismatch(f"{where}: state vector differs in {fields}")


def _field_of(layout: Any, entry: int) -> int:
    for k, f in enumerate(layout.fields):
        if layout[f.name].start <= entry < layout[f.name].stop:
            return k
    return -1


def _options_of(env_id: str, num_players: int | None, options: dict[str, Any]) -> tuple[Any, Core, Any]:
    from parlour.envs.jax_core import make_core

    env = make(env_id, **({} if num_players is None else {"num_players": num_players}), **options)
    core = make_core(env_id, env.num_players, **options)
    return env, core, module(env_id)


def _choose(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def check(
    env_id: str,
    *,
    games: int,
    seed: int = 0,
    num_players: int | None = None,
    batch: int = 32,
    **options: Any,
) -> dict[str, int]:
    """Play ``games`` games of ``env_id`` (``num_players``, rule keywords ``options``) in the scalar env and the core
    in lock-step, uniformly random legal actions from ``seed``; raise :class:`Mismatch` at the first disagreement.
    Returns the number of games and of decisions compared."""
    _, core, mod = _options_of(env_id, num_players, options)
    fns = _Batch(core)
    rng = np.random.default_rng(seed)
    decisions = played = 0
    while played < games:
        size = min(batch, games - played)
        envs = []
        for _ in range(size):
            env = make(env_id, num_players=core.num_players, **options)
            env.reset(seed=int(rng.integers(2**62)))
            envs.append(env)
        state = _stack([mod.from_rules(e.game, core) for e in envs])
        deals = [mod.deal_number(e.game) for e in envs]
        steps = 0
        live = list(range(size))
        while True:
            obs, mask, vec = (np.asarray(x) for x in fns.view(state))
            host = jax.device_get(state)  # one transfer; indexing device arrays game by game costs more than the check
            for i in live:  # a game is compared up to and including the step that ended it
                env = envs[i]
                _compare(env, _row(host, i), obs[i], mask[i], vec[i], f"{env_id} game {played + i} step {steps}")
            live = [i for i in live if not envs[i].game_over]
            if not live:
                break
            actions = np.zeros(size, np.int32)
            for i in live:
                actions[i] = _choose(mask[i], rng)
                envs[i].step(int(actions[i]))
            decisions += len(live)
            state = fns.step(state, jnp.asarray(actions))
            redealt = [i for i in live if mod.deal_number(envs[i].game) != deals[i]]
            if redealt:
                fresh = [mod.from_rules(envs[i].game, core) for i in redealt]
                rows = [
                    _row(state, i)._replace(**{f: getattr(s, f) for f in mod.DEAL_FIELDS})
                    for i, s in zip(redealt, fresh, strict=True)
                ]
                state = _set_rows(state, redealt, rows)
                for i in redealt:
                    deals[i] = mod.deal_number(envs[i].game)
            steps += 1
        played += size
    return {"games": played, "decisions": decisions}


def check_hidden(
    env_id: str, *, games: int, seed: int = 0, num_players: int | None = None, **options: Any
) -> dict[str, int]:
    """At random points of ``games`` games, redraw what each seat cannot see (the scalar env's ``resample_hidden``),
    map it into the core and check the seat's JAX observation is unchanged; also that redrawing at all moves the
    core's state (else the check proves nothing). Returns the number of redraws compared."""
    env, core, mod = _options_of(env_id, num_players, options)
    observe = jax.jit(core.observe)
    vector = jax.jit(core.state_vector)
    rng = np.random.default_rng(seed)
    compared = moved = 0
    for _ in range(games):
        env.reset(seed=int(rng.integers(2**62)))
        while not env.game_over:
            if rng.random() < 0.3:
                state = mod.from_rules(env.game, core)
                for s, agent in enumerate(env.possible_agents):
                    other = env.resample_hidden(agent, np.random.default_rng(int(rng.integers(2**62))))
                    redrawn = mod.from_rules(other.game, core)
                    a, b = np.asarray(observe(state, s)), np.asarray(observe(redrawn, s))
                    if not np.array_equal(a, b):
                        bad = np.flatnonzero(a != b)
                        raise Mismatch(
                            f"{env_id}: seat {s}'s core observation moved when its hidden information was redrawn "
                            f"(entries {bad[:8].tolist()})"
                        )
                    moved += int(not np.array_equal(np.asarray(vector(state)), np.asarray(vector(redrawn))))
                    compared += 1
            env.step(_choose(env.observe(env.agent_selection)["action_mask"], rng))
    if compared and not moved:
        raise Mismatch(f"{env_id}: no redraw changed the core's state: the audit checked nothing")
    return {"redraws": compared, "moved": moved}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m parlour.envs.jax_core.lockstep",
        description="Check JAX cores against their scalar envs in lock-step (and the hidden-information audit), "
        "or measure their decisions/s.",
    )
    from parlour.envs.jax_core import CORES

    parser.add_argument("envs", nargs="*", default=sorted(CORES), help="env ids (default: every core)")
    parser.add_argument("--games", type=int, default=10_000, help="games per env and player count")
    parser.add_argument("--players", type=int, nargs="*", help="player counts (default: the env's range)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bench", action="store_true", help="measure decisions/s instead of checking")
    parser.add_argument("--seconds", type=float, default=3.0, help="bench: seconds per measurement")
    args = parser.parse_args(argv)
    for env_id in args.envs:
        env = make(env_id)
        counts = args.players or ([env.num_players] if args.bench else range(env.min_players, env.max_players + 1))
        for n in counts:
            if args.bench:
                from parlour.envs.jax_core.bench import bench

                r = bench(env_id, seconds=args.seconds, num_players=n)
                cells = "  ".join(f"B={b}: {v:,.0f}/s ({r['ratio'][b]:.2f}×)" for b, v in r["core"].items())
                print(f"{env_id} n={n} [{r['backend']}] scalar {r['scalar']:,.0f}/s  {cells}", flush=True)
                continue
            t = time.perf_counter()
            got = check(env_id, games=args.games, seed=args.seed, num_players=n, batch=256)
            hidden = check_hidden(env_id, games=max(1, args.games // 100), seed=args.seed, num_players=n)
            print(
                f"{env_id} n={n}: {got['games']:,} games, {got['decisions']:,} decisions agree; "
                f"{hidden['redraws']:,} hidden redraws leave the observation unmoved "
                f"({time.perf_counter() - t:.0f}s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
