"""Bad input gets one clear error (issue 37): the scalar envs' ``reset(seed=...)`` and the JAX vector envs' seeds and
action batches are checked before anything changes, each refusal one ``ValueError`` line naming what was given and
what is allowed; NumPy integer seeds are the equal int; and the SB3 JAX vector env's ``get_state``/``set_state``
resume a batch bit for bit."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from parlour.envs import make

ENV_ID = "six_suspects_v0"  # the cheapest core to compile
#: The JAX envs' arguments: a batch of 2 games of 2 players, random opponents.
ARGS: dict[str, Any] = {
    "num_players": 2,
    "options": {},
    "opponents": ["random"],
    "learner_seat": None,
    "opponent_draw": "table",
    "seed": 0,
}
B = 2
SEED_RANGE = r"expected None or an integer in \[0, 2\*\*63\)"
KINDS = ["gym", "sb3"]

#: Seeds no env takes: (seed, what the error says of it).
BAD_SEEDS = [
    (-1, r"seed=-1 is out of range"),
    (np.int64(-1), r"seed=np.int64\(-1\) is out of range"),
    (2**63, r"seed=9223372036854775808 is out of range"),
    (2**200, r"seed=\d+\.\.\. is out of range"),
    (np.uint64(2**63), r"seed=np.uint64\(9223372036854775808\) is out of range"),
    (1.5, r"seed=1.5 \(float\) is not valid"),
    (3.0, r"seed=3.0 \(float\) is not valid"),
    (True, r"seed=True \(bool\) is not valid"),
    (np.bool_(False), r"seed=np.False_ \(bool\) is not valid"),
    ("3", r"seed='3' \(str\) is not valid"),
    ([1, 2], r"seed=\[1, 2\] \(list\) is not valid"),
    (np.arange(40), r"seed=array\(\[ ?0, ?1, .*\.\.\. \(ndarray\) is not valid"),
]


def _one_line(error: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(error.value)
    assert "\n" not in text, text
    return text


# ------------------------------------------------------------------------------------------------ scalar env seeds
@pytest.mark.parametrize(("seed", "words"), BAD_SEEDS)
def test_the_scalar_env_refuses_a_bad_seed_in_one_line_and_keeps_its_game(seed: Any, words: str) -> None:
    env = make(ENV_ID, num_players=3)
    env.reset(seed=1)
    env.step(env.legal_actions()[0])
    before = (env.game_seed, env.agent_selection, env.legal_actions(), env.record()["actions"])
    with pytest.raises(ValueError, match=rf"^six_suspects_v0: reset\(\): {words}: {SEED_RANGE}$") as error:
        env.reset(seed=seed)
    _one_line(error)
    assert (env.game_seed, env.agent_selection, env.legal_actions(), env.record()["actions"]) == before


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (None, None),
        (0, 0),
        (2**63 - 1, 2**63 - 1),
        (np.int64(3), 3),
        (np.uint64(2**63 - 1), 2**63 - 1),
        (np.int8(7), 7),
    ],
)
def test_check_seed_takes_none_and_integers_in_range_as_python_ints(seed: Any, expected: int | None) -> None:
    from parlour.envs.core import check_seed

    got = check_seed("here", seed)
    assert got == expected and type(got) is type(expected)
    # and the scalar env deals the game of the equal Python int
    if seed is not None:
        a, b = make(ENV_ID, num_players=3), make(ENV_ID, num_players=3)
        a.reset(seed=seed)
        b.reset(seed=expected)
        assert a.game_seed == b.game_seed and np.array_equal(a.state(), b.state())


@pytest.mark.parametrize(("seed", "words"), BAD_SEEDS)
def test_check_seed_refuses_what_reset_refuses(seed: Any, words: str) -> None:
    from parlour.envs.core import check_seed

    with pytest.raises(ValueError, match=rf"^somewhere: {words}: {SEED_RANGE}$") as error:
        check_seed("somewhere", seed)
    _one_line(error)


# ------------------------------------------------------------------------------------------------ the JAX vector envs
def _build(kind: str, **changes: Any) -> Any:
    pytest.importorskip("jax")
    from parlour.training.jax_vec_env import JaxVecEnv, sb3_vec_env

    args = {**ARGS, **changes}
    if kind == "gym":
        return JaxVecEnv(ENV_ID, B, **args)
    pytest.importorskip("stable_baselines3")
    return sb3_vec_env(ENV_ID, B, **args)


@pytest.fixture(scope="module")
def envs() -> dict[str, Any]:
    """One env of each kind, shared by the tests (each resets it first)."""
    return {kind: _build(kind) for kind in KINDS}


def _reset(env: Any, seed: Any) -> np.ndarray:
    """Reset either kind with ``seed`` (SB3's way: ``seed()``, then ``reset()``)."""
    if hasattr(env, "step_async"):
        env.seed(seed)
        return env.reset()
    return env.reset(seed=seed)[0]


def _step(env: Any, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of either kind: observations, rewards, dones."""
    if hasattr(env, "step_async"):
        obs, reward, dones, _ = env.step(actions)
        return obs, reward, dones
    obs, reward, terminated, truncated, _ = env.step(actions)
    return obs, reward, terminated | truncated


def _first_legal(env: Any) -> np.ndarray:
    return np.array([np.flatnonzero(m)[0] for m in env.action_masks()], np.int64)


@pytest.mark.parametrize("kind", KINDS)
def test_minus_one_is_refused_even_where_the_last_action_is_legal(kind: str, envs: dict[str, Any]) -> None:
    """NumPy reads ``mask[-1]`` as the last action's entry: where that action is legal, ``-1`` used to pass the check
    and reach a core that assumes a legal action."""
    env = envs[kind]
    _reset(env, 0)
    for _ in range(50):
        masks = env.action_masks()
        if masks[:, -1].any():
            break
        _step(env, _first_legal(env))
    else:
        pytest.fail("no game reached a state whose last action is legal")
    k = int(np.flatnonzero(masks[:, -1])[0])
    actions = _first_legal(env)
    actions[k] = -1
    n = masks.shape[1]
    words = rf"^game {k} of the batch: action -1 is not an action \(expected 0\.\.{n - 1}\); the legal actions are \["
    with pytest.raises(ValueError, match=words) as error:
        _step(env, actions)
    _one_line(error)
    assert np.array_equal(env.action_masks(), masks)  # nothing moved


#: Malformed action batches of 2 games: (actions, the dtype and shape the error names).
MALFORMED = [
    (np.zeros((1, B), np.int64), r"a int64 array of shape \(1, 2\)"),
    (np.zeros(B + 1, np.int64), r"a int64 array of shape \(3,\)"),
    (np.zeros(1, np.int64), r"a int64 array of shape \(1,\)"),
    (0, r"a int64 array of shape \(\)"),
    (np.full(B, 1.5), r"a float64 array of shape \(2,\)"),
    (np.zeros(B, np.float32), r"a float32 array of shape \(2,\)"),  # integral floats too
    (np.full(B, np.nan), r"a float64 array of shape \(2,\)"),
    (np.ones(B, bool), r"a bool array of shape \(2,\)"),
    (np.array(["1", "2"]), r"a <U1 array of shape \(2,\)"),
    (np.array([1, None], object), r"a object array of shape \(2,\)"),
    ([[1], [1, 2]], r"list \[\[1\], \[1, 2\]\]"),
    (None, r"a object array of shape \(\)"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("actions", "given"), MALFORMED)
def test_a_malformed_action_batch_is_refused_in_one_line(
    kind: str, actions: Any, given: str, envs: dict[str, Any]
) -> None:
    env = envs[kind]
    _reset(env, 0)
    masks = env.action_masks()
    n = masks.shape[1]
    expected = rf"^actions must be an integer array of shape \(2,\), one action in 0\.\.{n - 1} per game; got {given}$"
    with pytest.raises(ValueError, match=expected) as error:
        _step(env, actions)
    _one_line(error)
    assert np.array_equal(env.action_masks(), masks)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("past", ["num_actions", "2**40", "int64 min"])
def test_an_action_past_either_end_is_refused_with_the_game_and_the_legal_actions(
    kind: str, past: str, envs: dict[str, Any]
) -> None:
    env = envs[kind]
    _reset(env, 0)
    n = env.action_masks().shape[1]
    action = {"num_actions": n, "2**40": 2**40, "int64 min": int(np.iinfo(np.int64).min)}[past]
    actions = _first_legal(env)
    actions[1] = action
    legal = np.flatnonzero(env.action_masks()[1]).tolist()
    words = rf"^game 1 of the batch: action {action} is not an action \(expected 0\.\.{n - 1}\); the legal actions are "
    with pytest.raises(ValueError, match=words + re.escape(str(legal)) + "$"):
        _step(env, actions)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("seed", "words"), BAD_SEEDS)
def test_a_jax_vector_env_refuses_a_bad_seed_in_one_line(
    kind: str, seed: Any, words: str, envs: dict[str, Any]
) -> None:
    where = r"JaxVecEnv\.reset\(\)" if kind == "gym" else r"JaxSB3VecEnv\.seed\(\)"
    with pytest.raises(ValueError, match=rf"^{where}: {words}: {SEED_RANGE}$") as error:
        _reset(envs[kind], seed)
    _one_line(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("seed", "same"), [(np.int64(3), 3), (np.uint32(3), 3), (np.int64(2**62), 2**62)])
def test_a_numpy_integer_seed_deals_the_games_of_the_equal_int(
    kind: str, seed: Any, same: int, envs: dict[str, Any]
) -> None:
    env = envs[kind]
    runs = []
    for s in (seed, same):
        obs = [_reset(env, s)]
        for _ in range(6):
            obs.append(_step(env, _first_legal(env))[0])
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("low", [0, 5])
def test_seeds_that_differ_above_32_bits_deal_different_games(kind: str, low: int, envs: dict[str, Any]) -> None:
    """``jax.random.PRNGKey`` keeps a seed's low 32 bits without 64-bit mode: seeds ``low`` and ``2**32 + low`` (and
    ``2**62 + low``) dealt the same games."""
    env = envs[kind]
    runs = []
    for s in (low, 2**32 + low, 2**62 + low):
        obs = [_reset(env, s)]
        for _ in range(6):
            obs.append(_step(env, _first_legal(env))[0])
        runs.append(np.stack(obs))
    assert not np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])


# ------------------------------------------------------------------------------------------------ exact resume
def _plain(value: Any) -> bool:
    """``value`` is a tree of JSON values and NumPy arrays only."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, np.ndarray) or value is None or type(value) in (bool, int, float, str)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.int64, np.int8, list])
def test_set_state_of_get_state_steps_bit_for_bit_as_the_env_went_on(
    kind: str, dtype: Any, envs: dict[str, Any]
) -> None:
    env = envs[kind]
    _reset(env, 7)
    for _ in range(3):
        _step(env, _first_legal(env))
    state = env.get_state()
    assert _plain(state)
    json.dumps({k: v for k, v in state.items() if not isinstance(v, np.ndarray | list)})
    saved = json.dumps(state, default=lambda a: [a.dtype.str, a.tolist()])  # what get_state hands out is a copy

    rng = np.random.default_rng(0)
    played, actions = [], []
    for _ in range(16):
        a = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()], np.int64)
        actions.append(a)
        played.append((*_step(env, a), env.action_masks()))
    assert any(p[2].any() for p in played), "no episode ended: the resume is not tested across a restart"
    assert json.dumps(state, default=lambda a: [a.dtype.str, a.tolist()]) == saved

    fresh = _build(kind)
    fresh.set_state(state)
    for a, (obs, reward, dones, masks) in zip(actions, played, strict=True):
        given = a.tolist() if dtype is list else a.astype(dtype)  # any integer dtype steps alike
        o, r, d = _step(fresh, given)
        assert o.tobytes() == obs.tobytes() and r.tobytes() == reward.tobytes() and np.array_equal(d, dones)
        assert np.array_equal(fresh.action_masks(), masks)


