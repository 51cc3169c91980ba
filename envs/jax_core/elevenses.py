"""Elevenses: The Guilty Party as a batched, jittable core (:mod:`parlour.envs.jax_core`): the rules of
:mod:`parlour.envs.elevenses.rules` as pure functions of a fixed-shape state, for every player count (2–5) and every
rule keyword (``start_seat``, ``cubes_per_player``, the driver's ``max_turns``). Nothing is refused.

The core is module-level functions over a table's static :class:`Params` (as pgx writes its games):
:func:`params` computes, once, everything the player count and the rule keywords fix (Python numbers and NumPy
tables); :func:`init`, :func:`step`, :func:`observe`, :func:`legal_mask`, :func:`state_vector` and
:func:`hindsight` take it first, as do the helpers that need it; :func:`make_core` validates, builds the
parameters and binds them with :func:`functools.partial`.

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

import functools
import sys
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
from parlour.envs.jax_core import Core, bound, unless_finished
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
NUM_GUESTS = len(rules.GUESTS)
_NUMBER0 = np.arange(C) % K  # number - 1 of each card id
_BACK = np.arange(C) // K
# The deal's tie-breaks by position: entry [i, j] says j comes before i.
_BEFORE_K = np.arange(K)[None, :] < np.arange(K)[:, None]
_BEFORE_G = np.arange(NUM_GUESTS)[None, :] < np.arange(NUM_GUESTS)[:, None]
_BEFORE_P = np.arange(POS)[None, :] < np.arange(POS)[:, None]
assert SRC["zero"].start == 0 and SRC["one"].start == 1  # the state index trick's premise (see params)
i32, f32 = jnp.int32, jnp.float32


class Params(NamedTuple):
    """What a table's core fixes once, from the player count and the rule keywords (:func:`params`). Every core
    function takes it first; :func:`make_core` binds it with :func:`functools.partial`. The NumPy tables become
    constants of the traced functions. Not hashable (it holds arrays): bind it, never pass it as a static argument."""

    num_players: int  # n: the seats in play
    mrs: bool  # Mrs Lansdowne has a plate and a Guilt card (fewer than five players)
    max_turns: int | None  # the driver's turn cap (None: the rules' own cap only)
    start_seat: int  # the seat that takes the first turn
    start_bowl: int  # the Sugar Bowl's cubes once the starting plates are filled
    num_murderers: int  # Murderer Guilt cards among the positions in play
    seat_ok: np.ndarray  # bool[5]: the seat is in play
    pos_ok: np.ndarray  # bool[6]: the position (plate, Guilt card) is in play; relative positions alike
    quotas: np.ndarray  # int32[5]: the late-suspicion cubes each tea place earns (rules.PLACE_CUBES)
    cum_before: np.ndarray  # int32[5]: the cubes the places before each one earn
    card_of: np.ndarray  # int32[5, 55]: per deciding seat, the absolute card of each card action (-1: no seat)
    state_index: np.ndarray  # int32[state size]: the source entry of each state-vector entry
    frames: np.ndarray  # int32[n, frame]: per observer, the packed entry each entry of its frame reads
    num_players_hot: np.ndarray  # float32[4]: the observation's player-count one-hot
    start_plates: np.ndarray  # int32[6]: the cubes on each plate at the start
    own_guilt: np.ndarray  # bool[5, 6]: each seat knows its own Guilt card at the start


Handler = Callable[[Params, State, jax.Array], Delta]


# ----------------------------------------------------------------------------------------------- construction
def _validate(num_players: int, max_turns: int | None, options: dict[str, Any]) -> None:
    """Refuse what the core cannot express, then what the rules reject, then a bad driver cap."""
    for (name, value), why in REFUSED.items():
        if options.get(name) == value:
            raise ValueError(f"elevenses jax core: {name}={value!r} is not supported ({why}); use the scalar env")
    rules.Options(num_players=num_players, **options)
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise ValueError(f"elevenses jax core: max_turns={max_turns!r} is not valid: expected an integer >= 1")


def _card_table(n: int) -> np.ndarray:
    """int32[5, 55]: per deciding seat, the absolute card of each card action (-1 where the action names a seat
    not in play)."""
    card_of = np.full((MAXP, C), -1, np.int32)
    for s in range(n):
        for a in range(C):
            if a // K < n:
                card_of[s, a] = ((a // K + s) % n) * K + a % K
    return card_of


def _start_plates(n: int, start_seat: int) -> np.ndarray:
    """int32[6]: the starting cubes, by seat clockwise from the start seat, then Mrs Lansdowne's."""
    start_plates = np.zeros(POS, np.int32)
    for i in range(n):
        start_plates[(start_seat + i) % n] = rules.START_CUBES[min(i, 2)]
    if n < MAXP:
        start_plates[MRS] = rules.MRS_START_CUBES
    return start_plates


def params(num_players: int, max_turns: int | None, options: dict[str, Any]) -> Params:
    """The :class:`Params` of a table (``options``: the rule keywords; :func:`make_core` validates first)."""
    opts = rules.Options(num_players=num_players, **options)
    n = opts.num_players
    mrs = n < MAXP
    quotas = np.zeros(MAXP, np.int32)
    quotas[:n] = rules.PLACE_CUBES[n]
    copied = state_from_source(STATE, SRC, np.arange(SRC.size, dtype=np.float32), n - rules.MIN_PLAYERS)
    num_players_hot = np.zeros(4, np.float32)
    num_players_hot[n - rules.MIN_PLAYERS] = 1.0
    start_plates = _start_plates(n, opts.start_seat)
    own_guilt = np.zeros((MAXP, POS), bool)
    own_guilt[np.arange(n), np.arange(n)] = True
    return Params(
        num_players=n,
        mrs=mrs,
        max_turns=max_turns,
        start_seat=opts.start_seat,
        start_bowl=opts.cubes_per_player * n - int(start_plates.sum()),
        num_murderers=rules.murderers(n),
        seat_ok=np.arange(MAXP) < n,
        pos_ok=np.array([x < n for x in range(MAXP)] + [mrs]),
        quotas=quotas,
        cum_before=np.concatenate([[0], np.cumsum(quotas)[:-1]]).astype(np.int32),
        card_of=_card_table(n),
        state_index=copied.astype(np.int32),
        frames=np.stack([_frame_index(n, mrs, o) for o in range(n)]),
        num_players_hot=num_players_hot,
        start_plates=start_plates,
        own_guilt=own_guilt,
    )


