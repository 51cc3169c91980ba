"""Every JAX core (``parlour.envs.jax_core``) agrees with its scalar env in lock-step -- acting seat, mask, every seat's
observation, rewards, termination, state vector -- at the smallest, default and largest table and under each rule
variant it declares; its observations do not move when what a seat cannot see is redrawn; and the check itself
fails on a core that is wrong in one entry."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from parlour.envs import make  # noqa: E402
from parlour.envs.jax_core import CORES, Core, make_core, module, reset_where  # noqa: E402
from parlour.envs.jax_core.lockstep import Mismatch, check, check_hidden  # noqa: E402


def _counts(env_id: str) -> list[int]:
    env = make(env_id)
    return sorted({env.min_players, env.num_players, env.max_players})


#: Previous versions (their cores are their successor's with a flag or a default changed): every player count in the
#: slow tier; their declared variants, which exercise what differs, stay in the default one.
PREVIOUS_VERSIONS = {"lady_alice_v0", "lady_alice_v1"}
TABLES = [
    # the default count of each current core by default; the smallest and largest tables in the slow tier (the declared
    # variants below go round the three counts, so each count is still met in the default tier)
    pytest.param(
        env_id, n, marks=[pytest.mark.slow] if env_id in PREVIOUS_VERSIONS or n != make(env_id).num_players else []
    )
    for env_id in sorted(CORES)
    for n in _counts(env_id)
]


def _variants(env_id: str) -> list[tuple[str, int, dict[str, Any]]]:
    try:
        declared = module(env_id).VARIANTS
    except ImportError as exc:  # a registered core that does not import fails its own case, not the collection
        return [(env_id, -1, {"import error": str(exc)})]
    return [(env_id, k, variant) for k, variant in enumerate(declared)]


VARIANTS = [
    # a previous version's first declared variant by default (what differs from its successor is exercised), the rest
    # in the slow tier
    pytest.param(*case, marks=[pytest.mark.slow] if case[0] in PREVIOUS_VERSIONS and case[1] > 0 else [])
    for env_id in sorted(CORES)
    for case in _variants(env_id)
]
#: Every core, a previous version's in the slow tier (its successor's core runs the same code but for a flag).
EVERY_CORE = [
    pytest.param(env_id, marks=[pytest.mark.slow] if env_id in PREVIOUS_VERSIONS else []) for env_id in sorted(CORES)
]


@pytest.mark.parametrize(("env_id", "num_players"), TABLES)
def test_a_core_agrees_with_its_scalar_env_at_every_step(env_id: str, num_players: int) -> None:
    got = check(env_id, games=48, seed=num_players, num_players=num_players, batch=48)
    assert got["games"] == 48 and got["decisions"] > 48


@pytest.mark.parametrize(("env_id", "k", "variant"), VARIANTS)
def test_a_core_agrees_under_each_rule_variant(env_id: str, k: int, variant: dict[str, Any]) -> None:
    if k < 0:
        pytest.fail(f"{env_id}'s core does not import: {variant['import error']}")
    counts = _counts(env_id)
    n = counts[k % len(counts)]
    got = check(env_id, games=32, seed=100 + k, num_players=n, batch=32, **variant)
    assert got["games"] == 32


@pytest.mark.parametrize("env_id", EVERY_CORE)
def test_a_core_observation_does_not_move_when_hidden_information_is_redrawn(env_id: str) -> None:
    got = check_hidden(env_id, games=4, seed=3)
    assert got["redraws"] > 0 and got["moved"] > 0


@pytest.mark.parametrize("env_id", EVERY_CORE)
def test_the_lockstep_check_fails_on_a_core_wrong_in_one_entry(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mod = module(env_id)
    real = mod.make_core

    def broken(*args: Any, **kwargs: Any) -> Core:
        core: Core = real(*args, **kwargs)

        # the last observation entry of seat 0 flips once the game has moved on from its first state
        def observe(state: Any, seat: Any) -> Any:
            obs = core.observe(state, seat)
            moved = jnp.any(core.state_vector(state) != core.state_vector(core.init(jax.random.PRNGKey(0))))
            return obs.at[-1].set(jnp.where((seat == 0) & moved, 1.0 - obs[-1], obs[-1]))

        return core._replace(observe=observe)

    monkeypatch.setattr(mod, "make_core", broken)
    with pytest.raises(Mismatch, match="seat 0's observation"):
        check(env_id, games=4, seed=0, batch=4)


@pytest.mark.parametrize("env_id", EVERY_CORE)
def test_a_finished_game_does_not_move_and_pays_nothing(env_id: str) -> None:
    core = make_core(env_id)
    step, mask = jax.jit(core.step), jax.jit(core.legal_mask)
    state = core.init(jax.random.PRNGKey(7))
    rng = np.random.default_rng(0)
    while not bool(state.terminated | state.truncated):
        state = step(state, int(rng.choice(np.flatnonzero(np.asarray(mask(state))))))
    assert int(state.current_player) == -1 and not np.asarray(mask(state)).any()
    again = step(state, 0)
    assert not np.asarray(again.rewards).any()
    for a, b in zip(jax.tree.leaves(state._replace(rewards=again.rewards)), jax.tree.leaves(again), strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_reset_where_deals_exactly_the_finished_games() -> None:
    """Whichever branch it takes (none ended; up to its capacity, gathered; more, the whole batch), the batch is
    the plain ``where(done, init(key), state)`` of every game."""
    core = make_core("goes_to_eleven_v0")
    batch = 16
    keys = jax.random.split(jax.random.PRNGKey(3), batch)
    old = jax.vmap(core.init)(jax.random.split(jax.random.PRNGKey(4), batch))
    fresh = jax.vmap(core.init)(keys)
    reset = jax.jit(lambda s, k, d: reset_where(core.init, s, k, d, capacity=4))  # one compile: ``done`` is traced
    for finished in (0, 1, 3, 4, 16):
        done = np.random.default_rng(finished).permutation(batch) < finished
        got = reset(old, keys, jnp.asarray(done))
        for f, s, g in zip(jax.tree.leaves(fresh), jax.tree.leaves(old), jax.tree.leaves(got), strict=True):
            expected = np.where(done.reshape((batch,) + (1,) * (np.ndim(s) - 1)), f, s)
            assert np.array_equal(expected, np.asarray(g))
        moved = np.asarray(got.draw != old.draw).any(axis=1)
        assert np.array_equal(moved, done)  # a new deal exactly where a game ended


def test_a_keyword_a_core_cannot_express_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="reward='expected' is not supported"):
        make_core("six_suspects_v0", reward="expected")
    with pytest.raises(ValueError, match="no JAX core for 'nope_v0'"):
        make_core("nope_v0")
    with pytest.raises(ValueError, match="num_players"):
        make_core("six_suspects_v0", 9)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", EVERY_CORE)
def test_tens_of_thousands_of_lockstep_games(env_id: str) -> None:
    env = make(env_id)
    for n in range(env.min_players, env.max_players + 1):
        check(env_id, games=4_000, seed=n, num_players=n, batch=256)
    for k, variant in enumerate(module(env_id).VARIANTS):
        check(env_id, games=2_000, seed=1000 + k, batch=256, **variant)


def test_bench_windows_take_turns_and_each_series_keeps_its_best() -> None:
    """A slow spell of the machine falls on every series of a row alike: the windows go round by round."""
    from parlour.envs.jax_core.bench import WINDOWS, interleaved

    calls: list[str] = []
    speeds = {"scalar": iter([5.0, 9.0, 7.0]), 64: iter([30.0, 10.0, 20.0])}

    def window(name: str | int) -> Any:
        def run(limit: float) -> float:
            assert limit == pytest.approx(1.5 / WINDOWS)
            calls.append(str(name))
            return next(speeds[name])

        return run

    assert interleaved({name: window(name) for name in speeds}, 1.5) == {"scalar": 9.0, 64: 30.0}
    assert calls == ["scalar", "64"] * WINDOWS


def test_bench_jax_prints_each_core_beside_the_scalar_env_and_pgx(capsys: pytest.CaptureFixture[str]) -> None:
    from parlour.envs.jax_core.bench import WINDOWS, stages
    from parlour.training.cli import main

    assert main(["bench", "--jax", "six_suspects_v0", "--batch", "8", "--seconds", "0.05"]) == 0
    out, err = capsys.readouterr()
    # the progress bar (stderr) counts every compilation and window, and ends full
    pgx = "Pgx leduc_holdem" in out
    total = stages(["six_suspects_v0"], [8], pgx=pgx)
    assert total == (1 + WINDOWS * 2) + (1 + WINDOWS if pgx else 0)  # one core at B=8 beside the scalar env
    assert f"{total}/{total}" in err and "bench --jax" in err
    row = next(line for line in out.splitlines() if line.startswith("| six_suspects_v0 | 4 |"))
    assert row.count("×") >= 2 and "B=8" in out  # each batch size with its ratio to the scalar env
    assert "Pgx leduc_holdem" in out or "pip install pgx" in out
    assert main(["bench", "--jax", "six_suspects_v0", "--batch", "0"]) == 2
    assert "--batch '0': expected positive batch sizes" in capsys.readouterr().err
