"""Lady Alice as a batched, jittable core (:mod:`parlour.envs.jax_core`): the rules of
:mod:`parlour.envs.lady_alice.rules` (``lady_alice_v2``) as pure functions of a fixed-shape state, for every player
count (3–5) and every rule keyword (``max_rounds`` 1–1000, ``no_notes``, ``start_seat``, ``reward`` in each of its
modes, ``accusation_covers``, the driver's ``max_turns``). Nothing is refused. ``lady_alice_v1``'s core
(:mod:`parlour.envs.jax_core.lady_alice_v1`) is this one with the round cap signalled as a truncation, and
``lady_alice_v0``'s (:mod:`parlour.envs.jax_core.lady_alice_v0`) that with ``accusation_covers=False`` by default.

What differs structurally from the scalar implementation:

- **Counts instead of lists of counters.** A space's counters are a list of ``[owner, value, face up]`` in the scalar
  rules; placing a counter turns every counter already there face up, so a space holds at most one face-down
  counter (the last placed). The core keeps the face-up counters as counts ``up[seat, clue, value]`` and the
  face-down one as ``down_owner[clue]`` / ``down_value[clue]`` (``-1``: none), with the space's size beside them.
- **Fixed-size history.** The suspicions are ``max_rounds`` rows (the clues as a 32-bit set, the smiles, the seat),
  the accusations five rows (at most one per seat: a false one excludes its maker, a true one ends the game); the
  suspicion or accusation being made is four clue slots filled in order (``-1``: not chosen yet). The previous
  suspicion is its four clues in category order.
- **The suspicion mask is computed for the eight clues of the category at once**: the scalar
  ``_suspicion_options`` / ``_feasible`` cases (the usual first clue, a prefix with an uncovered clue, a prefix of
  covered clues only -- feasible when an uncovered clue can still follow and the whole can still differ from the
  previous suspicion) as one vector expression over the candidates; so the mask refuses a first clue that would
  leave no legal suspicion exactly as the scalar rules do. The uncovered counts per category are derived from
  ``covered``.
- **One flat step.** ``step`` computes every consequence of the action at once -- the clue chosen, the verdict
  (smiles, covering, the history row, the exact-suspicion point), the counter placed, the pass, the accusation (the
  end, or the exclusion), the new round or the ``max_rounds`` truncation, the next seat and the scores -- each kept
  by ``jnp.where`` on what happened (no branches: under vmap a branch would be computed for every game anyway). Its
  reductions run over a handful of seats or clue slots and are written out term by term, and the scores are read on
  the solution's clues alone (the evidence): on CPU a reduction over all 32 spaces is a separate loop over a
  materialised input, dearer than the rest of the step.
- **Observations are built in the observer's frame**, field by field in the env's layout order
  (:func:`~parlour.envs.lady_alice.env.observation_layout`): per-seat rows are read at ``(observer + k) % n`` and
  padded to five seats, as the env's gather index reads them; the fields from ``phase`` on are the same for every
  observer. Every float it writes agrees bit for bit with the env's: the tables of own counters ÷ 3 and counters on
  a space ÷ 5 (accumulated in float32 as the env accumulates them) and of counters left ÷ 3 are computed in NumPy as
  the scalar env computes them and checked, entry by entry, to be the float32 product ``count * step`` the core
  computes (cheaper than a lookup, a gather per entry on CPU); rounds ÷ ``max_rounds`` is looked up in its table.
  A history row is one elementwise expression of its column. The state vector is the env's: the absolute per-seat
  fields are the observer-0 frame, every seat's private fields, then the solution, the hidden category, the evidence
  and the face-down counters' values.
- **Deals come from ``key``** (one call of the generator: the evidence clue of each category and the special
  category from random bits, the doubled category's second clue among the other seven from a 64-bit word mod 7,
  dealt by ranking random words); the scalar env draws from its own generator, so a lock-step check
  hands the core the scalar deal. The whole deal is drawn at the start (:data:`DEAL_FIELDS`; :func:`deal_number` is
  always 0).
- **Legal actions only.** ``step`` assumes a legal action (the learner masks; the opponents choose among legal
  actions); the scalar env's ``illegal_action`` keyword has no counterpart.
- The rules' own turn cap (``max_rounds``) ends a game scored without the accusation bonus (the rewards paid), as
  the scalar rules do: a termination (``lady_alice_v2``; a truncation in v1 and v0, as their envs signal it); the
  driver's ``max_turns`` (suspicion rounds) truncates with no reward.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs.jax_core import Core, bound, pad_rows, unless_finished
from parlour.envs.lady_alice import rules
from parlour.envs.lady_alice.env import (
    ACCUSATION_ROW,
    COUNT_SCALE,
    FIRST_PUBLIC,
    SMILES,
    SUSPICION_ROW,
    observation_layout,
    state_layout,
)

ENV_ID = "lady_alice_v2"
#: The env ids whose scored round cap ends a game as a truncation (published before the ruling that it terminates).
CAP_TRUNCATES = frozenset({"lady_alice_v1", "lady_alice_v0"})
C = rules.NUM_CLUES
K = rules.NUM_CATEGORIES
P = rules.PER_CATEGORY
V = len(rules.COUNTER_VALUES)
MAXP = rules.MAX_PLAYERS
#: Accusations a game can hold: one per seat at most (a false one excludes its maker, a true one ends the game).
MAX_ACCUSATIONS = MAXP
SUSPECT, DEDUCE, PLACE, ACCUSING, OVER = rules.SUSPECT, rules.DEDUCE, rules.PLACE, rules.ACCUSING, rules.OVER
VALUE_BASE, PASS, ACCUSE, MISSING_BASE = rules.VALUE_BASE, rules.PASS, rules.ACCUSE, rules.MISSING_BASE
NUM_ACTIONS = rules.NUM_ACTIONS
#: The rule keywords a core refuses, with the reason (``make_core`` names it): none.
REFUSED: dict[tuple[str, Any], str] = {}
#: Rule-keyword sets the lock-step checks cover besides the defaults (every keyword, each away from its default;
#: valid at 3, 4 and 5 players). ``max_rounds=3`` ends many games by the rules' own truncation; ``max_turns=4``
#: truncates others by the driver's cap.
VARIANTS: tuple[dict[str, Any], ...] = (
    {"no_notes": True, "accusation_covers": False, "start_seat": 2},
    {"reward": "score", "max_rounds": 3, "start_seat": 1},
    {"max_turns": 4, "max_rounds": 6, "accusation_covers": False, "reward": "score"},
)
#: The fields of :class:`State` that hold the deal (one deal per game, drawn at the start).
DEAL_FIELDS = ("evidence", "special")


class State(NamedTuple):
    """One table (per-seat arrays have ``num_players`` rows; the history ``max_rounds`` rows)."""

    evidence: jax.Array  # int32[n]: each seat's evidence clue
    special: jax.Array  # int32: the doubled (5 players) or missing (3) category, -1 with 4
    up: jax.Array  # int32[n, 32, 3]: face-up counters by owner, clue and value
    down_owner: jax.Array  # int32[32]: the owner of the space's face-down counter, -1 none
    down_value: jax.Array  # int32[32]: its value (0 when none)
    space: jax.Array  # int32[32]: counters on each space
    left: jax.Array  # int32[n, 3]: counters in hand by value
    covered: jax.Array  # bool[32]
    excluded: jax.Array  # bool[n]
    passed: jax.Array  # bool[n]: passed since the last counter was placed (or the last suspicion)
    exact: jax.Array  # bool[n]: made a suspicion with a full verdict (step VIII)
    phase: jax.Array  # int32: rules.SUSPECT .. rules.OVER
    holder: jax.Array  # int32: the notebook's holder
    current: jax.Array  # int32: the seat to decide, -1 once the rules end the game
    pclue: jax.Array  # int32[4]: the clues of the suspicion or accusation being made, in order (-1: not yet)
    plen: jax.Array  # int32: how many are chosen
    missing: jax.Array  # int32: the category a three-player accusation being made leaves out, -1
    place_clue: jax.Array  # int32: the clue a counter is about to go on, -1
    prev: jax.Array  # int32[4]: the previous suspicion's clues by category, -1 before the first
    prev_smiles: jax.Array  # int32: its smiles, -1 before the first
    sus_bits: jax.Array  # uint32[R]: each suspicion's clues as a set of bits
    sus_smiles: jax.Array  # int32[R]: its smiles, -1 for a row not made yet
    sus_seat: jax.Array  # int32[R]: its maker, -1 for a row not made yet
    acc_bits: jax.Array  # uint32[5]: each accusation's clues
    acc_smiles: jax.Array  # int32[5]: -1 for a row not made yet
    acc_seat: jax.Array  # int32[5]
    acc_missing: jax.Array  # int32[5]: the category it left out (3 players), -1
    nacc: jax.Array  # int32: accusations made
    rounds: jax.Array  # int32: suspicions made (the driver's max_turns counts them)
    accuser: jax.Array  # int32: the successful accuser, -1
    game_truncated: jax.Array  # bool: the rules' max_rounds cap ended the game
    key: jax.Array  # unused after the deal (the game has no later draw)
    current_player: jax.Array  # int32: the seat to act, -1 once over
    rewards: jax.Array  # float32[n]: what the last step paid each seat
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool


def _accumulated(step: float, count: int) -> np.ndarray:
    """``k`` float32 additions of ``step`` onto a float32 zero, for ``k = 0 .. count-1``: the env's ``v[i] += step``."""
    out = np.zeros(count, np.float32)
    v = np.zeros(1, np.float32)
    for k in range(1, count):
        v[0] += step
        out[k] = v[0]
    return out


