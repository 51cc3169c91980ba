"""6 Suspects as a batched, jittable core (:mod:`parlour.envs.jax_core`): the rules of
:mod:`parlour.envs.six_suspects.rules` as pure functions of a fixed-shape state, for every player count (2–8) and
every rule keyword but one.

What differs structurally from the scalar implementation:

- **The queues are arithmetic.** The scalar rules keep a list of the seats still to play their last turn or to vote;
  both go clockwise without gaps, so the core keeps none: the last turns end when the next seat is the announcer's,
  the vote when every seat has voted.
- **Copy chains by pointer doubling.** The Torches and the Mirror form a pointer graph (as in
  :func:`~parlour.envs.six_suspects.rules.culprits_many`); four doubling steps follow every chain to its end or
  find its loop.
- **Observations are one gather from a source vector**, exactly as the scalar env hands them out: the core builds
  the env's source (:data:`~parlour.envs.six_suspects.env.SOURCE_LAYOUT`) from its state and reads each seat's
  observation through the env's own gather index, so field order and seat rotation cannot drift. Every float it
  writes (a count ÷ the turn cap, a score ÷ the maximum games) is looked up in a table computed in NumPy as the
  scalar env computes it, so the vectors agree bit for bit.
- **Deals come from ``key``** (a shuffle by ranking uniform draws); the scalar env draws from its own generator, so a
  lock-step check hands the core the scalar deal (:data:`DEAL_FIELDS`).
- **Legal actions only.** ``step`` assumes a legal action (the learner masks; the opponents choose among legal
  actions); the scalar env's ``illegal_action`` keyword has no counterpart.
- **Refused:** ``reward="expected"``: its value is a mean over the card arrangements consistent with a seat's view,
  enumerated up to 6! of them and sampled beyond with NumPy's generator seeded by the seen cards; a fixed-size JAX
  version would be a different reward. The driver's ``max_turns`` cap is supported.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs.jax_core import Core, bound, pad_rows, unless_finished
from parlour.envs.layout import state_from_source
from parlour.envs.six_suspects import rules
from parlour.envs.six_suspects.env import MAX_PLAYERS, SOURCE_LAYOUT, STATE_LAYOUT, observation_gather

ENV_ID = "six_suspects_v0"
P = rules.NUM_POSITIONS
C = rules.NUM_CARDS
#: The rule keywords a core refuses, with the reason (``make_core`` names it).
REFUSED = {("reward", "expected"): "its value is sampled with NumPy's generator beyond 6! arrangements"}
#: Rule-keyword sets the lock-step checks cover besides the defaults (every keyword, each away from its default).
VARIANTS: tuple[dict[str, Any], ...] = (
    {"num_games": 3, "reward": "win", "table_announcement_turns": 4},
    {"num_games": 2, "max_tiebreak_games": 0, "reward": "score", "rotate_start": False, "start_seat": 1},
    {"plain_values": (9, 1, 2, 3, 4, 0), "max_turns": 30},
)
#: The fields of :class:`State` that hold the deal (a lock-step check copies the scalar deal into them).
DEAL_FIELDS = ("layout",)

#: The parts of the hindsight vector (``Core.hindsight_blocks``; the same at every table): ``card_p`` (the card at
#: position ``p``, ``p = 0 .. 11``; one-hot over the 12 cards), then ``culprits`` (per suspect, whether it is a
#: culprit).
HINDSIGHT_BLOCKS: tuple[tuple[str, int, str], ...] = (
    *((f"card_{p}", C, "class") for p in range(P)),
    ("culprits", rules.NUM_SUSPECTS, "binary"),
)

_LEFT = np.array([rules.left_of(p) for p in range(P)], np.int32)
_RIGHT = np.array([rules.right_of(p) for p in range(P)], np.int32)
_MATE = np.array([rules.other_in_column(p) for p in range(P)], np.int32)
_BEFORE = np.arange(C)[None, :] < np.arange(C)[:, None]  # [i, j]: position j comes before i


class State(NamedTuple):
    """One table (per-seat arrays have ``num_players`` rows)."""

    layout: jax.Array  # int32[12]: card id at each position
    peeks: jax.Array  # int32[n, 12]: peeks per seat and position this game
    last_peek: jax.Array  # int32[n]: -1 none yet
    turns_each: jax.Array  # int32[n]: turns this game
    votes: jax.Array  # int32[n]: -1 not yet
    scores: jax.Array  # int32[n]: match points
    phase: jax.Array  # int32: rules.PEEK .. rules.OVER
    announcer: jax.Array  # int32: seat, rules.TABLE or rules.NO_ANNOUNCER
    current: jax.Array  # int32: the seat to act (kept once the match is over)
    game_index: jax.Array  # int32: games finished in this match
    turns: jax.Array  # int32: turns taken in the whole match (the driver's max_turns counts them)
    peek_phase_turns: jax.Array  # int32: turns of this game's peek phase
    key: jax.Array  # the deals of later games
    current_player: jax.Array  # int32: the seat to act, -1 once over
    rewards: jax.Array  # float32[n]: what the last step paid each seat
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool


def _scaled(count: int, scale: float) -> np.ndarray:
    """``k * scale`` for ``k = 0 .. count-1`` as the scalar env stores it (Python floats rounded to float32)."""
    return np.array([k * scale for k in range(count)], np.float64).astype(np.float32)


def winning(scores: jax.Array) -> jax.Array:
    """The seats that win a finished match with these match points: the top score, when someone scored (the scalar
    rules' ``winners()``)."""
    top = scores.max()
    return (scores == top) & (top > 0)


def winners(state: State) -> jax.Array:
    """The winning seats of a finished game (whatever the ``reward`` keyword pays): :func:`winning` of its points."""
    return winning(state.scores)


class Params(NamedTuple):
    """Everything a table's core computes once from its player count and rule keywords (:func:`params`): the Python
    values that choose what is traced, and the NumPy tables the traced functions read as constants."""

    num_players: int  # seats at the table (n)
    cap: int  # ``table_announcement_turns``: peek turns per seat before the table announces
    start_seat: int  # the first game's first seat
    rotate_start: bool  # whether each later game starts one seat further on
    reward: str  # "vote", "score" or "win"
    num_games: int  # games a match plays at least
    max_games: int  # games a match plays at most (tiebreak games included)
    max_turns: int | None  # the driver's cap on turns (peeks and announcements); None: no cap
    obs_size: int
    state_size: int
    turn_scale: np.ndarray  # float32[cap + 2]: a count of turns ÷ (cap + 1), as the env computes it
    game_scale: np.ndarray  # float32[max_games + 1]: a count of games ÷ max_games, as the env computes it
    gather: np.ndarray  # int32[n, obs_size]: per observer, its observation's entries in public + own private fields
    state_index: np.ndarray  # int32[state_size]: the source entry each state-vector entry copies (0: the core's)
    halves: np.ndarray  # int32[13]: each card id's value in halves; the last entry is LOOP (-1)


def make_core(num_players: int = 4, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``six_suspects_v0``)."""
    p = params(validate(num_players, max_turns, options), max_turns)
    return Core(
        env_id=ENV_ID,
        num_players=p.num_players,
        num_actions=rules.NUM_ACTIONS,
        obs_size=p.obs_size,
        state_size=p.state_size,
        **bound(p, sys.modules[__name__]),
        hindsight_blocks=HINDSIGHT_BLOCKS,
    )


def validate(num_players: int, max_turns: int | None, options: dict[str, Any]) -> rules.Options:
    """The rules' options of a table (``ValueError`` for a refused or invalid keyword, or an invalid ``max_turns``)."""
    for (name, value), why in REFUSED.items():
        if options.get(name) == value:
            raise ValueError(f"six_suspects jax core: {name}={value!r} is not supported ({why}); use the scalar env")
    opts = rules.Options(num_players=num_players, **options)
    if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
        raise ValueError(f"six_suspects jax core: max_turns={max_turns!r} is not valid: expected an integer >= 1")
    return opts


def params(opts: rules.Options, max_turns: int | None) -> Params:
    """The :class:`Params` of a table with the (validated) rules' options ``opts`` and the driver's ``max_turns``."""
    n = opts.num_players
    cap = opts.table_announcement_turns
    full = np.stack([observation_gather(o, n) for o in range(n)]).astype(np.int32)
    gather = _own_blocks(full)
    # The state vector: each entry copied from a source entry (the index of ``zero`` where the core fills it).
    copied = state_from_source(
        STATE_LAYOUT,
        SOURCE_LAYOUT,
        np.arange(SOURCE_LAYOUT.size, dtype=np.float32),
        n - 2,
        rename={"votes": "own_vote"},
    )
    assert SOURCE_LAYOUT["zero"].start == 0 and SOURCE_LAYOUT["one"].start == 1  # the index trick's premise
    plain = np.zeros(C + 1, np.int32)  # value in halves per card id; the last entry is LOOP (-1)
    plain[rules.SWAP] = rules.SWAP_VALUE_HALVES
    plain[list(rules.PLAIN_CARDS)] = [2 * v for v in opts.plain_values]
    return Params(
        num_players=n,
        cap=cap,
        start_seat=opts.start_seat,
        rotate_start=bool(opts.rotate_start),
        reward=opts.reward,
        num_games=opts.num_games,
        max_games=opts.max_games,
        max_turns=max_turns,
        obs_size=int(gather.shape[1]),
        state_size=STATE_LAYOUT.size,
        turn_scale=_scaled(cap + 2, 1.0 / (cap + 1)),  # a seat takes at most cap + 1 turns in a game
        game_scale=_scaled(opts.max_games + 1, 1.0 / opts.max_games),
        gather=gather,
        state_index=copied.astype(np.int32),
        halves=plain,
    )


# ---------------------------------------------------------------------------------------------------- the deal
def _first_seat(p: Params, game_index: jax.Array) -> jax.Array:
    """The seat that starts game ``game_index`` of the match."""
    return jnp.asarray((p.start_seat + (game_index if p.rotate_start else 0)) % p.num_players, jnp.int32)


def _deal(key: jax.Array) -> jax.Array:
    """A layout: card id at each position."""
    # A uniform permutation: the ranks of 12 independent random words, ties broken by position. Counting
    # comparisons costs a quarter of a sort on CPU, where a sort is the dearest part of a step under vmap.
    u = jax.random.bits(key, (C,))
    lower = (u[None, :] < u[:, None]) | ((u[None, :] == u[:, None]) & jnp.asarray(_BEFORE))
    return lower.sum(axis=1).astype(jnp.int32)


def init(p: Params, key: jax.Array) -> State:
    """A new match, every deal drawn from ``key``."""
    i32 = jnp.int32
    n = p.num_players
    key, sub = jax.random.split(key)
    zero = jnp.zeros(n, i32)
    return State(
        layout=_deal(sub),
        peeks=jnp.zeros((n, P), i32),
        last_peek=zero - 1,
        turns_each=zero,
        votes=zero - 1,
        scores=zero,
        phase=i32(rules.PEEK),
        announcer=i32(rules.NO_ANNOUNCER),
        current=_first_seat(p, i32(0)),
        game_index=i32(0),
        turns=i32(0),
        peek_phase_turns=i32(0),
        key=key,
        current_player=_first_seat(p, i32(0)),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(False),
    )


def _new_game(p: Params, s: State) -> State:
    """The next game of the match: a new deal from the state's key, the game's counts cleared."""
    i32 = jnp.int32
    n = p.num_players
    key, sub = jax.random.split(s.key)
    zero = jnp.zeros(n, i32)
    return s._replace(
        layout=_deal(sub),
        peeks=jnp.zeros((n, P), i32),
        last_peek=zero - 1,
        turns_each=zero,
        votes=zero - 1,
        phase=i32(rules.PEEK),
        announcer=i32(rules.NO_ANNOUNCER),
        peek_phase_turns=i32(0),
        current=_first_seat(p, s.game_index),
        key=key,
    )


# ---------------------------------------------------------------------------------------------------- the culprits
def _effective(layout: jax.Array) -> jax.Array:
    """int32[12]: the card each position counts as, after the Swap and along the copy chains (a Torch or the
    Mirror still there: the chain loops)."""
    pos = jnp.arange(P, dtype=jnp.int32)
    left, right, mate = jnp.asarray(_LEFT), jnp.asarray(_RIGHT), jnp.asarray(_MATE)
    sp = jnp.argmax(layout == rules.SWAP)
    a, b = left[sp], right[sp]
    grid = layout.at[a].set(layout[b]).at[b].set(layout[a])
    tl, tr, mirror = grid == rules.TORCH_LEFT, grid == rules.TORCH_RIGHT, grid == rules.MIRROR
    target = jnp.where(tl, left, right)
    ptr = jnp.where(tl | tr, jnp.where(grid[target] == rules.MIRROR, mate, target), pos)
    ptr = jnp.where(mirror, mate, ptr)
    for _ in range(4):  # chains are at most 12 long
        ptr = ptr[ptr]
    return grid[ptr]


def culprits(p: Params, layout: jax.Array) -> jax.Array:
    """bool[6]: the suspects with the highest total among those the Police does not clear."""
    eff = _effective(layout)
    looped = (eff == rules.TORCH_LEFT) | (eff == rules.TORCH_RIGHT) | (eff == rules.MIRROR)
    value = jnp.where(looped, jnp.int32(rules.LOOP_VALUE_HALVES), jnp.asarray(p.halves)[eff])
    top, bottom = eff[: rules.NUM_SUSPECTS], eff[rules.NUM_SUSPECTS :]
    totals = value[: rules.NUM_SUSPECTS] + value[rules.NUM_SUSPECTS :]
    totals = jnp.where((top == rules.DIAMOND) | (bottom == rules.DIAMOND), rules.DIAMOND_TOTAL_HALVES, totals)
    police = (top == rules.POLICE) | (bottom == rules.POLICE)
    totals = jnp.where(police, -1, totals)
    return (totals == totals.max()) & ~police


# ---------------------------------------------------------------------------------------------------- the step
def _vote_rewards(p: Params, right: jax.Array) -> jax.Array:
    """What a game's votes pay each seat by the ``reward`` keyword (``win`` pays at the match's end only)."""
    if p.reward == "vote":
        return jnp.where(right, 1.0, -1.0)
    if p.reward == "score":
        return right.astype(jnp.float32)
    return jnp.zeros(p.num_players, jnp.float32)


def _match_over(p: Params, scores: jax.Array, games: jax.Array, now: jax.Array) -> jax.Array:
    """Whether the game scored ``now`` ends the match: after ``num_games`` games, unless tied for the lead (up to
    ``max_games``)."""
    if p.num_games == 1:
        return now
    top = scores.max()
    return now & (games >= p.num_games) & ((games >= p.max_games) | ((scores == top).sum() == 1))


def _resolve(p: Params, s: State, now: jax.Array) -> State:
    """Score the game when ``now`` (everyone has voted): rewards, match points, the end or the next deal."""
    i32 = jnp.int32
    right = culprits(p, s.layout)[s.votes]
    scores = s.scores + (right & now).astype(i32)
    games = s.game_index + now.astype(i32)
    rewards = _vote_rewards(p, right)
    over = _match_over(p, scores, games, now)
    if p.reward == "win":
        rewards = jnp.where(over & (scores.max() > 0), jnp.where(winning(scores), 1.0, -1.0), rewards)
    s = s._replace(
        scores=scores,
        game_index=games,
        rewards=jnp.where(now, rewards, 0.0).astype(jnp.float32),
        phase=jnp.where(over, i32(rules.OVER), s.phase),
    )
    if p.num_games == 1:  # statically: no later deal to draw
        return s
    return jax.tree.map(lambda a, b: jnp.where(now & ~over, a, b), _new_game(p, s), s)


def _act(p: Params, s: State, a: jax.Array) -> State:
    """The action's own effects: a peek, an announcement or a vote, and whose turn or vote is next."""
    i32 = jnp.int32
    seat = s.current
    peeked, announced, voted = a < rules.ANNOUNCE, a == rules.ANNOUNCE, a >= rules.VOTE_BASE
    took_turn = peeked | announced
    nxt = (seat + 1) % p.num_players
    peek_turns = s.peek_phase_turns + (peeked & (s.phase == rules.PEEK)).astype(i32)
    capped = peeked & (s.phase == rules.PEEK) & (peek_turns >= p.cap * p.num_players)  # the table announces
    last_done = peeked & (s.phase == rules.LAST_TURNS) & (nxt == s.announcer)
    return s._replace(
        peeks=s.peeks.at[seat, jnp.where(peeked, a, 0)].add(peeked.astype(i32)),
        last_peek=jnp.where(peeked, s.last_peek.at[seat].set(a), s.last_peek),
        turns_each=s.turns_each.at[seat].add(took_turn.astype(i32)),
        turns=s.turns + took_turn.astype(i32),
        peek_phase_turns=peek_turns,
        votes=jnp.where(voted, s.votes.at[seat].set(a - rules.VOTE_BASE), s.votes),
        announcer=jnp.where(announced, seat, jnp.where(capped, i32(rules.TABLE), s.announcer)),
        phase=jnp.where(announced, i32(rules.LAST_TURNS), jnp.where(capped | last_done, i32(rules.VOTE), s.phase)),
        current=jnp.where(last_done, (s.announcer + 1) % p.num_players, nxt),
    )


def step(p: Params, state: State, action: jax.Array) -> State:
    """One action of the seat to act."""
    # One flat pass (no branches): under vmap a branch is computed for every game anyway, and whole-state
    # selects between branches cost more than the rules.
    a = jnp.asarray(action, jnp.int32)
    s = _act(p, state, a)
    s = _resolve(p, s, (a >= rules.VOTE_BASE) & (s.votes >= 0).all())
    terminated = s.phase == rules.OVER
    truncated = jnp.bool_(False) if p.max_turns is None else (~terminated) & (s.turns >= p.max_turns)
    s = s._replace(
        terminated=terminated,
        truncated=truncated,
        current_player=jnp.where(terminated | truncated, -1, s.current).astype(jnp.int32),
    )
    return unless_finished(state, s)


# ---------------------------------------------------------------------------------------------------- the mask
def _can_announce(p: Params, s: State) -> jax.Array:
    return (s.phase == rules.PEEK) & (s.peek_phase_turns >= rules.ANNOUNCE_AFTER_TURNS * p.num_players)


def legal_mask(p: Params, s: State) -> jax.Array:
    """The acting seat's legal actions (all False once the game is over)."""
    acts = jnp.arange(rules.NUM_ACTIONS)
    peeking = (s.phase == rules.PEEK) | (s.phase == rules.LAST_TURNS)
    mask = jnp.where(
        s.phase == rules.VOTE,
        acts >= rules.VOTE_BASE,
        peeking & ((acts < rules.ANNOUNCE) | ((acts == rules.ANNOUNCE) & _can_announce(p, s))),
    )
    return mask & ~(s.terminated | s.truncated)


# ---------------------------------------------------------------------------------------------------- observations
def _pad(x: jax.Array) -> jax.Array:
    return pad_rows(x, MAX_PLAYERS)


def _public(p: Params, s: State) -> jax.Array:
    """The public part of the scalar env's source vector (``SixSuspectsEnv._write_source``): every field before
    the per-seat private ones."""
    over = s.phase == rules.OVER
    f32 = jnp.float32
    ts, gs = jnp.asarray(p.turn_scale), jnp.asarray(p.game_scale)
    announcer = jnp.where(s.announcer == rules.TABLE, MAX_PLAYERS, s.announcer)
    own = jax.nn.one_hot(s.votes, rules.NUM_SUSPECTS, dtype=f32)  # -1 (no vote) is all zero
    parts = [
        jnp.zeros(1, f32),
        jnp.ones(1, f32),
        jax.nn.one_hot(s.phase, 4, dtype=f32),
        _pad(ts[s.peeks]),
        _pad(jax.nn.one_hot(s.last_peek, P, dtype=f32)),
        _pad(ts[s.turns_each]),
        _can_announce(p, s).astype(f32)[None],
        jax.nn.one_hot(announcer, MAX_PLAYERS + 1, dtype=f32),
        jax.nn.one_hot(jnp.where(over, -1, s.current), MAX_PLAYERS, dtype=f32),
        _pad(jnp.where(over, own, 0.0)),
        _pad(gs[s.scores]),
        gs[s.game_index][None],
    ]
    return jnp.concatenate([x.reshape(-1) for x in parts])


def _private(s: State, seat: jax.Array) -> jax.Array:
    """``seat``'s private fields of the source: the cards it knows, its own vote."""
    known = (s.peeks[seat] > 0) | (s.phase == rules.OVER)
    seen = known[:, None] & jax.nn.one_hot(s.layout, C, dtype=bool)
    own = jax.nn.one_hot(s.votes[seat], rules.NUM_SUSPECTS, dtype=jnp.float32)
    return jnp.concatenate([seen.astype(jnp.float32).reshape(-1), own])


def _source(p: Params, s: State) -> jax.Array:
    """The scalar env's whole source vector (every seat's private fields, padded to MAX_PLAYERS seats)."""
    rows = jax.vmap(lambda seat: _private(s, seat))(jnp.arange(p.num_players))
    seen, own = rows[:, : P * C].reshape(p.num_players, P, C), rows[:, P * C :]
    return jnp.concatenate([_public(p, s), _pad(seen).reshape(-1), _pad(own).reshape(-1)])


def observe(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """``seat``'s observation, exactly the scalar env's."""
    # the public fields and this seat's own private block: a seat's view never reads another's
    return jnp.concatenate([_public(p, s), _private(s, seat)])[jnp.asarray(p.gather)[seat]]


def state_vector(p: Params, s: State) -> jax.Array:
    """The scalar env's ``state()`` vector."""
    v = _source(p, s)[jnp.asarray(p.state_index)]
    layout = jax.nn.one_hot(s.layout, C, dtype=jnp.float32).reshape(-1)
    v = v.at[STATE_LAYOUT["layout"]].set(layout)
    return v.at[STATE_LAYOUT["seen"]].set(_pad((s.peeks > 0).astype(jnp.float32)).reshape(-1))


def hindsight(p: Params, s: State, seat: jax.Array) -> jax.Array:
    """What the end-of-game reveal (the scalar ``outcome()``: the ``layout`` and its game's ``culprits``) shows
    ``seat``: the card at each of the 12 positions (row 0 then row 1, as the rules number them: the positions
    are the table's, the same for every seat), one-hot over the 12 cards each; then the culprit suspects (one
    entry per suspect, 1 where it is a culprit: ties make several). The same for every seat; the positions
    ``seat`` peeked at are in its observation already. Of a match (``num_games > 1``), the last game's. Read on
    a finished game's state. A training target of belief heads only: never an input of a policy."""
    del seat  # nothing in it is seat-relative
    cards = jax.nn.one_hot(s.layout, C, dtype=jnp.float32).reshape(-1)
    return jnp.concatenate([cards, culprits(p, s.layout).astype(jnp.float32)])


def _own_blocks(full: np.ndarray) -> np.ndarray:
    """The env's gather index (into the whole source) rewritten, per observer, into the public fields followed by
    that observer's own private block: ``seen_cards`` then ``own_vote`` of that seat alone."""
    seen, own = SOURCE_LAYOUT["seen_cards"], SOURCE_LAYOUT["own_vote"]
    assert seen.stop == own.start and own.stop == SOURCE_LAYOUT.size  # the private fields close the source
    seen_block, own_block = P * C, rules.NUM_SUSPECTS
    out = full.copy()
    for o, row in enumerate(full):
        in_seen = (row >= seen.start) & (row < seen.stop)
        in_own = row >= own.start
        if (
            not ((row[in_seen] - seen.start) // seen_block == o).all()
            or not ((row[in_own] - own.start) // own_block == o).all()
        ):
            raise AssertionError(f"seat {o}'s observation reads another seat's private fields")
        out[o, in_seen] = seen.start + (row[in_seen] - seen.start) % seen_block
        out[o, in_own] = seen.start + seen_block + (row[in_own] - own.start) % own_block
    return out


def deal_number(game: rules.SixSuspectsState) -> int:
    """Which deal of its match a scalar state is on (a lock-step check copies each new one into the core)."""
    return game.game_index


def from_rules(game: rules.SixSuspectsState, core: Core, key: Any = None) -> State:
    """The core's state of a scalar rules state (``key``: the deals of its later games; default ``PRNGKey(0)``)."""
    n = core.num_players
    i32 = np.int32
    over = game.phase == rules.OVER
    current_player = -1 if over else game.current
    return State(
        layout=jnp.asarray(np.array(game.layout, i32)),
        peeks=jnp.asarray(np.array(game.peeks, i32).reshape(n, P)),
        last_peek=jnp.asarray(np.array(game.last_peek, i32)),
        turns_each=jnp.asarray(np.array(game.turns_each, i32)),
        votes=jnp.asarray(np.array(game.votes, i32)),
        scores=jnp.asarray(np.array(game.scores, i32)),
        phase=jnp.int32(game.phase),
        announcer=jnp.int32(game.announcer),
        current=jnp.int32(game.current),
        game_index=jnp.int32(game.game_index),
        turns=jnp.int32(game.turns),
        peek_phase_turns=jnp.int32(game.peek_phase_turns),
        key=jax.random.PRNGKey(0) if key is None else key,
        current_player=jnp.int32(current_player),
        rewards=jnp.zeros(n, jnp.float32),
        terminated=jnp.bool_(over),
        truncated=jnp.bool_(False),
    )
