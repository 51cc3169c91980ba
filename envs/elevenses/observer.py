"""The Elevenses observer: what each seat sees, written from the rules state alone.

This module defines the encoding (the observation layout, the source vector it is gathered from, and the gather)
and holds the game's one from-scratch writer: :func:`write_source` writes everything the source vector shows of a
rules state, and :func:`observe` hands out one seat's observation (that source gathered through
:func:`observation_gather`). Both are pure: they read the rules state and nothing else (:class:`Params` is empty: no
rule keyword changes the encoding).

The env (:mod:`parlour.envs.elevenses.env`) keeps the same source vector up to date incrementally as actions are
played, which is much faster; it writes its source here at every reset, rewrites a group of fields with this
module's writers when the rules say that group changed, and its fuzz invariants hold the whole incremental source to
:func:`source` (and so each seat's observation to :func:`observe`) at every step.

The writers put floats into ``m``: the source vector's memoryview (an item write costs half of NumPy's), which stores
the same ``float32`` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from parlour.envs.elevenses import rules
from parlour.envs.layout import Field, Layout, gather_index, one_hot_entries, read_only, rotated_entries, written

MAXP = rules.MAX_PLAYERS
POS = MAXP + 1  # plates / Guilt cards: five seats and Mrs Lansdowne
K = rules.NUMBERS
G = len(rules.GUESTS)
#: Scales: plates ÷ 30 (every cube in the game), cubes moved ÷ 10 (at most 1), teaspoons ÷ 20, hand backs ÷ 4 (a
#: hand holds 4 cards between a Ham Sandwiches / Cakes take and give), late cubes ÷ 3, hands seen ÷ 5.
PLATE_SCALE, CUBE_SCALE, TEA_SCALE, HAND_SCALE, LATE_SCALE, SEEN_SCALE = (
    1 / rules.BOX_CUBES,
    0.1,
    0.05,
    1 / 4,
    1 / 3,
    0.2,
)
REL = "relative seat"
OWNER = "back (relative seat)"
PLATE = "plate (relative seat; 5 = Mrs Lansdowne)"

# Observation fields: (name, shape, meaning, axis names). The fields up to ``own_chosen`` are this seat's own.
_FIELDS: tuple[tuple[str, tuple[int, ...], str, tuple[str, ...]], ...] = (
    ("num_players", (4,), "one-hot: 2–5 players", ("players",)),
    ("own_guest", (G,), "one-hot: this player's Guest card", ("guest",)),
    (
        "known_in_hand",
        (MAXP, K, MAXP),
        "cards this player knows to be in a hand (its own, or seen through Ham Sandwiches, Cakes, passing, a player "
        "left holding only the 11): card by back and number, the hand's seat",
        (OWNER, "number", REL),
    ),
    (
        "known_face_down",
        (MAXP, rules.SLOTS, K),
        "face-down cards this player knows (it put them there, or tracked them there): one-hot number by seat and "
        "slot (positions 2–9)",
        (REL, "slot", "number"),
    ),
    (
        "guilt_known",
        (POS, 2),
        "Guilt cards this player knows, where they lie now (after swaps): Not Guilty, Murderer",
        (PLATE, "value"),
    ),
    (
        "own_chosen",
        (MAXP, K),
        "the card this player has chosen to re-arrange or to pass, not yet moved",
        (OWNER, "number"),
    ),
    (
        "down_backs",
        (MAXP, rules.SLOTS, MAXP),
        "public: the back of each face-down card, by seat and slot",
        (REL, "slot", OWNER),
    ),
    ("hand_backs", (MAXP, MAXP), "public: cards of each back in each hand ÷ 4", (REL, OWNER)),
    (
        "face_up",
        (MAXP, K - 1, MAXP),
        "public: face-up cards by seat and number (1–10), one-hot back",
        (REL, "number", OWNER),
    ),
    ("revealed_guests", (MAXP, G), "public: revealed Guest cards, one-hot by seat", (REL, "guest")),
    ("tea", (MAXP,), "public: teaspoons of each spread (revealed guest included) ÷ 20", (REL,)),
    ("plates", (POS,), "public: cubes on each plate ÷ 30", (PLATE,)),
    (
        "put",
        (MAXP, POS),
        "public history: cubes each player has put on each guest's plate (added, moved there, plate swaps) ÷ 10, "
        "at most 1",
        (REL, PLATE),
    ),
    (
        "took",
        (MAXP, POS),
        "public history: cubes each player has taken off each guest's plate (moved away, plate swaps) ÷ 10, at most 1",
        (REL, PLATE),
    ),
    (
        "claims",
        (MAXP, POS, 3),
        "public history: per looker and Guilt card (followed through swaps): looked and kept silent, said "
        "Murderer, said Not Guilty",
        (REL, PLATE, "claim"),
    ),
    (
        "swapped",
        (MAXP, POS, 2),
        "public history: per player and Guilt card (followed through swaps): swapped by that player with Cucumber "
        "Sandwiches; moved off that player's own place",
        (REL, PLATE, "swap"),
    ),
    (
        "hands_seen",
        (MAXP, MAXP),
        "public history: how often each player has seen each player's hand (Ham Sandwiches, Cakes) ÷ 5, at most 1",
        (REL, REL),
    ),
    ("late_cubes", (MAXP,), "public: late-suspicion cubes each player still has to place ÷ 3", (REL,)),
    ("bowl", (1,), "public: cubes left in the Sugar Bowl ÷ 30", ()),
    ("phase", (rules.NUM_PHASES,), "public: one-hot decision under way", ("phase",)),
    ("effect", (K,), "public: one-hot number whose special action is under way", ("number",)),
    ("to_act", (MAXP,), "public: one-hot seat to decide", (REL,)),
    ("turn_seat", (MAXP,), "public: one-hot seat whose turn it is", (REL,)),
    ("elevenses_player", (MAXP,), "public: one-hot seat that played the 11", (REL,)),
    ("passers", (MAXP,), "public: seats passing a card this round", (REL,)),
    ("passed", (MAXP,), "public: seats that have chosen the card they pass", (REL,)),
    ("target", (MAXP,), "public: the other player of Ham Sandwiches / Cakes", (REL,)),
    ("first", (POS,), "public: the first plate or Guilt card chosen, or the plate a cube moves from", (PLATE,)),
    ("looked", (POS,), "public: the Guilt card just looked at", (PLATE,)),
    ("progress", (4,), "public: re-arrangements made ÷ 2, cubes to add ÷ 2, moves left ÷ 2, turns ÷ max_turns", ()),
)
_PRIVATE = ("own_guest", "known_in_hand", "known_face_down", "guilt_known", "own_chosen")
# Seat axes of each field (observation axes; ``seats`` entries each, Mrs Lansdowne's index stays).
_SEAT_AXES: dict[str, tuple[int, ...]] = {
    "known_in_hand": (0, 2),
    "known_face_down": (0,),
    "guilt_known": (0,),
    "own_chosen": (0,),
    "down_backs": (0, 2),
    "hand_backs": (0, 1),
    "face_up": (0, 2),
    "revealed_guests": (0,),
    "tea": (0,),
    "plates": (0,),
    "put": (0, 1),
    "took": (0, 1),
    "claims": (0, 1),
    "swapped": (0, 1),
    "hands_seen": (0, 1),
    "late_cubes": (0,),
    "to_act": (0,),
    "turn_seat": (0,),
    "elevenses_player": (0,),
    "passers": (0,),
    "passed": (0,),
    "target": (0,),
    "first": (0,),
    "looked": (0,),
}
#: Source groups, each contiguous and rewritten as a whole when the rules say it changed.
GROUPS = {
    "guests": ("own_guest", "revealed_guests", "tea"),
    "guilt": ("guilt_known", "claims", "swapped", "hands_seen"),
    "plates": ("plates", "put", "took", "late_cubes", "bowl"),
    "turn": (
        "phase",
        "effect",
        "to_act",
        "turn_seat",
        "elevenses_player",
        "passers",
        "passed",
        "target",
        "first",
        "looked",
        "own_chosen",
        "progress",
    ),
}


@cache
def observation_layout() -> Layout:
    return Layout(tuple(Field(name, shape, meaning, axes) for name, shape, meaning, axes in _FIELDS))


@cache
def source_layout() -> Layout:
    """Cards first (written card by card), then the groups; private fields once per seat, seats absolute."""
    obs = observation_layout()
    order = ["known_in_hand", "known_face_down", "down_backs", "hand_backs", "face_up"]
    for names in GROUPS.values():
        order += names
    fields = [Field("zero", (1,), "constant 0"), Field("one", (1,), "constant 1")]
    for name in order:
        f = obs.field(name)
        fields.append(Field(name, (MAXP, *f.shape) if name in _PRIVATE else f.shape, ""))
    return Layout(tuple(fields))


def observation_gather(observer: int, n: int) -> np.ndarray:
    """For each observation entry of ``observer`` at a table of ``n``, the source entry it is read from (the JAX core
    gathers the same)."""
    src, obs = source_layout(), observation_layout()
    special = {"num_players": one_hot_entries(src, 4, n - rules.MIN_PLAYERS)}
    for name, axes in _SEAT_AXES.items():
        block = observer if name in _PRIVATE else None
        special[name] = rotated_entries(src, name, observer, n, axes, MAXP, block)
    return gather_index(obs, src, observer, n, private={"own_guest": "own_guest"}, special=special)


def plate_index(g: rules.ElevensesState, pos: int) -> int:
    """Source index of a rules position (Mrs Lansdowne is ``n`` in the rules, ``MAXP`` in the encoding)."""
    return MAXP if pos == g.n else pos


# The source's entries, fixed (no rule keyword changes the layout): module constants, the cheapest to read.
_SOURCE = source_layout()
_ONE = _SOURCE["one"].start
_KNOWN_IN_HAND, _KNOWN_FACE_DOWN = _SOURCE["known_in_hand"].start, _SOURCE["known_face_down"].start
_HAND_BACKS, _DOWN_BACKS, _FACE_UP = _SOURCE["hand_backs"].start, _SOURCE["down_backs"].start, _SOURCE["face_up"].start
_OWN_GUEST, _REVEALED_GUESTS, _TEA = _SOURCE["own_guest"].start, _SOURCE["revealed_guests"].start, _SOURCE["tea"].start
_GUILT_KNOWN, _CLAIMS = _SOURCE["guilt_known"].start, _SOURCE["claims"].start
_SWAPPED, _HANDS_SEEN = _SOURCE["swapped"].start, _SOURCE["hands_seen"].start
_PLATES, _PUT, _TOOK = _SOURCE["plates"].start, _SOURCE["put"].start, _SOURCE["took"].start
_LATE_CUBES, _BOWL = _SOURCE["late_cubes"].start, _SOURCE["bowl"].start
_TURN = tuple(_SOURCE[name].start for name in GROUPS["turn"])
#: Each group's slice of the source (its fields lie one after another: ``source_layout`` lays them out so).
GROUP_SLICES = {name: slice(_SOURCE[names[0]].start, _SOURCE[names[-1]].stop) for name, names in GROUPS.items()}


def card_entry(seat: int, card: int, where: int) -> int:
    """The source entry saying that ``seat`` knows ``card`` is at ``where`` (-1: none, the card is face up)."""
    if where < rules.DOWN:
        return _KNOWN_IN_HAND + ((seat * MAXP + card // K) * K + card % K) * MAXP + where
    if where < rules.UP:
        return _KNOWN_FACE_DOWN + (seat * MAXP * rules.SLOTS + where - rules.DOWN) * K + card % K
    return -1


def write_back(g: rules.ElevensesState, m: Any, card: int, where: int, on: float) -> None:
    """Write (``on`` = 1) or clear the public sight of ``card``'s back at ``where``."""
    o = card // K
    if where < rules.DOWN:  # a count: written from the hand as it is now (exact, whatever the order of moves)
        m[_HAND_BACKS + where * MAXP + o] = sum(d // K == o for d in g.hands[where]) * HAND_SCALE
    elif where < rules.UP:
        m[_DOWN_BACKS + (where - rules.DOWN) * MAXP + o] = on
    elif where < rules.CENTRE:
        m[_FACE_UP + ((where - rules.UP) * (K - 1) + card % K) * MAXP + o] = on


def write_group(g: rules.ElevensesState, m: Any, name: str) -> None:
    """Write the fields of group ``name`` (:data:`GROUPS`) into ``m``, zero where its slice is zero."""
    if name == "guests":
        _write_guests(g, m)
    elif name == "guilt":
        _write_guilt(g, m)
    elif name == "plates":
        for s in range(g.n):
            write_cubes(g, m, s)
    else:
        for e, x in turn_entries(g):
            m[e] = x


def _write_guests(g: rules.ElevensesState, m: Any) -> None:
    for s in range(g.n):
        m[_OWN_GUEST + s * G + g.guests[s]] = 1.0
        if g.revealed[s]:
            m[_REVEALED_GUESTS + s * G + g.guests[s]] = 1.0
        m[_TEA + s] = g.tea(s) * TEA_SCALE


def _write_guilt(g: rules.ElevensesState, m: Any) -> None:
    n = g.n
    for pos in range(g.positions):
        p = plate_index(g, pos)
        for s in range(n):
            if g.guilt_known[s][pos]:
                m[_GUILT_KNOWN + (s * POS + p) * 2 + g.guilt[pos]] = 1.0
            if g.claims[s][pos]:
                m[_CLAIMS + (s * POS + p) * 3 + g.claims[s][pos] - 1] = 1.0
            if g.moved[s][pos]:
                m[_SWAPPED + (s * POS + p) * 2 + g.moved[s][pos] - 1] = 1.0
    for s in range(n):
        for t in range(n):
            m[_HANDS_SEEN + s * MAXP + t] = min(1.0, g.viewed[s][t] * SEEN_SCALE)


def write_cubes(g: rules.ElevensesState, m: Any, actor: int) -> None:
    """Write the plates, the Sugar Bowl, the late cubes and ``actor``'s tallies (what moving cubes changes)."""
    put, took, row = g.put[actor], g.took[actor], actor * POS
    for pos in range(g.positions):
        p = plate_index(g, pos)
        m[_PLATES + p] = g.plates[pos] * PLATE_SCALE
        m[_PUT + row + p] = min(1.0, put[pos] * CUBE_SCALE)
        m[_TOOK + row + p] = min(1.0, took[pos] * CUBE_SCALE)
    for s in range(g.n):
        m[_LATE_CUBES + s] = g.late.count(s) * LATE_SCALE
    m[_BOWL] = g.bowl * PLATE_SCALE


def turn_entries(g: rules.ElevensesState) -> list[tuple[int, float]]:
    """The non-zero source entries of the turn group: the decision under way."""
    (phase, effect, to_act, turn_seat, elevenses, passers, passed, target, first, looked, chosen, progress) = _TURN
    out = [(phase + g.phase, 1.0), (progress + 3, g.turns / g.options.max_turns)]
    if g.phase != rules.OVER:
        out.append((to_act + g.current, 1.0))
        out.append((turn_seat + g.turn_seat, 1.0))
    if g.effect:
        out.append((effect + g.effect - 1, 1.0))
        for s in g.passers:
            out.append((passers + s, 1.0))
            if g.pass_choice[s] >= 0:
                out.append((passed + s, 1.0))
                out.append((chosen + s * MAXP * K + g.pass_choice[s], 1.0))
        if g.target >= 0:
            out.append((target + g.target, 1.0))
        if g.looked >= 0:
            out.append((looked + plate_index(g, g.looked), 1.0))
        if g.phase == rules.ADD:
            out.append((progress + 1, g.cubes_left / 2))
        elif g.phase == rules.MOVE_FROM or g.phase == rules.MOVE_TO:
            out.append((progress + 2, g.moves_left / 2))
    if g.elevenses >= 0:
        out.append((elevenses + g.elevenses, 1.0))
    if g.rearrange_card >= 0:
        out.append((chosen + g.current * MAXP * K + g.rearrange_card, 1.0))
    if g.first >= 0:
        out.append((first + plate_index(g, g.first), 1.0))
    if g.rearranged:
        out.append((progress, g.rearranged / 2))
    return out


@dataclass(frozen=True)
class Params:
    """What the encoding takes from the rule options: nothing (the layout is fixed, and the turn count's scale is the
    state's own ``max_turns``). Here so that every game's observer is called alike."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Params:
        return self  # immutable: an env's deep copy (clone, resample_hidden) shares it, as it would a tuple

    @classmethod
    def from_options(cls, options: rules.Options) -> Params:
        return cls()


def write_source(state: rules.ElevensesState, params: Params, vector: np.ndarray) -> None:
    """Write everything the source shows of ``state`` into ``vector`` (a zeroed vector of ``source_layout()``)."""
    g = state
    m: Any = vector.data  # a float32 memoryview (typed as Source.m is: typeshed's takes only ints)
    m[_ONE] = 1.0
    for c in range(g.n * K):  # every card: its back where it lies, and each seat that knows where it is
        where = g.location[c]
        write_back(g, m, c, where, 1.0)
        for s in range(g.n):
            if g.knowers[c] >> s & 1 and (e := card_entry(s, c, where)) >= 0:
                m[e] = 1.0
    for name in GROUPS:
        write_group(g, m, name)


def source(state: rules.ElevensesState, params: Params) -> np.ndarray:
    """A new source vector of ``state``, written from scratch."""
    return written(_SOURCE.size, lambda vector: write_source(state, params, vector))


@cache
def _gather(observer: int, n: int) -> np.ndarray:
    # made once per seat and table size (the env makes its own at set-up); read-only, as it is shared
    return read_only(observation_gather(observer, n))


def observe(state: rules.ElevensesState, seat: int, params: Params) -> np.ndarray:
    """``seat``'s observation of ``state`` as a new ``float32`` vector of ``observation_layout()``."""
    return source(state, params)[_gather(seat, state.n)]
