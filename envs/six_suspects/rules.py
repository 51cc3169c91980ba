"""6 Suspects: the pure rules (no RL imports).

Rulebook: the publisher's (not shipped); project rulings: ``docs/rulings.md``. Every ruling that is a
project choice is a named constant or an :class:`Options` field below.

Positions: the 12 evidence cards lie in 2 rows × 6 columns; position ``p = row * 6 + column``. Column ``c`` is
suspect ``SUSPECTS[c]``; row 0 is the top card, row 1 the bottom card. "Left" of a card is column ``c - 1``,
"right" is ``c + 1``, wrapping (Albert is right of Francine).

Actions (one flat space): ``0–11`` peek at position ``p``; ``12`` announce; ``13–18`` vote for suspect
``a - 13``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import permutations
from math import factorial
from typing import Any

import numpy as np

from parlour.envs.contract import Rules, check_bool, check_choice, check_int, copy_generator
from parlour.envs.six_suspects import GAME

#: The player counts, from the game's declaration (:data:`parlour.envs.six_suspects.GAME`).
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = GAME.min_players, GAME.max_players, GAME.default_players

# ----------------------------------------------------------------------------------------------- the cards
#: Suspects, left to right. Only Albert, Denise and Francine are named in the rulebook (ruling: placeholders).
SUSPECTS = ("Albert", "Beatrice", "Charles", "Denise", "Edgar", "Francine")
NUM_SUSPECTS = 6
NUM_ROWS = 2
NUM_POSITIONS = NUM_ROWS * NUM_SUSPECTS
ROW_NAMES = ("top", "bottom")

SWAP, TORCH_LEFT, TORCH_RIGHT, MIRROR, DIAMOND, POLICE = range(6)
#: Card ids 6–11 are the six plain cards, worth ``Options.plain_values`` in that order.
PLAIN_CARDS = tuple(range(6, 12))
NUM_CARDS = 12
SPECIAL_NAMES = ("Swap", "Torch Left", "Torch Right", "Mirror", "Diamond", "Police")
#: The six plain cards' values (ruling, **choice**: the printed values are not in the transcription).
DEFAULT_PLAIN_VALUES = (0, 1, 2, 3, 5, 6)
#: The Swap card's value; the Diamond makes its column total exactly 9½ (rulebook). Values are kept in halves.
SWAP_VALUE_HALVES = 8
DIAMOND_TOTAL_HALVES = 19
#: A copying loop makes every card in it worth 0 with no effect (ruling, **choice**).
LOOP = -1
LOOP_VALUE_HALVES = 0

# ----------------------------------------------------------------------------------------------- the turns
#: Turns every player must have taken before anyone may announce (rulebook: "at least four times").
ANNOUNCE_AFTER_TURNS = 4
#: If nobody has announced once every player has taken this many turns, the table announces (ruling, choice).
DEFAULT_TABLE_ANNOUNCEMENT_TURNS = 12


#: The hidden vote is taken one seat at a time, clockwise from the seat left of the announcer (ruling: the
#: "simultaneous" vote is sequential and nobody sees another's vote before all have voted).
class Phase(IntEnum):
    """The phases of a 6 Suspects game."""

    PEEK = 0
    LAST_TURNS = 1
    VOTE = 2
    OVER = 3


#: Plain-int aliases of :class:`Phase` for the hot paths (a state stores its phase as an int: an IntEnum member
#: costs more to compare and index with).
PEEK, LAST_TURNS, VOTE, OVER = (int(p) for p in Phase)
PHASE_NAMES = ("peek", "last turns", "vote", "over")
#: ``announcer`` value when the table announced because of the turn cap.
TABLE = -2
NO_ANNOUNCER = -1

# ----------------------------------------------------------------------------------------------- actions
ANNOUNCE = NUM_POSITIONS
VOTE_BASE = ANNOUNCE + 1
NUM_ACTIONS = VOTE_BASE + NUM_SUSPECTS

REWARD_MODES = ("vote", "score", "win", "expected")

_MASK_PEEK = np.zeros(NUM_ACTIONS, np.int8)
_MASK_PEEK[:NUM_POSITIONS] = 1
_MASK_PEEK_ANNOUNCE = _MASK_PEEK.copy()
_MASK_PEEK_ANNOUNCE[ANNOUNCE] = 1
_MASK_VOTE = np.zeros(NUM_ACTIONS, np.int8)
_MASK_VOTE[VOTE_BASE:] = 1
_MASK_NONE = np.zeros(NUM_ACTIONS, np.int8)
for _m in (_MASK_PEEK, _MASK_PEEK_ANNOUNCE, _MASK_VOTE, _MASK_NONE):
    _m.flags.writeable = False


def left_of(p: int) -> int:
    r, c = divmod(p, NUM_SUSPECTS)
    return r * NUM_SUSPECTS + (c - 1) % NUM_SUSPECTS


def right_of(p: int) -> int:
    r, c = divmod(p, NUM_SUSPECTS)
    return r * NUM_SUSPECTS + (c + 1) % NUM_SUSPECTS


def other_in_column(p: int) -> int:
    return (p + NUM_SUSPECTS) % NUM_POSITIONS


_LEFT = [left_of(p) for p in range(NUM_POSITIONS)]
_RIGHT = [right_of(p) for p in range(NUM_POSITIONS)]
_MATE = [other_in_column(p) for p in range(NUM_POSITIONS)]


def position_name(p: int) -> str:
    r, c = divmod(p, NUM_SUSPECTS)
    return f"{SUSPECTS[c]}, {ROW_NAMES[r]} card"


def card_name(card: int, plain_values: tuple[int, ...] = DEFAULT_PLAIN_VALUES) -> str:
    if card < len(SPECIAL_NAMES):
        return {SWAP: "Swap (4)", DIAMOND: "Diamond (9½)"}.get(card, SPECIAL_NAMES[card])
    return str(plain_values[card - PLAIN_CARDS[0]])


# ----------------------------------------------------------------------------------------------- resolution
@dataclass(frozen=True)
class Resolution:
    """The result of revealing a layout."""

    after_swap: tuple[int, ...]  # card at each position once the Swap has acted
    effective: tuple[int, ...]  # what each position counts as (a base card id, or LOOP)
    totals_halves: tuple[int, ...]  # each column's evidence total, in halves (19 = 9½)
    police: tuple[bool, ...]  # columns that cannot be the culprit
    culprits: tuple[int, ...]  # columns with the highest total among non-police columns

    def as_dict(self) -> dict[str, Any]:
        return {
            "after_swap": list(self.after_swap),
            "effective": list(self.effective),
            "totals": [t / 2 for t in self.totals_halves],
            "police": [SUSPECTS[c] for c in range(NUM_SUSPECTS) if self.police[c]],
            "culprits": [SUSPECTS[c] for c in self.culprits],
        }


def resolve(layout: Any, plain_values: tuple[int, ...] = DEFAULT_PLAIN_VALUES) -> Resolution:
    """Reveal ``layout`` (card id per position) and find the culprit(s), per the rulebook and rulings.

    Order: the Swap exchanges its left and right neighbours (same row); then every Torch copies its neighbour
    and the Mirror the other card of its column, on the swapped layout; then columns are totalled.
    """
    grid = [int(x) for x in layout]
    if SWAP in grid:
        p = grid.index(SWAP)
        lft, rgt = left_of(p), right_of(p)
        grid[lft], grid[rgt] = grid[rgt], grid[lft]

    # Each Torch and the Mirror points at the card it copies (a Torch that copies the Mirror mirrors its own
    # column); following the pointers ends on a base card, or circles: a loop, worth 0.
    pointer = list(range(NUM_POSITIONS))
    for p, card in enumerate(grid):
        if card == MIRROR:
            pointer[p] = _MATE[p]
        elif card in (TORCH_LEFT, TORCH_RIGHT):
            target = _LEFT[p] if card == TORCH_LEFT else _RIGHT[p]
            pointer[p] = _MATE[p] if grid[target] == MIRROR else target
    eff_list = []
    for p in range(NUM_POSITIONS):
        q = p
        for _ in range(NUM_POSITIONS):
            if pointer[q] == q:
                break
            q = pointer[q]
        eff_list.append(grid[q] if pointer[q] == q else LOOP)
    eff = tuple(eff_list)
    totals: list[int] = []
    police: list[bool] = []
    for c in range(NUM_SUSPECTS):
        pair = (eff[c], eff[c + NUM_SUSPECTS])
        police.append(POLICE in pair)
        if DIAMOND in pair:
            totals.append(DIAMOND_TOTAL_HALVES)
        else:
            totals.append(sum(_value_halves(x, plain_values) for x in pair))
    best = max(t for t, pol in zip(totals, police, strict=False) if not pol)
    culprits = tuple(c for c in range(NUM_SUSPECTS) if not police[c] and totals[c] == best)
    return Resolution(tuple(grid), eff, tuple(totals), tuple(police), culprits)


def culprits_many(layouts: np.ndarray, plain_values: tuple[int, ...] = DEFAULT_PLAIN_VALUES) -> np.ndarray:
    """:func:`resolve` for many layouts at once: ``(W, 12)`` card ids -> ``(W, 6)`` bool culprit sets.

    The copying rules form a graph in which every Torch and the Mirror points at the card it copies (a Torch that
    copies the Mirror points at its own column's other card); following the pointers ends on a base card, or
    circles (a loop, worth 0). Pointer doubling follows every chain in a few vectorised steps.
    """
    grid = np.array(layouts, np.int64).copy()
    w = len(grid)
    rows = np.arange(w)
    pos = np.arange(NUM_POSITIONS)
    left = np.array([left_of(p) for p in range(NUM_POSITIONS)])
    right = np.array([right_of(p) for p in range(NUM_POSITIONS)])
    mate = np.array([other_in_column(p) for p in range(NUM_POSITIONS)])
    sp = np.argmax(grid == SWAP, axis=1)
    a, b = left[sp], right[sp]
    grid[rows, a], grid[rows, b] = grid[rows, b], grid[rows, a].copy()
    ptr = np.broadcast_to(pos, (w, NUM_POSITIONS)).copy()
    is_tl, is_tr, is_m = grid == TORCH_LEFT, grid == TORCH_RIGHT, grid == MIRROR
    target = np.where(is_tl, left, right)
    copies_mirror = np.take_along_axis(grid, target, axis=1) == MIRROR
    ptr = np.where(is_tl | is_tr, np.where(copies_mirror, mate, target), ptr)
    ptr = np.where(is_m, mate, ptr)
    for _ in range(4):  # chains are at most 12 long: 2**4 steps reach their end
        ptr = np.take_along_axis(ptr, ptr, axis=1)
    eff = np.take_along_axis(grid, ptr, axis=1)
    eff = np.where(np.isin(eff, (TORCH_LEFT, TORCH_RIGHT, MIRROR)), LOOP, eff)
    values = np.zeros(NUM_CARDS + 1, np.int64)  # index LOOP (-1) is the last entry: worth 0
    values[SWAP] = SWAP_VALUE_HALVES
    values[list(PLAIN_CARDS)] = [2 * v for v in plain_values]
    halves = values[eff]
    pair = halves[:, :NUM_SUSPECTS] + halves[:, NUM_SUSPECTS:]
    diamond = (eff[:, :NUM_SUSPECTS] == DIAMOND) | (eff[:, NUM_SUSPECTS:] == DIAMOND)
    police = (eff[:, :NUM_SUSPECTS] == POLICE) | (eff[:, NUM_SUSPECTS:] == POLICE)
    totals = np.where(diamond, DIAMOND_TOTAL_HALVES, pair)
    totals = np.where(police, -1, totals)
    culprits: np.ndarray = totals == totals.max(axis=1, keepdims=True)
    return culprits


#: Arrangements the belief functions enumerate exactly (6! = 720); beyond that they draw this many at random.
MAX_WORLDS = 1000


def consistent_layouts(known: dict[int, int], rng: np.random.Generator, max_worlds: int = MAX_WORLDS) -> np.ndarray:
    """Layouts ``(W, 12)`` consistent with ``known`` (position -> card): every one if there are at most
    ``max_worlds``, else ``max_worlds`` uniform draws. Under a uniform deal they are equally likely."""
    unknown_pos = [p for p in range(NUM_POSITIONS) if p not in known]
    unknown_cards = sorted(set(range(NUM_CARDS)) - set(known.values()))
    base = np.zeros(NUM_POSITIONS, np.int64)
    for p, card in known.items():
        base[p] = card
    if factorial(len(unknown_pos)) <= max_worlds:
        perms = list(permutations(unknown_cards))
        fills = np.array(perms, np.int64).reshape(len(perms), len(unknown_pos))
    else:
        fills = rng.permuted(np.tile(np.array(unknown_cards, np.int64), (max_worlds, 1)), axis=1)
    layouts = np.repeat(base[None, :], len(fills), axis=0)
    layouts[:, unknown_pos] = fills
    return layouts


def culprit_probabilities(
    known: dict[int, int], plain_values: tuple[int, ...] = DEFAULT_PLAIN_VALUES, max_worlds: int = MAX_WORLDS
) -> np.ndarray:
    """The probability that each suspect is a culprit given only ``known`` (uniform over consistent layouts).

    Deterministic: a sample, when one is needed, is drawn from a generator seeded by ``known`` itself."""
    seed = [NUM_CARDS * p + c for p, c in sorted(known.items())] or [0]
    layouts = consistent_layouts(known, np.random.default_rng(seed), max_worlds)
    probabilities: np.ndarray = culprits_many(layouts, plain_values).mean(axis=0)
    return probabilities


def _value_halves(card: int, plain_values: tuple[int, ...]) -> int:
    if card == SWAP:
        return SWAP_VALUE_HALVES
    if card >= PLAIN_CARDS[0]:
        return 2 * plain_values[card - PLAIN_CARDS[0]]
    return LOOP_VALUE_HALVES if card == LOOP else 0  # Police has no value of its own


# ----------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Options:
    """The rule keywords of 6 Suspects (all validated)."""

    num_players: int = DEFAULT_PLAYERS
    #: The rulebook's "three games in a row": games per episode (default one game).
    num_games: int = 1
    #: With ``num_games > 1``, extra games played while the top match score is tied (rulebook: "play one more
    #: game"); after this many the tied players share the win (ruling, **choice**: a bound keeps episodes finite).
    max_tiebreak_games: int = 3
    plain_values: tuple[int, ...] = DEFAULT_PLAIN_VALUES
    table_announcement_turns: int = DEFAULT_TABLE_ANNOUNCEMENT_TURNS
    start_seat: int = 0
    #: In a match, each new game starts one seat further clockwise (ruling, **choice**).
    rotate_start: bool = True
    #: ``vote``: ±1 per game for a right/wrong vote; ``score``: the rulebook's points (1/0) per game;
    #: ``win``: +1 to each match winner and −1 to every other seat at the end of the match;
    #: ``expected``: per game, ``2p − 1`` where ``p`` is the probability that the seat's vote is a culprit given
    #: only the cards it saw -- the expectation of ``vote`` given its information, with far less variance.
    reward: str = "vote"

    def __post_init__(self) -> None:

        check_int("six_suspects: num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        check_int("six_suspects: num_games", self.num_games, 1, 100)
        check_int("six_suspects: max_tiebreak_games", self.max_tiebreak_games, 0, 100)
        check_int(
            "six_suspects: table_announcement_turns",
            self.table_announcement_turns,
            ANNOUNCE_AFTER_TURNS,
            1000,
        )
        check_int("six_suspects: start_seat", self.start_seat, 0, self.num_players - 1)
        check_bool("six_suspects: rotate_start", self.rotate_start)
        check_choice("six_suspects: reward", self.reward, REWARD_MODES)
        values = tuple(self.plain_values)
        if len(values) != len(PLAIN_CARDS) or not all(isinstance(v, int) and 0 <= v <= 9 for v in values):
            raise ValueError(
                f"six_suspects: plain_values={self.plain_values!r} is not valid: expected six integers in [0, 9]"
            )
        object.__setattr__(self, "plain_values", values)

    @property
    def max_games(self) -> int:
        return self.num_games + (self.max_tiebreak_games if self.num_games > 1 else 0)

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return of one seat over an episode (a match of at most ``max_games`` games)."""
        games = float(self.max_games)
        return {"vote": (-games, games), "expected": (-games, games), "score": (0.0, games)}.get(
            self.reward, (-1.0, 1.0)
        )


# ----------------------------------------------------------------------------------------------- the state
@dataclass
class SixSuspectsState(Rules):
    """The whole table. Build one with :func:`deal`. Per-seat data are plain lists (fast to step and copy)."""

    options: Options
    rng: np.random.Generator
    layout: list[int] = field(default_factory=list)  # card id at each position
    seen: list[list[bool]] = field(default_factory=list)  # [seat][position]
    peeks: list[list[int]] = field(default_factory=list)  # [seat][position]
    last_peek: list[int] = field(default_factory=list)  # -1: none yet
    turns_each: list[int] = field(default_factory=list)
    votes: list[int] = field(default_factory=list)  # -1: not yet
    scores: list[int] = field(default_factory=list)
    phase: int = PEEK
    announcer: int = NO_ANNOUNCER
    current: int = 0
    queue: list[int] = field(default_factory=list)
    game_index: int = 0
    turns: int = 0  # turns taken in the whole match
    peek_phase_turns: int = 0  # turns taken in this game's peek phase (they go round-robin)
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.options.num_players

    @property
    def current_player(self) -> int:
        return -1 if self.phase == OVER else self.current

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def can_announce(self) -> bool:
        # Peek-phase turns go round-robin, so "every player has taken four turns" is a count of turns.
        return self.phase == PEEK and self.peek_phase_turns >= ANNOUNCE_AFTER_TURNS * self.options.num_players

    def legal_mask(self) -> np.ndarray:
        if self.phase == PEEK:
            return _MASK_PEEK_ANNOUNCE if self.can_announce() else _MASK_PEEK
        if self.phase == LAST_TURNS:
            return _MASK_PEEK
        if self.phase == VOTE:
            return _MASK_VOTE
        return _MASK_NONE

    def clone(self) -> SixSuspectsState:
        new = copy.copy(self)
        new.rng = copy_generator(self.rng)
        new.layout = self.layout[:]
        new.seen = [row[:] for row in self.seen]
        new.peeks = [row[:] for row in self.peeks]
        new.last_peek = self.last_peek[:]
        new.turns_each = self.turns_each[:]
        new.votes = self.votes[:]
        new.scores = self.scores[:]
        new.queue = self.queue[:]
        new.results = copy.deepcopy(self.results)
        new.changes = None
        return new

    # -------------------------------------------------------------------------------------------- play
    def play(self, action: int) -> list[float] | None:
        """Play ``action`` for the current seat (unchecked: :meth:`apply` checks); returns per-seat reward deltas
        when a game resolves. Notes in ``changes`` (when listened to): ``("peek", seat, position)``,
        ``("announce", seat or TABLE)``, ``("vote", seat)``, ``("phase",)`` (it moved on), ``("resolved",)`` (a game
        was resolved: a new deal or the end)."""
        seat = self.current
        n = self.options.num_players
        changes = self.changes
        if action < NUM_POSITIONS:
            self.seen[seat][action] = True
            self.peeks[seat][action] += 1
            self.last_peek[seat] = action
            self.turns_each[seat] += 1
            self.turns += 1
            if changes is not None:
                changes.append(("peek", seat, action))
            if self.phase == PEEK:
                self.peek_phase_turns += 1
                if self.peek_phase_turns >= self.options.table_announcement_turns * n:
                    self.announcer = TABLE
                    if changes is not None:
                        changes.append(("announce", TABLE))
                    self._start_vote(first=(seat + 1) % n)
                else:
                    self.current = (seat + 1) % n
            else:
                self._next_in_queue()
            return None
        if action == ANNOUNCE:
            self.announcer = seat
            self.turns_each[seat] += 1
            self.turns += 1
            if changes is not None:
                changes.append(("announce", seat))
            self.phase = LAST_TURNS
            if changes is not None:
                changes.append(("phase",))
            self.queue = [(seat + k) % n for k in range(1, n)]
            self._next_in_queue()
            return None
        self.votes[seat] = action - VOTE_BASE
        if changes is not None:
            changes.append(("vote", seat))
        if self.queue:
            self.current = self.queue.pop(0)
            return None
        if changes is not None:
            changes.append(("resolved",))  # a new deal, or the end of the match: everything is shown afresh
        return self._resolve_game()

    def _next_in_queue(self) -> None:
        if self.queue:
            self.current = self.queue.pop(0)
        else:
            self._start_vote(first=(self.announcer + 1) % self.n)

    def _start_vote(self, first: int) -> None:
        self.phase = VOTE
        if self.changes is not None:
            self.changes.append(("phase",))
        order = [(first + k) % self.n for k in range(self.n)]
        self.current = order[0]
        self.queue = order[1:]

    def _resolve_game(self) -> list[float]:
        opts = self.options
        res = resolve(self.layout, opts.plain_values)
        right = [v in res.culprits for v in self.votes]
        for s, ok in enumerate(right):
            self.scores[s] += ok
        self.results.append(
            {
                "game": self.game_index,
                "layout": list(self.layout),
                "votes": [SUSPECTS[v] for v in self.votes],
                "announcer": self.announcer,
                "right": right,
                **res.as_dict(),
            }
        )
        self.game_index += 1
        if opts.reward == "vote":
            rewards = [1.0 if ok else -1.0 for ok in right]
        elif opts.reward == "expected":
            rewards = [
                2.0 * float(culprit_probabilities(self.known_cards(s), opts.plain_values)[self.votes[s]]) - 1.0
                for s in range(self.n)
            ]
        elif opts.reward == "score":
            rewards = [float(ok) for ok in right]
        else:
            rewards = [0.0] * self.n
        if self._match_over():
            self.phase = OVER
            self.queue = []
            winners = self.winners()
            if opts.reward == "win" and winners:
                rewards = [1.0 if s in winners else -1.0 for s in range(self.n)]
        else:
            self._new_game()
        return rewards

    def _match_over(self) -> bool:
        opts = self.options
        if self.game_index < opts.num_games:
            return False
        if opts.num_games == 1 or self.game_index >= opts.max_games:
            return True
        return self.scores.count(max(self.scores)) == 1

    def winners(self) -> list[int]:
        """Seats with the highest match score; nobody wins if nobody scored."""
        top = max(self.scores)
        return [] if top == 0 else [s for s in range(self.n) if self.scores[s] == top]

    def _new_game(self) -> None:
        n = self.n
        opts = self.options
        self.layout = self.rng.permutation(NUM_CARDS).tolist()
        self.seen = [[False] * NUM_POSITIONS for _ in range(n)]
        self.peeks = [[0] * NUM_POSITIONS for _ in range(n)]
        self.last_peek = [-1] * n
        self.turns_each = [0] * n
        self.votes = [-1] * n
        self.phase = PEEK
        self.announcer = NO_ANNOUNCER
        self.queue = []
        self.peek_phase_turns = 0
        self.current = (opts.start_seat + (self.game_index if opts.rotate_start else 0)) % n

    # -------------------------------------------------------------------------------------------- views
    def known_cards(self, seat: int) -> dict[int, int]:
        """Position -> card for every card ``seat`` has seen this game."""
        return {p: self.layout[p] for p in range(NUM_POSITIONS) if self.seen[seat][p]}

    def known_positions(self, seat: int) -> list[bool]:
        """Whether ``seat`` knows the card at each position (all of them once the game is over)."""
        if self.phase == OVER:
            return [True] * NUM_POSITIONS
        return self.seen[seat]

    def outcome(self) -> dict[str, Any]:
        return {
            "scores": list(self.scores),
            "winners": self.winners(),
            "games": [
                dict(r, layout_names=[card_name(x, self.options.plain_values) for x in r["layout"]])
                for r in self.results
            ],
            "layout": list(self.layout),
            "layout_names": [card_name(x, self.options.plain_values) for x in self.layout],
            "votes": list(self.votes),
        }


def deal(options: Options, rng: np.random.Generator) -> SixSuspectsState:
    """A new match: the first game's shuffled layout, every draw from ``rng`` (kept for later games)."""
    state = SixSuspectsState(options=options, rng=rng, scores=[0] * options.num_players)
    state._new_game()
    return state


def position(
    options: Options, layout: Sequence[int], actions: Sequence[int] = (), rng: np.random.Generator | None = None
) -> SixSuspectsState:
    """A state set up by hand, for tests, puzzles and analysis: the first game laid out as ``layout`` (card ids
    by position, row 0 then row 1), then ``actions`` (peeks, an announcement, votes) played in turn from the
    start, each checked against the rules. ``rng`` deals any later games of a match."""
    if sorted(int(c) for c in layout) != list(range(NUM_CARDS)):
        raise ValueError(f"position: layout={list(layout)!r} is not a permutation of the card ids 0–{NUM_CARDS - 1}")
    state = deal(options, np.random.default_rng(0) if rng is None else rng)
    state.layout = [int(c) for c in layout]
    for i, action in enumerate(actions):
        try:
            state.apply(action)
        except ValueError as err:
            raise ValueError(f"position: action {i} ({action!r}): {err}") from None
    return state


def resample(state: SixSuspectsState, seat: int, rng: np.random.Generator) -> SixSuspectsState:
    """A copy of ``state`` with everything hidden from ``seat`` redrawn: the cards it has not seen are shuffled among
    their positions; while the vote is under way, the others' votes are redrawn; later games of a match get a new
    deal seed."""
    g = state.clone()
    known = g.known_positions(seat)
    hidden = [p for p in range(NUM_POSITIONS) if not known[p]]
    cards = [g.layout[p] for p in hidden]
    for p, k in zip(hidden, rng.permutation(len(hidden)), strict=False):
        g.layout[p] = cards[k]
    if g.phase == VOTE:
        # Votes cast by others are hidden until everyone has voted.
        for s in range(g.n):
            if s != seat and g.votes[s] >= 0:
                g.votes[s] = int(rng.integers(NUM_SUSPECTS))
    g.rng = np.random.default_rng(int(rng.integers(2**63 - 1)))  # the deals of later games
    return g
