"""This Game Goes to Eleven's batched bots (:mod:`parlour.baselines.jax_bots`).

- ``goes_to_eleven_heuristic``: the scalar heuristic in array code, reading only the observation vector (through
  the env's observation layout, whose ``max_piles`` follows from the vector's length): make 11 when it can, else
  play where the pile left is least tempting, keep Quiet! cards to answer Elevens, answer every Eleven it can, give
  piles to the other seat with the fewest collected cards, go over on the smallest pile.
- The expert is not here: its scores are float64 ratios of binomial coefficients (the hypergeometric chance that a
  hand of up to 15 cards holds a finishing card, exact Python integers up to ``C(72, 15)`` ≈ 1.5e15 and far beyond
  for a large ``deck``) weighed and summed, and its tied set is every action within 1e-9 of the best. JAX computes
  in float32 (x64 is a global switch, not a bot's choice): the scores would differ from the scalar ones by ~1e-7,
  so actions the scalar bot ties would split and near-ties would join -- a different bot. It is left to the scalar
  env.
"""

from __future__ import annotations

from functools import cache

import jax
import jax.numpy as jnp

from parlour.baselines.goes_to_eleven import GoesToElevenHeuristic, piles_for_size
from parlour.baselines.jax_bots import JaxBot, best, from_choices
from parlour.envs.goes_to_eleven import rules
from parlour.envs.goes_to_eleven.env import observation_layout
from parlour.envs.layout import Layout

K = rules.NUM_KINDS
MAXP = rules.MAX_PLAYERS


@cache
def _layout(size: int) -> tuple[int, Layout]:
    """``max_piles`` and the observation layout of an observation of ``size`` entries."""
    mp = piles_for_size(size)
    return mp, observation_layout(mp)


def _counts(fractions: jax.Array, scale: jax.Array) -> jax.Array:
    """Counts stored as fractions of ``scale``, rounded back as the scalar ``decode`` does (float32 product, round
    half to even)."""
    return jnp.rint(fractions.astype(jnp.float32) * scale.astype(jnp.float32)).astype(jnp.int32)


def heuristic_choices(observation: jax.Array, action_mask: jax.Array) -> jax.Array:
    """The actions ``goes_to_eleven_heuristic`` chooses among (see the scalar
    :class:`parlour.baselines.goes_to_eleven.GoesToElevenHeuristic`)."""
    mp, lay = _layout(int(observation.shape[-1]))
    gb = rules.give_base(mp)
    num_actions = gb + MAXP - 1 + 2
    mask = action_mask.astype(bool)

    def field(name: str) -> jax.Array:
        return observation[lay[name]].reshape(lay.field(name).shape)

    n = jnp.argmax(field("num_players")) + 2
    phase = jnp.argmax(field("phase"))
    deck = _counts(field("deck"), jnp.float32(rules.MAX_KIND_COUNT))
    total = deck.sum()
    # GIVE: the other seats (relative 1 .. n-1) with the fewest collected cards.
    seats = jnp.arange(MAXP)
    collected = _counts(field("collected"), total)
    others = (seats >= 1) & (seats < n)
    fewest = others & (collected == jnp.where(others, collected, jnp.iinfo(jnp.int32).max).min())
    give = jnp.zeros(num_actions, bool).at[gb : gb + MAXP - 1].set(fewest[1:])
    # ANSWER: a Quiet! when it holds one, else let the Eleven stand (the lowest legal action).
    quiet = rules.quiet_action(mp)
    answer = jnp.where(mask[quiet], jnp.arange(num_actions) == quiet, jnp.arange(num_actions) == jnp.argmax(mask))
    # PLAY: each play scored by the pile it leaves (slot ``target``; ``max_piles``: a new pile, worth 0, empty).
    present = field("pile_present") > 0
    value = jnp.where(present, jnp.argmax(field("pile_value"), axis=1), 0)
    size = jnp.where(present, _counts(field("pile_size"), total), 0)
    value = jnp.concatenate([value, jnp.zeros(1, jnp.int32)])[:, None]
    size = jnp.concatenate([size, jnp.zeros(1, jnp.int32)])[:, None] + 1
    kind = jnp.arange(K)[None, :]
    after = jnp.where(kind == rules.ELEVEN, rules.TARGET, jnp.where(kind == rules.QUIET, 0, value + kind + 1))
    pick = field("pick_holder")
    mine = (field("pick_on_me")[0] > 0) & pick.any() & (jnp.argmax(pick) == 0)
    sz = size.astype(jnp.float32)
    easy = (after >= 2) & (after <= rules.TARGET - 1)  # one number card finishes it
    score = jnp.where(
        after == rules.TARGET,
        jnp.where(mine, -sz, sz),
        jnp.where(
            after > rules.TARGET,
            -2.0 * sz,
            -0.5 * sz * easy - jnp.where(kind == rules.QUIET, jnp.float32(GoesToElevenHeuristic.quiet_cost), 0.0),
        ),
    )
    scores = jnp.concatenate([score.reshape(-1), jnp.full(num_actions - gb, -jnp.inf)])
    play = best(scores, mask)
    return jnp.where(phase == rules.GIVE, give, jnp.where(phase == rules.ANSWER, answer, play))


heuristic = from_choices(heuristic_choices)

#: Scalar bot name -> batched bot.
BOTS: dict[str, JaxBot] = {"goes_to_eleven_heuristic": heuristic}
