"""Batched bots (``parlour.baselines.jax_bots``) choose as their scalar bots do: on the observations of real games,
the set a batched bot draws from is the set the scalar bot draws from (its ties), action for action."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from parlour.baselines import game_spec  # noqa: E402
from parlour.baselines import make as make_bot  # noqa: E402
from parlour.baselines.jax_bots import bot, bots  # noqa: E402
from parlour.envs import ENVIRONMENTS, make  # noqa: E402


class _Enumerate:
    """A stand-in generator for a scalar bot that draws once among ``n`` tied actions: it returns draw ``i`` and
    records ``n``, so calling the bot with ``i = 0 .. n-1`` lists its whole tied set."""

    def __init__(self, i: int) -> None:
        self.i, self.n = i, None

    def random(self, *args: Any, **kwargs: Any) -> float:
        # A continuous draw (a bot's small jitter between equal scores) is a constant: it keeps distinct scores
        # apart and leaves exact ties to the one enumerated draw.
        return 0.5

    def integers(self, n: int, *args: Any, **kwargs: Any) -> int:
        assert self.n is None, "the bot draws more than once per decision: enumerate it another way"
        self.n = int(n)
        return self.i % self.n


def scalar_choices(policy: Any, observation: np.ndarray, mask: np.ndarray) -> set[int]:
    probe = _Enumerate(0)
    first = policy.act(observation, mask, probe)
    if probe.n is None:
        return {int(first)}
    return {int(policy.act(observation, mask, _Enumerate(i))) for i in range(probe.n)}


CASES = [
    (env_id, name, n)
    for env_id in sorted(ENVIRONMENTS)
    if (spec := game_spec(env_id)) is not None and spec.jax_bots is not None
    for name in bots(env_id)
    for n in sorted({max(2, make(env_id).min_players), make(env_id).num_players})
]


@pytest.mark.parametrize(("env_id", "name", "num_players"), CASES)
def test_a_batched_bot_chooses_among_what_its_scalar_bot_chooses_among(
    env_id: str, name: str, num_players: int
) -> None:
    env = make(env_id, num_players=num_players)
    scalar = make_bot(name, env_id)
    choices = jax.jit(bot(name, env_id).choices)
    rng = np.random.default_rng(0)
    decisions = 0
    for game in range(8):
        env.reset(seed=game)
        while not env.game_over:
            o = env.observe(env.agent_selection)
            observation, mask = o["observation"], o["action_mask"]
            batched = set(np.flatnonzero(np.asarray(choices(jnp.asarray(observation), jnp.asarray(mask)))).tolist())
            assert batched == scalar_choices(scalar, observation, mask), (game, decisions)
            env.step(scalar.act(observation, mask, rng))
            decisions += 1
    assert decisions > 8


def test_a_batched_bot_plays_only_its_choices_and_vmaps() -> None:
    env_id = "six_suspects_v0"
    env = make(env_id)
    env.reset(seed=1)
    o = env.observe(env.agent_selection)
    heuristic = bot("six_suspects_heuristic", env_id)
    allowed = np.asarray(heuristic.choices(jnp.asarray(o["observation"]), jnp.asarray(o["action_mask"])))
    keys = jax.random.split(jax.random.PRNGKey(0), 64)
    batch = jax.vmap(heuristic, in_axes=(None, None, 0))(
        jnp.asarray(o["observation"]), jnp.asarray(o["action_mask"]), keys
    )
    assert allowed[np.asarray(batch)].all() and len(set(np.asarray(batch).tolist())) > 1  # ties drawn, not fixed


def test_an_unknown_batched_bot_is_refused_naming_those_there_are() -> None:
    with pytest.raises(ValueError, match=r"no batched bot 'six_suspects_expert' for six_suspects_v0: expected one of"):
        bot("six_suspects_expert", "six_suspects_v0")
