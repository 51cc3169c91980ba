"""6 Suspects: the pure rules (no RL imports).

Rulebook: ``shared/rules/six-suspects.txt``; project rulings: ``shared/RULINGS.md``. Every ruling that is a
project choice is a named constant or an :class:`Options` field below.

Positions: the 12 evidence cards lie in 2 rows × 6 columns; position ``p = row * 6 + column``. Column ``c`` is
suspect ``SUSPECTS[c]``; row 0 is the top card, row 1 the bottom card. "Left" of a card is column ``c - 1``,
"right" is ``c + 1``, wrapping (Albert is right of Francine).

Actions (one flat space): ``0–11`` peek at position ``p``; ``12`` announce; ``13–18`` vote for suspect
``a - 13``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
PEEK, LAST_TURNS, VOTE, OVER = range(4)
PHASE_NAMES = ("peek", "last turns", "vote", "over")
#: ``announcer`` value when the table announced because of the turn cap.
TABLE = -2
NO_ANNOUNCER = -1

# ----------------------------------------------------------------------------------------------- actions
ANNOUNCE = NUM_POSITIONS
VOTE_BASE = ANNOUNCE + 1
NUM_ACTIONS = VOTE_BASE + NUM_SUSPECTS

REWARD_MODES = ("vote", "score", "win")

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

    def effective(p: int, chain: frozenset[int]) -> int:
        card = grid[p]
        if card not in (TORCH_LEFT, TORCH_RIGHT, MIRROR):
            return card  # a base card; a copied Swap is worth 4 and swaps nothing
        if p in chain:
            return LOOP
        chain = chain | {p}
        if card == MIRROR:
            # A Mirror copies the other card of its column, as that card resolves (a Torch: what it became).
            return effective(other_in_column(p), chain)
        target = left_of(p) if card == TORCH_LEFT else right_of(p)
        if grid[target] == MIRROR:
            # A Torch that copies the Mirror acts as a Mirror in its own column.
            return effective(other_in_column(p), chain | {target})
        return effective(target, chain)

    eff = tuple(effective(p, frozenset()) for p in range(NUM_POSITIONS))
    totals: list[int] = []
    police: list[bool] = []
    for c in range(NUM_SUSPECTS):
        pair = (eff[c], eff[c + NUM_SUSPECTS])
        police.append(POLICE in pair)
        if DIAMOND in pair:
            totals.append(DIAMOND_TOTAL_HALVES)
        else:
            totals.append(sum(_value_halves(x, plain_values) for x in pair))
    best = max(t for t, pol in zip(totals, police) if not pol)
    culprits = tuple(c for c in range(NUM_SUSPECTS) if not police[c] and totals[c] == best)
    return Resolution(tuple(grid), eff, tuple(totals), tuple(police), culprits)


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

    num_players: int = 4
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
    #: ``win``: +1 to each match winner and −1 to every other seat at the end of the match.
    reward: str = "vote"

    def __post_init__(self) -> None:
        from parlour.envs.core import check_choice, check_int

        check_int("six_suspects: num_players", self.num_players, 2, 8)
        check_int("six_suspects: num_games", self.num_games, 1, 100)
        check_int("six_suspects: max_tiebreak_games", self.max_tiebreak_games, 0, 100)
        check_int(
            "six_suspects: table_announcement_turns",
            self.table_announcement_turns,
            ANNOUNCE_AFTER_TURNS,
            1000,
        )
        check_int("six_suspects: start_seat", self.start_seat, 0, self.num_players - 1)
        check_choice("six_suspects: rotate_start", self.rotate_start, (True, False))
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


# ----------------------------------------------------------------------------------------------- the state
@dataclass
class SixSuspectsState:
    """The whole table. Build one with :func:`deal`."""

    options: Options
    rng: np.random.Generator
    layout: np.ndarray = field(default_factory=lambda: np.zeros(NUM_POSITIONS, np.int64))
    seen: np.ndarray = field(default_factory=lambda: np.zeros((0, NUM_POSITIONS), bool))
    peeks: np.ndarray = field(default_factory=lambda: np.zeros((0, NUM_POSITIONS), np.int64))
    last_peek: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    turns_each: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    votes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    phase: int = PEEK
    announcer: int = NO_ANNOUNCER
    current: int = 0
    queue: list[int] = field(default_factory=list)
    game_index: int = 0
    start: int = 0
    turns: int = 0
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
        return self.phase == PEEK and int(self.turns_each.min()) >= ANNOUNCE_AFTER_TURNS

    def legal_mask(self) -> np.ndarray:
        if self.phase == PEEK:
            return _MASK_PEEK_ANNOUNCE if self.can_announce() else _MASK_PEEK
        if self.phase == LAST_TURNS:
            return _MASK_PEEK
        if self.phase == VOTE:
            return _MASK_VOTE
        return _MASK_NONE

    def clone(self) -> SixSuspectsState:
        import copy

        return copy.deepcopy(self)

    # -------------------------------------------------------------------------------------------- play
    def apply(self, action: int) -> np.ndarray | None:
        """Play ``action`` for the current seat; returns per-seat reward deltas when a game resolves."""
        mask = self.legal_mask()
        if not (0 <= action < NUM_ACTIONS and mask[action]):
            raise ValueError(f"illegal action {action} in phase {PHASE_NAMES[self.phase]}")
        seat = self.current
        n = self.n
        if action < NUM_POSITIONS:
            self.seen[seat, action] = True
            self.peeks[seat, action] += 1
            self.last_peek[seat] = action
            self.turns_each[seat] += 1
            self.turns += 1
            if self.phase == PEEK:
                if int(self.turns_each.min()) >= self.options.table_announcement_turns:
                    self.announcer = TABLE
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
            self.phase = LAST_TURNS
            self.queue = [(seat + k) % n for k in range(1, n)]
            self._next_in_queue()
            return None
        self.votes[seat] = action - VOTE_BASE
        if self.queue:
            self.current = self.queue.pop(0)
            return None
        return self._resolve_game()

    def _next_in_queue(self) -> None:
        if self.queue:
            self.current = self.queue.pop(0)
        else:
            first = (self.announcer + 1) % self.n
            self._start_vote(first=first)

    def _start_vote(self, first: int) -> None:
        self.phase = VOTE
        order = [(first + k) % self.n for k in range(self.n)]
        self.current = order[0]
        self.queue = order[1:]

    def _resolve_game(self) -> np.ndarray:
        opts = self.options
        res = resolve(self.layout, opts.plain_values)
        right = np.isin(self.votes, res.culprits)
        self.scores += right
        self.results.append(
            {
                "game": self.game_index,
                "layout": [int(x) for x in self.layout],
                "layout_names": [card_name(int(x), opts.plain_values) for x in self.layout],
                "votes": [SUSPECTS[int(v)] for v in self.votes],
                "announcer": int(self.announcer),
                "right": [bool(x) for x in right],
                **res.as_dict(),
            }
        )
        self.game_index += 1
        rewards = np.zeros(self.n)
        if opts.reward == "vote":
            rewards = np.where(right, 1.0, -1.0)
        elif opts.reward == "score":
            rewards = right.astype(float)
        if self._match_over():
            self.phase = OVER
            self.queue = []
            if opts.reward == "win":
                winners = self.winners()
                rewards = np.where(np.isin(np.arange(self.n), winners), 1.0, -1.0) if winners else rewards
        else:
            self._new_game()
        return rewards

    def _match_over(self) -> bool:
        opts = self.options
        if self.game_index < opts.num_games:
            return False
        if opts.num_games == 1 or self.game_index >= opts.max_games:
            return True
        top = self.scores.max()
        return int((self.scores == top).sum()) == 1

    def winners(self) -> list[int]:
        """Seats with the highest match score; nobody wins if nobody scored."""
        top = int(self.scores.max())
        return [] if top == 0 else [int(s) for s in np.flatnonzero(self.scores == top)]

    def _new_game(self) -> None:
        n = self.n
        opts = self.options
        self.layout = self.rng.permutation(NUM_CARDS).astype(np.int64)
        self.seen = np.zeros((n, NUM_POSITIONS), bool)
        self.peeks = np.zeros((n, NUM_POSITIONS), np.int64)
        self.last_peek = np.full(n, -1, np.int64)
        self.turns_each = np.zeros(n, np.int64)
        self.votes = np.full(n, -1, np.int64)
        self.phase = PEEK
        self.announcer = NO_ANNOUNCER
        self.queue = []
        self.start = (opts.start_seat + (self.game_index if opts.rotate_start else 0)) % n
        self.current = self.start

    # -------------------------------------------------------------------------------------------- views
    def known_positions(self, seat: int) -> np.ndarray:
        """Positions whose card ``seat`` knows (all of them once the game is over)."""
        if self.phase == OVER:
            return np.ones(NUM_POSITIONS, bool)
        return self.seen[seat]

    def outcome(self) -> dict[str, Any]:
        return {
            "scores": [int(s) for s in self.scores],
            "winners": self.winners(),
            "games": list(self.results),
            "layout": [int(x) for x in self.layout],
            "layout_names": [card_name(int(x), self.options.plain_values) for x in self.layout],
            "votes": [int(v) for v in self.votes],
        }


def deal(options: Options, rng: np.random.Generator) -> SixSuspectsState:
    """A new match: the first game's shuffled layout, every draw from ``rng`` (kept for later games)."""
    state = SixSuspectsState(options=options, rng=rng, scores=np.zeros(options.num_players, np.int64))
    state._new_game()
    return state
