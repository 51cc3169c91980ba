"""Elevenses: The Guilty Party as a batched, jittable core (:mod:`parlour.envs.jax_core`): the rules of
:mod:`parlour.envs.elevenses.rules` as pure functions of a fixed-shape state, for every player count (2–5) and every
rule keyword (``start_seat``, ``cubes_per_player``, the driver's ``max_turns``). Nothing is refused.

What differs structurally from the scalar implementation:

- **Fixed-size places instead of lists.** A hand is not a list: a card is in seat ``s``'s hand when its location code
  is ``s`` (the scalar hand's storage order is nobody's information: the rules read hands as sets, the encoder
  counts them). The face-down slots are an ``int32[5, 8]`` array of card ids, face-up cards are read from the
  locations, and the per-seat knowledge bits are a ``bool[55, 5]`` array. Per-seat arrays are padded to five seats
  and per-position arrays to six (Mrs Lansdowne at index 5, as the encoding numbers her; the rules number her ``n``).
- **Queues are counts and scans.** The late-suspicion queue (each seat clockwise from the Elevenses player, once per
  cube it earned) is a count per seat: the seat to place is the first clockwise from the Elevenses player with a
  cube left. The passers are a mask: the next to choose is the next passer clockwise from the turn player, and a
  passed card goes to the next passer in the passing direction (a seat with nothing to pass is skipped).
- **One step, one dispatch.** ``step`` is a ``jax.lax.switch`` over the sub-phase handlers (one small pure function
  each, as in the scalar ``HANDLERS``). A handler answers with a small :class:`Delta` rather than a new state: the
  small fields' new values, the cubes, Guilt-card and knowledge changes of the deciding seat, the cards it moves (at
  most five at once: passing) and what follows -- the special action, the end of the turn, the end of the game, the
  arrest. The answer is applied once, and the stages that follow run as pure functions on every table, kept where
  they apply (under ``vmap`` every branch runs anyway). All card moves go through one function that applies the
  scalar ``_move``'s rule of lost track (a card leaving a hand that holds other cards of its back).
- **The tea ranking is counted, not sorted**: a seat's place is the number of seats ranked before it, and a short
  Sugar Bowl's cubes go to the places in order by a cumulative sum.
- **Observations are built in the observer's frame.** The scalar env gathers each seat's observation from a source
  vector that holds every seat's private fields (three times an observation); the core instead brings the state's
  per-seat and per-position arrays into the observer's frame with one gather (seat ``k`` = ``k`` places left, seats
  past the player count read a pad, Mrs Lansdowne stays at 5, as the env's ``rotated_entries`` reads them) and
  builds the fields from them elementwise, in the layout's order. Every float it writes (plates ÷ 30, tallies ÷ 10
  capped at 1, teaspoons ÷ 20, hands ÷ 4, late cubes ÷ 3, hands seen ÷ 5 capped at 1, turns ÷ the rules' cap) is
  looked up in a table computed in NumPy as the scalar env computes it, so the vectors agree bit for bit. The state
  vector is the env's: the env's source, built from the state, read through
  :func:`~parlour.envs.layout.state_from_source`'s index.
- **No fusion across the switch.** XLA on CPU fuses elementwise producers into every element of their consumers;
  the handlers' answer and the observer's gathered arrays are passed through a reduction so they are computed once
  rather than once per card × seat entry they feed (a sevenfold difference in a step).
- **Deals come from ``key``** (shuffles by ranking uniform draws); the scalar env draws from its own generator, so a
  lock-step check hands the core the scalar deal (:data:`DEAL_FIELDS`; a game has one deal).
- **Legal actions only.** ``step`` assumes a legal action (the learner masks; the opponents choose among legal
  actions); the scalar env's ``illegal_action`` keyword has no counterpart.
- The rules' own turn cap (200 turns, :data:`~parlour.envs.elevenses.rules.DEFAULT_MAX_TURNS`: the env's ``max_turns``
  keyword is the driver's and leaves it as it is) ends a game as a truncation with 0 for everyone, as the scalar
  rules do; the driver's ``max_turns`` cap is supported too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs.elevenses import rules
from parlour.envs.elevenses.env import (
    CUBE_SCALE,
    HAND_SCALE,
    LATE_SCALE,
    PLATE_SCALE,
    SEEN_SCALE,
    TEA_SCALE,
    observation_layout,
    source_layout,
    state_layout,
)
from parlour.envs.jax_core import Core, unless_finished
from parlour.envs.layout import state_from_source

ENV_ID = "elevenses_v0"
MAXP = rules.MAX_PLAYERS
POS = MAXP + 1  # plates / Guilt cards: five seats and Mrs Lansdowne (index 5)
MRS = MAXP
K = rules.NUMBERS
C = rules.NUM_CARDS
SLOTS = rules.SLOTS
HAND, DOWN, UP, CENTRE = rules.HAND, rules.DOWN, rules.UP, rules.CENTRE
#: At most this many cards move at once (passing: one per seat).
MOVES = MAXP
#: The rule keywords a core refuses, with the reason (``make_core`` names it): none.
REFUSED: dict[tuple[str, Any], str] = {}
#: Rule-keyword sets the lock-step checks cover besides the defaults (every keyword, each away from its default;
#: valid at every player count: ``cubes_per_player`` 3 is the least a two-player table allows).
VARIANTS: tuple[dict[str, Any], ...] = (
    {"start_seat": 1, "cubes_per_player": 3},
    {"cubes_per_player": 4, "max_turns": 25},
    {"start_seat": 1, "cubes_per_player": 5, "max_turns": 60},
)
#: The fields of :class:`State` that hold the deal (one deal per game: the lock-step check copies it at the start).
DEAL_FIELDS = ("loc", "slot_card", "know", "guests", "guilt")

# What a handler asks for next (the stages after the card moves).
_NEXT, _EFFECT, _END, _GAME_END, _RESOLVE = range(5)

SRC = source_layout()
STATE = state_layout()
OBS = observation_layout()


class State(NamedTuple):
    """One table (per-seat arrays padded to five seats, per-position arrays to six: Mrs Lansdowne at index 5)."""

    loc: jax.Array  # int32[55]: each card's location code (rules.HAND + seat, DOWN + 8 * seat + slot, UP + seat,
    # CENTRE; -1 for the cards of seats not in play)
    slot_card: jax.Array  # int32[5, 8]: the face-down card in each slot, -1 once that position is face up
    know: jax.Array  # bool[55, 5]: the seat knows where the card is
    guests: jax.Array  # int32[5]: each seat's Guest card (-1 past the player count)
    revealed: jax.Array  # bool[5]
    guilt: jax.Array  # int32[6]: 1 where the Guilt card is a Murderer
    guilt_known: jax.Array  # bool[5, 6]: per seat and position
    claims: jax.Array  # int32[5, 6]: rules.NO_CLAIM .. rules.SAID_INNOCENT, per looker and position
    moved: jax.Array  # int32[5, 6]: 0, rules.MOVED, rules.MOVED_OWN, per player and position
    viewed: jax.Array  # int32[5, 5]: hands seen, per player and player
    plates: jax.Array  # int32[6]
    bowl: jax.Array  # int32
    put: jax.Array  # int32[5, 6]
    took: jax.Array  # int32[5, 6]
    phase: jax.Array  # int32: rules.TURN .. rules.OVER
    current: jax.Array  # int32: the seat to decide (-1 once the game has ended by an arrest)
    turn_seat: jax.Array  # int32
    effect: jax.Array  # int32: the number whose special action is under way (0: none)
    rearranged: jax.Array  # int32
    rearrange_card: jax.Array  # int32: -1 none
    first: jax.Array  # int32: a position (6-index) or -1
    cubes_left: jax.Array  # int32
    moves_left: jax.Array  # int32
    looked: jax.Array  # int32: a position (6-index) or -1
    target: jax.Array  # int32: a seat or -1
    taken: jax.Array  # int32: a card or -1
    passers: jax.Array  # bool[5]: the seats passing this round
    pass_dir: jax.Array  # int32: +1 (left) or -1
    pass_choice: jax.Array  # int32[5]: the card each seat chose to pass, -1
    elevenses: jax.Array  # int32: the seat that played the 11, -1
    late: jax.Array  # int32[5]: late-suspicion cubes each seat still has to place
    turns: jax.Array  # int32: turns ended (the rules' and the driver's caps count them)
    key: jax.Array  # unused after the deal (the game has no later draw)
    current_player: jax.Array  # int32: the seat to act, -1 once over
    rewards: jax.Array  # float32[n]: what the last step paid each seat
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool: the rules' or the driver's turn cap


class Moves(NamedTuple):
    """Cards to move at once (the scalar ``_move``): up to :data:`MOVES` of them."""

    cards: jax.Array  # int32[MOVES]
    dests: jax.Array  # int32[MOVES]: location codes
    seers: jax.Array  # bool[MOVES, 5]: the seats that see the card's face
    valid: jax.Array  # bool[MOVES]


class Delta(NamedTuple):
    """What one decision changes (a handler's answer): the small fields' new values, the cubes, Guilt-card and
    knowledge changes of the deciding seat, the cards that move, and what follows (a stage)."""

    phase: jax.Array
    current: jax.Array
    first: jax.Array
    looked: jax.Array
    target: jax.Array
    taken: jax.Array
    rearrange_card: jax.Array
    rearranged: jax.Array
    cubes_left: jax.Array
    moves_left: jax.Array
    effect: jax.Array
    elevenses: jax.Array
    bowl: jax.Array
    plates: jax.Array  # int32[6]: added to the plates
    put: jax.Array  # int32[6]: added to the decider's tally of cubes put on each plate
    took: jax.Array  # int32[6]: ... and taken off
    late_placed: jax.Array  # bool: the decider placed a late cube
    reveal: jax.Array  # bool: the decider's guest is revealed
    pass_choice: jax.Array  # int32[5]
    passers: jax.Array  # bool[5]
    perm: jax.Array  # int32[6]: the Guilt cards' new order (what follows them moves with them)
    swapped: jax.Array  # bool: a Cucumber swap: the decider's swap record becomes ``moved_row``
    moved_row: jax.Array  # int32[6]
    looked_at: jax.Array  # int32: the position whose Guilt card the decider now knows (-1)
    claim_at: jax.Array  # int32: the position the decider's claim is recorded at (-1)
    claim: jax.Array  # int32
    shown: jax.Array  # int32: Ham Sandwiches / Cakes: the hand shown (-1) ...
    viewer: jax.Array  # int32: ... to this seat
    moves: Moves
    then: jax.Array  # int32: the stage that follows


def _table(values: list[float]) -> np.ndarray:
    """Python floats as the scalar env stores them (rounded to float32)."""
    return np.array(values, np.float64).astype(np.float32)


# Float tables, each entry computed as the env computes it.
_PLATE_T = _table([k * PLATE_SCALE for k in range(rules.BOX_CUBES + 1)])
_CUBE_T = _table([min(1.0, k * CUBE_SCALE) for k in range(11)])  # k >= 10 reads 1.0
_TEA_T = _table([k * TEA_SCALE for k in range(21)])
_HAND_T = _table([k * HAND_SCALE for k in range(K + 1)])
_LATE_T = _table([k * LATE_SCALE for k in range(4)])
_SEEN_T = _table([min(1.0, k * SEEN_SCALE) for k in range(6)])  # k >= 5 reads 1.0
_HALF_T = _table([k / 2 for k in range(3)])
_TURN_T = _table([t / rules.DEFAULT_MAX_TURNS for t in range(rules.DEFAULT_MAX_TURNS + 1)])
_TEASPOONS = np.array(rules.TEASPOONS[: K - 1], np.int32)  # per number 1–10
_GUEST_ITEMS = np.zeros((len(rules.GUESTS), K - 1), bool)
for _g, _items in enumerate(rules.GUESTS):
    _GUEST_ITEMS[_g, [i - 1 for i in _items]] = True
#: The phase each special action starts (effect number -> phase; 11 and 0 never start one).
_EFFECT_PHASE = np.array(
    [
        rules.TURN,
        rules.ADD,
        rules.ADD,
        rules.MOVE_FROM,
        rules.MOVE_FROM,
        rules.LOOK,
        rules.PASS,
        rules.PASS,
        rules.HAM_TARGET,
        rules.CAKES_TARGET,
        rules.CUCUMBER_1,
        rules.TURN,
    ],
    np.int32,
)
#: The scalar handler of each phase, by name (``rules.HANDLERS``; Ham Sandwiches and Cakes share theirs): the core's
#: switch has one branch per distinct handler, in the order they first appear, and each phase's branch is derived.
_HANDLER_NAMES = tuple(dict.fromkeys(h.__name__ for h in rules.HANDLERS))
_HANDLER_OF = np.array([_HANDLER_NAMES.index(h.__name__) for h in rules.HANDLERS], np.int32)


def make_core(num_players: int = rules.DEFAULT_PLAYERS, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``elevenses_v0``; ``max_turns``
    is the driver's turn cap, as the env's keyword is)."""
    for (name, value), why in REFUSED.items():
        if options.get(name) == value:
            raise ValueError(f"elevenses jax core: {name}={value!r} is not supported ({why}); use the scalar env")
    opts = rules.Options(num_players=num_players, **options)
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise ValueError(f"elevenses jax core: max_turns={max_turns!r} is not valid: expected an integer >= 1")
    n = opts.num_players
    mrs = n < MAXP
    i32, f32 = jnp.int32, jnp.float32
    seat5 = np.arange(MAXP)
    seat_ok = jnp.asarray(seat5 < n)
    pos_ok_np = np.array([p < n for p in range(MAXP)] + [mrs])
    pos_ok = jnp.asarray(pos_ok_np)
    num_murderers = rules.murderers(n)
    quotas = np.zeros(MAXP, np.int32)
    quotas[:n] = rules.PLACE_CUBES[n]
    cum_before = jnp.asarray(np.concatenate([[0], np.cumsum(quotas)[:-1]]).astype(np.int32))
    quotas_j = jnp.asarray(quotas)
    # Per deciding seat, the absolute card of each card action (-1 where the action names a seat not in play).
    card_of = np.full((MAXP, C), -1, np.int32)
    for s in range(n):
        for a in range(C):
            if a // K < n:
                card_of[s, a] = ((a // K + s) % n) * K + a % K
    card_of_j = jnp.asarray(card_of)
    number0 = jnp.asarray(np.arange(C) % K)  # number - 1 of each card id
    back = jnp.asarray(np.arange(C) // K)
    teaspoons = jnp.asarray(_TEASPOONS)
    guest_items = jnp.asarray(_GUEST_ITEMS)
    effect_phase = jnp.asarray(_EFFECT_PHASE)
    handler_of = jnp.asarray(_HANDLER_OF)
    tables = {
        name: jnp.asarray(t)
        for name, t in (
            ("plate", _PLATE_T),
            ("cube", _CUBE_T),
            ("tea", _TEA_T),
            ("hand", _HAND_T),
            ("late", _LATE_T),
            ("seen", _SEEN_T),
            ("half", _HALF_T),
            ("turn", _TURN_T),
        )
    }
    copied = state_from_source(STATE, SRC, np.arange(SRC.size, dtype=np.float32), n - rules.MIN_PLAYERS)
    state_index = jnp.asarray(copied.astype(np.int32))
    assert SRC["zero"].start == 0 and SRC["one"].start == 1  # the index trick's premise
    rel = np.arange(POS)
    rel_ok = jnp.asarray((rel < n) | ((rel == MRS) & mrs))

    def pos_of_rel(s: jax.Array) -> jax.Array:
        """int32[6]: the position each relative plate / Guilt index names for the deciding seat ``s``."""
        r = jnp.arange(POS, dtype=i32)
        return jnp.where(r == MRS, MRS, (s + r) % n)

    def plate_of(action: jax.Array, s: jax.Array) -> jax.Array:
        """The position (6-index) a plate or Guilt-card action names (``rules.ElevensesState._plate_of``)."""
        r = (action - rules.PLATE_BASE) % POS
        return jnp.where(r == MRS, MRS, (s + r) % n).astype(i32)

    def card_at(s: jax.Array, action: jax.Array) -> jax.Array:
        return card_of_j[s, jnp.clip(action, 0, C - 1)]

    def first_clockwise(base: jax.Array, ok: jax.Array, after: jax.Array | int = -1) -> tuple[jax.Array, jax.Array]:
        """The first seat ``base + j`` (``after < j < n``) clockwise with ``ok``; and whether there is one."""
        j = jnp.arange(MAXP, dtype=i32)
        seat = (base + j) % n
        hit = ok[seat] & (j < n) & (j > after)
        return seat[jnp.argmax(hit)], hit.any()

    def face_up(loc: jax.Array) -> jax.Array:
        """bool[5, 10]: each seat's face-up numbers 1–10."""
        by_number = loc.reshape(MAXP, K)[:, : K - 1]  # back × number
        return (by_number[None] == (UP + jnp.arange(MAXP))[:, None, None]).any(axis=1)

    def tea(st: State) -> jax.Array:
        return (face_up(st.loc) * teaspoons).sum(axis=1) + rules.GUEST_BONUS * st.revealed.astype(i32)

    no_moves = Moves(
        cards=jnp.zeros(MOVES, i32),
        dests=jnp.zeros(MOVES, i32),
        seers=jnp.zeros((MOVES, MAXP), bool),
        valid=jnp.zeros(MOVES, bool),
    )

    def moves_of(*entries: tuple[jax.Array, jax.Array, jax.Array, jax.Array]) -> Moves:
        """A :class:`Moves` of up to MOVES ``(card, destination, seers bool[5], valid)``."""
        pad = MOVES - len(entries)
        return Moves(
            cards=jnp.stack([jnp.asarray(e[0], i32) for e in entries] + [i32(0)] * pad),
            dests=jnp.stack([jnp.asarray(e[1], i32) for e in entries] + [i32(0)] * pad),
            seers=jnp.stack([e[2] for e in entries] + [jnp.zeros(MAXP, bool)] * pad),
            valid=jnp.stack([jnp.asarray(e[3], bool) for e in entries] + [jnp.bool_(False)] * pad),
        )

    def seers_of(*seats: jax.Array) -> jax.Array:
        out = jnp.zeros(MAXP, bool)
        for x in seats:
            out = out | (jnp.arange(MAXP) == x)
        return out

    # ------------------------------------------------------------------------------------------ moving cards
    def apply_moves(st: State, mv: Moves) -> State:
        """``rules.ElevensesState._move``: every card moves at once; a seat that does not see a card's face keeps
        track of it only if it can tell which card left (a card leaving a hand that holds other cards of its back
        is lost track of, with all of them, by every seat but the hand's owner and the seers). One-hot updates rather
        than scatters (cheaper under vmap on CPU)."""
        loc0 = st.loc
        cc = jnp.clip(mv.cards, 0, C - 1)
        src = loc0[cc]
        same = (loc0[None, :] == src[:, None]) & (back[None, :] == (cc // K)[:, None])  # move × card
        hidden = mv.valid & (src >= HAND) & (src < DOWN) & (mv.dests < UP)
        ambiguous = hidden & (same.sum(axis=1) > 1)
        keep = (jnp.arange(MAXP)[None, :] == src[:, None]) | mv.seers
        lost = (ambiguous[:, None, None] & same[:, :, None] & ~keep[:, None, :]).any(axis=0)
        know = st.know & ~lost
        moving = mv.valid[:, None] & (cc[:, None] == jnp.arange(C)[None, :])  # move × card
        moved = moving.any(axis=0)
        seen = (moving[:, :, None] & mv.seers[:, None, :]).any(axis=0)
        public = (moving & (mv.dests >= UP)[:, None]).any(axis=0)
        know = jnp.where(public[:, None], seat_ok[None, :], know | seen)
        loc = jnp.where(moved, (moving * mv.dests[:, None]).sum(axis=0), loc0)
        place = jnp.arange(MAXP * SLOTS)
        off = (mv.valid & (src >= DOWN) & (src < UP))[:, None] & (place[None, :] == (src - DOWN)[:, None])
        on = (mv.valid & (mv.dests >= DOWN) & (mv.dests < UP))[:, None] & (place[None, :] == (mv.dests - DOWN)[:, None])
        flat = jnp.where(off.any(axis=0), -1, st.slot_card.reshape(-1))
        flat = jnp.where(on.any(axis=0), (on * cc[:, None]).sum(axis=0), flat)
        return st._replace(loc=loc, know=know, slot_card=flat.reshape(MAXP, SLOTS))

    # ------------------------------------------------------------------------------------------ handlers
    # A handler answers with a Delta: what the decision changes. The switch then selects among eighteen small
    # answers rather than eighteen whole states (under vmap every branch runs and the answers are selected).
    def oh5(x: jax.Array) -> jax.Array:
        return jnp.arange(MAXP) == x

    def oh6(x: jax.Array) -> jax.Array:
        return jnp.arange(POS) == x

    def base(st: State) -> Delta:
        """The answer of a decision that changes nothing."""
        zero6 = jnp.zeros(POS, i32)
        return Delta(
            phase=st.phase,
            current=st.current,
            first=st.first,
            looked=st.looked,
            target=st.target,
            taken=st.taken,
            rearrange_card=st.rearrange_card,
            rearranged=st.rearranged,
            cubes_left=st.cubes_left,
            moves_left=st.moves_left,
            effect=st.effect,
            elevenses=st.elevenses,
            bowl=st.bowl,
            plates=zero6,
            put=zero6,
            took=zero6,
            late_placed=jnp.bool_(False),
            reveal=jnp.bool_(False),
            pass_choice=st.pass_choice,
            passers=st.passers,
            perm=jnp.arange(POS, dtype=i32),
            swapped=jnp.bool_(False),
            moved_row=zero6,
            looked_at=i32(-1),
            claim_at=i32(-1),
            claim=i32(0),
            shown=i32(-1),
            viewer=i32(-1),
            moves=no_moves,
            then=i32(_NEXT),
        )

    Handler = Callable[[State, jax.Array], Delta]

    def on_turn(st: State, a: jax.Array) -> Delta:
        s = st.current
        card = card_at(s, a)
        k0 = card % K
        is_card = a < C
        eleven = k0 == K - 1
        draws = (k0 >= 1) & (k0 <= SLOTS)  # positions 2–9 have a face-down card to take
        down = st.slot_card[s, jnp.clip(k0 - 1, 0, SLOTS - 1)]
        mv = moves_of(
            (card, jnp.where(eleven, CENTRE, UP + s), jnp.zeros(MAXP, bool), is_card),
            (down, HAND + s, seers_of(s), is_card & draws & ~eleven),
        )
        up_after = face_up(st.loc)[s] | (jnp.arange(K - 1) == k0)
        guest = jnp.clip(st.guests[s], 0, len(rules.GUESTS) - 1)
        complete = (up_after | ~guest_items[guest]).all()
        played = is_card & ~eleven
        reveal = played & ~st.revealed[s] & complete
        then = jnp.where(eleven, _GAME_END, jnp.where(reveal, _NEXT, _EFFECT))
        return base(st)._replace(
            effect=jnp.where(played, k0 + 1, st.effect),
            reveal=reveal,
            phase=jnp.where(a == rules.REARRANGE, rules.REARRANGE_CARD, jnp.where(reveal, rules.SWAP_1, st.phase)),
            elevenses=jnp.where(is_card & eleven, s, st.elevenses),
            moves=mv,
            then=jnp.where(a == rules.REARRANGE, _NEXT, jnp.where(a == rules.PASS_TURN, _END, then)),
        )

    def on_rearrange_card(st: State, a: jax.Array) -> Delta:
        stop = a == rules.STOP
        return base(st)._replace(
            rearrange_card=jnp.where(stop, st.rearrange_card, card_at(st.current, a)),
            phase=jnp.where(stop, st.phase, rules.REARRANGE_SLOT),
            then=jnp.where(stop, _END, _NEXT),
        )

    def on_rearrange_slot(st: State, a: jax.Array) -> Delta:
        s, k = st.current, a - rules.SLOT_BASE
        down = st.slot_card[s, jnp.clip(k, 0, SLOTS - 1)]
        mine = seers_of(s)
        mv = moves_of(
            (st.rearrange_card, DOWN + SLOTS * s + k, mine, jnp.bool_(True)),
            (down, HAND + s, mine, jnp.bool_(True)),
        )
        done = st.rearranged + 1
        return base(st)._replace(
            rearranged=done,
            rearrange_card=i32(-1),
            phase=i32(rules.REARRANGE_CARD),
            moves=mv,
            then=jnp.where(done == 2, _END, _NEXT),
        )

    def choose_first(st: State, a: jax.Array, phase: int, on_stop: int) -> Delta:
        """The first part of a two-part choice (a plate to swap or to move a cube from, a Guilt card), or stop."""
        stop = a == rules.STOP
        return base(st)._replace(
            first=jnp.where(stop, st.first, plate_of(a, st.current)),
            phase=jnp.where(stop, st.phase, phase),
            then=jnp.where(stop, on_stop, _NEXT),
        )

    def on_swap_1(st: State, a: jax.Array) -> Delta:
        return choose_first(st, a, rules.SWAP_2, _EFFECT)

    def on_swap_2(st: State, a: jax.Array) -> Delta:
        x, y = st.first, plate_of(a, st.current)
        px, py = st.plates[x], st.plates[y]
        gain = py - px  # what plate x gains, plate y loses
        to_x, to_y = jnp.maximum(gain, 0), jnp.maximum(-gain, 0)
        return base(st)._replace(
            plates=gain * (oh6(x).astype(i32) - oh6(y)),
            put=to_x * oh6(x) + to_y * oh6(y),
            took=to_y * oh6(x) + to_x * oh6(y),
            first=i32(-1),
            then=i32(_EFFECT),
        )

    def on_add(st: State, a: jax.Array) -> Delta:
        cube = oh6(plate_of(a, st.current)).astype(i32)
        left, bowl = st.cubes_left - 1, st.bowl - 1
        return base(st)._replace(
            plates=cube,
            put=cube,
            bowl=bowl,
            cubes_left=left,
            then=jnp.where((left > 0) & (bowl > 0), _NEXT, _END),
        )

    def on_late(st: State, a: jax.Array) -> Delta:
        cube = oh6(plate_of(a, st.current)).astype(i32)
        late = st.late - oh5(st.current)
        seat, more = first_clockwise(st.elevenses, late > 0)
        return base(st)._replace(
            plates=cube,
            put=cube,
            late_placed=jnp.bool_(True),
            current=jnp.where(more, seat, st.current),
            then=jnp.where(more, _NEXT, _RESOLVE),
        )

    def on_move_from(st: State, a: jax.Array) -> Delta:
        return choose_first(st, a, rules.MOVE_TO, _END)

    def on_move_to(st: State, a: jax.Array) -> Delta:
        off, on = oh6(st.first).astype(i32), oh6(plate_of(a, st.current)).astype(i32)
        left = st.moves_left - 1
        return base(st)._replace(
            plates=on - off,
            took=off,
            put=on,
            first=i32(-1),
            moves_left=left,
            phase=i32(rules.MOVE_FROM),
            then=jnp.where(left > 0, _NEXT, _END),
        )

    def on_look(st: State, a: jax.Array) -> Delta:
        pos = plate_of(a, st.current)
        return base(st)._replace(
            looked=pos, looked_at=pos, claim_at=pos, claim=i32(rules.LOOKED_SILENT), phase=i32(rules.CLAIM)
        )

    def on_claim(st: State, a: jax.Array) -> Delta:
        said = jnp.where(a == rules.CLAIM_MURDERER, rules.SAID_MURDERER, rules.SAID_INNOCENT)
        return base(st)._replace(
            claim_at=jnp.where(a == rules.SILENT, -1, st.looked), claim=said, looked=i32(-1), then=i32(_END)
        )

    def on_cucumber_1(st: State, a: jax.Array) -> Delta:
        return choose_first(st, a, rules.CUCUMBER_2, _NEXT)

    def on_cucumber_2(st: State, a: jax.Array) -> Delta:
        s, x, y = st.current, st.first, plate_of(a, st.current)
        col = jnp.arange(POS)
        perm = jnp.where(col == x, y, jnp.where(col == y, x, col))  # the cards (and what follows them) swap places
        row = st.moved[s][perm]
        # the card that left the player's own place is now at the other one
        row = jnp.where(col == y, jnp.where(x == s, rules.MOVED_OWN, jnp.maximum(row, rules.MOVED)), row)
        row = jnp.where(col == x, jnp.where(y == s, rules.MOVED_OWN, jnp.maximum(row, rules.MOVED)), row)
        return base(st)._replace(perm=perm, swapped=jnp.bool_(True), moved_row=row, first=i32(-1), then=i32(_END))

    def on_pass(st: State, a: jax.Array) -> Delta:
        s = st.current
        choice = jnp.where(oh5(s), card_at(s, a), st.pass_choice)
        nxt, more = first_clockwise(st.turn_seat, st.passers, (s - st.turn_seat) % n)
        # Everyone has chosen: each card goes to the next passer in the passing direction (a seat with nothing to
        # pass slides it on unseen; a lone passer passes to itself).
        j = jnp.arange(1, MAXP + 1, dtype=i32)
        cand = (jnp.arange(MAXP, dtype=i32)[:, None] + st.pass_dir * j[None, :]) % n
        hit = st.passers[cand] & (j[None, :] <= n)
        dest = jnp.take_along_axis(cand, jnp.argmax(hit, axis=1)[:, None], axis=1)[:, 0]
        seers = (jnp.arange(MAXP)[None, :] == jnp.arange(MAXP)[:, None]) | (jnp.arange(MAXP)[None, :] == dest[:, None])
        mv = Moves(cards=jnp.maximum(choice, 0), dests=HAND + dest, seers=seers, valid=st.passers & ~more)
        return base(st)._replace(
            pass_choice=jnp.where(more, choice, -1),
            passers=st.passers & more,
            current=jnp.where(more, nxt, s),
            moves=mv,
            then=jnp.where(more, _NEXT, _END),
        )

    def on_target(st: State, a: jax.Array) -> Delta:
        s, ham = st.current, st.phase == rules.HAM_TARGET
        t = (s + a - rules.SEAT_BASE + 1) % n
        decider = jnp.where(ham, s, t)
        return base(st)._replace(
            target=t,
            shown=jnp.where(ham, t, s),
            viewer=decider,
            phase=jnp.where(ham, rules.HAM_TAKE, rules.CAKES_TAKE),
            current=decider,
        )

    def on_take(st: State, a: jax.Array) -> Delta:
        stop = a == rules.STOP
        s = st.current
        other = jnp.where(st.phase == rules.HAM_TAKE, st.target, st.turn_seat)
        card = card_at(s, a)
        return base(st)._replace(
            moves=moves_of((card, HAND + s, seers_of(s, other), ~stop)),
            taken=jnp.where(stop, st.taken, card),
            phase=jnp.where(stop, st.phase, st.phase + 1),
            then=jnp.where(stop, _END, _NEXT),
        )

    def on_give(st: State, a: jax.Array) -> Delta:
        s = st.current
        other = jnp.where(st.phase == rules.HAM_GIVE, st.target, st.turn_seat)
        mv = moves_of((card_at(s, a), HAND + other, seers_of(s, other), jnp.bool_(True)))
        return base(st)._replace(moves=mv, then=i32(_END))

    def on_over(st: State, a: jax.Array) -> Delta:
        return base(st)

    def materialize(x: jax.Array) -> jax.Array:
        """``x`` itself, through a reduction: XLA on CPU fuses elementwise producers into every element of their
        consumers, so the switch's selection among eighteen answers would be recomputed for each of the hundreds of
        card × seat entries the answer feeds; a reduction's result is stored once (an optimization barrier is
        dropped by the CPU pipeline)."""
        low = jnp.zeros_like(x) if x.dtype == jnp.bool_ else jnp.full_like(x, jnp.iinfo(x.dtype).min)
        return jnp.max(jnp.stack([x, low]), axis=0)

    def strong(tree: Any) -> Any:
        """Every leaf at its own dtype, never weakly typed (the branches of a switch must agree)."""
        return jax.tree.map(lambda x: jax.lax.convert_element_type(x, jnp.asarray(x).dtype), tree)

    def uniform(h: Handler) -> Handler:
        return lambda st, a: strong(h(st, a))

    branches = (
        on_turn,
        on_rearrange_card,
        on_rearrange_slot,
        on_swap_1,
        on_swap_2,
        on_add,
        on_move_from,
        on_move_to,
        on_look,
        on_claim,
        on_pass,
        on_target,
        on_take,
        on_give,
        on_cucumber_1,
        on_cucumber_2,
        on_late,
        on_over,
    )
    # the core's branch of each scalar handler (``on_x`` for ``_on_x``): a renamed or reordered handler fails here
    assert tuple(f"_{h.__name__}" for h in branches) == _HANDLER_NAMES, "the handlers differ from rules.HANDLERS"
    handlers: list[Handler] = [uniform(h) for h in branches]

    def apply(st: State, d: Delta) -> State:
        """A handler's answer applied to the state (the decider is ``st.current``)."""
        me5 = oh5(st.current)
        mine = me5[:, None]
        know = st.know | ((st.loc == d.shown)[:, None] & oh5(d.viewer)[None, :])
        claims = st.claims[:, d.perm]
        moved = st.moved[:, d.perm]
        st = st._replace(
            phase=d.phase,
            current=d.current,
            first=d.first,
            looked=d.looked,
            target=d.target,
            taken=d.taken,
            rearrange_card=d.rearrange_card,
            rearranged=d.rearranged,
            cubes_left=d.cubes_left,
            moves_left=d.moves_left,
            effect=d.effect,
            elevenses=d.elevenses,
            bowl=d.bowl,
            plates=st.plates + d.plates,
            put=st.put + mine * d.put[None, :],
            took=st.took + mine * d.took[None, :],
            late=st.late - (me5 & d.late_placed),
            revealed=st.revealed | (me5 & d.reveal),
            pass_choice=d.pass_choice,
            passers=d.passers,
            guilt=st.guilt[d.perm],
            guilt_known=st.guilt_known[:, d.perm] | (mine & oh6(d.looked_at)[None, :]),
            claims=jnp.where(mine & oh6(d.claim_at)[None, :], d.claim, claims),
            moved=jnp.where(mine & d.swapped, d.moved_row[None, :], moved),
            know=know,
            viewed=st.viewed + (oh5(d.viewer)[:, None] & oh5(d.shown)[None, :]),
        )
        return apply_moves(st, d.moves)

    # ------------------------------------------------------------------------------------------ stages
    def start_effect(st: State) -> tuple[State, jax.Array]:
        """``rules.ElevensesState._start_effect``: the special action of the card just played."""
        k, s = st.effect, st.turn_seat
        adding = (k == rules.SCONES) | (k == rules.CANAPES)
        cubes = jnp.minimum(jnp.where(k == rules.SCONES, rules.SCONE_CUBES, rules.CANAPE_CUBES), st.bowl)
        moving = (k == rules.BISCUITS) | (k == rules.TARTS)
        passing = (k == rules.TARTLETS) | (k == rules.MACAROONS)
        in_hand = (st.loc[None, :] == jnp.arange(MAXP)[:, None]) & (number0 != K - 1)[None, :]
        passers = in_hand.any(axis=1) & seat_ok
        # A seat with nothing to pass says so: the whole table learns its hand (the 11 or nothing).
        shown = (st.loc >= HAND) & (st.loc < DOWN) & ~passers[jnp.clip(st.loc, 0, MAXP - 1)]
        first, any_passer = first_clockwise(s, passers)
        st = st._replace(
            current=jnp.where(passing & any_passer, first, s),
            phase=effect_phase[k],
            cubes_left=jnp.where(adding, cubes, st.cubes_left),
            moves_left=jnp.where(
                moving, jnp.where(k == rules.BISCUITS, rules.BISCUIT_MOVES, rules.TART_MOVES), st.moves_left
            ),
            know=st.know | (passing & shown[:, None] & seat_ok[None, :]),
            passers=jnp.where(passing, passers, st.passers),
            pass_dir=jnp.where(passing, jnp.where(k == rules.TARTLETS, 1, -1), st.pass_dir),
            pass_choice=jnp.where(passing, -1, st.pass_choice),
        )
        end = (adding & (cubes == 0)) | (passing & ~any_passer)
        return st, jnp.where(end, _END, _NEXT)

    def end_turn(st: State) -> State:
        turns = st.turns + 1
        cut = turns >= rules.DEFAULT_MAX_TURNS
        nxt = (st.turn_seat + 1) % n
        return st._replace(
            effect=i32(0),
            rearranged=i32(0),
            rearrange_card=i32(-1),
            first=i32(-1),
            target=i32(-1),
            taken=i32(-1),
            looked=i32(-1),
            turns=turns,
            truncated=cut,
            phase=jnp.where(cut, rules.OVER, rules.TURN),
            turn_seat=jnp.where(cut, st.turn_seat, nxt),
            current=jnp.where(cut, st.current, nxt),
        )

    def game_end(st: State) -> tuple[State, jax.Array]:
        """``rules.ElevensesState._game_end``: late suspicion by tea place (ties: the Elevenses player, then
        clockwise from their left), a short Sugar Bowl serving the higher places first."""
        e = st.elevenses
        t = tea(st)
        seat = jnp.arange(MAXP)
        order = (seat - e) % n
        before = (t[None, :] > t[:, None]) | ((t[None, :] == t[:, None]) & (order[None, :] < order[:, None]))
        place = (before & seat_ok[None, :]).sum(axis=1)
        take = jnp.clip(st.bowl - cum_before, 0, quotas_j)  # per place
        earned = jnp.where(seat_ok, take[jnp.clip(place, 0, MAXP - 1)], 0)
        first, any_late = first_clockwise(e, earned > 0)
        st = st._replace(
            effect=i32(0),
            late=earned,
            bowl=st.bowl - earned.sum(),
            phase=jnp.where(any_late, rules.LATE, st.phase),
            current=jnp.where(any_late, first, st.current),
        )
        return st, jnp.where(any_late, _NEXT, _RESOLVE)

    def resolve(st: State) -> State:
        """``rules.ElevensesState._resolve``: the most suspicious are arrested; if a Murderer is among them, the
        least suspicious innocent still free wins, else the Murderer(s)."""
        e = st.elevenses
        plates = jnp.where(pos_ok, st.plates, -1)
        arrested = pos_ok & (plates == plates.max())
        guilty = pos_ok & (st.guilt == 1)
        caught = (arrested & guilty).any()
        free = pos_ok & ~arrested & ~guilty
        least = jnp.where(free, st.plates, 1 << 20).min()
        p = jnp.arange(POS)
        rank = jnp.where(p == MRS, 2 * MAXP, (p - e) % n)  # Mrs Lansdowne loses every tie
        best = jnp.argmin(jnp.where(free & (st.plates == least), rank, 1 << 20))
        innocent_wins = (p == best) & free.any()
        winners = jnp.where(caught, innocent_wins, guilty)[:n]
        return st._replace(rewards=jnp.where(winners, 1.0, -1.0).astype(f32), phase=i32(rules.OVER), current=i32(-1))

    def merge(pred: jax.Array, new: State, old: State, fields: tuple[str, ...]) -> State:
        """``old`` with ``fields`` taken from ``new`` where ``pred`` (a stage changes only these)."""
        return old._replace(**{f: jnp.where(pred, getattr(new, f), getattr(old, f)) for f in fields})

    effect_fields = ("current", "phase", "cubes_left", "moves_left", "know", "passers", "pass_dir", "pass_choice")
    end_fields = (
        "effect",
        "rearranged",
        "rearrange_card",
        "first",
        "target",
        "taken",
        "looked",
        "turns",
        "truncated",
        "phase",
        "turn_seat",
        "current",
    )
    game_end_fields = ("effect", "late", "bowl", "phase", "current")
    resolve_fields = ("rewards", "phase", "current")

    def step(state: State, action: jax.Array) -> State:
        action = jnp.asarray(action, i32)
        st = state._replace(rewards=jnp.zeros(n, f32))
        d = jax.tree.map(materialize, jax.lax.switch(handler_of[st.phase], handlers, st, action))
        st = apply(st, d)
        nxt = d.then
        # The stages after the decision, each run on every table and kept where it applies (a cond under vmap
        # would run both branches and select the whole state).
        new, then = start_effect(st)
        go = nxt == _EFFECT
        st, nxt = merge(go, new, st, effect_fields), jnp.where(go, then, nxt)
        st = merge(nxt == _END, end_turn(st), st, end_fields)
        new, then = game_end(st)
        go = nxt == _GAME_END
        st, nxt = merge(go, new, st, game_end_fields), jnp.where(go, then, nxt)
        st = merge(nxt == _RESOLVE, resolve(st), st, resolve_fields)
        over = st.phase == rules.OVER
        terminated = over & ~st.truncated
        truncated = st.truncated if max_turns is None else st.truncated | (~over & (st.turns >= max_turns))
        st = st._replace(
            terminated=terminated,
            truncated=truncated,
            current_player=jnp.where(terminated | truncated, -1, st.current).astype(i32),
        )
        return unless_finished(state, st)

    # ------------------------------------------------------------------------------------------ legal actions
    def legal_mask(st: State) -> jax.Array:
        s, ph = st.current, st.phase
        cards = card_of_j[jnp.clip(s, 0, MAXP - 1)]  # per card action, its card
        valid = cards >= 0
        cc = jnp.clip(cards, 0, C - 1)
        k0 = cc % K
        not_eleven = k0 != K - 1
        in_hand = valid & (st.loc[cc] == s)
        up = face_up(st.loc)[jnp.clip(s, 0, MAXP - 1)]
        playable = jnp.where(not_eleven, ~up[jnp.clip(k0, 0, K - 2)], up.sum() >= rules.ELEVENSES_NEEDS)
        other = jnp.where(ph == rules.HAM_TAKE, st.target, st.turn_seat)
        can_give = (in_hand & not_eleven).any()
        rearrange_ok = rules.REARRANGE_ELEVENSES or not_eleven
        card_part = jnp.select(
            [
                ph == rules.TURN,
                ph == rules.REARRANGE_CARD,
                (ph == rules.PASS) | (ph == rules.HAM_GIVE) | (ph == rules.CAKES_GIVE),
                (ph == rules.HAM_TAKE) | (ph == rules.CAKES_TAKE),
            ],
            [
                in_hand & playable,
                in_hand & rearrange_ok,
                in_hand & not_eleven & (cc != st.taken),
                valid & (st.loc[cc] == other) & not_eleven & can_give,
            ],
            jnp.zeros(C, bool),
        )
        slots = st.slot_card[jnp.clip(s, 0, MAXP - 1)] >= 0
        can_rearrange = slots.any() & (in_hand & rearrange_ok).any()
        turn_plays = (ph == rules.TURN) & (card_part.any() | can_rearrange)
        slot_part = (ph == rules.REARRANGE_SLOT) & slots
        where = pos_of_rel(s)
        plates_ph = (
            (ph == rules.SWAP_1) | (ph == rules.SWAP_2) | (ph == rules.ADD) | (ph == rules.LATE) | (ph == rules.MOVE_TO)
        )
        not_first = where != st.first
        plate_part = rel_ok & jnp.where(plates_ph, not_first, (ph == rules.MOVE_FROM) & (st.plates[where] > 0))
        guilt_part = rel_ok & jnp.select(
            [ph == rules.LOOK, ph == rules.CUCUMBER_1, ph == rules.CUCUMBER_2],
            [where != s, jnp.ones(POS, bool), not_first],
            jnp.zeros(POS, bool),
        )
        seat_part = ((ph == rules.HAM_TARGET) | (ph == rules.CAKES_TARGET)) & (jnp.arange(1, MAXP) < n)
        stop = (
            ((ph == rules.REARRANGE_CARD) & (st.rearranged > 0))
            | (ph == rules.SWAP_1)
            | ((ph == rules.MOVE_FROM) & (st.effect == rules.BISCUITS))
            | (ph == rules.HAM_TAKE)
            | (ph == rules.CAKES_TAKE)
        )
        claim = ph == rules.CLAIM
        mask = jnp.concatenate(
            [
                card_part,
                slot_part,
                plate_part,
                guilt_part,
                seat_part,
                jnp.stack(
                    [
                        (ph == rules.TURN) & can_rearrange,
                        stop,
                        claim,
                        claim,
                        claim,
                        (ph == rules.TURN) & ~turn_plays,
                    ]
                ),
            ]
        )
        return mask & ~(st.terminated | st.truncated)

    # ------------------------------------------------------------------------------------------ observations
    def onehot(x: jax.Array, size: int) -> jax.Array:
        return jax.nn.one_hot(x, size, dtype=f32)

    def source(st: State) -> jax.Array:
        """The scalar env's source vector of this state (``ElevensesEnv._write_source``)."""
        seat = jnp.arange(MAXP)
        by_card = st.loc.reshape(MAXP, K)  # back × number
        know_t = st.know.T.reshape(MAXP, MAXP, K)  # seat × back × number
        in_hand = by_card[:, :, None] == seat  # back × number × hand
        sc = st.slot_card
        sc0 = jnp.clip(sc, 0, C - 1)
        down_known = st.know[sc0] & (sc >= 0)[:, :, None]  # seat' × slot × seat
        down_number = onehot(jnp.where(sc >= 0, sc % K, -1), K)  # seat' × slot × number
        hand_count = (by_card[None] == seat[:, None, None]).sum(axis=2)  # hand × back
        up = by_card[None, :, : K - 1] == (UP + seat)[:, None, None]  # seat × back × number
        guests = onehot(st.guests, len(rules.GUESTS))
        over = st.phase == rules.OVER
        active = st.effect > 0
        passers = st.passers & active
        chosen = onehot(jnp.where(passers, st.pass_choice, -1), C)
        chosen = chosen.at[jnp.where(st.rearrange_card >= 0, st.current, MAXP)].set(
            onehot(st.rearrange_card, C), mode="drop"
        )
        tb = tables
        put = jnp.where(pos_ok, tb["cube"][jnp.minimum(st.put, 10)], 0.0)
        took = jnp.where(pos_ok, tb["cube"][jnp.minimum(st.took, 10)], 0.0)
        progress = jnp.stack(
            [
                tb["half"][jnp.clip(st.rearranged, 0, 2)],
                jnp.where(active & (st.phase == rules.ADD), tb["half"][jnp.clip(st.cubes_left, 0, 2)], 0.0),
                jnp.where(
                    active & ((st.phase == rules.MOVE_FROM) | (st.phase == rules.MOVE_TO)),
                    tb["half"][jnp.clip(st.moves_left, 0, 2)],
                    0.0,
                ),
                tb["turn"][jnp.clip(st.turns, 0, rules.DEFAULT_MAX_TURNS)],
            ]
        )
        parts = [
            jnp.zeros(1, f32),
            jnp.ones(1, f32),
            (know_t[:, :, :, None] & in_hand[None]).astype(f32),
            (down_known.transpose(2, 0, 1)[..., None] * down_number[None]),
            onehot(sc // K, MAXP),
            tb["hand"][hand_count],
            up.transpose(0, 2, 1).astype(f32),
            guests,
            guests * st.revealed[:, None],
            jnp.where(seat_ok, tb["tea"][tea(st)], 0.0),
            st.guilt_known[:, :, None] * onehot(st.guilt, 2)[None],
            onehot(st.claims - 1, 3),
            onehot(st.moved - 1, 2),
            tb["seen"][jnp.minimum(st.viewed, 5)],
            jnp.where(pos_ok, tb["plate"][st.plates], 0.0),
            put,
            took,
            tb["late"][st.late],
            tb["plate"][st.bowl][None],
            onehot(st.phase, rules.NUM_PHASES),
            onehot(st.effect - 1, K),
            onehot(jnp.where(over, -1, st.current), MAXP),
            onehot(jnp.where(over, -1, st.turn_seat), MAXP),
            onehot(st.elevenses, MAXP),
            passers.astype(f32),
            (passers & (st.pass_choice >= 0)).astype(f32),
            onehot(jnp.where(active, st.target, -1), MAXP),
            onehot(st.first, POS),
            onehot(jnp.where(active, st.looked, -1), POS),
            chosen,
            progress,
        ]
        return jnp.concatenate([p.reshape(-1).astype(f32) for p in parts])

    # The observation itself is built in the observer's frame (the source holds every seat's private fields, three
    # times the observation): one gather brings every per-seat and per-position array into that frame -- entry k
    # is the seat k places left, seats past the player count read a pad, Mrs Lansdowne stays at 5, as the env's
    # ``rotated_entries`` reads them -- and the fields are built from it elementwise, in the layout's order.
    packed: list[tuple[str, tuple[int, ...]]] = [
        ("tea", (MAXP,)),
        ("guests", (MAXP,)),
        ("revealed", (MAXP,)),
        ("late", (MAXP,)),
        ("passers", (MAXP,)),
        ("pass_choice", (MAXP,)),
        ("plates", (POS,)),
        ("guilt", (POS,)),
        ("put", (MAXP, POS)),
        ("took", (MAXP, POS)),
        ("claims", (MAXP, POS)),
        ("moved", (MAXP, POS)),
        ("guilt_known", (MAXP, POS)),
        ("viewed", (MAXP, MAXP)),
        ("loc", (C,)),
        ("known", (C,)),  # the observer's column of ``know``
        ("slot_card", (MAXP, SLOTS)),
    ]
    at: dict[str, int] = {}
    size = 0
    for name, shape in packed:
        at[name] = size
        size += int(np.prod(shape))
    pad0, pad_neg = size, size + 1  # entries reading 0 and -1

    def frame_index(o: int) -> np.ndarray:
        rot5 = [(o + k) % n if k < n else None for k in range(MAXP)]
        rot6 = [*rot5, MRS if mrs else None]
        out: list[int] = []

        def seats(name: str, rot: list[int | None], pad: int) -> None:
            out.extend(pad if r is None else at[name] + r for r in rot)

        def grid(name: str, rows: list[int | None], cols: list[int | None], width: int) -> None:
            for r in rows:
                out.extend(pad0 if r is None or c is None else at[name] + r * width + c for c in cols)

        seats("tea", rot5, pad0)
        seats("guests", rot5, pad_neg)
        seats("revealed", rot5, pad0)
        seats("late", rot5, pad0)
        seats("passers", rot5, pad0)
        seats("pass_choice", rot5, pad_neg)
        seats("plates", rot6, pad0)
        seats("guilt", rot6, pad0)
        for name in ("put", "took", "claims", "moved"):
            grid(name, rot5, rot6, POS)
        grid("guilt_known", [o], rot6, POS)
        grid("viewed", rot5, rot5, MAXP)
        for r in rot5:  # the cards by back relative to the observer
            out.extend(pad_neg if r is None else at["loc"] + r * K + k for k in range(K))
        for r in rot5:
            out.extend(pad0 if r is None else at["known"] + r * K + k for k in range(K))
        for r in rot5:
            out.extend(pad_neg if r is None else at["slot_card"] + r * SLOTS + j for j in range(SLOTS))
        return np.array(out, np.int32)

    frames = jnp.asarray(np.stack([frame_index(o) for o in range(n)]))
    splits = np.cumsum([MAXP] * 6 + [POS] * 2 + [MAXP * POS] * 4 + [POS, MAXP * MAXP, C, C])
    num_players_hot = np.zeros(4, np.float32)
    num_players_hot[n - rules.MIN_PLAYERS] = 1.0

    def observe(st: State, seat: jax.Array) -> jax.Array:
        o = jnp.asarray(seat, i32)
        computed = {"tea": tea(st), "known": (st.know & (jnp.arange(MAXP) == o)).any(axis=1)}
        pack = jnp.concatenate(
            [
                jnp.asarray(computed[name] if name in computed else getattr(st, name), i32).reshape(-1)
                for name, _ in packed
            ]
            + [jnp.array([0, -1], i32)]
        )
        pack = materialize(pack)
        r = materialize(pack[frames[o]])
        (tea_r, guests_r, rev_r, late_r, passers_r, choice_r, plates_r, guilt_r, put_r, took_r, claims_r, moved_r,
         gk_r, viewed_r, loc_r, know_r, slot_r) = jnp.split(r, splits)  # fmt: skip
        sc = slot_r.reshape(MAXP, SLOTS)
        know_sc = pack[jnp.where(sc >= 0, at["known"] + sc, pad0)]  # the observer knows that card
        seat5 = jnp.arange(MAXP)

        def rel(x: jax.Array) -> jax.Array:
            return jnp.where(x >= 0, (x - o) % n, -1)

        def rel6(x: jax.Array) -> jax.Array:
            return jnp.where(x == MRS, MRS, rel(x))

        loc_r = loc_r.reshape(MAXP, K)
        is_hand = (loc_r >= HAND) & (loc_r < DOWN)
        hand_of = jnp.where(is_hand, (loc_r - o) % n, -1)[:, :, None] == seat5  # back × number × hand
        is_up = (loc_r >= UP) & (loc_r < CENTRE)
        up_at = jnp.where(is_up, (loc_r - UP - o) % n, -1)[:, : K - 1]  # back × number
        over = st.phase == rules.OVER
        active = st.effect > 0
        passing = passers_r.astype(bool) & active
        mine = passing[0] & (choice_r[0] >= 0)
        chosen = jnp.where(mine, choice_r[0], jnp.where(st.current == o, st.rearrange_card, -1))
        chosen_rel = jnp.where(chosen >= 0, rel(chosen // K) * K + chosen % K, -1)
        tb = tables
        progress = jnp.stack(
            [
                tb["half"][jnp.clip(st.rearranged, 0, 2)],
                jnp.where(active & (st.phase == rules.ADD), tb["half"][jnp.clip(st.cubes_left, 0, 2)], 0.0),
                jnp.where(
                    active & ((st.phase == rules.MOVE_FROM) | (st.phase == rules.MOVE_TO)),
                    tb["half"][jnp.clip(st.moves_left, 0, 2)],
                    0.0,
                ),
                tb["turn"][jnp.clip(st.turns, 0, rules.DEFAULT_MAX_TURNS)],
            ]
        )
        guests = onehot(guests_r, len(rules.GUESTS))
        parts = [
            jnp.asarray(num_players_hot),
            guests[0],
            know_r.reshape(MAXP, K, 1).astype(bool) & hand_of,
            (know_sc.astype(bool) & (sc >= 0))[:, :, None] & ((sc % K)[:, :, None] == jnp.arange(K)),
            gk_r.astype(bool)[:, None] & (guilt_r[:, None] == jnp.arange(2)),
            onehot(chosen_rel, C),
            jnp.where(sc >= 0, rel(sc // K), -1)[:, :, None] == seat5,
            hand_of.sum(axis=1).T.astype(f32) * HAND_SCALE,  # a count ÷ 4: exact in float32
            (up_at[None] == seat5[:, None, None]).transpose(0, 2, 1),
            guests * rev_r[:, None],
            tb["tea"][tea_r],
            tb["plate"][plates_r],
            tb["cube"][jnp.minimum(put_r, 10)],
            tb["cube"][jnp.minimum(took_r, 10)],
            onehot(claims_r - 1, 3),
            onehot(moved_r - 1, 2),
            tb["seen"][jnp.minimum(viewed_r, 5)],
            tb["late"][late_r],
            tb["plate"][st.bowl][None],
            onehot(st.phase, rules.NUM_PHASES),
            onehot(st.effect - 1, K),
            onehot(jnp.where(over, -1, rel(st.current)), MAXP),
            onehot(jnp.where(over, -1, rel(st.turn_seat)), MAXP),
            onehot(rel(st.elevenses), MAXP),
            passing,
            passing & (choice_r >= 0),
            onehot(jnp.where(active, rel(st.target), -1), MAXP),
            onehot(rel6(st.first), POS),
            onehot(jnp.where(active, rel6(st.looked), -1), POS),
            progress,
        ]
        return jnp.concatenate([jnp.asarray(p, f32).reshape(-1) for p in parts])

    def state_vector(st: State) -> jax.Array:
        v = source(st)[state_index]
        seat = jnp.arange(MAXP)
        by_card = st.loc.reshape(MAXP, K)
        hands = (by_card[None] == seat[:, None, None]).astype(f32)  # seat × back × number
        sc = st.slot_card
        down = onehot(jnp.where(sc >= 0, sc % K, -1), K)
        v = v.at[STATE["guests"]].set(onehot(st.guests, len(rules.GUESTS)).reshape(-1))
        v = v.at[STATE["guilt"]].set(jnp.where(pos_ok, st.guilt, 0).astype(f32))
        v = v.at[STATE["hands"]].set(hands.reshape(-1))
        return v.at[STATE["face_down"]].set(down.reshape(-1))

    # ------------------------------------------------------------------------------------------ the deal
    order = np.arange(K)
    before_k = jnp.asarray(order[None, :] < order[:, None])

    def ranks(u: jax.Array, before: jax.Array) -> jax.Array:
        """A uniform permutation of each row: the ranks of independent random words, ties broken by position.
        Counting comparisons costs a fraction of a sort on CPU."""
        lower = (u[..., None, :] < u[..., :, None]) | ((u[..., None, :] == u[..., :, None]) & before)
        return lower.sum(axis=-1).astype(i32)

    g = len(rules.GUESTS)
    before_g = jnp.asarray(np.arange(g)[None, :] < np.arange(g)[:, None])
    before_p = jnp.asarray(np.arange(POS)[None, :] < np.arange(POS)[:, None])
    start_plates = np.zeros(POS, np.int32)
    for i in range(n):
        start_plates[(opts.start_seat + i) % n] = rules.START_CUBES[min(i, 2)]
    if mrs:
        start_plates[MRS] = rules.MRS_START_CUBES
    own_guilt = np.zeros((MAXP, POS), bool)
    own_guilt[np.arange(n), np.arange(n)] = True

    def init(key: jax.Array) -> State:
        # One draw for the whole deal: each seat's shuffle of its eleven cards, the guests, the Guilt cards.
        u = jax.random.bits(key, (MAXP * K + g + POS,))
        rank = ranks(u[: MAXP * K].reshape(MAXP, K), before_k)  # rank < 8: that slot; else the hand
        seat_col = jnp.arange(MAXP)[:, None]
        in_play = seat_col < n
        loc = jnp.where(rank < SLOTS, DOWN + SLOTS * seat_col + rank, HAND + seat_col)
        loc = jnp.where(in_play, loc, -1).reshape(-1)
        # the card of each slot: the one whose rank is the slot (one-hot, not a scatter: cheaper under vmap)
        hit = rank[:, None, :] == jnp.arange(SLOTS)[None, :, None]  # seat × slot × number
        slot_card = jnp.where(in_play, (hit * jnp.arange(K)).sum(axis=2) + seat_col * K, -1)
        know = (loc[:, None] == jnp.arange(MAXP)[None, :]) & (loc[:, None] < DOWN)
        guest_rank = ranks(u[MAXP * K : MAXP * K + g], before_g)
        guests = jnp.argmax(guest_rank[None, :] == jnp.arange(MAXP)[:, None], axis=1).astype(i32)
        guests = jnp.where(seat_ok, guests, -1)
        w = u[MAXP * K + g :]
        # ranks among the positions in play only: a uniform choice of the Murderer positions
        lower = ((w[None, :] < w[:, None]) | ((w[None, :] == w[:, None]) & before_p)) & pos_ok[None, :]
        guilt = (pos_ok & (lower.sum(axis=1) < num_murderers)).astype(i32)
        zero5 = jnp.zeros(MAXP, i32)
        return State(
            loc=loc.astype(i32),
            slot_card=slot_card,
            know=know,
            guests=guests,
            revealed=jnp.zeros(MAXP, bool),
            guilt=guilt,
            guilt_known=jnp.asarray(own_guilt),
            claims=jnp.zeros((MAXP, POS), i32),
            moved=jnp.zeros((MAXP, POS), i32),
            viewed=jnp.zeros((MAXP, MAXP), i32),
            plates=jnp.asarray(start_plates),
            bowl=i32(opts.cubes_per_player * n - int(start_plates.sum())),
            put=jnp.zeros((MAXP, POS), i32),
            took=jnp.zeros((MAXP, POS), i32),
            phase=i32(rules.TURN),
            current=i32(opts.start_seat),
            turn_seat=i32(opts.start_seat),
            effect=i32(0),
            rearranged=i32(0),
            rearrange_card=i32(-1),
            first=i32(-1),
            cubes_left=i32(0),
            moves_left=i32(0),
            looked=i32(-1),
            target=i32(-1),
            taken=i32(-1),
            passers=jnp.zeros(MAXP, bool),
            pass_dir=i32(1),
            pass_choice=zero5 - 1,
            elevenses=i32(-1),
            late=zero5,
            turns=i32(0),
            key=key,
            current_player=i32(opts.start_seat),
            rewards=jnp.zeros(n, f32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
        )

    # ------------------------------------------------------------------------------------------ hindsight
    rel_pos = np.arange(n + mrs)
    others = np.arange(1, n)

    def hindsight(st: State, seat: jax.Array) -> jax.Array:
        """What the end-of-game reveal (the scalar ``outcome()``: ``murderers``, ``guests``) shows ``seat``: for each
        position, whether its Guilt card is a Murderer -- the seat ``k`` places left of ``seat`` at entry ``k``
        (``k = 0 .. n-1``, itself first, as the observation's relative seats), Mrs Lansdowne last (entry ``n``, with
        fewer than five players); then every other seat's Guest card, the seat ``k`` places left at block ``k``
        (``k = 1 .. n-1``), one-hot over the six guests. Read on a finished game's state (the Guilt cards where they
        lie at the end, as the rules reveal them). A training target of belief heads only: never an input of a
        policy."""
        o = jnp.asarray(seat, i32)
        pos = jnp.where(rel_pos == n, MRS, (o + rel_pos) % n)
        guilty = st.guilt[pos].astype(f32)
        guests = jax.nn.one_hot(st.guests[(o + others) % n], len(rules.GUESTS), dtype=f32).reshape(-1)
        return jnp.concatenate([guilty, guests])

    return Core(
        env_id=ENV_ID,
        num_players=n,
        num_actions=rules.NUM_ACTIONS,
        obs_size=OBS.size,
        state_size=STATE.size,
        init=init,
        step=step,
        observe=observe,
        legal_mask=legal_mask,
        state_vector=state_vector,
        hindsight=hindsight,
        hindsight_blocks=hindsight_blocks(n),
    )


def hindsight_blocks(num_players: int) -> tuple[tuple[str, int, str], ...]:
    """The parts of a table's hindsight vector (``Core.hindsight_blocks``): ``murderers`` (per position, the
    observer's relative seats ``0 .. n-1`` then Mrs Lansdowne with fewer than five players: whether its Guilt card
    is a Murderer), then ``guest_k`` (the Guest card of the seat ``k`` places left of the observer, ``k = 1 ..
    n-1``; one-hot over the six guests)."""
    positions = num_players + (num_players < MAXP)
    return (("murderers", positions, "binary"),) + tuple(
        (f"guest_{k}", len(rules.GUESTS), "class") for k in range(1, num_players)
    )


def deal_number(game: rules.ElevensesState) -> int:
    """Which deal of its episode a scalar state is on: a game has one."""
    return 0


def _pos(game: rules.ElevensesState, pos: int) -> int:
    """The 6-index of a rules position (Mrs Lansdowne is ``n`` in the rules, 5 here), -1 kept."""
    return MRS if pos == game.n else pos


def from_rules(game: rules.ElevensesState, core: Core, key: Any = None) -> State:
    """The core's state of a scalar rules state (``key``: unused after the deal; default ``PRNGKey(0)``)."""
    n = core.num_players
    i32 = np.int32
    slot_card = np.full((MAXP, SLOTS), -1, i32)
    slot_card[:n] = np.array(game.slots, i32)
    know = np.array([[bool(game.knowers[c] >> s & 1) for s in range(MAXP)] for c in range(C)])
    guests = np.full(MAXP, -1, i32)
    guests[:n] = game.guests
    revealed = np.zeros(MAXP, bool)
    revealed[:n] = game.revealed
    guilt = np.zeros(POS, i32)
    guilt_known = np.zeros((MAXP, POS), bool)
    claims = np.zeros((MAXP, POS), i32)
    moved = np.zeros((MAXP, POS), i32)
    plates = np.zeros(POS, i32)
    put = np.zeros((MAXP, POS), i32)
    took = np.zeros((MAXP, POS), i32)
    for pos in range(game.positions):
        p = _pos(game, pos)
        guilt[p] = game.guilt[pos]
        plates[p] = game.plates[pos]
        for s in range(n):
            guilt_known[s, p] = bool(game.guilt_known[s][pos])
            claims[s, p] = game.claims[s][pos]
            moved[s, p] = game.moved[s][pos]
            put[s, p] = game.put[s][pos]
            took[s, p] = game.took[s][pos]
    viewed = np.zeros((MAXP, MAXP), i32)
    viewed[:n, :n] = np.array(game.viewed, i32)
    passers = np.zeros(MAXP, bool)
    passers[list(game.passers)] = True
    pass_choice = np.full(MAXP, -1, i32)
    if game.pass_choice:
        pass_choice[:n] = game.pass_choice
    late = np.zeros(MAXP, i32)
    for x in game.late:
        late[x] += 1
    over = game.phase == rules.OVER
    return State(
        loc=jnp.asarray(np.array(game.location, i32)),
        slot_card=jnp.asarray(slot_card),
        know=jnp.asarray(know),
        guests=jnp.asarray(guests),
        revealed=jnp.asarray(revealed),
        guilt=jnp.asarray(guilt),
        guilt_known=jnp.asarray(guilt_known),
        claims=jnp.asarray(claims),
        moved=jnp.asarray(moved),
        viewed=jnp.asarray(viewed),
        plates=jnp.asarray(plates),
        bowl=jnp.int32(game.bowl),
        put=jnp.asarray(put),
        took=jnp.asarray(took),
        phase=jnp.int32(game.phase),
        current=jnp.int32(game.current),
        turn_seat=jnp.int32(game.turn_seat),
        effect=jnp.int32(game.effect),
        rearranged=jnp.int32(game.rearranged),
        rearrange_card=jnp.int32(game.rearrange_card),
        first=jnp.int32(-1 if game.first < 0 else _pos(game, game.first)),
        cubes_left=jnp.int32(game.cubes_left),
        moves_left=jnp.int32(game.moves_left),
        looked=jnp.int32(-1 if game.looked < 0 else _pos(game, game.looked)),
        target=jnp.int32(game.target),
        taken=jnp.int32(game.taken),
        passers=jnp.asarray(passers),
        pass_dir=jnp.int32(game.pass_dir),
        pass_choice=jnp.asarray(pass_choice),
        elevenses=jnp.int32(game.elevenses),
        late=jnp.asarray(late),
        turns=jnp.int32(game.turns),
        key=jax.random.PRNGKey(0) if key is None else key,
        current_player=jnp.int32(-1 if over else game.current),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(over and not game.truncated),
        truncated=jnp.bool_(game.truncated),
    )
