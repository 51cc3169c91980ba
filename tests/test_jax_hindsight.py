"""Every JAX core's ``hindsight(state, seat)`` (the belief heads' training target) is the end-of-game reveal -- the
scalar env's ``outcome()`` -- in the seat's frame: games played in lock-step on the core and the scalar env
(:func:`parlour.envs.jax_core.lockstep.check`, every step compared as usual) end on states whose hindsight, for every
seat, equals an independent NumPy encoding of the scalar outcome; the vector is shaped as its blocks say (class
blocks one-hot, every entry in [0, 1]); and it holds what the seat cannot see: redrawing the seat's hidden
information leaves its observation as it is and moves its hindsight."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from parlour.envs import make  # noqa: E402
from parlour.envs.elevenses import rules as elevenses_rules  # noqa: E402
from parlour.envs.goes_to_eleven import rules as eleven_rules  # noqa: E402
from parlour.envs.jax_core import CORES, Core, make_core, module  # noqa: E402
from parlour.envs.jax_core import lockstep as lockstep_module  # noqa: E402
from parlour.envs.lady_alice import rules as alice_rules  # noqa: E402
from parlour.envs.six_suspects import rules as suspects_rules  # noqa: E402

GAMES = 4  # finished games per table (one lock-step batch: one compile)


def _counts(env_id: str) -> list[int]:
    env = make(env_id)
    return sorted({env.min_players, env.num_players})


#: (env id, player count, rule keywords): each game at its smallest and default table, default rules; and This Game
#: Goes to Eleven cut short by the driver's turn cap, the only way its reveal shows any card (a game the rules end
#: ends with every hand and the draw pile empty).
CASES = [
    # the default table in the slow tier (the smallest, where the seat-relative frame wraps soonest, in the default)
    pytest.param(env_id, n, {}, id=f"{env_id}-{n}", marks=[pytest.mark.slow] if n != min(_counts(env_id)) else [])
    for env_id in ("lady_alice_v2", "six_suspects_v0", "elevenses_v0", "goes_to_eleven_v0")
    for n in _counts(env_id)
] + [pytest.param("goes_to_eleven_v0", 4, {"max_turns": 12}, id="goes_to_eleven_v0-4-truncated")]


# ------------------------------------------------------------------------------------- the outcome, in NumPy
def _one_hot(i: int, size: int) -> np.ndarray:
    v = np.zeros(size, np.float32)
    v[i] = 1.0
    return v


def _lady_alice(out: dict[str, Any], seat: int, n: int, options: dict[str, Any]) -> np.ndarray:
    clue = {alice_rules.clue_name(c): c for c in range(alice_rules.NUM_CLUES)}
    parts = [_one_hot(clue[out["evidence"][(seat + k) % n]], alice_rules.NUM_CLUES) for k in range(1, n)]
    if n != 4:
        parts.append(_one_hot(alice_rules.CATEGORY_NAMES.index(out["special_category"]), alice_rules.NUM_CATEGORIES))
    else:
        assert out["special_category"] is None
    return np.concatenate(parts)


def _six_suspects(out: dict[str, Any], seat: int, n: int, options: dict[str, Any]) -> np.ndarray:
    cards = [_one_hot(c, suspects_rules.NUM_CARDS) for c in out["layout"]]
    assert out["games"], "the game ended without being resolved"
    last = out["games"][-1]
    assert last["layout"] == out["layout"]
    guilty = np.isin(
        np.arange(suspects_rules.NUM_SUSPECTS), [suspects_rules.SUSPECTS.index(x) for x in last["culprits"]]
    )
    return np.concatenate([*cards, guilty.astype(np.float32)])


def _elevenses(out: dict[str, Any], seat: int, n: int, options: dict[str, Any]) -> np.ndarray:
    positions = [(seat + k) % n for k in range(n)] + ([n] if n < elevenses_rules.MAX_PLAYERS else [])  # Mrs is n
    murderers = np.array([p in out["murderers"] for p in positions], np.float32)
    guests = [_one_hot(out["guests"][(seat + k) % n], len(elevenses_rules.GUESTS)) for k in range(1, n)]
    return np.concatenate([murderers, *guests])


def _goes_to_eleven(out: dict[str, Any], seat: int, n: int, options: dict[str, Any]) -> np.ndarray:
    rules_options = {k: v for k, v in options.items() if k != "max_turns"}  # ``max_turns``: the driver's
    deck = np.array(eleven_rules.Options(num_players=n, **rules_options).deck, np.float64)

    def share(names: list[str]) -> np.ndarray:
        counts = np.array([names.count(k) for k in eleven_rules.KIND_NAMES], np.float64)
        return np.divide(counts, deck, out=np.zeros_like(counts), where=deck > 0).astype(np.float32)

    return np.concatenate([*(share(out["hands"][(seat + k) % n]) for k in range(1, n)), share(out["draw_pile"])])


ENCODE: dict[str, Callable[[dict[str, Any], int, int, dict[str, Any]], np.ndarray]] = {
    "lady_alice_v2": _lady_alice,
    "six_suspects_v0": _six_suspects,
    "elevenses_v0": _elevenses,
    "goes_to_eleven_v0": _goes_to_eleven,
}


# ------------------------------------------------------------------------------------- playing to the end
@functools.cache
def _hindsight_fn(env_id: str, n: int, options: tuple[tuple[str, Any], ...]) -> tuple[Core, Any]:
    """The table's core and its hindsight jitted over a batch of states and every seat (``[B, n, K]``)."""
    core = make_core(env_id, n, **dict(options))
    assert core.hindsight is not None
    hindsight = core.hindsight
    seats = jnp.arange(n)
    return core, jax.jit(jax.vmap(lambda s: jax.vmap(lambda seat: hindsight(s, seat))(seats)))