def _linear(table: np.ndarray) -> np.float32:
    """The float32 step ``m`` with ``table[k] == float32(k) * m`` for every entry (asserted)."""
    m = np.float32(table[1])
    if not np.array_equal(np.arange(len(table), dtype=np.float32) * m, table):
        raise AssertionError(f"a float table is not a float32 product: {table}")
    return m


def _divided(count: int, by: int) -> np.ndarray:
    """``k / by`` in float64 stored as float32 (the env's ``np.array(...) / by`` and ``rounds / max_rounds``)."""
    return (np.arange(count, dtype=np.int64) / by).astype(np.float32)


class Params(NamedTuple):
    """Everything a table's core computes once from its env id, player count and rule keywords (:func:`params`):
    the Python values that choose what is traced, and the NumPy values the traced functions read as constants."""

    env_id: str  # lady_alice_v2, v1 or v0
    num_players: int  # seats at the table (n)
    max_rounds: int  # the rules' round cap (R): the suspicion history's rows
    need: int  # smiles of a full verdict (``rules.smiles_needed``)
    acc_len: int  # clues an accusation names (3 with three players, else 4)
    covers: bool  # ``accusation_covers``: a zero-smile accusation covers its clues
    cap_truncates: bool  # the round cap ends the game as a truncation (v1, v0), not a termination (v2)
    notes: bool  # the history is observed (``no_notes=False``)
    reward: str  # "win" or "score"
    start_seat: int  # the notebook's first holder
    max_turns: int | None  # the driver's cap on suspicion rounds; None: no cap
    obs_size: int
    state_size: int
    third: np.float32  # own counters ÷ 3 as the float32 product ``count * third``
    fifth: np.float32  # counters on a space ÷ 5 as the float32 product ``count * fifth``
    left_step: np.float32  # counters left ÷ 3 as the float32 product ``count * left_step``
    rounds_t: np.ndarray  # float32[R + 1]: rounds ÷ max_rounds, as the env computes it
    players_hot: np.ndarray  # float32[3]: the observation's ``num_players`` field


def make_core(num_players: int = rules.DEFAULT_PLAYERS, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``lady_alice_v2``)."""
    return build(ENV_ID, num_players, max_turns, options)


def build(env_id: str, num_players: int, max_turns: int | None, options: dict[str, Any]) -> Core:
    """The core of ``env_id`` (``lady_alice_v2``, ``v1`` or ``v0``: the same rules, the keywords given; the round
    cap a termination in v2, a truncation in the others)."""
    p = params(env_id, validate(num_players, max_turns, options), max_turns)
    return Core(
        env_id=env_id,
        num_players=p.num_players,
        num_actions=NUM_ACTIONS,
        obs_size=p.obs_size,
        state_size=p.state_size,
        **bound(p, sys.modules[__name__]),
        hindsight_blocks=hindsight_blocks(p.num_players),
        winners=functools.partial(winning_seats, p),
        # an early end is the same episode for the excluded seat only where the game's end is a scored termination
        settled=None if p.cap_truncates or max_turns is not None else functools.partial(settled, p),
    )


def validate(num_players: int, max_turns: int | None, options: dict[str, Any]) -> rules.Options:
    """The rules' options of a table (``ValueError`` for a refused or invalid keyword, or an invalid ``max_turns``)."""
    for (name, value), why in REFUSED.items():
        if options.get(name) == value:
            raise ValueError(f"lady_alice jax core: {name}={value!r} is not supported ({why}); use the scalar env")
    opts = rules.Options(num_players=num_players, **options)
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        raise ValueError(f"lady_alice jax core: max_turns={max_turns!r} is not valid: expected an integer >= 1")
    return opts


