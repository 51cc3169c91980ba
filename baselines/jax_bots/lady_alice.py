"""Lady Alice's batched bots (:mod:`parlour.baselines.jax_bots`), for ``lady_alice_v2``, ``v1`` and ``v0``.

- ``lady_alice_heuristic``: the scalar heuristic (:class:`parlour.baselines.lady_alice.LadyAliceHeuristic`) in array
  code -- each clue rated by the mean share of smiles of the suspicions naming it (0.5 when never named, 0 when
  covered, 1 for the own card); suspects and accuses the best-rated clue of the category (with three players it
  leaves out the category whose best clue is rated lowest); gives a counter the value its clue's rating calls for;
  accuses when a verdict was full (not with three players), else puts a counter on the best-rated open clue rated at
  least 0.5 that holds none of its own, else passes. The ratings are quarters of smiles over counts of suspicions:
  their float32 quotients are correctly rounded, so they tie, order and compare with 0.5 and 0.99 exactly as the
  scalar bot's float64 ones do (distinct ratings differ by far more than either rounding).
- The expert (``lady_alice_expert``) is not here, for three reasons each of which alone makes a fixed-size version a
  different bot: (1) it scores a suspicion over the consistent solutions, but over a sample of 1,500 of them drawn
  with NumPy's generator (``rng.choice(..., replace=False)``) whenever more are consistent -- which is every early
  decision (2,048, 4,096 or 57,344 solutions at the start with 3, 4 or 5 players) -- so the scores, and the
  suspicion chosen, depend on that generator's stream, not on a tie set; (2) it bluffs with a zero counter with
  probability 0.25 on a Deductions turn (``rng.random()``): a randomised choice between different scores, not a
  uniform draw among tied ones; (3) its suspicion scores are float64 entropies (``-sum p log p``) compared with a
  1e-9 tolerance, whose near-ties float32 would split or merge. The consistent-solution mask itself would fit fixed
  arrays (a table of ``all_solutions(n)`` and a boolean mask over it), but the choices made from it would not match.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from parlour.baselines.jax_bots import JaxBot, best, from_choices
from parlour.baselines.lady_alice import LadyAliceHeuristic, rounds_for_size, value_scores
from parlour.envs.lady_alice import rules
from parlour.envs.lady_alice.env import observation_layout

C, K, P = rules.NUM_CLUES, rules.NUM_CATEGORIES, rules.PER_CATEGORY
#: The rating at which the heuristic gives a counter the value 2 (the scalar ``value_scores(..., sure=0.99)``).
SURE = 0.99
assert value_scores(SURE, SURE) == [-2, -1, 0] and value_scores(0.5, SURE) == [-1, 0, -1]  # the thresholds below
assert LadyAliceHeuristic.name == "lady_alice_heuristic"


def heuristic_choices(observation: jax.Array, action_mask: jax.Array) -> jax.Array:
    """The actions ``lady_alice_heuristic`` chooses among (see the scalar
    :class:`parlour.baselines.lady_alice.LadyAliceHeuristic`)."""
    lay = observation_layout(rounds_for_size(observation.shape[0]))  # static: the observation's size

    def field(name: str) -> jax.Array:
        return observation[lay.slices[name]].reshape(lay.by_name[name].shape)

    mask = action_mask.astype(bool)
    f32, i32 = jnp.float32, jnp.int32
    n = jnp.argmax(field("num_players")).astype(i32) + rules.MIN_PLAYERS
    phase = jnp.argmax(field("phase"))
    own = jnp.argmax(field("own_evidence"))
    left = jnp.rint(field("counters_left") * rules.COUNTERS_PER_VALUE).astype(i32)
    own_counters = jnp.rint(field("own_counters") * rules.COUNTERS_PER_VALUE).astype(i32)
    covered = field("covered") > 0
    place_clue = jnp.argmax(field("place_clue"))
    missing = field("accusation_missing")
    count = jnp.rint((field("face_down").sum(axis=0) + field("revealed").sum(axis=(0, 2))) * rules.MAX_PLAYERS).astype(
        i32
    )
    open_space = ~covered & (count < n)
    # The ratings: the suspicions made (rows with a verdict), each clue's mean share of smiles.
    sus = field("suspicions")
    named = sus[:, :C] > 0
    sus_smiles = jnp.argmax(sus[:, C:], axis=1)
    made = sus[:, C:].any(axis=1)
    share = jnp.where(made, sus_smiles.astype(f32) / K, f32(0.0))
    total = jnp.where(named, share[:, None], f32(0.0)).sum(axis=0)
    seen = named.sum(axis=0)
    rating = jnp.where(seen > 0, total / jnp.maximum(seen, 1).astype(f32), f32(0.5))
    rating = jnp.where(covered, f32(0.0), rating)
    rating = jnp.where(jnp.arange(C) == own, f32(1.0), rating)

    acts = jnp.arange(rules.NUM_ACTIONS)
    none = jnp.full(rules.NUM_ACTIONS, -jnp.inf, f32)
    clue_scores = none.at[:C].set(rating)
    # Three players, an accusation's first choice: leave out the category whose best clue is rated lowest.
    lows = rating.reshape(K, P).max(axis=1)
    missing_scores = none.at[rules.MISSING_BASE :].set(-lows)
    choosing_missing = (phase == rules.ACCUSING) & (n == 3) & ~missing.any()
    naming = best(jnp.where(choosing_missing, missing_scores, clue_scores), mask)
    # A counter's value: 2 when sure, 1 when likelier than not, else 0; the nearest legal value.
    p = rating[place_clue]
    want = jnp.where(p >= SURE, 2, jnp.where(p >= 0.5, 1, 0))
    value = best(none.at[rules.VALUE_BASE : rules.PASS].set(-jnp.abs(jnp.arange(3) - want).astype(f32)), mask)
    # Deductions: accuse a full verdict, else a counter on a promising clue, else pass.
    need = jnp.minimum(n, K)
    acc = field("accusations")
    acc_made = acc[:, K + C :].any(axis=1)
    acc_smiles = jnp.argmax(acc[:, K + C :], axis=1)
    acc_full = acc_made & (acc_smiles == need) & ((acc[:, K : K + C] > 0).sum(axis=1) == K)
    full = (made & (sus_smiles == need)).any() | acc_full.any()
    accuse = full & (n != 3) & mask[rules.ACCUSE]
    mine = own_counters.sum(axis=1) > 0
    candidates = open_space & ~mine & (rating >= 0.5)
    placing = candidates.any() & (left[1:].sum() > 0) & (candidates & mask[:C]).any()
    counter = best(none.at[:C].set(jnp.where(candidates, rating, -jnp.inf)), mask)
    deduce = jnp.where(accuse, acts == rules.ACCUSE, jnp.where(placing, counter, acts == rules.PASS))
    return jnp.where(
        (phase == rules.SUSPECT) | (phase == rules.ACCUSING),
        naming,
        jnp.where(phase == rules.PLACE, value, deduce),
    )


heuristic = from_choices(heuristic_choices)


#: Scalar bot name -> batched bot.
BOTS: dict[str, JaxBot] = {"lady_alice_heuristic": heuristic}