def _corrupt(state: dict[str, Any], how: str) -> Any:
    state = {**state, "leaves": list(state["leaves"])}
    if how == "leaf dtype":
        state["leaves"][0] = state["leaves"][0].astype(np.float64)
    elif how == "leaf shape":
        state["leaves"][0] = state["leaves"][0][:1]
    elif how == "leaf count":
        state["leaves"] = state["leaves"][:-1]
    elif how == "leaf type":
        state["leaves"][0] = state["leaves"][0].tolist()
    elif how == "key dtype":
        state["key"] = state["key"].astype(np.int64)
    elif how == "mask shape":
        state["mask"] = state["mask"][:, :-1]
    elif how == "num_envs":
        state["num_envs"] = B + 1
    elif how == "format":
        state["format"] = "something/9"
    elif how == "missing":
        del state["mask"]
    elif how == "not a dict":
        return [state]
    return state


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("leaf dtype", r"leaf 0: expected a int32\[2, 12\] array, got float64\[2, 12\]"),
        ("leaf shape", r"leaf 0: expected a int32\[2, 12\] array, got int32\[1, 12\]"),
        ("leaf count", r"leaves: expected a list of \d+ arrays, got \d+ leaves"),
        ("leaf type", r"leaf 0: expected a int32\[2, 12\] array, got list"),
        ("key dtype", r"key: expected a uint32\[2\] array, got int64\[2\]"),
        ("mask shape", r"mask: expected a bool\[2, \d+\] array, got bool\[2, \d+\]"),
        ("num_envs", r"the state is of 3 games; this env has 2"),
        ("format", r"format 'something/9' is not 'parlour-jax-vec-env-state/1'"),
        ("missing", r"the state has no \['mask'\]; expected the dict of get_state\(\)"),
        ("not a dict", r"expected the dict of get_state\(\), got list"),
    ],
)
def test_set_state_names_what_does_not_fit_and_changes_nothing(
    kind: str, how: str, words: str, envs: dict[str, Any]
) -> None:
    env = envs[kind]
    _reset(env, 2)
    state = env.get_state()
    with pytest.raises(ValueError, match=rf"^JaxVecEnv\.set_state\(\): {words}$") as error:
        env.set_state(_corrupt(state, how))
    _one_line(error)
    after = env.get_state()
    for name in ("key", "mask"):
        assert np.array_equal(after[name], state[name])
    assert all(np.array_equal(x, y) for x, y in zip(after["leaves"], state["leaves"], strict=True))