def make_core(num_players: int = rules.DEFAULT_PLAYERS, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``elevenses_v0``; ``max_turns``
    is the driver's turn cap, as the env's keyword is)."""
    _validate(num_players, max_turns, options)
    p = params(num_players, max_turns, options)
    return Core(
        env_id=ENV_ID,
        num_players=p.num_players,
        num_actions=rules.NUM_ACTIONS,
        obs_size=OBS.size,
        state_size=STATE.size,
        **bound(p, sys.modules[__name__]),
        hindsight_blocks=hindsight_blocks(p.num_players),
    )


# ----------------------------------------------------------------------------------------------- small helpers
def _pos_of_rel(p: Params, s: jax.Array) -> jax.Array:
    """int32[6]: the position each relative plate / Guilt index names for the deciding seat ``s``."""
    r = jnp.arange(POS, dtype=i32)
    return jnp.where(r == MRS, MRS, (s + r) % p.num_players)


def _plate_of(p: Params, action: jax.Array, s: jax.Array) -> jax.Array:
    """The position (6-index) a plate or Guilt-card action names (``rules.ElevensesState._plate_of``)."""
    r = (action - rules.PLATE_BASE) % POS
    return jnp.where(r == MRS, MRS, (s + r) % p.num_players).astype(i32)


def _card_at(p: Params, s: jax.Array, action: jax.Array) -> jax.Array:
    """The card a card action names for the deciding seat ``s``."""
    return jnp.asarray(p.card_of)[s, jnp.clip(action, 0, C - 1)]


def _first_clockwise(
    p: Params, base: jax.Array, ok: jax.Array, after: jax.Array | int = -1
) -> tuple[jax.Array, jax.Array]:
    """The first seat ``base + j`` (``after < j < n``) clockwise with ``ok``; and whether there is one."""
    n = p.num_players
    j = jnp.arange(MAXP, dtype=i32)
    seat = (base + j) % n
    hit = ok[seat] & (j < n) & (j > after)
    return seat[jnp.argmax(hit)], hit.any()


def _face_up(loc: jax.Array) -> jax.Array:
    """bool[5, 10]: each seat's face-up numbers 1–10."""
    by_number = loc.reshape(MAXP, K)[:, : K - 1]  # back × number
    return (by_number[None] == (UP + jnp.arange(MAXP))[:, None, None]).any(axis=1)


def _tea(st: State) -> jax.Array:
    """int32[5]: each seat's teaspoons (its face-up cards; its guest's bonus once revealed)."""
    return (_face_up(st.loc) * jnp.asarray(_TEASPOONS)).sum(axis=1) + rules.GUEST_BONUS * st.revealed.astype(i32)


def _oh5(x: jax.Array) -> jax.Array:
    return jnp.arange(MAXP) == x


def _oh6(x: jax.Array) -> jax.Array:
    return jnp.arange(POS) == x


def _onehot(x: jax.Array, size: int) -> jax.Array:
    return jax.nn.one_hot(x, size, dtype=f32)


def _materialize(x: jax.Array) -> jax.Array:
    """``x`` itself, through a reduction: XLA on CPU fuses elementwise producers into every element of their
    consumers, so the switch's selection among eighteen answers would be recomputed for each of the hundreds of
    card × seat entries the answer feeds; a reduction's result is stored once (an optimization barrier is
    dropped by the CPU pipeline)."""
    low = jnp.zeros_like(x) if x.dtype == jnp.bool_ else jnp.full_like(x, jnp.iinfo(x.dtype).min)
    return jnp.max(jnp.stack([x, low]), axis=0)


# ----------------------------------------------------------------------------------------------- moving cards
def _no_moves() -> Moves:
    """No card moves."""
    return Moves(
        cards=jnp.zeros(MOVES, i32),
        dests=jnp.zeros(MOVES, i32),
        seers=jnp.zeros((MOVES, MAXP), bool),
        valid=jnp.zeros(MOVES, bool),
    )


def _moves_of(*entries: tuple[jax.Array, jax.Array, jax.Array, jax.Array]) -> Moves:
    """A :class:`Moves` of up to MOVES ``(card, destination, seers bool[5], valid)``."""
    pad = MOVES - len(entries)
    return Moves(
        cards=jnp.stack([jnp.asarray(e[0], i32) for e in entries] + [i32(0)] * pad),
        dests=jnp.stack([jnp.asarray(e[1], i32) for e in entries] + [i32(0)] * pad),
        seers=jnp.stack([e[2] for e in entries] + [jnp.zeros(MAXP, bool)] * pad),
        valid=jnp.stack([jnp.asarray(e[3], bool) for e in entries] + [jnp.bool_(False)] * pad),
    )


def _seers_of(*seats: jax.Array) -> jax.Array:
    out = jnp.zeros(MAXP, bool)
    for x in seats:
        out = out | (jnp.arange(MAXP) == x)
    return out


