"""Elevenses' batched bots (:mod:`parlour.baselines.jax_bots`).

- ``elevenses_heuristic``: the scalar heuristic in array code (:class:`parlour.baselines.elevenses.ElevensesHeuristic`)
  -- the playable card worth most (teaspoons, its guest's items), cubes onto the plate that leads and off its own,
  the 11 when its own plate does not lead, truthful claims when innocent and framing when guilty, away the cards it
  cannot play. The scalar bot adds a small uniform jitter (< 0.1) to each card's worth when it chooses what to play;
  card worths lie on a grid of 0.5, so the jitter only breaks ties among the cards worth most (and puts a card worth
  0 above re-arranging, also scored 0): the batched bot chooses uniformly among exactly those cards.
- The expert (``elevenses_expert``) is not here. Its arithmetic is fixed-size (a belief over six Guilt positions,
  the win chance over at most fifteen Murderer pairs, greedy cube placements), but its choices turn on exact float64
  equalities and thresholds: the best Biscuits move is ``max`` over (value, from, to) tuples, so of two moves of
  equal value the one from the higher plate index is made; a move must beat the last by ``<=``; the 11 is played at a win chance
  ``>= 0.5`` and the claim turns on a belief ``>= 0.5``; stopping must gain ``1e-6`` and ties are ``1e-9`` wide.
  JAX computes in float32 by default, and even in float64 XLA on CPU contracts multiply-adds into fused ones and
  reduces in its own order (on this backend about one ``a * b + c`` in eight differs from NumPy's in the last
  bit), so a batched version would now and then take another branch than the scalar bot: a different bot. It is
  left to the scalar env.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from parlour.baselines.jax_bots import JaxBot, best, from_choices
from parlour.envs.elevenses import rules
from parlour.envs.elevenses.env import observation_layout

_LAYOUT = observation_layout()
K = rules.NUMBERS
C = rules.NUM_CARDS
MAXP = rules.MAX_PLAYERS
POS = MAXP + 1
MRS = rules.MRS
#: The scalar bot's jitter is at most 0.1: a card scored ``v`` beats every action scored below ``v + 0.1``. Any
#: value in (0, 0.5) puts the cards worth most above an equal non-card score and keeps the grid's order.
_JITTER = 0.05
_TEASPOONS = np.array(rules.TEASPOONS, np.float32)  # per number 1–11
_GUEST_BONUS = np.zeros((len(rules.GUESTS), K), np.float32)  # per guest, per number 1–11: the heuristic's bonus
for _g, _items in enumerate(rules.GUESTS):
    _GUEST_BONUS[_g, [i - 1 for i in _items]] = 1.5
_ACTIONS = np.arange(rules.NUM_ACTIONS)


def _field(observation: jax.Array, name: str) -> jax.Array:
    s = _LAYOUT[name]
    return observation[s.start : s.stop].reshape(_LAYOUT.field(name).shape)


def _first_max(values: jax.Array, ok: jax.Array) -> jax.Array:
    """The first index with the greatest value among ``ok`` (Python's ``max`` over a list keeps the first)."""
    v = jnp.where(ok, values, -jnp.inf)
    return jnp.argmax(v == v.max())


def heuristic_choices(observation: jax.Array, action_mask: jax.Array) -> jax.Array:
    """The actions ``elevenses_heuristic`` chooses among (see the scalar
    :class:`parlour.baselines.elevenses.ElevensesHeuristic`): every action it scores gets its score, every other
    legal action 0, and it plays one of the legal actions scored highest."""
    action_mask = action_mask.astype(bool)
    n = jnp.argmax(_field(observation, "num_players")) + rules.MIN_PLAYERS
    pos = jnp.arange(POS)
    positions = (pos < n) | ((pos == MRS) & (n < MAXP))
    known = _field(observation, "known_in_hand") > 0  # back × number × hand
    hand = known[:, :, 0].reshape(-1)  # per card action: in this seat's hand
    phase = jnp.argmax(_field(observation, "phase"))
    effect_row = _field(observation, "effect")
    effect = jnp.where(effect_row.any(), jnp.argmax(effect_row) + 1, 0)
    target_row = _field(observation, "target")
    target = jnp.where(target_row.any(), jnp.argmax(target_row), -1)
    turn = jnp.argmax(_field(observation, "turn_seat"))
    up = _field(observation, "face_up").any(axis=2)  # seat × number 1–10
    plates = jnp.rint(_field(observation, "plates") * 30).astype(jnp.int32)
    guilt = _field(observation, "guilt_known") > 0  # position × (Not Guilty, Murderer)
    guest = jnp.argmax(_field(observation, "own_guest"))
    looked = jnp.argmax(_field(observation, "looked"))

    # card_value: per number 1–11
    own_up = jnp.concatenate([up[0], jnp.zeros(1, bool)])
    value = jnp.where(own_up, -1.0, jnp.asarray(_TEASPOONS) + jnp.asarray(_GUEST_BONUS)[guest])
    value = value.at[K - 1].set(5.0)  # the 11: never given away, kept
    card_value = jnp.tile(value, MAXP)  # per card action
    eleven = jnp.asarray(_ACTIONS[:C] % K == K - 1)

    others = positions & (pos != 0)
    lead = _first_max(plates.astype(jnp.float32), others)  # target_plate: most cubes, ties to the first
    end_now = plates[0] < jnp.where(others, plates, -1).max()
    guilty = guilt[0, 1]

    def scored(entries: dict[int, jax.Array], cards: jax.Array | None = None) -> jax.Array:
        """A score vector: NaN where unscored; ``cards`` scores the card actions, ``entries`` single actions."""
        s = jnp.full(rules.NUM_ACTIONS, jnp.nan, jnp.float32)
        if cards is not None:
            s = s.at[:C].set(cards)
        for a, v in entries.items():
            s = s.at[a].set(v)
        return s

    def plates_at(base: int, values: jax.Array) -> jax.Array:
        """Scores ``values[x]`` for the plate / Guilt actions ``base + x`` of the positions in play (NaN elsewhere)."""
        s = jnp.full(rules.NUM_ACTIONS, jnp.nan, jnp.float32)
        return s.at[base : base + POS].set(jnp.where(positions, values, jnp.nan))

    def one(action: jax.Array) -> jax.Array:
        return jnp.where(jnp.asarray(_ACTIONS) == action, 1.0, jnp.nan)

    # TURN: the playable card worth most (the jitter puts a card worth 0 above re-arranging), the 11 when it pays.
    turn_cards = jnp.where(hand, card_value + _JITTER, jnp.nan)
    turn_cards = jnp.where(hand & eleven, jnp.where(end_now, 100.0, -100.0), turn_cards)
    on_turn = scored({rules.REARRANGE: jnp.float32(0.0), rules.PASS_TURN: jnp.float32(-50.0)}, turn_cards)
    give_away = jnp.where(hand, -card_value, jnp.nan)  # re-arrange, pass, give: the card worth least
    on_rearrange = scored({rules.STOP: jnp.float32(10.0)}, give_away)
    on_give = scored({}, give_away)
    on_cube = one(rules.PLATE_BASE + lead)
    # MOVE_FROM: off its own plate; Tarts with an empty own plate must move one: from the emptiest plate.
    tarts_empty = (effect == rules.TARTS) & (plates[0] == 0)
    move_from = jnp.where(tarts_empty, plates_at(rules.PLATE_BASE, -plates.astype(jnp.float32)), jnp.nan)
    own = jnp.where(plates[0] > 0, 2.0, -1.0)
    move_from = (
        jnp.where(tarts_empty, move_from, jnp.where(jnp.asarray(_ACTIONS) == rules.PLATE_BASE, own, jnp.nan))
        .at[rules.STOP]
        .set(0.5)
    )
    low = jnp.argmin(jnp.where(positions, plates, jnp.iinfo(jnp.int32).max))  # the first least
    swap_1 = (
        scored({rules.STOP: jnp.float32(0.5)})
        .at[rules.PLATE_BASE]
        .set(jnp.where(plates[low] < plates[0], 1.0, jnp.nan))
    )
    swap_2 = plates_at(rules.PLATE_BASE, -plates.astype(jnp.float32))
    look = plates_at(rules.GUILT_BASE, jnp.where(guilt.any(axis=1), 0.0, 1.0))
    saw_murderer = guilt[looked, 1]
    claim = one(jnp.where(guilty | saw_murderer, rules.CLAIM_MURDERER, rules.CLAIM_INNOCENT))
    # Cucumber: a murderer moves its card to the plate that leads; an innocent moves a known Murderer card there.
    known_m = guilt[:, 1] & positions
    source = jnp.where(guilty, 0, jnp.where(known_m.any(), jnp.argmax(known_m), -1))
    fallback = (source < 0) | (source == lead)
    source = jnp.where(fallback, 1, source)
    dest = jnp.where(fallback, jnp.where(n > 2, 2, MRS), lead)
    cucumber_1, cucumber_2 = one(rules.GUILT_BASE + source), one(rules.GUILT_BASE + dest)
    # Take: a card worth more than the worst it would give (the other hand as this seat saw it).
    worst = jnp.where(hand & ~eleven, card_value, jnp.inf).min()
    worst = jnp.where(jnp.isfinite(worst), worst, 0.0)
    other_seat = jnp.where(phase == rules.HAM_TAKE, target, turn)
    other_hand = (known[:, :, jnp.clip(other_seat, 0, MAXP - 1)] & (other_seat >= 0)).reshape(-1)
    on_take = scored({rules.STOP: worst}, jnp.where(other_hand, card_value, jnp.nan))
    unscored = jnp.full(rules.NUM_ACTIONS, jnp.nan, jnp.float32)

    by_phase = [unscored] * rules.NUM_PHASES
    by_phase[rules.TURN] = on_turn
    by_phase[rules.REARRANGE_CARD] = on_rearrange
    for ph in (rules.ADD, rules.LATE, rules.MOVE_TO):
        by_phase[ph] = on_cube
    by_phase[rules.MOVE_FROM] = move_from
    by_phase[rules.SWAP_1] = swap_1
    by_phase[rules.SWAP_2] = swap_2
    by_phase[rules.LOOK] = look
    by_phase[rules.CLAIM] = claim
    by_phase[rules.CUCUMBER_1] = cucumber_1
    by_phase[rules.CUCUMBER_2] = cucumber_2
    for ph in (rules.PASS, rules.HAM_GIVE, rules.CAKES_GIVE):
        by_phase[ph] = on_give
    for ph in (rules.HAM_TAKE, rules.CAKES_TAKE):
        by_phase[ph] = on_take
    scores = jnp.stack(by_phase)[phase]
    return best(jnp.nan_to_num(scores, nan=0.0), action_mask)


heuristic = from_choices(heuristic_choices)


#: Scalar bot name -> batched bot.
BOTS: dict[str, JaxBot] = {"elevenses_heuristic": heuristic}