def params(env_id: str, opts: rules.Options, max_turns: int | None) -> Params:
    """The :class:`Params` of ``env_id``'s table with the (validated) rules' options ``opts`` and the driver's
    ``max_turns``."""
    n = opts.num_players
    R = opts.max_rounds
    olay, slay = observation_layout(R), state_layout(R)
    head = [f.name for f in olay.fields]
    head = head[: head.index(FIRST_PUBLIC)]
    assert head == [
        "num_players",
        "own_evidence",
        "counters_left",
        "own_counters",
        "face_down",
        "revealed",
        "excluded",
        "holder",
        "to_act",
        "passed",
        "suspicion_seats",
        "accusation_seats",
    ], head  # the order :func:`observe` writes in
    return Params(
        env_id=env_id,
        num_players=n,
        max_rounds=R,
        need=rules.smiles_needed(n),
        acc_len=K - (n == 3),
        covers=bool(opts.accusation_covers),
        cap_truncates=env_id in CAP_TRUNCATES,
        notes=not opts.no_notes,
        reward=opts.reward,
        start_seat=opts.start_seat,
        max_turns=max_turns,
        obs_size=olay.size,
        state_size=slay.size,
        # Float tables, each entry as the env computes it; the small ones are a float32 product ``count * step``
        # (checked entry by entry), cheaper than a table lookup, which XLA does as a gather per entry.
        third=_linear(_accumulated(1 / rules.COUNTERS_PER_VALUE, rules.COUNTERS_PER_VALUE + 1)),  # own counters
        fifth=_linear(_accumulated(COUNT_SCALE, MAXP + 1)),  # counters on a space, by owner (and value)
        left_step=_linear(_divided(rules.COUNTERS_PER_VALUE + 1, rules.COUNTERS_PER_VALUE)),
        rounds_t=_divided(R + 1, R),
        players_hot=np.eye(3, dtype=np.float32)[n - rules.MIN_PLAYERS],
    )


# ---------------------------------------------------------------------------------------------------- the deal
def _solution(p: Params, w: jax.Array, special: jax.Array) -> jax.Array:
    """int32[n]: the solution's clues, one per category (none of the special one with 3 players, two of it with
    5), from the random words ``w``."""
    i32 = jnp.int32
    slots = jnp.arange(K, dtype=i32)
    picks = (w[:K] & (P - 1)).astype(i32)
    per_cat = slots * P + picks
    if p.num_players == 4:
        return per_cat
    if p.num_players == 3:  # the special category gives none
        others = jnp.arange(K - 1, dtype=i32)
        return jnp.where(others >= special, per_cat[1:], per_cat[:-1])
    # the special category gives two: the second among the other seven
    first = jnp.where(slots == special, picks, 0).sum()
    word = ((w[K + 1] % (P - 1)) * ((1 << 32) % (P - 1)) + w[K + 2] % (P - 1)) % (P - 1)
    second = word.astype(i32)
    second = second + (second >= first)
    return jnp.concatenate([per_cat, (special * P + second)[None]])


