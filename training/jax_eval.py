"""Periodic evaluations of the jitted trainer inside JAX (``train.eval_backend: jax``): the learner's greedy policy
against tables of one batched bot, played on the game's JAX core in one compiled call per table.

Game ``i`` of a table plays deal ``i // num_players`` with the learner in seat ``i % num_players`` (each deal once per
seat, as the scalar evaluation plays its deals) and the table's bot in every other seat. The deals are drawn from the
JAX key handed in, so these points are not played on the scalar evaluation's benchmark deals (``eval.seed_set``): they
are a learning curve of the same policy on other deals of the same game, not numbers comparable deal for deal with
the scalar evaluation's. The learner plays greedily (the argmax of its masked logits, the first of tied ones), as the
scalar evaluation plays ``learner.deterministic: true``.

A game counts as won when it ended (terminated, not truncated) with the learner's seat among the winners. Where a
core's module has ``winners(state)`` (6 Suspects: the top match score, when someone scored; Goes to Eleven: the
fewest cards collected; Lady Alice: the core's ``winners``, as the scalar ``_end``; each as the scalar rules'
``winners()``, whatever the ``reward`` mode) that is read; in the
other games, under their ``reward: win`` (elevenses has no other), the end pays +1 exactly
to the winners, so the learner won when its last reward is positive. :func:`win_problem` says when that cannot be
read (another ``reward`` mode of those games), and the config refuses ``train.eval_backend: jax`` there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from parlour.training.stats import cell_interval, wilson_interval

if TYPE_CHECKING:
    import jax

    from parlour.training.jax_ppo import PPO

#: Decisions after which a game still going is given up as not won (every core ends far sooner: a guard, not a rule).
MAX_DECISIONS = 100_000
#: The logit of an illegal action (sb3-contrib's masked distribution uses the same).
MASKED_LOGIT = -1e8


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """``logits`` with every illegal action's set to :data:`MASKED_LOGIT` (the jitted trainer's policy and its
    evaluation mask alike)."""
    import jax.numpy as jnp

    return jnp.where(mask, logits, MASKED_LOGIT)


#: The spawn key of :func:`evaluation_key`'s seeds (a stream of the run's seed that nothing else draws from).
JAX_EVAL_STREAM = 0x7E7A


def _reader(env_id: str, core: Any = None) -> Callable[[Any], Any] | None:
    """The core's own ``winners(state)`` -- the :class:`~parlour.envs.jax_core.Core`'s, or its module's -- where it
    has one (the seats that won a finished game, whatever the ``reward`` keyword pays); ``None`` where it has none."""
    from parlour.envs.jax_core import CORES, module

    own: Callable[[Any], Any] | None = getattr(core, "winners", None)
    if own is not None:
        return own
    return getattr(module(env_id), "winners", None) if env_id in CORES else None


def win_problem(env_id: str, options: dict[str, Any]) -> str | None:
    """Why a JAX evaluation could not tell the learner's wins at this game and rule keywords (``None``: it can)."""
    reward = options.get("reward", "win")
    if reward == "win" or _reader(env_id) is not None:
        return None
    from parlour.envs.jax_core import CORES, make_core

    if env_id in CORES and make_core(env_id, **options).winners is not None:
        return None
    return f"{env_id} with reward: {reward} pays no win/loss at the end to read the learner's win from"


def evaluation_key(seed: int, timesteps: int) -> jax.Array:
    """The key of the evaluation at step ``timesteps`` of a run seeded ``seed``: a stream of the seed that training
    never draws from, so a run trains the same with or without these evaluations."""
    import jax

    state = np.random.SeedSequence([seed, timesteps], spawn_key=(JAX_EVAL_STREAM,)).generate_state(1)
    return jax.random.PRNGKey(int(state[0]))


@functools.cache
def _table_player(ppo: PPO, table: str, games: int) -> Callable[[Any, jax.Array], dict[str, jax.Array]]:
    """The compiled play of ``games`` games against the batched bot ``table`` (one compilation per PPO config, table
    and game count)."""
    import jax
    import jax.numpy as jnp

    from parlour.baselines.jax_bots import bot

    core = ppo.core
    n = core.num_players
    opponent = bot(table, core.env_id)
    winners = _reader(core.env_id, core)

    def play(params: Any, deal_key: jax.Array, seat: jax.Array, key: jax.Array) -> tuple[Any, ...]:
        def going(carry: tuple[Any, ...]) -> jax.Array:
            game, _, _, decisions = carry
            return ~(game.terminated | game.truncated) & (decisions < MAX_DECISIONS)

        def act(carry: tuple[Any, ...]) -> tuple[Any, ...]:
            game, total, key, decisions = carry
            key, sub = jax.random.split(key)
            actor = game.current_player
            obs, mask = core.observe(game, actor), core.legal_mask(game)
            logits, _ = ppo.apply(params, obs)
            mine = jnp.argmax(masked_logits(logits, mask)).astype(jnp.int32)
            action = jnp.where(actor == seat, mine, opponent(obs, mask, sub).astype(jnp.int32))
            game = core.step(game, action)
            return game, total + game.rewards[seat], key, decisions + 1

        start = (core.init(deal_key), jnp.float32(0.0), key, jnp.int32(0))
        game, total, _, _ = jax.lax.while_loop(going, act, start)
        last = game.rewards[seat]
        won = winners(game)[seat] if winners is not None else last > 0
        return game.terminated & won, total

    def run(params: Any, key: jax.Array) -> dict[str, jax.Array]:
        k_deals, k_play = jax.random.split(key)
        index = jnp.arange(games)
        deal_keys = jax.vmap(lambda d: jax.random.fold_in(k_deals, d))(index // n)
        play_keys = jax.vmap(lambda i: jax.random.fold_in(k_play, i))(index)
        seats = (index % n).astype(jnp.int32)
        won, reward = jax.vmap(play, in_axes=(None, 0, 0, 0))(params, deal_keys, seats, play_keys)
        return {"won": won, "reward": reward, "seat": seats}

    return jax.jit(run)


def jax_evaluation(ppo: PPO, params: Any, tables: Sequence[str], games: int, key: jax.Array) -> dict[str, Any]:
    """The greedy policy of ``params`` (``ppo``'s network) against each table in ``tables`` (batched bot names, one
    filling every other seat) on ``games`` games each, played in JAX from ``key`` (see the module's doc: not the
    benchmark's deals). Per table: ``games``, ``win_rate``, ``win_ci`` (95%, Wilson's at the effective number of
    games with the games of a deal clustered, as the scalar evaluation's), ``mean_reward`` (the learner's total reward
    per game), and ``per_seat`` (``games`` and ``win_rate`` per learner seat)."""
    import jax

    n = ppo.core.num_players
    out: dict[str, Any] = {}
    for t, table in enumerate(tables):
        result = jax.device_get(_table_player(ppo, table, games)(params, jax.random.fold_in(key, t)))
        won = np.asarray(result["won"], bool)
        reward = np.asarray(result["reward"], np.float64)
        seats = np.asarray(result["seat"])
        if games % n == 0:
            lo, hi = cell_interval(won.reshape(-1, n).sum(axis=1), n)
        else:
            lo, hi = wilson_interval(float(won.sum()), games)
        out[table] = {
            "games": games,
            "win_rate": float(won.mean()),
            "win_ci": [lo, hi],
            "mean_reward": float(reward.mean()),
            "per_seat": {
                str(s): {"games": int((seats == s).sum()), "win_rate": float(won[seats == s].mean())}
                for s in range(min(n, games))
            },
        }
    return out
