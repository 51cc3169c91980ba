"""This Game Goes to Eleven as a batched, jittable core (:mod:`parlour.envs.jax_core`): the rules of
:mod:`parlour.envs.goes_to_eleven.rules` as pure functions of a fixed-shape state, for every player count (2–6) and
every rule keyword (``deck``, ``max_piles``, ``pick_on_me``, ``start_seat``, ``reward`` in each of its modes, the
driver's ``max_turns``). Nothing is refused.

What differs structurally from the scalar implementation:

- **Counts and masks instead of lists and bit sets.** Hands are ``int32[n, 11]`` counts (the scalar ``hand_bits``
  is ``hands > 0``); the piles are ``max_piles`` fixed slots (value, top kind -- ``-1`` for an empty slot -- and
  size; the scalar ``pile_code`` and ``occupied`` are derived from them); the draw pile is the shuffled deck with a
  length, its top card at ``draw[draw_len - 1]``, as the scalar list pops from its end.
- **The asking queue is arithmetic.** The scalar rules list the seats still to be asked whether to answer an Eleven
  (every other seat holding cards, clockwise from the Eleven's player); hands do not change while it is asked round,
  so the core keeps none: the next seat asked is the next one clockwise after the seat that just let it stand
  (before reaching the Eleven's player again) that holds cards.
- **The legal plays are bit sets per slot.** The scalar play tables (normal, over 11, the same number at the pile
  limit, the same number over 11, indexed by pile code) become four ``int32[max_piles]`` sets of kinds computed from
  the pile values and tops by shifts and masks; the first non-empty one (with the new-pile row on the first) is the
  mask, as in ``play_bits``, spread to booleans once at the end.
- **One flat step.** ``step`` computes every consequence of the action at once -- the card played and the card
  drawn, the pile reaching 11, the asking, the giving away, the pile collected (with its rewards), the next turn
  and the end -- each selected by ``jnp.where`` on what happened (no branches: under vmap a branch would be
  computed for every game anyway).
- **Observations are read from a source vector**, exactly as the scalar env hands them out: the core builds the
  public part of the env's source (:func:`~parlour.envs.goes_to_eleven.env.source_layout`) and the observer's own
  hand, and reads the observation through the env's own gather index -- cut, once at construction, into runs of
  source entries that every observer reads alike (copied as slices) and the few entries whose source depends on
  the observer (the relative seats: one small gather) -- so field order and seat rotation cannot drift. Every float
  it writes (pile sizes, collected cards and the draw pile ÷ the deck, hands ÷ 3, cards played ÷ that kind's count,
  the deck ÷ 99, the draw pile's kinds ÷ their count) is looked up in a table computed in NumPy as the scalar env
  computes it, so the vectors agree bit for bit; the rewards of ``cards`` and ``margin`` likewise. The state vector
  is the env's, derived from the same source.
- **Deals come from ``key``** (a shuffle: one sort of random words carrying the card kinds in their low bits,
  redrawn in the rare case two random parts tie, so the order is exactly uniform); the scalar env draws from its own
  generator, so a lock-step check hands the core the scalar deal. The whole deal -- hands, draw pile, the first
  pile -- is drawn at the start (:data:`DEAL_FIELDS`; :func:`deal_number` is always 0).
- **Legal actions only.** ``step`` assumes a legal action (the learner masks; the opponents choose among legal
  actions); the scalar env's ``illegal_action`` keyword has no counterpart.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs.goes_to_eleven import rules
from parlour.envs.goes_to_eleven.env import VALUES, observation_gather, source_layout, state_layout
from parlour.envs.jax_core import Core, bound, pad_rows, unless_finished
from parlour.envs.layout import state_from_source

ENV_ID = "goes_to_eleven_v0"
K = rules.NUM_KINDS
NUMS = rules.NUM_NUMBERS
MAXP = rules.MAX_PLAYERS
ELEVEN, QUIET, TARGET = rules.ELEVEN, rules.QUIET, rules.TARGET
PLAY, GIVE, ANSWER, OVER = rules.PLAY, rules.GIVE, rules.ANSWER, rules.OVER
ALL_NUMBERS = (1 << NUMS) - 1  # the set of the number kinds
SPECIALS = (1 << ELEVEN) | (1 << QUIET)
#: The rule keywords a core refuses, with the reason (``make_core`` names it): none.
REFUSED: dict[tuple[str, Any], str] = {}
#: Rule-keyword sets the lock-step checks cover besides the defaults (every keyword, each away from its default;
#: valid at every player count). The third deck holds so few numbers that at six players the whole rest of the deck
#: is often turned up at the start (a pile on a special card, worth 0); one pile slot makes the pile limit and the
#: same-number plays common; ``max_turns=69`` truncates about half the games at four players.
VARIANTS: tuple[dict[str, Any], ...] = (
    {"pick_on_me": True, "reward": "cards", "start_seat": 1},
    {"reward": "margin", "max_piles": 3, "start_seat": 1, "max_turns": 69},
    {"deck": (1, 1, 0, 0, 0, 0, 0, 0, 0, 9, 9), "pick_on_me": True, "max_piles": 1, "reward": "margin"},
    {"deck": (3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 2), "max_piles": 1, "start_seat": 1},
)
#: The fields of :class:`State` that hold the deal (one deal per game, all drawn at the start).
DEAL_FIELDS = ("hands", "hand_size", "draw", "draw_len", "pile_value", "pile_top", "pile_size", "played")


class State(NamedTuple):
    """One table (per-seat arrays have ``num_players`` rows; per-slot arrays ``max_piles``)."""

    hands: jax.Array  # int32[n, 11]: cards of each kind per seat
    hand_size: jax.Array  # int32[n]
    draw: jax.Array  # int32[deck size]: the draw pile's kinds, bottom first; entries from draw_len on are spent
    draw_len: jax.Array  # int32: cards left in the draw pile
    pile_value: jax.Array  # int32[max_piles]: 0 for an empty slot
    pile_top: jax.Array  # int32[max_piles]: top card's kind, -1 for an empty slot
    pile_size: jax.Array  # int32[max_piles]: 0 for an empty slot
    collected: jax.Array  # int32[n]
    played: jax.Array  # int32[11]: face-up cards of each kind
    phase: jax.Array  # int32: rules.PLAY .. rules.OVER
    current: jax.Array  # int32: the seat to decide (-1 once the rules end the game)
    turn_seat: jax.Array  # int32: the seat whose turn it is
    new_pile: jax.Array  # bool: a pile has just left the table
    pending: jax.Array  # int32: the slot of the pile at 11 awaiting an answer or a receiver, -1
    eleven_player: jax.Array  # int32: who played the Eleven being answered (until the pile is collected), -1
    pick: jax.Array  # int32: the guitar pick's holder (Pick On Me), -1
    turns: jax.Array  # int32: cards played on turns (the driver's max_turns counts them)
    key: jax.Array  # unused after the deal (the game has no later draw)
    current_player: jax.Array  # int32: the seat to act, -1 once over
    rewards: jax.Array  # float32[n]: what the last step paid each seat
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool


def _table(values: list[float] | list[list[float]]) -> np.ndarray:
    """Python floats as the scalar env stores them (float64 products rounded to float32)."""
    return np.array(values, np.float64).astype(np.float32)


def fewest(collected: jax.Array) -> jax.Array:
    """The seats that win a finished game with these collected cards: the fewest (the scalar rules' ``winners()``)."""
    return collected == collected.min()


def winners(state: State) -> jax.Array:
    """The winning seats of a finished game (whatever the ``reward`` keyword pays): :func:`fewest` of its cards."""
    return fewest(state.collected)


class Params(NamedTuple):
    """Everything a table's core computes once from its player count and rule keywords (:func:`params`): the Python
    values that choose what is traced, and the NumPy tables the traced functions read as constants."""

    num_players: int  # seats at the table (n)
    max_piles: int  # pile slots
    pick_on_me: bool  # the Pick On Me rule: the guitar pick's holder collects a pile made 11 that nobody takes
    reward: str  # "win", "cards" or "margin"
    start_seat: int  # the seat that plays first
    max_turns: int | None  # the driver's cap on cards played on turns; None: no cap
    total: int  # cards in the deck
    rest: int  # cards left after the hands are dealt (at least one)
    give_base: int  # the first give action (``rules.give_base``)
    pass_action: int  # letting an Eleven stand
    quiet_action: int  # answering an Eleven with a Quiet! card
    num_actions: int
    obs_size: int
    state_size: int
    packed_cards: np.ndarray  # uint32[total]: the deck, kind by kind (the low bits of the shuffle's sort keys)
    hand_pos: np.ndarray  # int32[n, 3]: the positions in the shuffled deck that deal each seat's hand
    size_t: np.ndarray  # float32[total + 1]: a count of cards ÷ the deck
    third_t: np.ndarray  # float32[4]: a count of cards in hand ÷ 3
    kind_t: np.ndarray  # float32[11, most of a kind + 1]: a count of a kind ÷ that kind's count in the deck
    deck_v: np.ndarray  # float32[11]: the deck's count of each kind ÷ 99 (the source's ``deck`` field)
    loss_t: np.ndarray  # float32[total + 1]: the reward for collecting that many cards (``cards``, ``margin``)
    share_t: np.ndarray  # float32[total + 1]: each other seat's share of it (``margin``)
    share: np.ndarray  # float32[11]: 1 / that kind's count in the deck (0 for a kind the deck lacks)
    public_fields: tuple[str, ...]  # the source's fields but the hands, in the source's order
    plan: tuple[tuple[bool, int, int], ...]  # the observation as runs of the source (:func:`_plan`)
    var_index: np.ndarray  # int32[n, entries]: per observer, the entries it reads elsewhere (its relative seats)
    state_index: np.ndarray  # int32[state_size]: the source entry each state-vector entry copies
    draw_kinds_at: slice  # the state vector's ``draw_kinds`` field (written by the core)
    next_card_at: slice  # the state vector's ``next_card`` field (written by the core)


def make_core(num_players: int = 4, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``goes_to_eleven_v0``)."""
    p = params(validate(num_players, max_turns, options), max_turns)
    return Core(
        env_id=ENV_ID,
        num_players=p.num_players,
        num_actions=p.num_actions,
        obs_size=p.obs_size,
        state_size=p.state_size,
        **bound(p, sys.modules[__name__]),
        hindsight_blocks=hindsight_blocks(p.num_players),
    )


def validate(num_players: int, max_turns: int | None, options: dict[str, Any]) -> rules.Options:
    """The rules' options of a table (``ValueError`` for a refused or invalid keyword, or an invalid ``max_turns``)."""
    for (name, value), why in REFUSED.items():
        if options.get(name) == value:
            raise ValueError(f"goes_to_eleven jax core: {name}={value!r} is not supported ({why}); use the scalar env")
    opts = rules.Options(num_players=num_players, **options)
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        raise ValueError(f"goes_to_eleven jax core: max_turns={max_turns!r} is not valid: expected an integer >= 1")
    return opts


def params(opts: rules.Options, max_turns: int | None) -> Params:
    """The :class:`Params` of a table with the (validated) rules' options ``opts`` and the driver's ``max_turns``."""
    n, mp = opts.num_players, opts.max_piles
    deck = np.array(opts.deck, np.int64)
    total = int(deck.sum())

    # Float tables, each entry as the env computes it (``count * (1.0 / total)`` and the like, in float64).
    deck_scale = 1.0 / total
    third = 1.0 / rules.HAND_SIZE
    kind_scale = [1.0 / c if c else 0.0 for c in opts.deck]
    widest = int(deck.max()) + 1

    # The observation: the public source fields, then the observer's own hand (rewritten from the env's index).
    src = source_layout(mp)
    full = np.stack([observation_gather(mp, o, n) for o in range(n)]).astype(np.int64)
    own = _own_block(full, src)
    plan, varying = _plan(own)
    assert src["zero"].start == 0 and src["one"].start == 1  # the index trick's premise
    slay = state_layout(mp)
    copied = state_from_source(slay, src, np.arange(src.size, dtype=np.float32), n - 2)

    cards = np.repeat(np.arange(K), deck).astype(np.int32)  # the deck, kind by kind
    # The deal pops from the end of the shuffled deck: round r, seat s takes position total - 1 - (r * n + s).
    hand_pos = np.array([[total - 1 - (r * n + s) for r in range(rules.HAND_SIZE)] for s in range(n)], np.int32)
    return Params(
        num_players=n,
        max_piles=mp,
        pick_on_me=bool(opts.pick_on_me),
        reward=opts.reward,
        start_seat=opts.start_seat,
        max_turns=max_turns,
        total=total,
        rest=total - rules.HAND_SIZE * n,
        give_base=rules.give_base(mp),
        pass_action=rules.pass_action(mp),
        quiet_action=rules.quiet_action(mp),
        num_actions=opts.num_actions,
        obs_size=int(own.shape[1]),
        state_size=slay.size,
        packed_cards=cards.astype(np.uint32),
        hand_pos=hand_pos,
        size_t=_table([c * deck_scale for c in range(total + 1)]),
        third_t=_table([c * third for c in range(rules.HAND_SIZE + 1)]),
        kind_t=_table([[p * kind_scale[k] for p in range(widest)] for k in range(K)]),
        deck_v=(np.array(opts.deck) / rules.MAX_KIND_COUNT).astype(np.float32),
        loss_t=_table([-rules.CARD_REWARD * c for c in range(total + 1)]),
        share_t=_table([rules.CARD_REWARD * c / (n - 1) for c in range(total + 1)]),
        # Per kind, 1 / that kind's count in the deck (0 for a kind the deck lacks): a count of it as a share of it.
        share=np.array([1.0 / c if c else 0.0 for c in opts.deck], np.float32),
        public_fields=tuple(f.name for f in src.fields if f.name != "hands"),
        plan=tuple(plan),
        var_index=varying.astype(np.int32),
        state_index=copied.astype(np.int32),
        draw_kinds_at=slay["draw_kinds"],
        next_card_at=slay["next_card"],
    )


# ---------------------------------------------------------------------------------------------------- the deal
def _keyed(p: Params, key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The deck sorted by random keys (kind in the low bits), and whether two random parts tie."""
    high = jnp.uint32(0xFFFFFFF0)  # the random part of a sort key; the low 4 bits carry the card's kind
    packed = jnp.sort((jax.random.bits(key, (p.total,)) & high) | jnp.asarray(p.packed_cards))
    rand = packed & high
    return packed, (rand[1:] == rand[:-1]).any()


def _redraw(p: Params, c: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The shuffle's loop body: a fresh draw from a new key (``c``: key, sorted deck, tie)."""
    k, sub = jax.random.split(c[0])
    return (k, *_keyed(p, sub))


def _shuffle(p: Params, key: jax.Array) -> jax.Array:
    """The deck's kinds in a uniformly random order. One sort of single words (a random part above the kind):
    on CPU far cheaper than a sort of pairs or a ranking by comparisons. Two equal random parts would order
    their cards by kind, so such a draw is redrawn (rejection keeps the order exactly uniform; at 72 cards it
    happens about once in 100,000 deals)."""
    packed, tie = _keyed(p, key)
    _, packed, _ = jax.lax.while_loop(lambda c: c[2], functools.partial(_redraw, p), (key, packed, tie))
    return (packed & jnp.uint32(0xF)).astype(jnp.int32)


def _first_pile(p: Params, draw: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
    """The first pile, turned up from the top of what the hands leave until a number is on top (or nothing is
    left): where the draw pile now ends, the pile's top kind, its size and value, and the cards now face up."""
    i32 = jnp.int32
    kinds = jnp.arange(K, dtype=i32)
    pos = jnp.arange(p.rest, dtype=i32)
    is_num = draw[: p.rest] < NUMS
    end = jnp.maximum(jnp.where(is_num, pos, -1).max(), 0)
    top = draw[end]
    # Every card turned up but a number on top is a special: count the Elevens, the rest are Quiet! cards.
    elevens = ((pos >= end) & (draw[: p.rest] == ELEVEN)).sum()
    size = p.rest - end
    quiets = size - elevens - (top < NUMS).astype(i32)
    played = jnp.where(kinds == top, 1, 0) * (top < NUMS) + jnp.where(
        kinds == ELEVEN, elevens, jnp.where(kinds == QUIET, quiets, 0)
    )
    value = jnp.where(top < NUMS, top + 1, 0)
    return end, top, size, value, played.astype(i32)


def init(p: Params, key: jax.Array) -> State:
    """A new game, dealt from ``key``."""
    i32 = jnp.int32
    n, mp, start = p.num_players, p.max_piles, p.start_seat
    draw = _shuffle(p, key)
    hands = jax.nn.one_hot(draw[jnp.asarray(p.hand_pos)], K, dtype=i32).sum(axis=1)
    end, top, size, value, played = _first_pile(p, draw)
    zero_slots = jnp.zeros(mp, i32)
    return State(
        hands=hands,
        hand_size=jnp.full(n, rules.HAND_SIZE, i32),
        draw=draw,
        draw_len=end,
        pile_value=zero_slots.at[0].set(value),
        pile_top=jnp.full(mp, -1, i32).at[0].set(top),
        pile_size=zero_slots.at[0].set(size),
        collected=jnp.zeros(n, i32),
        played=played,
        phase=i32(PLAY),
        current=i32(start),
        turn_seat=i32(start),
        new_pile=jnp.bool_(False),
        pending=i32(-1),
        eleven_player=i32(-1),
        pick=i32(start if p.pick_on_me else -1),
        turns=i32(0),
        key=key,
        current_player=i32(start),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


# ---------------------------------------------------------------------------------------------------- the mask
def _play_rows(p: Params, s: State, h: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The play rows as the scalar ``play_bits`` computes them, on bit sets of kinds (``h``: the kinds in hand):
    the sets per slot, the new-pile row's set, and whether the first (usual) rows hold a play."""
    occ = s.pile_top >= 0
    # The numbers that keep the pile at most 11, and the pile's own top number (on a pile at rest: value < 11).
    fit = jnp.where(occ, (1 << jnp.clip(TARGET - s.pile_value, 0, NUMS)) - 1, 0)
    top = jnp.where(occ & (s.pile_top < NUMS), 1 << jnp.maximum(s.pile_top, 0), 0)
    normal = jnp.where(occ, (fit & ~top) | SPECIALS, 0) & h  # a special card goes on any pile
    over = (ALL_NUMBERS & ~fit & ~top) & jnp.where(occ, h, 0)
    same_ok = fit & top & h
    same_over = top & ~fit & h
    tops = jax.lax.reduce(top, np.int32(0), jax.lax.bitwise_or, (0,))
    piles = occ.sum()
    new_bits = jnp.where(piles < p.max_piles, jnp.where(s.new_pile | (piles == 0), h, h & tops), 0)
    first = (normal != 0).any() | (new_bits != 0)
    # Going over 11 only when every legal play goes over; the same number only at the pile limit.
    body = jnp.where(
        first,
        normal,
        jnp.where((over != 0).any(), over, jnp.where((same_ok != 0).any(), same_ok, same_over)),
    )
    return body, new_bits, first


def _tail_bits(p: Params, s: State, held: jax.Array) -> jax.Array:
    """The last row of the mask as a bit set: give to 1 .. n-1 seats left, let stand, Quiet!."""
    give_bits = (1 << (p.num_players - 1)) - 1
    pass_bit, quiet_bit = 1 << (p.pass_action - p.give_base), 1 << (p.quiet_action - p.give_base)
    return jnp.where(
        s.phase == GIVE,
        give_bits,
        jnp.where(s.phase == ANSWER, pass_bit | jnp.where(held[QUIET] > 0, quiet_bit, 0), 0),
    )


def legal_mask(p: Params, s: State) -> jax.Array:
    """The play rows on bit sets of kinds (one int per slot: far fewer operations than a mask per kind); the last
    row holds the give and answer actions. The bits are spread to the mask once, at the end."""
    kinds = jnp.arange(K, dtype=jnp.int32)
    held = s.hands[jnp.maximum(s.current, 0)]
    h = jnp.where(held > 0, 1 << kinds, 0).sum()  # a kind's bit in a set of kinds
    body, new_bits, first = _play_rows(p, s, h)
    tail = _tail_bits(p, s, held)
    playing = s.phase == PLAY
    live = ~(s.terminated | s.truncated)
    rows = jnp.concatenate([body, new_bits[None]])
    rows = jnp.where(playing & live & jnp.concatenate([jnp.ones(p.max_piles, bool), first[None]]), rows, 0)
    tail = jnp.where(live, tail, 0)
    # The rows are computed once, not again for each of the mask's entries (XLA would fuse them into the spread).
    rows, tail = jax.lax.optimization_barrier((rows, tail))
    plays = ((rows[:, None] >> kinds[None, :]) & 1).reshape(-1)
    return jnp.concatenate([plays, (tail >> jnp.arange(p.num_actions - p.give_base)) & 1]) != 0


# ---------------------------------------------------------------------------------------------------- the step
class _Move(NamedTuple):
    """An action decoded: which move it is, by whom, and the card it plays (each a traced scalar)."""

    action: jax.Array  # int32
    seat: jax.Array  # the seat acting
    is_play: jax.Array  # a card played on a turn
    is_give: jax.Array  # a pile at 11 given away
    quiet_ans: jax.Array  # an Eleven answered with a Quiet! card
    pass_ans: jax.Array  # an Eleven let stand
    kind: jax.Array  # the kind of the card played (on a turn, or the Quiet! answering an Eleven)
    card: jax.Array  # whether a card is played


def _move(p: Params, s: State, action: jax.Array) -> _Move:
    a = jnp.asarray(action, jnp.int32)
    is_play, is_answer = s.phase == PLAY, s.phase == ANSWER
    quiet_ans = is_answer & (a == p.quiet_action)
    return _Move(
        action=a,
        seat=jnp.maximum(s.current, 0),
        is_play=is_play,
        is_give=s.phase == GIVE,
        quiet_ans=quiet_ans,
        pass_ans=is_answer & ~quiet_ans,
        kind=jnp.where(is_play, a % K, QUIET),
        card=is_play | quiet_ans,
    )


def _play_card(p: Params, s: State, m: _Move) -> tuple[State, jax.Array, jax.Array]:
    """The card played (on a turn, or a Quiet! answering an Eleven) and the card drawn back, with the pile it goes
    on; and that pile's slot and value."""
    i32 = jnp.int32
    kinds, seats, slots = (
        jnp.arange(K, dtype=i32),
        jnp.arange(p.num_players, dtype=i32),
        jnp.arange(p.max_piles, dtype=i32),
    )
    drawing = m.card & (s.draw_len > 0)
    drawn = s.draw[jnp.maximum(s.draw_len - 1, 0)]
    me = seats == m.seat
    hands = (
        s.hands
        - (me[:, None] & (kinds == m.kind)[None, :] & m.card).astype(i32)
        + (me[:, None] & (kinds == drawn)[None, :] & drawing).astype(i32)
    )
    # The pile it goes on: a slot, the lowest free slot for a new pile, the pending pile for an answer.
    target = m.action // K
    free = jnp.argmax(s.pile_top < 0).astype(i32)
    slot = jnp.where(m.is_play, jnp.where(target == p.max_piles, free, target), jnp.maximum(s.pending, 0))
    at = (slots == slot) & m.card
    old = s.pile_value[jnp.clip(slot, 0, p.max_piles - 1)]
    value = jnp.where(m.kind < NUMS, old + m.kind + 1, jnp.where(m.kind == ELEVEN, TARGET, 0))
    value = jnp.where(m.is_play, value, old)  # an answering Quiet! leaves the pile at 11 (it is collected)
    s = s._replace(
        hands=hands,
        hand_size=s.hand_size - (me & m.card & ~drawing).astype(i32),
        draw_len=s.draw_len - drawing.astype(i32),
        played=s.played + ((kinds == m.kind) & m.card).astype(i32),
        pile_value=jnp.where(at, value, s.pile_value),
        pile_top=jnp.where(at, m.kind, s.pile_top),
        pile_size=s.pile_size + at.astype(i32),
    )
    return s, slot, value


def _ask(
    p: Params, s: State, m: _Move, eleven: jax.Array, made: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Asking round an Eleven (just played, or let stand by the seat asked): its player, whether a seat is asked
    and which, and whether the pile is made 11 with nobody left to ask (or by a number)."""
    n = p.num_players
    ask_offsets = jnp.arange(1, n, dtype=jnp.int32)  # the other seats, clockwise from the Eleven's player
    asking = eleven | m.pass_ans
    e = jnp.where(eleven, m.seat, s.eleven_player)
    asked_so_far = jnp.where(eleven, 0, (m.seat - e) % n)
    ask_seats = (e + ask_offsets) % n
    can_ask = (ask_offsets > asked_so_far) & (s.hand_size[ask_seats] > 0)
    asked = ask_seats[jnp.argmax(can_ask)]
    to_answer = asking & can_ask.any()
    made11 = (made & ~eleven) | (asking & ~can_ask.any())
    return e, to_answer, asked, made11


def _collector(
    p: Params, s: State, m: _Move, over11: jax.Array, made11: jax.Array, e: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Whether the pending pile is collected and by whom, the pick's new holder, and whether a pile made 11 is to
    be given away (without Pick On Me; with it, the pick's holder takes it and passes the pick on)."""
    give_to = (m.seat + m.action - p.give_base + 1) % p.num_players
    if p.pick_on_me:
        collect = over11 | m.is_give | m.quiet_ans | made11
        collector = jnp.where(over11, m.seat, jnp.where(m.is_give, give_to, jnp.where(m.quiet_ans, e, s.pick)))
        pick = jnp.where(made11, (s.pick + 1) % p.num_players, s.pick)
        return collect, collector, pick, jnp.bool_(False)
    collect = over11 | m.is_give | m.quiet_ans
    collector = jnp.where(over11, m.seat, jnp.where(m.is_give, give_to, e))
    return collect, collector, s.pick, made11


def _collect(
    p: Params, s: State, pending: jax.Array, collect: jax.Array, collector: jax.Array
) -> tuple[State, jax.Array, jax.Array]:
    """Collecting: the pending pile leaves the table, face down to the collector; and who gets how many cards."""
    slots, seats = jnp.arange(p.max_piles, dtype=jnp.int32), jnp.arange(p.num_players, dtype=jnp.int32)
    taken = (slots == pending) & collect
    size = jnp.where(taken, s.pile_size, 0).sum()
    gets = (seats == collector) & collect
    s = s._replace(
        collected=s.collected + jnp.where(gets, size, 0),
        pile_value=jnp.where(taken, 0, s.pile_value),
        pile_top=jnp.where(taken, -1, s.pile_top),
        pile_size=jnp.where(taken, 0, s.pile_size),
        pending=jnp.where(collect, -1, pending),
    )
    return s, gets, size


def _next_turn(
    p: Params, s: State, next_turn: jax.Array, to_answer: jax.Array, asked: jax.Array, to_give: jax.Array
) -> tuple[State, jax.Array]:
    """The next turn (``next_turn``): the next seat clockwise after the turn's seat that holds cards; none left ends
    the game. Else the seat asked answers, or the turn's seat gives the pile away. And whether the game ended."""
    i32 = jnp.int32
    turn_offsets = jnp.arange(1, p.num_players + 1, dtype=i32)  # every seat, clockwise after the turn's, itself last
    turn_seats = (s.turn_seat + turn_offsets) % p.num_players
    holds = s.hand_size[turn_seats] > 0
    nxt = turn_seats[jnp.argmax(holds)]
    ended = next_turn & ~holds.any()
    phase = jnp.where(
        ended,
        OVER,
        jnp.where(next_turn, PLAY, jnp.where(to_answer, ANSWER, jnp.where(to_give, GIVE, s.phase))),
    ).astype(i32)
    current = jnp.where(
        ended,
        -1,
        jnp.where(next_turn, nxt, jnp.where(to_answer, asked, jnp.where(to_give, s.turn_seat, s.current))),
    ).astype(i32)
    turn_seat = jnp.where(next_turn & ~ended, nxt, s.turn_seat)
    return s._replace(phase=phase, current=current, turn_seat=turn_seat), ended


def _rewards(
    p: Params, s: State, ended: jax.Array, collect: jax.Array, collector: jax.Array, gets: jax.Array, size: jax.Array
) -> jax.Array:
    """What the step pays each seat, by the ``reward`` keyword (``s``: the state after the step)."""
    f32 = jnp.float32
    if p.reward == "win":
        return jnp.where(ended, jnp.where(fewest(s.collected), 1.0, -1.0), 0.0).astype(f32)
    loss_t = jnp.asarray(p.loss_t)
    if p.reward == "cards":
        return jnp.where(gets, loss_t[size], f32(0.0))
    seats = jnp.arange(p.num_players, dtype=jnp.int32)
    share_t = jnp.asarray(p.share_t)
    return jnp.where(collect, jnp.where(seats == collector, loss_t[size], share_t[size]), f32(0.0))


def step(p: Params, state: State, action: jax.Array) -> State:
    """One flat step: every consequence of ``action`` at once, each selected by ``jnp.where`` on what happened (no
    branches: under vmap a branch would be computed for every game anyway)."""
    m = _move(p, state, action)
    s, slot, value = _play_card(p, state, m)
    # What follows: the pile stays, goes over 11, reaches 11 (the Eleven is answered first).
    at_rest = m.is_play & (value < TARGET)
    over11 = m.is_play & (value > TARGET)
    made = m.is_play & (value == TARGET)
    eleven = made & (m.kind == ELEVEN)
    pending = jnp.where(made | over11, slot, state.pending)
    e, to_answer, asked, made11 = _ask(p, s, m, eleven, made)
    collect, collector, pick, to_give = _collector(p, s, m, over11, made11, e)
    s, gets, size = _collect(p, s, pending, collect, collector)
    s = s._replace(
        eleven_player=jnp.where(collect, -1, jnp.where(eleven, m.seat, state.eleven_player)),
        new_pile=collect | (state.new_pile & ~m.is_play),
        pick=pick,
    )
    s, ended = _next_turn(p, s, at_rest | collect, to_answer, asked, to_give)
    turns = state.turns + m.is_play.astype(jnp.int32)
    terminated = s.phase == OVER
    truncated = jnp.bool_(False) if p.max_turns is None else (~terminated) & (turns >= p.max_turns)
    new = s._replace(
        turns=turns,
        current_player=jnp.where(terminated | truncated, -1, s.current).astype(jnp.int32),
        rewards=_rewards(p, s, ended, collect, collector, gets, size),
        terminated=terminated,
        truncated=truncated,
    )
    return unless_finished(state, new)


# ---------------------------------------------------------------------------------------------------- observations
def _pad(x: jax.Array) -> jax.Array:
    return pad_rows(x, MAXP)


def _public(p: Params, s: State) -> jax.Array:
    """The public part of the scalar env's source vector (``GoesToElevenEnv._write_source``): every field but
    the hands, in the source's order."""
    f32 = jnp.float32
    occ = s.pile_top >= 0
    size_t, third_t, kind_t = jnp.asarray(p.size_t), jnp.asarray(p.third_t), jnp.asarray(p.kind_t)
    fields = {
        "zero": jnp.zeros(1, f32),
        "one": jnp.ones(1, f32),
        "phase": jax.nn.one_hot(s.phase, 4, dtype=f32),
        "pile_present": occ.astype(f32),
        "pile_value": jax.nn.one_hot(jnp.where(occ, s.pile_value, -1), VALUES, dtype=f32),
        "pile_top": jax.nn.one_hot(s.pile_top, K, dtype=f32),
        "pile_size": size_t[s.pile_size],
        "pending": jax.nn.one_hot(s.pending, p.max_piles, dtype=f32),
        "new_pile": (s.new_pile | ~occ.any()).astype(f32)[None],
        "collected": _pad(size_t[s.collected]),
        "hand_size": _pad(third_t[s.hand_size]),
        "draw_size": size_t[s.draw_len][None],
        "played": kind_t[jnp.arange(K, dtype=jnp.int32), s.played],
        "to_act": jax.nn.one_hot(jnp.where(s.phase == OVER, -1, s.current), MAXP, dtype=f32),
        "eleven_player": jax.nn.one_hot(s.eleven_player, MAXP, dtype=f32),
        "pick_holder": jax.nn.one_hot(s.pick, MAXP, dtype=f32),
        "pick_on_me": jnp.full(1, float(p.pick_on_me), f32),
        "deck": jnp.asarray(p.deck_v),
    }
    return jnp.concatenate([fields[name].reshape(-1) for name in p.public_fields])


def observe(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """``seat``'s observation, exactly the scalar env's."""
    # the public fields and this seat's own hand: a seat's view never reads another's
    ext = jnp.concatenate([_public(p, s), jnp.asarray(p.third_t)[s.hands[seat]]])
    moved = ext[
        jnp.asarray(p.var_index)[seat]
    ]  # the entries each seat reads elsewhere (its relative seats): a small gather
    return jnp.concatenate([(ext if by_seat else moved)[a:b] for by_seat, a, b in p.plan])


def _draw_counts(p: Params, s: State) -> jax.Array:
    """int32[11]: the draw pile's cards of each kind."""
    kinds = jnp.arange(K, dtype=jnp.int32)
    in_draw = (jnp.arange(p.total, dtype=jnp.int32) < s.draw_len)[:, None] & (s.draw[:, None] == kinds[None, :])
    return in_draw.sum(axis=0)


def state_vector(p: Params, s: State) -> jax.Array:
    """The scalar env's ``state()`` vector."""
    kinds = jnp.arange(K, dtype=jnp.int32)
    v = jnp.concatenate([_public(p, s), _pad(jnp.asarray(p.third_t)[s.hands]).reshape(-1)])[jnp.asarray(p.state_index)]
    v = v.at[p.draw_kinds_at].set(jnp.asarray(p.kind_t)[kinds, _draw_counts(p, s)])
    top = jnp.where(s.draw_len > 0, s.draw[jnp.maximum(s.draw_len - 1, 0)], -1)
    return v.at[p.next_card_at].set(jax.nn.one_hot(top, K, dtype=jnp.float32))


def hindsight(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """What the end-of-game reveal (the scalar ``outcome()``: ``hands``, ``draw_pile``) shows ``seat``: every
    other seat's hand, the seat ``k`` places left of ``seat`` at block ``k`` (``k = 1 .. n-1``, as the
    observation's relative seats), then the draw pile left, each as its count of each card kind ÷ that kind's
    count in the deck (in [0, 1]; 0 for a kind the deck lacks). A game that ends by the rules ends with every
    hand and the draw pile empty (all zeros); a game cut short (``max_turns``) leaves cards in them. Read on a
    finished game's state. A training target of belief heads only: never an input of a policy."""
    f32 = jnp.float32
    share = jnp.asarray(p.share)
    o = jnp.asarray(seat, jnp.int32)
    hands = s.hands[(o + jnp.arange(1, p.num_players, dtype=jnp.int32)) % p.num_players].astype(f32) * share
    return jnp.concatenate([hands.reshape(-1), _draw_counts(p, s).astype(f32) * share])


def hindsight_blocks(num_players: int) -> tuple[tuple[str, int, str], ...]:
    """The parts of a table's hindsight vector (``Core.hindsight_blocks``): ``hand_k`` (the hand of the seat ``k``
    places left of the observer, ``k = 1 .. n-1``), then ``draw_pile`` (the cards left in it): per card kind, the
    count ÷ that kind's count in the deck."""
    return tuple((f"hand_{k}", K, "binary") for k in range(1, num_players)) + (("draw_pile", K, "binary"),)


def _own_block(full: np.ndarray, src: Any) -> np.ndarray:
    """The env's gather index (into the whole source) rewritten, per observer, into the public fields followed by
    that observer's own hand (the source's ``hands`` field closes the source)."""
    hands = src["hands"]
    assert hands.stop == src.size
    out = full.copy()
    for o, row in enumerate(full):
        private = row >= hands.start
        if not ((row[private] - hands.start) // K == o).all():
            raise AssertionError(f"seat {o}'s observation reads another seat's hand")
        out[o, private] = hands.start + (row[private] - hands.start) % K
    return out


def _plan(index: np.ndarray) -> tuple[list[tuple[bool, int, int]], np.ndarray]:
    """The gather ``index`` (observer x entry) as runs: ``(True, a, b)`` copies source entries ``a:b`` (the same for
    every observer), ``(False, a, b)`` copies entries ``a:b`` of the per-observer gather returned beside it (the
    entries whose source differs by observer). A gather of a few hundred entries costs more than the rules of a
    step; slices of the source are plain copies."""
    same = (index == index[:1]).all(axis=0)
    varying = index[:, ~same]
    plan: list[tuple[bool, int, int]] = []
    v = 0
    for j in range(index.shape[1]):
        if same[j]:
            i = int(index[0, j])
            if plan and plan[-1][0] and plan[-1][2] == i:
                plan[-1] = (True, plan[-1][1], i + 1)
            else:
                plan.append((True, i, i + 1))
        else:
            if plan and not plan[-1][0]:
                plan[-1] = (False, plan[-1][1], v + 1)
            else:
                plan.append((False, v, v + 1))
            v += 1
    return plan, varying


def deal_number(game: rules.GoesToElevenState) -> int:
    """Which deal of its episode a scalar state is on: always 0 (the whole deal is drawn at the start)."""
    return 0


def from_rules(game: rules.GoesToElevenState, core: Core, key: Any = None) -> State:
    """The core's state of a scalar rules state (``key``: unused after the deal; default ``PRNGKey(0)``)."""
    n = core.num_players
    opts = game.options
    i32 = np.int32
    draw = np.zeros(sum(opts.deck), i32)
    draw[: len(game.draw)] = game.draw
    over = game.phase == rules.OVER
    return State(
        hands=jnp.asarray(np.array(game.hands, i32).reshape(n, K)),
        hand_size=jnp.asarray(np.array(game.hand_size, i32)),
        draw=jnp.asarray(draw),
        draw_len=jnp.int32(len(game.draw)),
        pile_value=jnp.asarray(np.array(game.pile_value, i32)),
        pile_top=jnp.asarray(np.array(game.pile_top, i32)),
        pile_size=jnp.asarray(np.array(game.pile_size, i32)),
        collected=jnp.asarray(np.array(game.collected, i32)),
        played=jnp.asarray(np.array(game.played, i32)),
        phase=jnp.int32(game.phase),
        current=jnp.int32(game.current),
        turn_seat=jnp.int32(game.turn_seat),
        new_pile=jnp.bool_(game.new_pile),
        pending=jnp.int32(game.pending),
        eleven_player=jnp.int32(game.eleven_player),
        pick=jnp.int32(game.pick),
        turns=jnp.int32(game.turns),
        key=jax.random.PRNGKey(0) if key is None else key,
        current_player=jnp.int32(-1 if over else game.current),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(over),
        truncated=jnp.bool_(False),
    )