@functools.cache
def _finished(env_id: str, n: int, options: tuple[tuple[str, Any], ...]) -> tuple[list[dict[str, Any]], np.ndarray]:
    """``GAMES`` games played to the end in lock-step (:func:`~parlour.envs.jax_core.lockstep.check`, which compares
    every step as usual): each game's scalar outcome (what every seat receives) and the hindsight of the core's
    final state for every seat (``[GAMES, n, K]``)."""
    ended: dict[int, tuple[Any, Any]] = {}  # id(env) -> (env, the core's final state); the env kept alive
    compare = lockstep_module._compare

    def spy(env: Any, row: Any, *args: Any) -> None:
        compare(env, row, *args)
        if env.game_over and id(env) not in ended:
            ended[id(env)] = (env, row)

    with mock.patch.object(lockstep_module, "_compare", spy):
        lockstep_module.check(env_id, games=GAMES, seed=11 * n, num_players=n, batch=GAMES, **dict(options))
    assert len(ended) == GAMES
    envs, rows = zip(*ended.values(), strict=True)
    _, fn = _hindsight_fn(env_id, n, options)
    outcomes = [env.final_outcome for env in envs]
    assert all(o is not None for o in outcomes)
    assert all(bool(r.terminated | r.truncated) for r in rows)
    return outcomes, np.asarray(fn(lockstep_module._stack(rows)))


def _key(options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(options.items()))


# ------------------------------------------------------------------------------------- the tests
@pytest.mark.parametrize(("env_id", "n", "options"), CASES)
def test_hindsight_is_the_scalar_outcome_in_each_seat_frame(env_id: str, n: int, options: dict[str, Any]) -> None:
    outcomes, got = _finished(env_id, n, _key(options))
    for g, out in enumerate(outcomes):
        for seat in range(n):
            want = ENCODE[env_id](out, seat, n, options)
            assert got[g, seat].shape == want.shape
            np.testing.assert_allclose(got[g, seat], want, rtol=0, atol=1e-6, err_msg=f"game {g}, seat {seat}")
    if options.get("max_turns"):  # the cut-short games reveal cards (the check is not of zeros only)
        assert any(out["truncated"] for out in outcomes) and got.any()


@pytest.mark.parametrize(("env_id", "n", "options"), CASES)
def test_hindsight_is_shaped_as_its_blocks_say(env_id: str, n: int, options: dict[str, Any]) -> None:
    core, _ = _hindsight_fn(env_id, n, _key(options))
    _, got = _finished(env_id, n, _key(options))
    blocks = core.hindsight_blocks
    assert blocks and len({name for name, _, _ in blocks}) == len(blocks)
    assert got.dtype == np.float32 and got.shape[-1] == sum(size for _, size, _ in blocks)
    assert ((got >= 0) & (got <= 1)).all()
    at = 0
    for name, size, kind in blocks:
        part = got[..., at : at + size]
        assert kind in ("class", "binary"), name
        if kind == "class":
            assert ((part == 0) | (part == 1)).all() and (part.sum(axis=-1) == 1).all(), name
        at += size


@pytest.mark.parametrize(("env_id", "n", "options"), CASES[:-1])
def test_hindsight_holds_what_the_seat_cannot_see(env_id: str, n: int, options: dict[str, Any]) -> None:
    """Redrawing what a seat cannot see (the scalar env's ``resample_hidden``) at the start of a game leaves its
    observation as it is and moves its hindsight (in some redraw)."""
    core, _ = _hindsight_fn(env_id, n, _key(options))
    assert core.hindsight is not None
    mod = module(env_id)
    observe, hindsight = jax.jit(core.observe), jax.jit(core.hindsight)
    env = make(env_id, num_players=n, **options)
    rng = np.random.default_rng(n)
    moved = 0
    for _ in range(2):
        env.reset(seed=int(rng.integers(2**62)))
        state = mod.from_rules(env.game, core)
        for seat, agent in enumerate(env.possible_agents):
            other = mod.from_rules(
                env.resample_hidden(agent, np.random.default_rng(int(rng.integers(2**62)))).game, core
            )
            assert np.array_equal(np.asarray(observe(state, seat)), np.asarray(observe(other, seat)))
            moved += int(not np.array_equal(np.asarray(hindsight(state, seat)), np.asarray(hindsight(other, seat))))
    assert moved > 0


@pytest.mark.parametrize("env_id", sorted(CORES))
def test_every_core_has_hindsight_at_every_table(env_id: str) -> None:
    env = make(env_id)
    for n in range(env.min_players, env.max_players + 1):
        core = make_core(env_id, n)
        assert core.hindsight is not None and core.hindsight_blocks, (env_id, n)
        assert all(kind in ("class", "binary") and size > 0 for _, size, kind in core.hindsight_blocks)