def _apply_moves(p: Params, st: State, mv: Moves) -> State:
    """``rules.ElevensesState._move``: every card moves at once; a seat that does not see a card's face keeps
    track of it only if it can tell which card left (a card leaving a hand that holds other cards of its back
    is lost track of, with all of them, by every seat but the hand's owner and the seers). One-hot updates rather
    than scatters (cheaper under vmap on CPU)."""
    loc0 = st.loc
    cc = jnp.clip(mv.cards, 0, C - 1)
    src = loc0[cc]
    same = (loc0[None, :] == src[:, None]) & (jnp.asarray(_BACK)[None, :] == (cc // K)[:, None])  # move × card
    hidden = mv.valid & (src >= HAND) & (src < DOWN) & (mv.dests < UP)
    ambiguous = hidden & (same.sum(axis=1) > 1)
    keep = (jnp.arange(MAXP)[None, :] == src[:, None]) | mv.seers
    lost = (ambiguous[:, None, None] & same[:, :, None] & ~keep[:, None, :]).any(axis=0)
    know = st.know & ~lost
    moving = mv.valid[:, None] & (cc[:, None] == jnp.arange(C)[None, :])  # move × card
    moved = moving.any(axis=0)
    seen = (moving[:, :, None] & mv.seers[:, None, :]).any(axis=0)
    public = (moving & (mv.dests >= UP)[:, None]).any(axis=0)
    know = jnp.where(public[:, None], jnp.asarray(p.seat_ok)[None, :], know | seen)
    loc = jnp.where(moved, (moving * mv.dests[:, None]).sum(axis=0), loc0)
    place = jnp.arange(MAXP * SLOTS)
    off = (mv.valid & (src >= DOWN) & (src < UP))[:, None] & (place[None, :] == (src - DOWN)[:, None])
    on = (mv.valid & (mv.dests >= DOWN) & (mv.dests < UP))[:, None] & (place[None, :] == (mv.dests - DOWN)[:, None])
    flat = jnp.where(off.any(axis=0), -1, st.slot_card.reshape(-1))
    flat = jnp.where(on.any(axis=0), (on * cc[:, None]).sum(axis=0), flat)
    return st._replace(loc=loc, know=know, slot_card=flat.reshape(MAXP, SLOTS))


# ----------------------------------------------------------------------------------------------- handlers
# A handler answers with a Delta: what the decision changes. The switch then selects among eighteen small
# answers rather than eighteen whole states (under vmap every branch runs and the answers are selected).
def _base(st: State) -> Delta:
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
        moves=_no_moves(),
        then=i32(_NEXT),
    )


def _on_turn(p: Params, st: State, a: jax.Array) -> Delta:
    s = st.current
    card = _card_at(p, s, a)
    k0 = card % K
    is_card = a < C
    eleven = k0 == K - 1
    draws = (k0 >= 1) & (k0 <= SLOTS)  # positions 2–9 have a face-down card to take
    down = st.slot_card[s, jnp.clip(k0 - 1, 0, SLOTS - 1)]
    mv = _moves_of(
        (card, jnp.where(eleven, CENTRE, UP + s), jnp.zeros(MAXP, bool), is_card),
        (down, HAND + s, _seers_of(s), is_card & draws & ~eleven),
    )
    up_after = _face_up(st.loc)[s] | (jnp.arange(K - 1) == k0)
    guest = jnp.clip(st.guests[s], 0, NUM_GUESTS - 1)
    complete = (up_after | ~jnp.asarray(_GUEST_ITEMS)[guest]).all()
    played = is_card & ~eleven
    reveal = played & ~st.revealed[s] & complete
    then = jnp.where(eleven, _GAME_END, jnp.where(reveal, _NEXT, _EFFECT))
    return _base(st)._replace(
        effect=jnp.where(played, k0 + 1, st.effect),
        reveal=reveal,
        phase=jnp.where(a == rules.REARRANGE, rules.REARRANGE_CARD, jnp.where(reveal, rules.SWAP_1, st.phase)),
        elevenses=jnp.where(is_card & eleven, s, st.elevenses),
        moves=mv,
        then=jnp.where(a == rules.REARRANGE, _NEXT, jnp.where(a == rules.PASS_TURN, _END, then)),
    )


def _on_rearrange_card(p: Params, st: State, a: jax.Array) -> Delta:
    stop = a == rules.STOP
    return _base(st)._replace(
        rearrange_card=jnp.where(stop, st.rearrange_card, _card_at(p, st.current, a)),
        phase=jnp.where(stop, st.phase, rules.REARRANGE_SLOT),
        then=jnp.where(stop, _END, _NEXT),
    )


def _on_rearrange_slot(p: Params, st: State, a: jax.Array) -> Delta:
    s, k = st.current, a - rules.SLOT_BASE
    down = st.slot_card[s, jnp.clip(k, 0, SLOTS - 1)]
    mine = _seers_of(s)
    mv = _moves_of(
        (st.rearrange_card, DOWN + SLOTS * s + k, mine, jnp.bool_(True)),
        (down, HAND + s, mine, jnp.bool_(True)),
    )
    done = st.rearranged + 1
    return _base(st)._replace(
        rearranged=done,
        rearrange_card=i32(-1),
        phase=i32(rules.REARRANGE_CARD),
        moves=mv,
        then=jnp.where(done == 2, _END, _NEXT),
    )


def _choose_first(p: Params, st: State, a: jax.Array, phase: int, on_stop: int) -> Delta:
    """The first part of a two-part choice (a plate to swap or to move a cube from, a Guilt card), or stop."""
    stop = a == rules.STOP
    return _base(st)._replace(
        first=jnp.where(stop, st.first, _plate_of(p, a, st.current)),
        phase=jnp.where(stop, st.phase, phase),
        then=jnp.where(stop, on_stop, _NEXT),
    )


def _on_swap_1(p: Params, st: State, a: jax.Array) -> Delta:
    return _choose_first(p, st, a, rules.SWAP_2, _EFFECT)


def _on_swap_2(p: Params, st: State, a: jax.Array) -> Delta:
    x, y = st.first, _plate_of(p, a, st.current)
    px, py = st.plates[x], st.plates[y]
    gain = py - px  # what plate x gains, plate y loses
    to_x, to_y = jnp.maximum(gain, 0), jnp.maximum(-gain, 0)
    return _base(st)._replace(
        plates=gain * (_oh6(x).astype(i32) - _oh6(y)),
        put=to_x * _oh6(x) + to_y * _oh6(y),
        took=to_y * _oh6(x) + to_x * _oh6(y),
        first=i32(-1),
        then=i32(_EFFECT),
    )


def _on_add(p: Params, st: State, a: jax.Array) -> Delta:
    cube = _oh6(_plate_of(p, a, st.current)).astype(i32)
    left, bowl = st.cubes_left - 1, st.bowl - 1
    return _base(st)._replace(
        plates=cube,
        put=cube,
        bowl=bowl,
        cubes_left=left,
        then=jnp.where((left > 0) & (bowl > 0), _NEXT, _END),
    )


def _on_late(p: Params, st: State, a: jax.Array) -> Delta:
    cube = _oh6(_plate_of(p, a, st.current)).astype(i32)
    late = st.late - _oh5(st.current)
    seat, more = _first_clockwise(p, st.elevenses, late > 0)
    return _base(st)._replace(
        plates=cube,
        put=cube,
        late_placed=jnp.bool_(True),
        current=jnp.where(more, seat, st.current),
        then=jnp.where(more, _NEXT, _RESOLVE),
    )


def _on_move_from(p: Params, st: State, a: jax.Array) -> Delta:
    return _choose_first(p, st, a, rules.MOVE_TO, _END)


def _on_move_to(p: Params, st: State, a: jax.Array) -> Delta:
    off, on = _oh6(st.first).astype(i32), _oh6(_plate_of(p, a, st.current)).astype(i32)
    left = st.moves_left - 1
    return _base(st)._replace(
        plates=on - off,
        took=off,
        put=on,
        first=i32(-1),
        moves_left=left,
        phase=i32(rules.MOVE_FROM),
        then=jnp.where(left > 0, _NEXT, _END),
    )


def _on_look(p: Params, st: State, a: jax.Array) -> Delta:
    pos = _plate_of(p, a, st.current)
    return _base(st)._replace(
        looked=pos, looked_at=pos, claim_at=pos, claim=i32(rules.LOOKED_SILENT), phase=i32(rules.CLAIM)
    )


def _on_claim(p: Params, st: State, a: jax.Array) -> Delta:
    said = jnp.where(a == rules.CLAIM_MURDERER, rules.SAID_MURDERER, rules.SAID_INNOCENT)
    return _base(st)._replace(
        claim_at=jnp.where(a == rules.SILENT, -1, st.looked), claim=said, looked=i32(-1), then=i32(_END)
    )


def _on_cucumber_1(p: Params, st: State, a: jax.Array) -> Delta:
    return _choose_first(p, st, a, rules.CUCUMBER_2, _NEXT)


def _on_cucumber_2(p: Params, st: State, a: jax.Array) -> Delta:
    s, x, y = st.current, st.first, _plate_of(p, a, st.current)
    col = jnp.arange(POS)
    perm = jnp.where(col == x, y, jnp.where(col == y, x, col))  # the cards (and what follows them) swap places
    row = st.moved[s][perm]
    # the card that left the player's own place is now at the other one
    row = jnp.where(col == y, jnp.where(x == s, rules.MOVED_OWN, jnp.maximum(row, rules.MOVED)), row)
    row = jnp.where(col == x, jnp.where(y == s, rules.MOVED_OWN, jnp.maximum(row, rules.MOVED)), row)
    return _base(st)._replace(perm=perm, swapped=jnp.bool_(True), moved_row=row, first=i32(-1), then=i32(_END))


def _on_pass(p: Params, st: State, a: jax.Array) -> Delta:
    s, n = st.current, p.num_players
    choice = jnp.where(_oh5(s), _card_at(p, s, a), st.pass_choice)
    nxt, more = _first_clockwise(p, st.turn_seat, st.passers, (s - st.turn_seat) % n)
    # Everyone has chosen: each card goes to the next passer in the passing direction (a seat with nothing to
    # pass slides it on unseen; a lone passer passes to itself).
    j = jnp.arange(1, MAXP + 1, dtype=i32)
    cand = (jnp.arange(MAXP, dtype=i32)[:, None] + st.pass_dir * j[None, :]) % n
    hit = st.passers[cand] & (j[None, :] <= n)
    dest = jnp.take_along_axis(cand, jnp.argmax(hit, axis=1)[:, None], axis=1)[:, 0]
    seers = (jnp.arange(MAXP)[None, :] == jnp.arange(MAXP)[:, None]) | (jnp.arange(MAXP)[None, :] == dest[:, None])
    mv = Moves(cards=jnp.maximum(choice, 0), dests=HAND + dest, seers=seers, valid=st.passers & ~more)
    return _base(st)._replace(
        pass_choice=jnp.where(more, choice, -1),
        passers=st.passers & more,
        current=jnp.where(more, nxt, s),
        moves=mv,
        then=jnp.where(more, _NEXT, _END),
    )


def _on_target(p: Params, st: State, a: jax.Array) -> Delta:
    s, ham = st.current, st.phase == rules.HAM_TARGET
    t = (s + a - rules.SEAT_BASE + 1) % p.num_players
    decider = jnp.where(ham, s, t)
    return _base(st)._replace(
        target=t,
        shown=jnp.where(ham, t, s),
        viewer=decider,
        phase=jnp.where(ham, rules.HAM_TAKE, rules.CAKES_TAKE),
        current=decider,
    )


def _on_take(p: Params, st: State, a: jax.Array) -> Delta:
    stop = a == rules.STOP
    s = st.current
    other = jnp.where(st.phase == rules.HAM_TAKE, st.target, st.turn_seat)
    card = _card_at(p, s, a)
    return _base(st)._replace(
        moves=_moves_of((card, HAND + s, _seers_of(s, other), ~stop)),
        taken=jnp.where(stop, st.taken, card),
        phase=jnp.where(stop, st.phase, st.phase + 1),
        then=jnp.where(stop, _END, _NEXT),
    )


def _on_give(p: Params, st: State, a: jax.Array) -> Delta:
    s = st.current
    other = jnp.where(st.phase == rules.HAM_GIVE, st.target, st.turn_seat)
    mv = _moves_of((_card_at(p, s, a), HAND + other, _seers_of(s, other), jnp.bool_(True)))
    return _base(st)._replace(moves=mv, then=i32(_END))


def _on_over(p: Params, st: State, a: jax.Array) -> Delta:
    return _base(st)


_BRANCHES: tuple[Handler, ...] = (
    _on_turn,
    _on_rearrange_card,
    _on_rearrange_slot,
    _on_swap_1,
    _on_swap_2,
    _on_add,
    _on_move_from,
    _on_move_to,
    _on_look,
    _on_claim,
    _on_pass,
    _on_target,
    _on_take,
    _on_give,
    _on_cucumber_1,
    _on_cucumber_2,
    _on_late,
    _on_over,
)
# the core's branch of each scalar handler (the same name): a renamed or reordered handler fails here
assert tuple(h.__name__ for h in _BRANCHES) == _HANDLER_NAMES, "the handlers differ from rules.HANDLERS"


def _strong(tree: Any) -> Any:
    """Every leaf at its own dtype, never weakly typed (the branches of a switch must agree)."""
    return jax.tree.map(lambda x: jax.lax.convert_element_type(x, jnp.asarray(x).dtype), tree)


def _uniform(h: Handler, p: Params, st: State, a: jax.Array) -> Delta:
    """Handler ``h``'s answer with strong dtypes (a branch of the switch, bound to ``h`` and ``p``)."""
    return _strong(h(p, st, a))


def _apply(p: Params, st: State, d: Delta) -> State:
    """A handler's answer applied to the state (the decider is ``st.current``)."""
    me5 = _oh5(st.current)
    mine = me5[:, None]
    know = st.know | ((st.loc == d.shown)[:, None] & _oh5(d.viewer)[None, :])
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
        guilt_known=st.guilt_known[:, d.perm] | (mine & _oh6(d.looked_at)[None, :]),
        claims=jnp.where(mine & _oh6(d.claim_at)[None, :], d.claim, claims),
        moved=jnp.where(mine & d.swapped, d.moved_row[None, :], moved),
        know=know,
        viewed=st.viewed + (_oh5(d.viewer)[:, None] & _oh5(d.shown)[None, :]),
    )
    return _apply_moves(p, st, d.moves)