def _deal(p: Params, key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Each seat's evidence clue and the special category (-1 with 4 players), from ``key``."""
    # Every draw from one call of the generator (a call costs more than the rest of a new game): the clue of each
    # category and the special category from 3 and 2 random bits (exactly uniform), the doubled category's second
    # clue among the other seven from a 64-bit word mod 7, the dealing order by ranking 32-bit words (ties broken
    # by position: as ``jax.random.randint`` and a shuffle by ranking, uniform to within 2**-32).
    i32 = jnp.int32
    n = p.num_players
    w = jax.random.bits(key, (K + 3 + n,))
    special = (w[K] & (K - 1)).astype(i32) if n != 4 else i32(-1)
    solution = _solution(p, w, special)
    u = w[K + 3 :]
    order = jnp.arange(n)
    rank = ((u[None, :] < u[:, None]) | ((u[None, :] == u[:, None]) & (order[None, :] < order[:, None]))).sum(1)
    evidence = jnp.where(rank[:, None] == order[None, :], solution[:, None], 0).sum(axis=0).astype(i32)
    return evidence, special


def init(p: Params, key: jax.Array) -> State:
    """A new game, dealt from ``key``."""
    i32, u32 = jnp.int32, jnp.uint32
    n, R, start = p.num_players, p.max_rounds, p.start_seat
    evidence, special = _deal(p, key)
    return State(
        evidence=evidence,
        special=jnp.asarray(special, i32),
        up=jnp.zeros((n, C, V), i32),
        down_owner=jnp.full(C, -1, i32),
        down_value=jnp.zeros(C, i32),
        space=jnp.zeros(C, i32),
        left=jnp.full((n, V), rules.COUNTERS_PER_VALUE, i32),
        covered=jnp.zeros(C, bool),
        excluded=jnp.zeros(n, bool),
        passed=jnp.zeros(n, bool),
        exact=jnp.zeros(n, bool),
        phase=i32(SUSPECT),
        holder=i32(start),
        current=i32(start),
        pclue=jnp.full(K, -1, i32),
        plen=i32(0),
        missing=i32(-1),
        place_clue=i32(-1),
        prev=jnp.full(K, -1, i32),
        prev_smiles=i32(-1),
        sus_bits=jnp.zeros(R, u32),
        sus_smiles=jnp.full(R, -1, i32),
        sus_seat=jnp.full(R, -1, i32),
        acc_bits=jnp.zeros(MAX_ACCUSATIONS, u32),
        acc_smiles=jnp.full(MAX_ACCUSATIONS, -1, i32),
        acc_seat=jnp.full(MAX_ACCUSATIONS, -1, i32),
        acc_missing=jnp.full(MAX_ACCUSATIONS, -1, i32),
        nacc=i32(0),
        rounds=i32(0),
        accuser=i32(-1),
        game_truncated=jnp.bool_(False),
        key=key,
        current_player=i32(start),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


# ---------------------------------------------------------------------------------------------------- helpers
# The step's reductions run over a handful of seats or clue slots: each is written out term by term (on CPU, a
# reduction is a separate loop over its materialised input, several times dearer than these few operations).
def _fold(op: Any, terms: list[jax.Array]) -> jax.Array:
    out = terms[0]
    for t in terms[1:]:
        out = op(out, t)
    return out


def _count_in(p: Params, excluded: jax.Array) -> jax.Array:
    """int32: the players still in."""
    return _fold(jnp.add, [(~excluded[i]).astype(jnp.int32) for i in range(p.num_players)])


def _next_active(p: Params, seat: jax.Array, excluded: jax.Array) -> jax.Array:
    """The first seat clockwise after ``seat`` still in the game."""
    n = p.num_players
    out = seat  # (never kept: some seat is still in)
    for k in range(n, 0, -1):
        cand = (seat + k) % n
        still_in = _fold(jnp.logical_or, [(cand == i) & ~excluded[i] for i in range(n)])
        out = jnp.where(still_in, cand, out)
    return out


def _clue_set(pclue: jax.Array) -> jax.Array:
    """bool[32]: the clues chosen (slots at -1 name none)."""
    clues = jnp.arange(C, dtype=jnp.int32)
    return _fold(jnp.logical_or, [pclue[j] == clues for j in range(pclue.shape[0])])


def _winning(
    p: Params,
    points: jax.Array,
    excluded: jax.Array,
    accuser: jax.Array,
    still_in: jax.Array,
    truncating: jax.Array,
) -> jax.Array:
    """The winners of an end, as the scalar ``_end``: the last player standing (no accuser, no cap), else the
    best points among the players still in, the accuser alone if tied for them."""
    n = p.num_players
    active = ~excluded
    best = _fold(jnp.maximum, [jnp.where(active[i], points[i], jnp.iinfo(np.int32).min) for i in range(n)])
    tied = active & (points == best)
    accuser_tied = _fold(jnp.logical_or, [tied[i] & (accuser == i) for i in range(n)])
    won = jnp.where(accuser_tied, jnp.arange(n, dtype=jnp.int32) == accuser, tied)
    return jnp.where((still_in == 1) & (accuser < 0) & ~truncating, active, won)


def settled(p: Params, s: State, seat: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Whether ``seat`` is out of a game still going (a false accusation excluded it: it never acts again and
    cannot win), and the reward the game's end will pay it: -1 under ``win``; under ``score`` its points, which
    are the exact-suspicion bonus it keeps (step VIII) alone, since no counter of an excluded player counts."""
    f32 = jnp.float32
    out = s.excluded[seat] & ~(s.terminated | s.truncated)
    if p.reward == "score":
        return out, jnp.where(s.exact[seat], f32(rules.EXACT_SUSPICION_BONUS), f32(0.0))
    return out, f32(-1.0)


def winning_seats(p: Params, s: State) -> jax.Array:
    """The winning seats of a finished game, whatever the ``reward`` keyword pays (``Core.winners`` binds ``p``). Not
    named ``winners``: a module-level ``winners(state)`` is what :mod:`parlour.training.jax_eval` reads when it has no
    core, and this one needs ``p``."""
    points = _scores(p, s.up, s.down_owner, s.down_value, s.evidence, s.special, s.excluded, s.exact, s.accuser)
    return _winning(p, points, s.excluded, s.accuser, _count_in(p, s.excluded), s.game_truncated)


def _scores(
    p: Params,
    up: jax.Array,
    down_owner: jax.Array,
    down_value: jax.Array,
    evidence: jax.Array,
    special: jax.Array,
    excluded: jax.Array,
    exact: jax.Array,
    accuser: jax.Array,
) -> jax.Array:
    """The rulebook's points (steps I–IX and the five-player bonus), as the scalar ``score``: read on the
    solution's clues alone (the evidence: ``n`` distinct clues), summed clue by clue (a reduction over all 32
    spaces costs several times the rest of a step)."""
    n = p.num_players
    seats = jnp.arange(n, dtype=jnp.int32)
    playing = ~excluded
    owned = down_owner[evidence][None, :] == seats[:, None]  # seat x solution clue: its face-down counter
    worth = down_value[evidence][None, :]
    ones = up[:, evidence, 1] + (owned & (worth == 1)).astype(jnp.int32)
    twos = up[:, evidence, 2] + (owned & (worth == 2)).astype(jnp.int32)
    value = jnp.where(playing[:, None], ones + 2 * twos, 0)
    mine = playing[:, None] & (ones + twos > 0)
    points = value[:, 0]
    every = mine[:, 0]
    for j in range(1, n):
        points = points + value[:, j]
        every = every & mine[:, j]
    points += rules.ALL_CLUES_BONUS * every
    if n == 5:
        doubled = evidence // P == special
        both = mine[:, 0] | ~doubled[0]
        for j in range(1, n):
            both = both & (mine[:, j] | ~doubled[j])
        points += rules.DOUBLED_CATEGORY_BONUS * both
    points += rules.EXACT_SUSPICION_BONUS * exact
    points += rules.ACCUSATION_BONUS * (seats == accuser)
    return points.astype(jnp.int32)


# ---------------------------------------------------------------------------------------------------- the step
class _Move(NamedTuple):
    """An action decoded (each a traced value)."""

    action: jax.Array  # int32
    seat: jax.Array  # the seat acting
    me: jax.Array  # bool[n]: that seat
    is_sus: jax.Array  # the phase: choosing a suspicion's clue
    is_ded: jax.Array  # deducing: a space to place a counter on, a pass or an accusation
    is_place: jax.Array  # choosing the counter's value
    is_acc: jax.Array  # choosing an accusation's clue (or the category it leaves out)
    is_clue: jax.Array  # the action names a clue


def _move(p: Params, s: State, action: jax.Array) -> _Move:
    a = jnp.asarray(action, jnp.int32)
    seat = jnp.maximum(s.current, 0)
    ph = s.phase
    return _Move(
        action=a,
        seat=seat,
        me=jnp.arange(p.num_players, dtype=jnp.int32) == seat,
        is_sus=ph == SUSPECT,
        is_ded=ph == DEDUCE,
        is_place=ph == PLACE,
        is_acc=ph == ACCUSING,
        is_clue=a < C,
    )


class _Verdict(NamedTuple):
    """The suspicion or accusation being made, with the clue chosen, and its verdict when it is complete."""

    pclue: jax.Array  # int32[4]: its clues so far
    plen: jax.Array  # int32: how many
    done_sus: jax.Array  # a suspicion is complete
    done_acc: jax.Array  # an accusation is complete
    smiles: jax.Array  # int32: the smiles it gets
    full: jax.Array  # the smiles are a full verdict


def _verdict(p: Params, s: State, m: _Move) -> _Verdict:
    # A clue of the suspicion or accusation being made; the verdict when it is complete.
    i32 = jnp.int32
    adds = (m.is_sus | m.is_acc) & m.is_clue
    pclue = jnp.where(adds & (jnp.arange(K, dtype=i32) == s.plen), m.action, s.pclue)
    plen = s.plen + adds.astype(i32)
    smiles = _fold(jnp.add, [(s.evidence == pclue[j]).astype(i32) for j in range(K)])
    smiles = _fold(jnp.add, [smiles[i] for i in range(p.num_players)])
    return _Verdict(
        pclue=pclue,
        plen=plen,
        done_sus=m.is_sus & (plen == K),
        done_acc=m.is_acc & m.is_clue & (plen == p.acc_len),
        smiles=smiles,
        full=smiles == p.need,
    )


def _recorded(p: Params, s: State, m: _Move, v: _Verdict) -> dict[str, jax.Array]:
    """The fields a complete verdict writes: the clues covered, the history row, the exact-suspicion point, the
    previous suspicion, the round count."""
    u32 = jnp.uint32
    made = v.done_sus | v.done_acc
    cover = made & (v.smiles == 0) & (v.done_sus | p.covers)
    bit = jnp.where(v.pclue >= 0, jnp.left_shift(u32(1), jnp.maximum(v.pclue, 0).astype(u32)), u32(0))
    bits = _fold(jnp.bitwise_or, [bit[j] for j in range(K)])
    row = jnp.arange(p.max_rounds) == jnp.where(v.done_sus, s.rounds, p.max_rounds)
    arow = jnp.arange(MAX_ACCUSATIONS) == jnp.where(v.done_acc, s.nacc, MAX_ACCUSATIONS)
    holder = jnp.arange(p.num_players, dtype=jnp.int32) == s.holder
    return {
        "covered": s.covered | (cover & _clue_set(v.pclue)),
        "sus_bits": jnp.where(row, bits, s.sus_bits),
        "sus_smiles": jnp.where(row, v.smiles, s.sus_smiles),
        "sus_seat": jnp.where(row, s.holder, s.sus_seat),
        "acc_bits": jnp.where(arow, bits, s.acc_bits),
        "acc_smiles": jnp.where(arow, v.smiles, s.acc_smiles),
        "acc_seat": jnp.where(arow, m.seat, s.acc_seat),
        "acc_missing": jnp.where(arow, s.missing, s.acc_missing),
        "exact": s.exact | (v.done_sus & v.full & holder),
        "prev": jnp.where(v.done_sus, v.pclue, s.prev),
        "prev_smiles": jnp.where(v.done_sus, v.smiles, s.prev_smiles),
        "rounds": s.rounds + v.done_sus.astype(jnp.int32),
        "nacc": s.nacc + v.done_acc.astype(jnp.int32),
    }


def _placed(p: Params, s: State, m: _Move) -> dict[str, jax.Array]:
    """The fields a counter placed writes."""
    # A counter placed: the counter already on the space turns face up; the new one lies face down.
    i32 = jnp.int32
    seats, clues, values = jnp.arange(p.num_players, dtype=i32), jnp.arange(C, dtype=i32), jnp.arange(V, dtype=i32)
    v = m.action - VALUE_BASE
    pc = jnp.maximum(s.place_clue, 0)
    old_owner, old_value = s.down_owner[pc], s.down_value[pc]
    on_space = m.is_place & (clues == pc)
    turned = (
        (on_space & (old_owner >= 0))[None, :, None]
        & (seats == old_owner)[:, None, None]
        & (values == old_value)[None, None, :]
    )
    return {
        "up": s.up + turned.astype(i32),
        "down_owner": jnp.where(on_space, m.seat, s.down_owner),
        "down_value": jnp.where(on_space, v, s.down_value),
        "space": s.space + on_space.astype(i32),
        "left": s.left - (m.is_place & m.me[:, None] & (values == v)[None, :]).astype(i32),
    }


class _Round(NamedTuple):
    """Passes and accusations: who is still in, and whether a new round starts or the game ends."""

    passing: jax.Array  # the seat passes
    correct: jax.Array  # an accusation with a full verdict (the game ends)
    false_acc: jax.Array  # an accusation without one (its maker is excluded)
    excluded: jax.Array  # bool[n]
    still_in: jax.Array  # int32: the players still in
    one_left: jax.Array  # a false accusation leaves one player in (the game ends)
    passed: jax.Array  # bool[n]
    new_round: jax.Array  # every player still in has passed
    truncating: jax.Array  # the new round would pass the rules' round cap (the game ends)
    end: jax.Array
    fresh: jax.Array  # a new round starts


def _round(p: Params, s: State, m: _Move, v: _Verdict) -> _Round:
    # Passes, accusations, the new round, the end.
    n = p.num_players
    passing = m.is_ded & (m.action == PASS)
    correct = v.done_acc & v.full
    false_acc = v.done_acc & ~v.full
    excluded = s.excluded | (false_acc & m.me)
    still_in = _count_in(p, excluded)
    one_left = false_acc & (still_in == 1)
    passed = jnp.where(v.done_sus | m.is_place, False, s.passed)
    passed = (passed | (passing & m.me)) & ~(false_acc & m.me)
    every_pass = _fold(jnp.logical_and, [passed[i] | excluded[i] for i in range(n)])  # every player still in
    new_round = (passing | (false_acc & ~one_left)) & every_pass
    truncating = new_round & (s.rounds >= p.max_rounds)
    end = truncating | correct | one_left
    return _Round(
        passing=passing,
        correct=correct,
        false_acc=false_acc,
        excluded=excluded,
        still_in=still_in,
        one_left=one_left,
        passed=passed,
        new_round=new_round,
        truncating=truncating,
        end=end,
        fresh=new_round & ~truncating,
    )


def _moved_on(p: Params, s: State, m: _Move, v: _Verdict, r: _Round) -> dict[str, jax.Array]:
    """The fields of who decides what next: the notebook's holder, the seat to act, the phase, the choices in
    progress, the accuser and the cap's end."""
    a, made = m.action, v.done_sus | v.done_acc
    holder = jnp.where(r.fresh, _next_active(p, s.holder, r.excluded), s.holder)
    moves_on = v.done_sus | m.is_place | ((r.passing | r.false_acc) & ~r.new_round & ~r.one_left)
    current = jnp.where(moves_on, _next_active(p, m.seat, r.excluded), s.current)
    current = jnp.where(r.fresh, holder, current)
    current = jnp.where(r.end, -1, current)
    phase = jnp.where(v.done_sus | m.is_place | v.done_acc, DEDUCE, s.phase)
    phase = jnp.where(m.is_ded & m.is_clue, PLACE, phase)
    phase = jnp.where(m.is_ded & (a == ACCUSE), ACCUSING, phase)
    phase = jnp.where(r.fresh, SUSPECT, phase)
    phase = jnp.where(r.end, OVER, phase).astype(jnp.int32)
    missing = jnp.where(m.is_acc & (a >= MISSING_BASE), a - MISSING_BASE, s.missing)
    missing = jnp.where(v.done_acc | (m.is_ded & (a == ACCUSE)), -1, missing)
    return {
        "excluded": r.excluded,
        "passed": r.passed,
        "holder": holder,
        "current": current.astype(jnp.int32),
        "phase": phase,
        "missing": missing,
        "place_clue": jnp.where(m.is_ded & m.is_clue, a, jnp.where(m.is_place, -1, s.place_clue)),
        "pclue": jnp.where(made, -1, v.pclue),
        "plen": jnp.where(made, 0, v.plen),
        "accuser": jnp.where(r.correct, m.seat, s.accuser),
        "game_truncated": s.game_truncated | r.truncating,
    }


def _end_rewards(p: Params, s: State, r: _Round) -> jax.Array:
    """The rewards of an end (``s``: the state after the step)."""
    f32 = jnp.float32
    points = _scores(p, s.up, s.down_owner, s.down_value, s.evidence, s.special, s.excluded, s.exact, s.accuser)
    if p.reward == "score":
        return jnp.where(r.end, points.astype(f32), f32(0.0))
    won = _winning(p, points, s.excluded, s.accuser, r.still_in, r.truncating)
    return jnp.where(r.end, jnp.where(won, f32(1.0), f32(-1.0)), f32(0.0))


def step(p: Params, state: State, action: jax.Array) -> State:
    """One flat step: every consequence of ``action`` at once, each kept by ``jnp.where`` on what happened (no
    branches: under vmap a branch would be computed for every game anyway)."""
    m = _move(p, state, action)
    v = _verdict(p, state, m)
    r = _round(p, state, m, v)
    s = state._replace(**_recorded(p, state, m, v), **_placed(p, state, m), **_moved_on(p, state, m, v, r))
    over = s.phase == OVER
    # the cap scores the game: a termination, but in the versions published before that ruling (CAP_TRUNCATES)
    truncated = s.game_truncated if p.cap_truncates else jnp.bool_(False)
    terminated = over & ~truncated
    if p.max_turns is not None:
        truncated = truncated | (~over & (s.rounds >= p.max_turns))
    new = s._replace(
        current_player=jnp.where(terminated | truncated, -1, s.current).astype(jnp.int32),
        rewards=_end_rewards(p, s, r),
        terminated=terminated,
        truncated=truncated,
    )
    return unless_finished(state, new)


# ---------------------------------------------------------------------------------------------------- the mask
def _suspicion_options(s: State) -> jax.Array:
    """bool[32]: the clues of the suspicion's next category that leave a legal suspicion possible (the scalar
    ``_suspicion_options`` and ``_feasible``, for the eight candidates at once)."""
    clues, slots = jnp.arange(C, dtype=jnp.int32), jnp.arange(K, dtype=jnp.int32)
    k = s.plen
    covered = s.covered
    unc = (~covered).reshape(K, P).sum(axis=1)
    has_prev = s.prev[0] >= 0
    before = slots < k
    same_prefix = has_prev & ((s.pclue == s.prev) | ~before).all()
    some_open = (before & ~covered[jnp.maximum(s.pclue, 0)]).any()
    prev_k = s.prev[jnp.minimum(k, K - 1)]
    in_cat = clues // P == k
    usual_first = (k == 0) & (~has_prev | (unc[1:].sum() > 1))
    # A prefix with an uncovered clue: only the previous suspicion's last clue can be ruled out.
    open_prefix = ~((k == K - 1) & same_prefix & (clues == prev_k))
    # A prefix of covered clues only: each candidate's ``_feasible``.
    same_c = same_prefix & (clues == prev_k)
    k1 = k + 1
    rest = jnp.where(slots >= k1, unc, 0).sum()
    last_open = (~covered[jnp.maximum(s.prev[K - 1], 0)]).astype(jnp.int32)
    tail = jnp.where(~same_c | (k1 <= 2), rest > 0, unc[K - 1] - last_open > 0)
    feasible = jnp.where(k1 == K, ~covered & ~same_c, ~covered | tail)
    ok = jnp.where(usual_first, True, jnp.where(some_open, open_prefix, feasible))
    return in_cat & ok


def _accusing(p: Params, s: State) -> jax.Array:
    """bool[NUM_ACTIONS]: an accusation's next choice: the clues of its next category (with 3 players, first the
    category it leaves out)."""
    cat_of = jnp.arange(C, dtype=jnp.int32) // P
    tail_zero = jnp.zeros(NUM_ACTIONS - C, bool)
    if p.num_players == 3:
        cat = s.plen + (s.plen >= s.missing).astype(jnp.int32)
        return jnp.where(
            s.missing < 0,
            jnp.arange(NUM_ACTIONS) >= MISSING_BASE,
            jnp.concatenate([cat_of == cat, tail_zero]),
        )
    return jnp.concatenate([cat_of == s.plen, tail_zero])


def legal_mask(p: Params, s: State) -> jax.Array:
    """The acting seat's legal actions (all False once the game is over)."""
    tail_zero = jnp.zeros(NUM_ACTIONS - C, bool)
    seat = jnp.maximum(s.current, 0)
    left = s.left[seat]
    acts = jnp.arange(NUM_ACTIONS)
    open_space = ~s.covered & (s.space < p.num_players)
    deduce = jnp.concatenate([open_space & (left.sum() > 0), tail_zero]) | (acts == PASS) | (acts == ACCUSE)
    place = jnp.zeros(NUM_ACTIONS, bool).at[VALUE_BASE:PASS].set(left > 0)
    suspect = jnp.concatenate([_suspicion_options(s), tail_zero])
    ph = s.phase
    mask = jnp.where(
        ph == SUSPECT,
        suspect,
        jnp.where(
            ph == DEDUCE, deduce, jnp.where(ph == PLACE, place, jnp.where(ph == ACCUSING, _accusing(p, s), False))
        ),
    )
    return mask & ~(s.terminated | s.truncated) & (ph != OVER)


# ---------------------------------------------------------------------------------------------------- observations
def _pad(x: jax.Array) -> jax.Array:
    return pad_rows(x, MAXP)


def _rotate(p: Params, x: jax.Array, observer: jax.Array) -> jax.Array:
    """Per-seat rows from ``observer`` on, clockwise (row ``k``: seat ``(observer + k) % n``): one slice of the
    rows twice over."""
    twice = jnp.concatenate([x, x])
    return jax.lax.dynamic_slice_in_dim(twice, observer, p.num_players)


def _relative(p: Params, seat_of: jax.Array, observer: jax.Array) -> jax.Array:
    """One-hot over five relative seats of absolute seats (``-1``: none)."""
    return jax.nn.one_hot(jnp.where(seat_of >= 0, (seat_of - observer) % p.num_players, -1), MAXP, dtype=jnp.float32)


def _seat_fields(p: Params, s: State, observer: jax.Array) -> list[jax.Array]:
    """The public per-seat fields (``face_down`` .. ``accusation_seats``), seat ``k`` = ``k`` places left of
    ``observer`` (observer 0: the absolute seats of the source and the state vector)."""
    f32 = jnp.float32
    face_down = _relative(p, s.down_owner, observer).T * p.fifth
    revealed = _pad(_rotate(p, s.up, observer).astype(f32) * p.fifth)
    to_act = jnp.where(s.phase == OVER, -1, s.current)
    parts = [
        face_down,
        revealed,
        _pad(_rotate(p, s.excluded, observer).astype(f32)),
        _relative(p, s.holder, observer),
        _relative(p, to_act, observer),
        _pad(_rotate(p, s.passed, observer).astype(f32)),
    ]
    if p.notes:
        parts += [_relative(p, s.sus_seat, observer), _relative(p, s.acc_seat, observer)]
    else:
        parts += [jnp.zeros((p.max_rounds, MAXP), f32), jnp.zeros((MAX_ACCUSATIONS, MAXP), f32)]
    return parts


def _history(bits: jax.Array, smiles: jax.Array, missing: jax.Array | None) -> jax.Array:
    """History rows (one-hot category left out when ``missing`` is given, the clues, one-hot smiles) as one
    elementwise expression of the column (a concatenation of the three would be written twice)."""
    off = 0 if missing is None else K
    col = jnp.arange(off + C + SMILES, dtype=jnp.int32)
    shift = jnp.clip(col - off, 0, C - 1).astype(jnp.uint32)
    named = ((bits[:, None] >> shift[None, :]) & 1) == 1
    hot = jnp.where(col[None, :] >= off + C, smiles[:, None] == col[None, :] - off - C, named)
    if missing is not None:
        hot = jnp.where(col[None, :] < off, missing[:, None] == col[None, :], hot)
    return hot.astype(jnp.float32)


def _public(p: Params, s: State) -> list[jax.Array]:
    """The fields from ``phase`` on: the same for every observer."""
    f32 = jnp.float32
    parts = [
        jax.nn.one_hot(s.phase, 5, dtype=f32),
        s.covered.astype(f32),
        _clue_set(s.pclue).astype(f32),
        jax.nn.one_hot(s.missing, K, dtype=f32),
        jax.nn.one_hot(s.place_clue, C, dtype=f32),
        _clue_set(s.prev).astype(f32),
        jax.nn.one_hot(s.prev_smiles, SMILES, dtype=f32),
    ]
    if p.notes:
        sus = _history(s.sus_bits, s.sus_smiles, None)
        acc = _history(s.acc_bits, s.acc_smiles, s.acc_missing)
        parts += [sus, acc]
    else:
        parts += [jnp.zeros((p.max_rounds, SUSPICION_ROW), f32), jnp.zeros((MAX_ACCUSATIONS, ACCUSATION_ROW), f32)]
    parts.append(jnp.asarray(p.rounds_t)[s.rounds][None])
    return parts


def _down_by_seat(p: Params, s: State) -> jax.Array:
    """bool[n, 32, 3]: each seat's face-down counter on each space, by value."""
    seats, values = jnp.arange(p.num_players, dtype=jnp.int32), jnp.arange(V, dtype=jnp.int32)
    return (s.down_owner[None, :, None] == seats[:, None, None]) & (
        s.down_value[None, :, None] == values[None, None, :]
    )


def observe(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """``seat``'s observation, exactly the scalar env's."""
    f32 = jnp.float32
    seat = jnp.asarray(seat, jnp.int32)
    values = jnp.arange(V, dtype=jnp.int32)
    down = (s.down_owner == seat)[:, None] & (s.down_value[:, None] == values[None, :])
    own = s.up[seat] + down.astype(jnp.int32)
    parts = [
        jnp.asarray(p.players_hot),
        jax.nn.one_hot(s.evidence[seat], C, dtype=f32),
        s.left[seat].astype(f32) * p.left_step,
        own.astype(f32) * p.third,
        *_seat_fields(p, s, seat),
        *_public(p, s),
    ]
    return jnp.concatenate([x.reshape(-1) for x in parts])


def state_vector(p: Params, s: State) -> jax.Array:
    """The scalar env's ``state()`` vector."""
    f32 = jnp.float32
    evidence = _pad(jax.nn.one_hot(s.evidence, C, dtype=f32))
    # every seat's counters on the spaces, face up or down
    own_counts = s.up + _down_by_seat(p, s).astype(jnp.int32)
    parts = [
        jnp.asarray(p.players_hot),
        evidence,
        _pad(s.left.astype(f32) * p.left_step),
        _pad(own_counts.astype(f32) * p.third),
        *_seat_fields(p, s, jnp.int32(0)),
        *_public(p, s),
        _clue_set(s.evidence).astype(f32),
        jax.nn.one_hot(s.special, K, dtype=f32),
        evidence,
        _pad(jnp.where(_down_by_seat(p, s), p.fifth, f32(0.0))),
    ]
    return jnp.concatenate([x.reshape(-1) for x in parts])


# ---------------------------------------------------------------------------------------------------- hindsight
def hindsight(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """What the end-of-game reveal (the scalar ``outcome()``: ``evidence``, ``special_category``) shows ``seat``
    that its observation hid during play: every other seat's evidence clue, seat ``k`` places left of ``seat``
    (``k = 1 .. n-1``, as the observation's relative seats), one-hot over the 32 clues; and, with 3 or 5
    players, the hidden category (the missing or the doubled one), one-hot over the four. Read on a finished
    game's state (:func:`hindsight_blocks` gives the parts). A training target of belief heads only: never an
    input of a policy."""
    seat = jnp.asarray(seat, jnp.int32)
    parts = [jax.nn.one_hot(_rotate(p, s.evidence, seat)[1:], C, dtype=jnp.float32).reshape(-1)]
    if p.num_players != 4:
        parts.append(jax.nn.one_hot(s.special, K, dtype=jnp.float32))
    return jnp.concatenate(parts)


def hindsight_blocks(num_players: int) -> tuple[tuple[str, int, str], ...]:
    """The parts of a table's hindsight vector (``Core.hindsight_blocks``): ``evidence_k`` (the evidence clue of the
    seat ``k`` places left of the observer, ``k = 1 .. n-1``; one-hot over the 32 clues), then, with 3 or 5 players,
    ``special_category`` (the category missing from the solution (3) or doubled in it (5); one-hot over the four)."""
    blocks = tuple((f"evidence_{k}", C, "class") for k in range(1, num_players))
    if num_players != 4:
        blocks += (("special_category", K, "class"),)
    return blocks


def deal_number(game: rules.LadyAliceState) -> int:
    """Which deal of its episode a scalar state is on: always 0 (the whole deal is drawn at the start)."""
    return 0


def from_rules(game: rules.LadyAliceState, core: Core, key: Any = None) -> State:
    """The core's state of a scalar rules state (``key``: unused after the deal; default ``PRNGKey(0)``)."""
    n = core.num_players
    R = game.options.max_rounds
    i32 = np.int32
    up = np.zeros((n, C, V), i32)
    down_owner = np.full(C, -1, i32)
    down_value = np.zeros(C, i32)
    for clue, entries in enumerate(game.counters):
        for owner, value, face_up in entries:
            if face_up:
                up[owner, clue, value] += 1
            else:
                down_owner[clue], down_value[clue] = owner, value
    pclue = np.full(K, -1, i32)
    pclue[: len(game.partial)] = game.partial
    prev = np.full(K, -1, i32) if game.previous is None else np.array(game.previous, i32)
    suspicions = [r for r in game.history if not r.accusation]
    accusations = [r for r in game.history if r.accusation]

    def bits(record: rules.Record) -> int:
        return sum(1 << c for c in record.clues)

    sus_bits = np.zeros(R, np.uint32)
    sus_smiles = np.full(R, -1, i32)
    sus_seat = np.full(R, -1, i32)
    for i, r in enumerate(suspicions):
        sus_bits[i], sus_smiles[i], sus_seat[i] = bits(r), r.smiles, r.seat
    acc_bits = np.zeros(MAX_ACCUSATIONS, np.uint32)
    acc_smiles = np.full(MAX_ACCUSATIONS, -1, i32)
    acc_seat = np.full(MAX_ACCUSATIONS, -1, i32)
    acc_missing = np.full(MAX_ACCUSATIONS, -1, i32)
    for i, r in enumerate(accusations):
        acc_bits[i], acc_smiles[i], acc_seat[i], acc_missing[i] = bits(r), r.smiles, r.seat, r.missing
    over = game.phase == rules.OVER

    def seats_in(xs: list[int]) -> np.ndarray:
        return np.isin(np.arange(n), xs)

    return State(
        evidence=jnp.asarray(np.array(game.evidence, i32)),
        special=jnp.int32(game.special),
        up=jnp.asarray(up),
        down_owner=jnp.asarray(down_owner),
        down_value=jnp.asarray(down_value),
        space=jnp.asarray(np.array([len(e) for e in game.counters], i32)),
        left=jnp.asarray(np.array(game.left, i32).reshape(n, V)),
        covered=jnp.asarray(np.array(game.covered, bool)),
        excluded=jnp.asarray(np.array(game.excluded, bool)),
        passed=jnp.asarray(seats_in(game.passed)),
        exact=jnp.asarray(np.array(game.exact, bool)),
        phase=jnp.int32(game.phase),
        holder=jnp.int32(game.holder),
        current=jnp.int32(game.current),
        pclue=jnp.asarray(pclue),
        plen=jnp.int32(len(game.partial)),
        missing=jnp.int32(game.missing),
        place_clue=jnp.int32(game.place_clue),
        prev=jnp.asarray(prev),
        prev_smiles=jnp.int32(suspicions[-1].smiles if suspicions else -1),
        sus_bits=jnp.asarray(sus_bits),
        sus_smiles=jnp.asarray(sus_smiles),
        sus_seat=jnp.asarray(sus_seat),
        acc_bits=jnp.asarray(acc_bits),
        acc_smiles=jnp.asarray(acc_smiles),
        acc_seat=jnp.asarray(acc_seat),
        acc_missing=jnp.asarray(acc_missing),
        nacc=jnp.int32(len(accusations)),
        rounds=jnp.int32(game.rounds),
        accuser=jnp.int32(game.accuser),
        game_truncated=jnp.bool_(game.truncated),
        key=jax.random.PRNGKey(0) if key is None else key,
        current_player=jnp.int32(-1 if over else game.current),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(over and not (game.truncated and core.env_id in CAP_TRUNCATES)),
        truncated=jnp.bool_(over and game.truncated and core.env_id in CAP_TRUNCATES),
    )
