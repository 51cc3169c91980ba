"""6 Suspects' batched bots (:mod:`parlour.baselines.jax_bots`).

- ``six_suspects_heuristic``: the scalar heuristic in array code -- column estimates from the seen cards, announce
  once enough are seen, peek at an unseen card.
- The expert is not here: it enumerates or samples the card arrangements consistent with what it has seen (up to
  ``12!`` of them, then a sample of variable size) and resolves each one through the copying effects; a fixed-size
  version would be a different bot (a fixed sample), so it is left to the scalar env.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from parlour.baselines.jax_bots import JaxBot, best, from_choices
from parlour.baselines.six_suspects import SixSuspectsHeuristic
from parlour.envs.six_suspects import rules
from parlour.envs.six_suspects.env import OBSERVATION_LAYOUT

_SEEN = OBSERVATION_LAYOUT["seen_cards"]
#: Per card id, its value in the heuristic's estimate (plain cards their value, the Swap 4; the copying cards and an
#: unseen card count at the average plain value), and whether it is the Police or the Diamond.
_PLAIN = np.asarray(rules.DEFAULT_PLAIN_VALUES, np.float64)
_UNKNOWN = float(np.mean(_PLAIN))
_CARD_VALUE = np.full(rules.NUM_CARDS, _UNKNOWN)
_CARD_VALUE[rules.SWAP] = rules.SWAP_VALUE_HALVES / 2
_CARD_VALUE[list(rules.PLAIN_CARDS)] = _PLAIN


def heuristic_choices(observation: jax.Array, action_mask: jax.Array) -> jax.Array:
    """The actions ``six_suspects_heuristic`` chooses among (see the scalar
    :class:`parlour.baselines.six_suspects.SixSuspectsHeuristic`)."""
    action_mask = action_mask.astype(bool)
    seen = observation[_SEEN.start : _SEEN.stop].reshape(rules.NUM_POSITIONS, rules.NUM_CARDS) > 0
    known = seen.any(axis=1)
    card = jnp.argmax(seen, axis=1)
    value = jnp.where(known, jnp.asarray(_CARD_VALUE, jnp.float32)[card], jnp.float32(_UNKNOWN))
    top, bottom = card[: rules.NUM_SUSPECTS], card[rules.NUM_SUSPECTS :]
    known_top, known_bottom = known[: rules.NUM_SUSPECTS], known[rules.NUM_SUSPECTS :]

    def shows(c: int) -> jax.Array:
        return (known_top & (top == c)) | (known_bottom & (bottom == c))

    totals = value[: rules.NUM_SUSPECTS] + value[rules.NUM_SUSPECTS :]
    totals = jnp.where(shows(rules.DIAMOND), jnp.float32(9.5), totals)
    totals = jnp.where(shows(rules.POLICE), -jnp.inf, totals)
    votes = jnp.full(rules.NUM_ACTIONS, -jnp.inf).at[rules.VOTE_BASE : rules.NUM_ACTIONS].set(totals)
    peeks = jnp.full(rules.NUM_ACTIONS, -jnp.inf).at[: rules.NUM_POSITIONS].set(jnp.where(known, 0.0, 1.0))
    announce = action_mask[rules.ANNOUNCE] & (known.sum() >= SixSuspectsHeuristic.announce_after_seen)
    only_announce = jnp.zeros(rules.NUM_ACTIONS, bool).at[rules.ANNOUNCE].set(True)
    return jnp.where(
        action_mask[rules.VOTE_BASE],
        best(votes, action_mask),
        jnp.where(announce, only_announce, best(peeks, action_mask)),
    )


heuristic = from_choices(heuristic_choices)


#: Scalar bot name -> batched bot.
BOTS: dict[str, JaxBot] = {"six_suspects_heuristic": heuristic}