# ----------------------------------------------------------------------------------------------- stages
def _start_effect(p: Params, st: State) -> tuple[State, jax.Array]:
    """``rules.ElevensesState._start_effect``: the special action of the card just played."""
    k, s = st.effect, st.turn_seat
    seat_ok = jnp.asarray(p.seat_ok)
    adding = (k == rules.SCONES) | (k == rules.CANAPES)
    cubes = jnp.minimum(jnp.where(k == rules.SCONES, rules.SCONE_CUBES, rules.CANAPE_CUBES), st.bowl)
    moving = (k == rules.BISCUITS) | (k == rules.TARTS)
    passing = (k == rules.TARTLETS) | (k == rules.MACAROONS)
    in_hand = (st.loc[None, :] == jnp.arange(MAXP)[:, None]) & (jnp.asarray(_NUMBER0) != K - 1)[None, :]
    passers = in_hand.any(axis=1) & seat_ok
    # A seat with nothing to pass says so: the whole table learns its hand (the 11 or nothing).
    shown = (st.loc >= HAND) & (st.loc < DOWN) & ~passers[jnp.clip(st.loc, 0, MAXP - 1)]
    first, any_passer = _first_clockwise(p, s, passers)
    st = st._replace(
        current=jnp.where(passing & any_passer, first, s),
        phase=jnp.asarray(_EFFECT_PHASE)[k],
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


def _end_turn(p: Params, st: State) -> State:
    turns = st.turns + 1
    cut = turns >= rules.DEFAULT_MAX_TURNS
    nxt = (st.turn_seat + 1) % p.num_players
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


def _game_end(p: Params, st: State) -> tuple[State, jax.Array]:
    """``rules.ElevensesState._game_end``: late suspicion by tea place (ties: the Elevenses player, then
    clockwise from their left), a short Sugar Bowl serving the higher places first."""
    e = st.elevenses
    seat_ok = jnp.asarray(p.seat_ok)
    t = _tea(st)
    seat = jnp.arange(MAXP)
    order = (seat - e) % p.num_players
    before = (t[None, :] > t[:, None]) | ((t[None, :] == t[:, None]) & (order[None, :] < order[:, None]))
    place = (before & seat_ok[None, :]).sum(axis=1)
    take = jnp.clip(st.bowl - jnp.asarray(p.cum_before), 0, jnp.asarray(p.quotas))  # per place
    earned = jnp.where(seat_ok, take[jnp.clip(place, 0, MAXP - 1)], 0)
    first, any_late = _first_clockwise(p, e, earned > 0)
    st = st._replace(
        effect=i32(0),
        late=earned,
        bowl=st.bowl - earned.sum(),
        phase=jnp.where(any_late, rules.LATE, st.phase),
        current=jnp.where(any_late, first, st.current),
    )
    return st, jnp.where(any_late, _NEXT, _RESOLVE)


def _resolve(p: Params, st: State) -> State:
    """``rules.ElevensesState._resolve``: the most suspicious are arrested; if a Murderer is among them, the
    least suspicious innocent still free wins, else the Murderer(s)."""
    e = st.elevenses
    pos_ok = jnp.asarray(p.pos_ok)
    plates = jnp.where(pos_ok, st.plates, -1)
    arrested = pos_ok & (plates == plates.max())
    guilty = pos_ok & (st.guilt == 1)
    caught = (arrested & guilty).any()
    free = pos_ok & ~arrested & ~guilty
    least = jnp.where(free, st.plates, 1 << 20).min()
    pos = jnp.arange(POS)
    rank = jnp.where(pos == MRS, 2 * MAXP, (pos - e) % p.num_players)  # Mrs Lansdowne loses every tie
    best = jnp.argmin(jnp.where(free & (st.plates == least), rank, 1 << 20))
    innocent_wins = (pos == best) & free.any()
    winners = jnp.where(caught, innocent_wins, guilty)[: p.num_players]
    return st._replace(rewards=jnp.where(winners, 1.0, -1.0).astype(f32), phase=i32(rules.OVER), current=i32(-1))


def _merge(pred: jax.Array, new: State, old: State, fields: tuple[str, ...]) -> State:
    """``old`` with ``fields`` taken from ``new`` where ``pred`` (a stage changes only these)."""
    return old._replace(**{f: jnp.where(pred, getattr(new, f), getattr(old, f)) for f in fields})


_EFFECT_FIELDS = ("current", "phase", "cubes_left", "moves_left", "know", "passers", "pass_dir", "pass_choice")
_END_FIELDS = (
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
_GAME_END_FIELDS = ("effect", "late", "bowl", "phase", "current")
_RESOLVE_FIELDS = ("rewards", "phase", "current")


def _stages(p: Params, st: State, nxt: jax.Array) -> State:
    """The stages after the decision, from ``nxt``, each run on every table and kept where it applies (a cond
    under vmap would run both branches and select the whole state)."""
    new, then = _start_effect(p, st)
    go = nxt == _EFFECT
    st, nxt = _merge(go, new, st, _EFFECT_FIELDS), jnp.where(go, then, nxt)
    st = _merge(nxt == _END, _end_turn(p, st), st, _END_FIELDS)
    new, then = _game_end(p, st)
    go = nxt == _GAME_END
    st, nxt = _merge(go, new, st, _GAME_END_FIELDS), jnp.where(go, then, nxt)
    return _merge(nxt == _RESOLVE, _resolve(p, st), st, _RESOLVE_FIELDS)


def _finish(p: Params, st: State) -> State:
    """The end flags and the seat to act (the driver's turn cap truncates a game still going)."""
    over = st.phase == rules.OVER
    terminated = over & ~st.truncated
    truncated = st.truncated if p.max_turns is None else st.truncated | (~over & (st.turns >= p.max_turns))
    return st._replace(
        terminated=terminated,
        truncated=truncated,
        current_player=jnp.where(terminated | truncated, -1, st.current).astype(i32),
    )


def step(p: Params, state: State, action: jax.Array) -> State:
    """One (legal) action of the seat to act: the phase's handler answers, the answer is applied, the stages
    follow."""
    action = jnp.asarray(action, i32)
    st = state._replace(rewards=jnp.zeros(p.num_players, f32))
    handlers = [functools.partial(_uniform, h, p) for h in _BRANCHES]
    d = jax.tree.map(_materialize, jax.lax.switch(jnp.asarray(_HANDLER_OF)[st.phase], handlers, st, action))
    st = _stages(p, _apply(p, st, d), d.then)
    return unless_finished(state, _finish(p, st))


# ----------------------------------------------------------------------------------------------- legal actions
def _card_actions(p: Params, st: State, slots: jax.Array) -> tuple[jax.Array, jax.Array]:
    """bool[55]: the card actions legal in the phase; and whether the decider may re-arrange (``slots``: its
    face-down slots that hold a card)."""
    s, ph = st.current, st.phase
    cards = jnp.asarray(p.card_of)[jnp.clip(s, 0, MAXP - 1)]  # per card action, its card
    valid = cards >= 0
    cc = jnp.clip(cards, 0, C - 1)
    k0 = cc % K
    not_eleven = k0 != K - 1
    in_hand = valid & (st.loc[cc] == s)
    up = _face_up(st.loc)[jnp.clip(s, 0, MAXP - 1)]
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
    return card_part, slots.any() & (in_hand & rearrange_ok).any()


def _position_actions(p: Params, st: State) -> tuple[jax.Array, jax.Array]:
    """bool[6] each: the plate actions and the Guilt-card actions legal in the phase."""
    s, ph = st.current, st.phase
    rel_ok = jnp.asarray(p.pos_ok)  # the relative positions in play are the positions in play
    where = _pos_of_rel(p, s)
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
    return plate_part, guilt_part


def _word_actions(st: State, can_rearrange: jax.Array, turn_plays: jax.Array) -> jax.Array:
    """bool[6]: re-arrange, stop, claim Murderer, claim Not Guilty, keep silent, pass the turn."""
    ph = st.phase
    stop = (
        ((ph == rules.REARRANGE_CARD) & (st.rearranged > 0))
        | (ph == rules.SWAP_1)
        | ((ph == rules.MOVE_FROM) & (st.effect == rules.BISCUITS))
        | (ph == rules.HAM_TAKE)
        | (ph == rules.CAKES_TAKE)
    )
    claim = ph == rules.CLAIM
    return jnp.stack([(ph == rules.TURN) & can_rearrange, stop, claim, claim, claim, (ph == rules.TURN) & ~turn_plays])


def legal_mask(p: Params, st: State) -> jax.Array:
    ph = st.phase
    slots = st.slot_card[jnp.clip(st.current, 0, MAXP - 1)] >= 0
    card_part, can_rearrange = _card_actions(p, st, slots)
    turn_plays = (ph == rules.TURN) & (card_part.any() | can_rearrange)
    slot_part = (ph == rules.REARRANGE_SLOT) & slots
    plate_part, guilt_part = _position_actions(p, st)
    seat_part = ((ph == rules.HAM_TARGET) | (ph == rules.CAKES_TARGET)) & (jnp.arange(1, MAXP) < p.num_players)
    mask = jnp.concatenate(
        [card_part, slot_part, plate_part, guilt_part, seat_part, _word_actions(st, can_rearrange, turn_plays)]
    )
    return mask & ~(st.terminated | st.truncated)


# ----------------------------------------------------------------------------------------------- state vector
def _progress(st: State, active: jax.Array) -> jax.Array:
    """float32[4]: re-arrangements made ÷ 2, cubes to add ÷ 2, moves left ÷ 2, turns ÷ the rules' cap (``active``:
    a special action is under way)."""
    half = jnp.asarray(_HALF_T)
    return jnp.stack(
        [
            half[jnp.clip(st.rearranged, 0, 2)],
            jnp.where(active & (st.phase == rules.ADD), half[jnp.clip(st.cubes_left, 0, 2)], 0.0),
            jnp.where(
                active & ((st.phase == rules.MOVE_FROM) | (st.phase == rules.MOVE_TO)),
                half[jnp.clip(st.moves_left, 0, 2)],
                0.0,
            ),
            jnp.asarray(_TURN_T)[jnp.clip(st.turns, 0, rules.DEFAULT_MAX_TURNS)],
        ]
    )


def _source_cards(st: State) -> list[jax.Array]:
    """The source's card fields: known in hand, known face down, down backs, hand backs, face up."""
    seat = jnp.arange(MAXP)
    by_card = st.loc.reshape(MAXP, K)  # back × number
    know_t = st.know.T.reshape(MAXP, MAXP, K)  # seat × back × number
    in_hand = by_card[:, :, None] == seat  # back × number × hand
    sc = st.slot_card
    sc0 = jnp.clip(sc, 0, C - 1)
    down_known = st.know[sc0] & (sc >= 0)[:, :, None]  # seat' × slot × seat
    down_number = _onehot(jnp.where(sc >= 0, sc % K, -1), K)  # seat' × slot × number
    hand_count = (by_card[None] == seat[:, None, None]).sum(axis=2)  # hand × back
    up = by_card[None, :, : K - 1] == (UP + seat)[:, None, None]  # seat × back × number
    return [
        (know_t[:, :, :, None] & in_hand[None]).astype(f32),
        (down_known.transpose(2, 0, 1)[..., None] * down_number[None]),
        _onehot(sc // K, MAXP),
        jnp.asarray(_HAND_T)[hand_count],
        up.transpose(0, 2, 1).astype(f32),
    ]


def _source_seats(p: Params, st: State) -> list[jax.Array]:
    """The source's guests, Guilt and plates groups."""
    seat_ok, pos_ok = jnp.asarray(p.seat_ok), jnp.asarray(p.pos_ok)
    guests = _onehot(st.guests, NUM_GUESTS)
    cube, plate = jnp.asarray(_CUBE_T), jnp.asarray(_PLATE_T)
    return [
        guests,
        guests * st.revealed[:, None],
        jnp.where(seat_ok, jnp.asarray(_TEA_T)[_tea(st)], 0.0),
        st.guilt_known[:, :, None] * _onehot(st.guilt, 2)[None],
        _onehot(st.claims - 1, 3),
        _onehot(st.moved - 1, 2),
        jnp.asarray(_SEEN_T)[jnp.minimum(st.viewed, 5)],
        jnp.where(pos_ok, plate[st.plates], 0.0),
        jnp.where(pos_ok, cube[jnp.minimum(st.put, 10)], 0.0),
        jnp.where(pos_ok, cube[jnp.minimum(st.took, 10)], 0.0),
        jnp.asarray(_LATE_T)[st.late],
        plate[st.bowl][None],
    ]


def _source_turn(st: State) -> list[jax.Array]:
    """The source's turn group."""
    over = st.phase == rules.OVER
    active = st.effect > 0
    passers = st.passers & active
    chosen = _onehot(jnp.where(passers, st.pass_choice, -1), C)
    chosen = chosen.at[jnp.where(st.rearrange_card >= 0, st.current, MAXP)].set(
        _onehot(st.rearrange_card, C), mode="drop"
    )
    return [
        _onehot(st.phase, rules.NUM_PHASES),
        _onehot(st.effect - 1, K),
        _onehot(jnp.where(over, -1, st.current), MAXP),
        _onehot(jnp.where(over, -1, st.turn_seat), MAXP),
        _onehot(st.elevenses, MAXP),
        passers.astype(f32),
        (passers & (st.pass_choice >= 0)).astype(f32),
        _onehot(jnp.where(active, st.target, -1), MAXP),
        _onehot(st.first, POS),
        _onehot(jnp.where(active, st.looked, -1), POS),
        chosen,
        _progress(st, active),
    ]


def _source(p: Params, st: State) -> jax.Array:
    """The scalar env's source vector of this state (``ElevensesEnv._write_source``)."""
    parts = [jnp.zeros(1, f32), jnp.ones(1, f32), *_source_cards(st), *_source_seats(p, st), *_source_turn(st)]
    return jnp.concatenate([x.reshape(-1).astype(f32) for x in parts])


def state_vector(p: Params, st: State) -> jax.Array:
    v = _source(p, st)[jnp.asarray(p.state_index)]
    seat = jnp.arange(MAXP)
    by_card = st.loc.reshape(MAXP, K)
    hands = (by_card[None] == seat[:, None, None]).astype(f32)  # seat × back × number
    sc = st.slot_card
    down = _onehot(jnp.where(sc >= 0, sc % K, -1), K)
    v = v.at[STATE["guests"]].set(_onehot(st.guests, NUM_GUESTS).reshape(-1))
    v = v.at[STATE["guilt"]].set(jnp.where(jnp.asarray(p.pos_ok), st.guilt, 0).astype(f32))
    v = v.at[STATE["hands"]].set(hands.reshape(-1))
    return v.at[STATE["face_down"]].set(down.reshape(-1))


# ----------------------------------------------------------------------------------------------- observations
# The observation itself is built in the observer's frame (the source holds every seat's private fields, three
# times the observation): one gather brings every per-seat and per-position array into that frame -- entry k
# is the seat k places left, seats past the player count read a pad, Mrs Lansdowne stays at 5, as the env's
# ``rotated_entries`` reads them -- and the fields are built from it elementwise, in the layout's order.
class _Frame(NamedTuple):
    """The packed arrays in the observer's frame (flat; :data:`_PACKED` gives their shapes, in this order)."""

    tea: jax.Array
    guests: jax.Array
    revealed: jax.Array
    late: jax.Array
    passers: jax.Array
    pass_choice: jax.Array
    plates: jax.Array
    guilt: jax.Array
    put: jax.Array
    took: jax.Array
    claims: jax.Array
    moved: jax.Array
    guilt_known: jax.Array
    viewed: jax.Array
    loc: jax.Array
    known: jax.Array
    slot_card: jax.Array


_PACKED: tuple[tuple[str, tuple[int, ...]], ...] = (
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
)
assert tuple(name for name, _ in _PACKED) == _Frame._fields
#: Where each packed array starts.
_AT: dict[str, int] = {}
_size = 0
for _name, _shape in _PACKED:
    _AT[_name], _size = _size, _size + int(np.prod(_shape))
_PAD0, _PAD_NEG = _size, _size + 1  # entries reading 0 and -1
# The frame's arrays' sizes (Guilt cards known: the observer's row only), where :func:`_view` splits it.
_SPLITS = np.cumsum([MAXP] * 6 + [POS] * 2 + [MAXP * POS] * 4 + [POS, MAXP * MAXP, C, C])


def _frame_seats(out: list[int], name: str, rot: list[int | None], pad: int) -> None:
    out.extend(pad if r is None else _AT[name] + r for r in rot)


def _frame_grid(out: list[int], name: str, rows: list[int | None], cols: list[int | None], width: int) -> None:
    for r in rows:
        out.extend(_PAD0 if r is None or c is None else _AT[name] + r * width + c for c in cols)


def _frame_rows(out: list[int], name: str, rot: list[int | None], width: int, pad: int) -> None:
    for r in rot:
        out.extend(pad if r is None else _AT[name] + r * width + k for k in range(width))


def _frame_index(n: int, mrs: bool, o: int) -> np.ndarray:
    """int32[frame]: the packed entry each entry of observer ``o``'s frame reads."""
    rot5 = [(o + k) % n if k < n else None for k in range(MAXP)]
    rot6 = [*rot5, MRS if mrs else None]
    out: list[int] = []
    _frame_seats(out, "tea", rot5, _PAD0)
    _frame_seats(out, "guests", rot5, _PAD_NEG)
    _frame_seats(out, "revealed", rot5, _PAD0)
    _frame_seats(out, "late", rot5, _PAD0)
    _frame_seats(out, "passers", rot5, _PAD0)
    _frame_seats(out, "pass_choice", rot5, _PAD_NEG)
    _frame_seats(out, "plates", rot6, _PAD0)
    _frame_seats(out, "guilt", rot6, _PAD0)
    for name in ("put", "took", "claims", "moved"):
        _frame_grid(out, name, rot5, rot6, POS)
    _frame_grid(out, "guilt_known", [o], rot6, POS)
    _frame_grid(out, "viewed", rot5, rot5, MAXP)
    _frame_rows(out, "loc", rot5, K, _PAD_NEG)  # the cards by back relative to the observer
    _frame_rows(out, "known", rot5, K, _PAD0)
    _frame_rows(out, "slot_card", rot5, SLOTS, _PAD_NEG)
    return np.array(out, np.int32)


def _pack(st: State, o: jax.Array) -> jax.Array:
    """int32[packed + 2]: the arrays the frame reads, flat, then the pads (0, -1)."""
    computed = {"tea": _tea(st), "known": (st.know & (jnp.arange(MAXP) == o)).any(axis=1)}
    pack = jnp.concatenate(
        [jnp.asarray(computed[name] if name in computed else getattr(st, name), i32).reshape(-1) for name, _ in _PACKED]
        + [jnp.array([0, -1], i32)]
    )
    return _materialize(pack)


def _rel(p: Params, x: jax.Array, o: jax.Array) -> jax.Array:
    """A seat relative to observer ``o`` (-1 kept)."""
    return jnp.where(x >= 0, (x - o) % p.num_players, -1)


def _rel6(p: Params, x: jax.Array, o: jax.Array) -> jax.Array:
    """A position relative to observer ``o`` (Mrs Lansdowne and -1 kept)."""
    return jnp.where(x == MRS, MRS, _rel(p, x, o))


class _View(NamedTuple):
    """One observer's frame and what several of its observation's fields read."""

    o: jax.Array  # int32: the observer
    pack: jax.Array  # int32[packed + 2]: the packed arrays (:func:`_pack`)
    f: _Frame  # ... gathered into the observer's frame
    sc: jax.Array  # int32[5, 8]: the face-down cards, by relative seat
    loc: jax.Array  # int32[5, 11]: the location codes, by relative back and number
    hand_of: jax.Array  # bool[5, 11, 5]: back × number × relative hand
    active: jax.Array  # bool: a special action is under way
    passing: jax.Array  # bool[5]: the relative seats passing this round
    guests: jax.Array  # float32[5, 6]: the relative seats' Guest cards, one-hot


def _view(p: Params, st: State, seat: jax.Array) -> _View:
    o = jnp.asarray(seat, i32)
    pack = _pack(st, o)
    f = _Frame(*jnp.split(_materialize(pack[jnp.asarray(p.frames)[o]]), _SPLITS))
    loc_r = f.loc.reshape(MAXP, K)
    is_hand = (loc_r >= HAND) & (loc_r < DOWN)
    hand_of = jnp.where(is_hand, (loc_r - o) % p.num_players, -1)[:, :, None] == jnp.arange(MAXP)
    active = st.effect > 0
    return _View(
        o=o,
        pack=pack,
        f=f,
        sc=f.slot_card.reshape(MAXP, SLOTS),
        loc=loc_r,
        hand_of=hand_of,
        active=active,
        passing=f.passers.astype(bool) & active,
        guests=_onehot(f.guests, NUM_GUESTS),
    )


def _observed_private(p: Params, st: State, v: _View) -> list[jax.Array]:
    """The observer's own fields: own guest, known in hand, known face down, Guilt cards known, own chosen card."""
    f, sc = v.f, v.sc
    know_sc = v.pack[jnp.where(sc >= 0, _AT["known"] + sc, _PAD0)]  # the observer knows that card
    mine = v.passing[0] & (f.pass_choice[0] >= 0)
    chosen = jnp.where(mine, f.pass_choice[0], jnp.where(st.current == v.o, st.rearrange_card, -1))
    chosen_rel = jnp.where(chosen >= 0, _rel(p, chosen // K, v.o) * K + chosen % K, -1)
    return [
        v.guests[0],
        f.known.reshape(MAXP, K, 1).astype(bool) & v.hand_of,
        (know_sc.astype(bool) & (sc >= 0))[:, :, None] & ((sc % K)[:, :, None] == jnp.arange(K)),
        f.guilt_known.astype(bool)[:, None] & (f.guilt[:, None] == jnp.arange(2)),
        _onehot(chosen_rel, C),
    ]


def _observed_cards(p: Params, v: _View) -> list[jax.Array]:
    """The cards everyone sees: face-down backs, hand backs, face-up cards."""
    seat5 = jnp.arange(MAXP)
    is_up = (v.loc >= UP) & (v.loc < CENTRE)
    up_at = jnp.where(is_up, (v.loc - UP - v.o) % p.num_players, -1)[:, : K - 1]  # back × number
    return [
        jnp.where(v.sc >= 0, _rel(p, v.sc // K, v.o), -1)[:, :, None] == seat5,
        v.hand_of.sum(axis=1).T.astype(f32) * HAND_SCALE,  # a count ÷ 4: exact in float32
        (up_at[None] == seat5[:, None, None]).transpose(0, 2, 1),
    ]


def _observed_public(p: Params, st: State, v: _View) -> list[jax.Array]:
    """The public fields, from the revealed guests on."""
    f, o, active = v.f, v.o, v.active
    over = st.phase == rules.OVER
    cube, plate = jnp.asarray(_CUBE_T), jnp.asarray(_PLATE_T)
    return [
        v.guests * f.revealed[:, None],
        jnp.asarray(_TEA_T)[f.tea],
        plate[f.plates],
        cube[jnp.minimum(f.put, 10)],
        cube[jnp.minimum(f.took, 10)],
        _onehot(f.claims - 1, 3),
        _onehot(f.moved - 1, 2),
        jnp.asarray(_SEEN_T)[jnp.minimum(f.viewed, 5)],
        jnp.asarray(_LATE_T)[f.late],
        plate[st.bowl][None],
        _onehot(st.phase, rules.NUM_PHASES),
        _onehot(st.effect - 1, K),
        _onehot(jnp.where(over, -1, _rel(p, st.current, o)), MAXP),
        _onehot(jnp.where(over, -1, _rel(p, st.turn_seat, o)), MAXP),
        _onehot(_rel(p, st.elevenses, o), MAXP),
        v.passing,
        v.passing & (f.pass_choice >= 0),
        _onehot(jnp.where(active, _rel(p, st.target, o), -1), MAXP),
        _onehot(_rel6(p, st.first, o), POS),
        _onehot(jnp.where(active, _rel6(p, st.looked, o), -1), POS),
        _progress(st, active),
    ]


def observe(p: Params, st: State, seat: jax.Array) -> jax.Array:
    v = _view(p, st, seat)
    parts = [
        jnp.asarray(p.num_players_hot),
        *_observed_private(p, st, v),
        *_observed_cards(p, v),
        *_observed_public(p, st, v),
    ]
    return jnp.concatenate([jnp.asarray(x, f32).reshape(-1) for x in parts])


# ----------------------------------------------------------------------------------------------- the deal
def _ranks(u: jax.Array, before: jax.Array) -> jax.Array:
    """A uniform permutation of each row: the ranks of independent random words, ties broken by position.
    Counting comparisons costs a fraction of a sort on CPU."""
    lower = (u[..., None, :] < u[..., :, None]) | ((u[..., None, :] == u[..., :, None]) & before)
    return lower.sum(axis=-1).astype(i32)


def _deal_cards(p: Params, u: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Each seat's eleven cards shuffled into its eight slots and its hand (``u``: a random word per card):
    ``loc``, ``slot_card``, ``know``."""
    rank = _ranks(u.reshape(MAXP, K), jnp.asarray(_BEFORE_K))  # rank < 8: that slot; else the hand
    seat_col = jnp.arange(MAXP)[:, None]
    in_play = seat_col < p.num_players
    loc = jnp.where(rank < SLOTS, DOWN + SLOTS * seat_col + rank, HAND + seat_col)
    loc = jnp.where(in_play, loc, -1).reshape(-1)
    # the card of each slot: the one whose rank is the slot (one-hot, not a scatter: cheaper under vmap)
    hit = rank[:, None, :] == jnp.arange(SLOTS)[None, :, None]  # seat × slot × number
    slot_card = jnp.where(in_play, (hit * jnp.arange(K)).sum(axis=2) + seat_col * K, -1)
    know = (loc[:, None] == jnp.arange(MAXP)[None, :]) & (loc[:, None] < DOWN)
    return loc, slot_card, know


def _deal_guests(p: Params, u: jax.Array) -> jax.Array:
    """int32[5]: each seat's Guest card (``u``: a random word per guest)."""
    guest_rank = _ranks(u, jnp.asarray(_BEFORE_G))
    guests = jnp.argmax(guest_rank[None, :] == jnp.arange(MAXP)[:, None], axis=1).astype(i32)
    return jnp.where(jnp.asarray(p.seat_ok), guests, -1)


def _deal_guilt(p: Params, w: jax.Array) -> jax.Array:
    """int32[6]: 1 at the Murderer positions (``w``: a random word per position)."""
    pos_ok = jnp.asarray(p.pos_ok)
    # ranks among the positions in play only: a uniform choice of the Murderer positions
    lower = ((w[None, :] < w[:, None]) | ((w[None, :] == w[:, None]) & jnp.asarray(_BEFORE_P))) & pos_ok[None, :]
    return (pos_ok & (lower.sum(axis=1) < p.num_murderers)).astype(i32)


def init(p: Params, key: jax.Array) -> State:
    # One draw for the whole deal: each seat's shuffle of its eleven cards, the guests, the Guilt cards.
    u = jax.random.bits(key, (MAXP * K + NUM_GUESTS + POS,))
    loc, slot_card, know = _deal_cards(p, u[: MAXP * K])
    zero5 = jnp.zeros(MAXP, i32)
    return State(
        loc=loc.astype(i32),
        slot_card=slot_card,
        know=know,
        guests=_deal_guests(p, u[MAXP * K : MAXP * K + NUM_GUESTS]),
        revealed=jnp.zeros(MAXP, bool),
        guilt=_deal_guilt(p, u[MAXP * K + NUM_GUESTS :]),
        guilt_known=jnp.asarray(p.own_guilt),
        claims=jnp.zeros((MAXP, POS), i32),
        moved=jnp.zeros((MAXP, POS), i32),
        viewed=jnp.zeros((MAXP, MAXP), i32),
        plates=jnp.asarray(p.start_plates),
        bowl=i32(p.start_bowl),
        put=jnp.zeros((MAXP, POS), i32),
        took=jnp.zeros((MAXP, POS), i32),
        phase=i32(rules.TURN),
        current=i32(p.start_seat),
        turn_seat=i32(p.start_seat),
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
        current_player=i32(p.start_seat),
        rewards=jnp.zeros(p.num_players, f32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


# ----------------------------------------------------------------------------------------------- hindsight
def hindsight(p: Params, st: State, seat: jax.Array) -> jax.Array:
    """What the end-of-game reveal (the scalar ``outcome()``: ``murderers``, ``guests``) shows ``seat``: for each
    position, whether its Guilt card is a Murderer -- the seat ``k`` places left of ``seat`` at entry ``k``
    (``k = 0 .. n-1``, itself first, as the observation's relative seats), Mrs Lansdowne last (entry ``n``, with
    fewer than five players); then every other seat's Guest card, the seat ``k`` places left at block ``k``
    (``k = 1 .. n-1``), one-hot over the six guests. Read on a finished game's state (the Guilt cards where they
    lie at the end, as the rules reveal them). A training target of belief heads only: never an input of a
    policy."""
    n = p.num_players
    rel_pos = np.arange(n + p.mrs)
    others = np.arange(1, n)
    o = jnp.asarray(seat, i32)
    pos = jnp.where(rel_pos == n, MRS, (o + rel_pos) % n)
    guilty = st.guilt[pos].astype(f32)
    guests = jax.nn.one_hot(st.guests[(o + others) % n], NUM_GUESTS, dtype=f32).reshape(-1)
    return jnp.concatenate([guilty, guests])


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
