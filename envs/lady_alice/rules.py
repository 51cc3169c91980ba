"""Lady Alice: the pure rules (no RL imports).

Rulebook: the publisher's (not shipped); project rulings: ``docs/rulings.md``. Every ruling that is a project
choice is a named constant or an :class:`Options` field below.

Clues: 4 categories (Suspects, Places, Times, Objects) × 8; clue ``c`` is clue ``c % 8`` of category ``c // 8``.
A *solution* is the set of evidence clues: one per category with 4 players; with 5 one hidden category gives two;
with 3 one hidden category gives none. Each player holds one evidence card.

Actions (one flat space of 41):

- ``0–31``: a clue -- the next clue of a suspicion or an accusation (in category order), or, in the Deductions
  phase, the clue to put a counter on;
- ``32–34``: the counter's value (0, 1, 2) after choosing its clue;
- ``35``: pass; ``36``: accuse (then the accusation's clues follow);
- ``37–40``: with 3 players, the category an accusation leaves out (chosen first).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from enum import IntEnum
from itertools import product
from typing import Any

import numpy as np

from parlour.envs.contract import Rules, check_bool, check_choice, check_int
from parlour.envs.lady_alice import GAME

# ----------------------------------------------------------------------------------------------- the clues
NUM_CATEGORIES = 4
PER_CATEGORY = 8
NUM_CLUES = NUM_CATEGORIES * PER_CATEGORY
CATEGORY_NAMES = ("Suspect", "Place", "Time", "Object")
#: Clue names (ruling, **choice**: only the rulebook's examples are known; the rest are placeholders).
CLUE_NAMES: tuple[tuple[str, ...], ...] = (
    (
        "Charles Chaillé-Long",
        "Samuel White Baker",
        "Mary Kingsley",
        "Joseph Marlow",
        "Ajayi Crowther",
        "John Hanning Speke",
        "Tippu Tip",
        "Alexine Tinné",
    ),
    ("Waterloo Station", *(f"Place {i}" for i in range(2, 9))),
    ("5 p.m.", "7:00", *(f"Time {i}" for i in range(3, 9))),
    ("compass", *(f"Object {i}" for i in range(2, 9))),
)
#: The player counts, from the game's declaration (:data:`parlour.envs.lady_alice.GAME`).
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = GAME.min_players, GAME.max_players, GAME.default_players
#: Each player's Deduction counters: three each of the values 0, 1, 2.
COUNTER_VALUES = (0, 1, 2)
COUNTERS_PER_VALUE = 3
#: After this many suspicion rounds the game ends, scored without accusation bonus (ruling, choice).
DEFAULT_MAX_ROUNDS = 40
#: The round cap scores the game (the ruling above), so it ends the episode as a termination, not a truncation
#: (RULINGS.md, general; ``lady_alice_v2``). ``lady_alice_v0``/``v1`` signalled it as a truncation.
CAP_SCORES = True
#: An accusation whose verdict shows zero smiles covers its clues, as a suspicion's does (ruling: the rulebook's "the
#: accuser proceeds as in phase two"; ``lady_alice_v1`` on; ``lady_alice_v0`` did not cover them).
ACCUSATION_COVERS = True
#: Scoring bonuses (rulebook steps VII, VIII, IX and the five-player bonus).
ALL_CLUES_BONUS, EXACT_SUSPICION_BONUS, ACCUSATION_BONUS, DOUBLED_CATEGORY_BONUS = 2, 1, 3, 2

# ----------------------------------------------------------------------------------------------- actions
VALUE_BASE = NUM_CLUES
PASS = VALUE_BASE + len(COUNTER_VALUES)
ACCUSE = PASS + 1
MISSING_BASE = ACCUSE + 1
NUM_ACTIONS = MISSING_BASE + NUM_CATEGORIES


class Phase(IntEnum):
    """The phases of a Lady Alice game: a suspicion, deductions, a counter's value, an accusation, the end."""

    SUSPECT = 0
    DEDUCE = 1
    PLACE = 2
    ACCUSING = 3
    OVER = 4


#: Plain-int aliases of :class:`Phase` for the hot paths (a state stores its phase as an int: an IntEnum member
#: costs more to compare and index with).
SUSPECT, DEDUCE, PLACE, ACCUSING, OVER = (int(p) for p in Phase)
PHASE_NAMES = ("suspicion", "deductions", "counter value", "accusation", "over")
REWARD_MODES = ("win", "score")


def category(clue: int) -> int:
    return clue // PER_CATEGORY


def clue_name(clue: int) -> str:
    return CLUE_NAMES[clue // PER_CATEGORY][clue % PER_CATEGORY]


def smiles_needed(n: int) -> int:
    """Smiles that end the investigation: one per evidence card, but four of five with five players."""
    return min(n, NUM_CATEGORIES)


# ----------------------------------------------------------------------------------------------- solutions
def all_solutions(n: int) -> np.ndarray:
    """Every possible solution for ``n`` players as rows of clue ids (sorted), in a fixed order.

    4 players: one clue per category (4,096); 5: one category gives two clues (57,344); 3: one category gives
    none (2,048). The deal makes them all equally likely.
    """
    if n not in _SOLUTIONS:
        _SOLUTIONS[n] = _enumerate(n)
    return _SOLUTIONS[n]


def _enumerate(n: int) -> np.ndarray:
    cats = range(NUM_CATEGORIES)
    rows: list[tuple[int, ...]] = []
    if n == 4:
        rows = [tuple(c * PER_CATEGORY + i for c, i in enumerate(pick)) for pick in product(range(8), repeat=4)]
    else:
        for special in cats:
            others = [c for c in cats if c != special]
            tails = [
                [c * PER_CATEGORY + i for c, i in zip(others, pick, strict=True)]
                for pick in product(range(8), repeat=3)
            ]
            if n == 3:
                rows += [tuple(t) for t in tails]  # the special category is missing
                continue
            for a in range(PER_CATEGORY):
                for b in range(a + 1, PER_CATEGORY):  # the special category gives two clues
                    pair = [special * PER_CATEGORY + a, special * PER_CATEGORY + b]
                    rows += [tuple(sorted(t + pair)) for t in tails]
    return np.array(sorted(rows), dtype=np.int16)


_SOLUTIONS: dict[int, np.ndarray] = {}


def membership(n: int) -> np.ndarray:
    """Boolean (solutions × 32): clue in solution, rows as in :func:`all_solutions`."""
    if n not in _MEMBERSHIP:
        sols = all_solutions(n)
        m = np.zeros((len(sols), NUM_CLUES), bool)
        m[np.arange(len(sols))[:, None], sols] = True
        _MEMBERSHIP[n] = m
    return _MEMBERSHIP[n]


_MEMBERSHIP: dict[int, np.ndarray] = {}


def consistent_mask(n: int, own: int, verdicts: list[tuple[tuple[int, ...], int]]) -> np.ndarray:
    """Which rows of :func:`all_solutions` contain the clue ``own`` and give every verdict ``(clues shown,
    smiles)`` its count of smiles."""
    m = membership(n)
    keep = m[:, own].copy()
    for clues, smiles in verdicts:
        keep &= m[:, list(clues)].sum(axis=1) == smiles
    return keep


def consistent_solutions(n: int, own: int, verdicts: list[tuple[tuple[int, ...], int]]) -> np.ndarray:
    """The solutions consistent with holding ``own`` and with every verdict; each is equally likely given that
    information (the deal draws solutions uniformly and deals the evidence at random)."""
    return all_solutions(n)[consistent_mask(n, own, verdicts)]


# ----------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Options:
    """The rule keywords of Lady Alice (all validated)."""

    num_players: int = DEFAULT_PLAYERS
    #: Suspicion rounds before the game ends, scored without accusation bonus (ruling, **choice**).
    max_rounds: int = DEFAULT_MAX_ROUNDS
    #: The rulebook's "taking notes is forbidden": the observation keeps no history of past verdicts.
    no_notes: bool = False
    start_seat: int = 0
    #: ``win``: at the end +1 to every winner and −1 to every other seat; ``score``: the rulebook's points.
    reward: str = "win"
    #: A zero-smile accusation covers its clues (ruling, ``ACCUSATION_COVERS``).
    accusation_covers: bool = ACCUSATION_COVERS

    def __post_init__(self) -> None:

        check_int("lady_alice: num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        check_int("lady_alice: max_rounds", self.max_rounds, 1, 1000)
        check_bool("lady_alice: no_notes", self.no_notes)
        check_int("lady_alice: start_seat", self.start_seat, 0, self.num_players - 1)
        check_choice("lady_alice: reward", self.reward, REWARD_MODES)
        check_bool("lady_alice: accusation_covers", self.accusation_covers)

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return of one seat over a game (``score``: every counter and every bonus)."""
        if self.reward != "score":
            return (-1.0, 1.0)
        bonuses = ALL_CLUES_BONUS + EXACT_SUSPICION_BONUS + ACCUSATION_BONUS + DOUBLED_CATEGORY_BONUS
        return (0.0, float(COUNTERS_PER_VALUE * sum(COUNTER_VALUES) + bonuses))


# ----------------------------------------------------------------------------------------------- the state
@dataclass
class Record:
    """A suspicion or an accusation and its verdict (public)."""

    seat: int
    clues: tuple[int, ...]
    smiles: int
    accusation: bool = False
    missing: int = -1  # the category a three-player accusation leaves out


@dataclass
class LadyAliceState(Rules):
    options: Options
    n: int
    solution: tuple[int, ...]
    special: int  # the hidden category: doubled (5 players), missing (3 players), -1 (4 players)
    evidence: list[int]  # each seat's evidence card
    counters: list[list[list[int]]] = field(default_factory=list)  # per clue: [owner, value, revealed]
    left: list[list[int]] = field(default_factory=list)  # per seat, counters left of each value
    covered: list[bool] = field(default_factory=list)
    #: Uncovered clues in each category.
    uncovered: list[int] = field(default_factory=lambda: [PER_CATEGORY] * NUM_CATEGORIES)
    #: Per clue, 1 while a counter may go there (not covered, not full); the Deductions mask's first bytes.
    open: bytearray = field(default_factory=lambda: bytearray(b"\x01" * NUM_CLUES))
    excluded: list[bool] = field(default_factory=list)
    phase: int = SUSPECT
    holder: int = 0  # who holds the notebook this round
    current: int = 0  # the seat to decide
    partial: list[int] = field(default_factory=list)  # clues chosen so far in a suspicion or accusation
    missing: int = -1  # the category a three-player accusation in progress leaves out
    place_clue: int = -1  # the clue a counter is about to go on
    previous: tuple[int, ...] | None = None  # the last suspicion
    history: list[Record] = field(default_factory=list)
    passed: list[int] = field(default_factory=list)  # seats that passed since the last counter was placed
    exact: list[bool] = field(default_factory=list)  # step VIII: made a suspicion with a full verdict
    rounds: int = 0  # suspicions made
    accuser: int = -1  # the successful accuser
    truncated: bool = False
    scores: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)

    @property
    def turns(self) -> int:
        return self.rounds

    @property
    def current_player(self) -> int:
        return -1 if self.phase == OVER else self.current

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def clone(self) -> LadyAliceState:
        new = copy.copy(self)
        new.evidence = self.evidence[:]
        new.counters = [[e[:] for e in space] for space in self.counters]
        new.left = [x[:] for x in self.left]
        new.covered = self.covered[:]
        new.open = self.open[:]
        new.uncovered = self.uncovered[:]
        new.excluded = self.excluded[:]
        new.partial = self.partial[:]
        new.history = self.history[:]  # records are never changed once made
        new.passed = self.passed[:]
        new.exact = self.exact[:]
        new.scores = self.scores[:]
        new.winners = self.winners[:]
        new.changes = None
        return new

    @property
    def active(self) -> list[int]:
        return [s for s in range(self.n) if not self.excluded[s]]

    def next_active(self, seat: int) -> int:
        for k in range(1, self.n + 1):
            s = (seat + k) % self.n
            if not self.excluded[s]:
                return s
        raise AssertionError("no player left in the game")

    # ------------------------------------------------------------------------------------------ legality
    def _suspicion_options(self) -> list[int]:
        """Clues of the next category that leave a legal suspicion possible: not the previous suspicion, not
        made only of covered clues."""
        partial, prev, covered = self.partial, self.previous, self.covered
        k = len(partial)
        cat_clues = range(k * PER_CATEGORY, (k + 1) * PER_CATEGORY)
        if not partial and (prev is None or sum(self.uncovered[1:]) > 1):
            # The usual first clue: a later category has an open clue that can also differ from the last time.
            return list(cat_clues)
        some_open = False
        for c in partial:
            if not covered[c]:
                some_open = True
                break
        if some_open:
            # Already not all covered: only the previous suspicion's last clue can be ruled out.
            if k == NUM_CATEGORIES - 1 and prev is not None and tuple(partial) == prev[:k]:
                return [c for c in cat_clues if c != prev[k]]
            return list(cat_clues)
        return [c for c in cat_clues if self._feasible([*partial, c])]

    def _feasible(self, prefix: list[int]) -> bool:
        covered, prev = self.covered, self.previous
        k = len(prefix)
        same = prev is not None and tuple(prefix) == prev[:k]
        any_open = any(not covered[c] for c in prefix)
        if k == NUM_CATEGORIES:
            return any_open and not same
        open_rest = self.uncovered[k:]
        if any_open:
            return True  # some remaining clue can differ from the previous suspicion
        if not same or len(open_rest) >= 2:
            return sum(open_rest) > 0
        assert prev is not None
        last = prev[k]
        return open_rest[0] - (not covered[last]) > 0

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.legal_mask()).tolist()

    def _accusation_category(self) -> int:
        cats = [c for c in range(NUM_CATEGORIES) if c != self.missing]
        return cats[len(self.partial)]

    def legal_mask(self) -> np.ndarray:
        # Shared read-only masks where the choice is fixed; the Deductions mask from the open spaces' bytes.
        phase = self.phase
        if phase == DEDUCE:
            if sum(self.left[self.current]):
                return np.frombuffer(bytes(self.open) + _DEDUCE_TAIL, np.int8)
            return _MASKS["deduce, no counters"]
        if phase == PLACE:
            left = self.left[self.current]
            return _PLACE_MASKS[(left[0] > 0, left[1] > 0, left[2] > 0)]
        if phase == ACCUSING:
            if self.n == 3 and self.missing < 0:
                return _MASKS["missing"]
            return _CATEGORY_MASKS[self._accusation_category()]
        if phase == SUSPECT:
            options = self._suspicion_options()
            if len(options) == PER_CATEGORY:
                return _CATEGORY_MASKS[len(self.partial)]
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[options] = 1
            mask.flags.writeable = False
            return mask
        return _MASKS["none"]

    # ------------------------------------------------------------------------------------------ moves
    def play(self, action: int) -> list[float] | None:
        """Play ``action`` for the seat to decide (unchecked: :meth:`apply` checks). Notes in ``changes`` (when
        listened to) what an incremental encoder cannot read off the markers (phase, seat to act, notebook holder,
        clue being placed, category left out): ``("partial", clue)`` (a clue of a suspicion or accusation),
        ``("pass", seat)``, ``("placed", seat, clue)``, ``("verdict",)`` (``history[-1]`` is new) and ``("over",)``."""
        phase = self.phase
        changes = self.changes
        if phase == SUSPECT:
            self.partial.append(action)
            if changes is not None:
                changes.append(("partial", action))
            if len(self.partial) == NUM_CATEGORIES:
                self._suspicion_made()
            return None
        if phase == DEDUCE:
            if action < NUM_CLUES:
                self.place_clue = action
                self.phase = PLACE
                return None
            if action == PASS:
                self.passed.append(self.current)
                if changes is not None:
                    changes.append(("pass", self.current))
                return self._next_deducer()
            self.phase = ACCUSING
            self.partial = []
            self.missing = -1
            return None
        if phase == PLACE:
            seat, clue = self.current, self.place_clue
            self._place(seat, clue, action - VALUE_BASE)
            if changes is not None:
                changes.append(("placed", seat, clue))
            self.place_clue = -1
            self.phase = DEDUCE
            self.passed = []  # a placement breaks the sequence of passes
            return self._next_deducer()
        # ACCUSING
        if action >= MISSING_BASE:
            self.missing = action - MISSING_BASE
            return None
        self.partial.append(action)
        if changes is not None:
            changes.append(("partial", action))
        if len(self.partial) == NUM_CATEGORIES - (self.n == 3):
            return self._accusation_made()
        return None

    def _place(self, seat: int, clue: int, value: int) -> None:
        space = self.counters[clue]
        for entry in space:
            entry[2] = 1  # counters already there are turned face up
        space.append([seat, value, 0])
        self.left[seat][value] -= 1
        if len(space) >= self.n:
            self.open[clue] = 0

    def verdict(self, clues: tuple[int, ...]) -> int:
        """The number of smiling folders: evidence cards among ``clues``."""
        return sum(1 for e in self.evidence if e in clues)

    def _suspicion_made(self) -> None:
        clues = tuple(self.partial)
        smiles = self.verdict(clues)
        self.history.append(Record(self.holder, clues, smiles))
        if self.changes is not None:
            self.changes.append(("verdict",))
        if smiles == 0:
            self._cover(clues)
        if smiles == smiles_needed(self.n):
            self.exact[self.holder] = True
        self.previous = clues
        self.partial = []
        self.rounds += 1
        self.phase = DEDUCE
        self.passed = []
        self.current = self.next_active(self.holder)

    def _cover(self, clues: tuple[int, ...]) -> None:
        """A verdict with zero smiles: business cards on its clues, every one a red herring."""
        for c in clues:
            if not self.covered[c]:
                self.uncovered[category(c)] -= 1
            self.covered[c] = True
            self.open[c] = 0

    def _next_deducer(self) -> list[float] | None:
        # ``passed`` holds each player still in the game at most once (a placement empties it; an excluded
        # accuser leaves it), so the sequence is complete when it is as long as the players still in.
        if len(self.passed) == self.excluded.count(False):
            return self._new_round()
        self.current = self.next_active(self.current)
        return None

    def _new_round(self) -> list[float] | None:
        if self.rounds >= self.options.max_rounds:
            self.truncated = True
            return self._end()
        self.holder = self.next_active(self.holder)
        self.current = self.holder
        self.phase = SUSPECT
        self.partial = []
        return None

    def _accusation_made(self) -> list[float] | None:
        seat = self.current
        clues = tuple(self.partial)
        smiles = self.verdict(clues)
        self.history.append(Record(seat, clues, smiles, accusation=True, missing=self.missing))
        if self.changes is not None:
            self.changes.append(("verdict",))
        if smiles == 0 and self.options.accusation_covers:
            self._cover(clues)
        self.partial = []
        self.missing = -1
        if smiles == smiles_needed(self.n):
            self.accuser = seat
            return self._end()
        self.excluded[seat] = True
        if seat in self.passed:
            self.passed.remove(seat)
        active = self.active
        if len(active) == 1:
            return self._end()
        self.phase = DEDUCE
        if all(s in self.passed for s in active):
            return self._new_round()
        self.current = self.next_active(seat)
        return None

    # ------------------------------------------------------------------------------------------ the end
    def score(self) -> list[int]:
        """The rulebook's scoring, steps I–IX (and the five-player bonus), for the game as it stands."""
        solution = set(self.solution)
        points = [0] * self.n
        # II–V: only non-zero counters of players still in the game, on clues of the solution, count.
        counted: list[list[int]] = [[] for _ in range(self.n)]
        for clue in solution:
            for owner, value, _ in self.counters[clue]:
                if not self.excluded[owner] and value > 0:
                    counted[owner].append(clue)
                    points[owner] += value  # VI
        for s in range(self.n):
            mine = set(counted[s])
            if mine >= solution:
                points[s] += ALL_CLUES_BONUS  # VII
            if self.n == 5:
                doubled = {c for c in solution if category(c) == self.special}
                if mine >= doubled:
                    points[s] += DOUBLED_CATEGORY_BONUS
            if self.exact[s]:
                points[s] += EXACT_SUSPICION_BONUS  # VIII (kept by an excluded player)
        if self.accuser >= 0:
            points[self.accuser] += ACCUSATION_BONUS  # IX
        return points

    def _end(self) -> list[float] | None:
        self.phase = OVER
        if self.changes is not None:
            self.changes.append(("over",))
        self.current = -1
        active = self.active
        self.scores = self.score()
        if len(active) == 1 and self.accuser < 0 and not self.truncated:
            self.winners = active  # the last player standing wins
        else:
            best = max(self.scores[s] for s in active)
            tied = [s for s in active if self.scores[s] == best]
            self.winners = [self.accuser] if self.accuser in tied else tied
        if self.options.reward == "score":
            return [float(x) for x in self.scores]
        return [1.0 if s in self.winners else -1.0 for s in range(self.n)]

    def truncate(self) -> list[float] | None:
        """End the game now as the turn cap does (scored without the accusation bonus); returns the rewards."""
        self.truncated = True
        return self._end()

    def outcome(self) -> dict[str, Any]:
        return {
            "scores": list(self.scores),
            "winners": list(self.winners),
            "solution": [clue_name(c) for c in self.solution],
            "evidence": [clue_name(c) for c in self.evidence],
            "special_category": CATEGORY_NAMES[self.special] if self.special >= 0 else None,
            "accuser": self.accuser,
            "excluded": [s for s in range(self.n) if self.excluded[s]],
            "rounds": self.rounds,
        }

    # ------------------------------------------------------------------------------------------ information
    def verdicts(self) -> list[tuple[tuple[int, ...], int]]:
        return [(r.clues, r.smiles) for r in self.history]


def _frozen(actions: list[int]) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[actions] = 1
    mask.flags.writeable = False
    return mask


_DEDUCE_TAIL = bytes(_frozen([PASS, ACCUSE])[VALUE_BASE:])
_MASKS = {
    "deduce, no counters": _frozen([PASS, ACCUSE]),
    "missing": _frozen(list(range(MISSING_BASE, NUM_ACTIONS))),
    "none": _frozen([]),
}
_CATEGORY_MASKS = [_frozen(list(range(k * PER_CATEGORY, (k + 1) * PER_CATEGORY))) for k in range(NUM_CATEGORIES)]
_PLACE_MASKS = {
    (a, b, c): _frozen([VALUE_BASE + v for v, ok in enumerate((a, b, c)) if ok])
    for a in (False, True)
    for b in (False, True)
    for c in (False, True)
}


def deal(opts: Options, rng: np.random.Generator) -> LadyAliceState:
    """Draw the evidence (per the player count) and deal one card to each player."""
    n = opts.num_players
    cats = list(range(NUM_CATEGORIES))
    special = int(rng.integers(NUM_CATEGORIES)) if n != 4 else -1
    solution: list[int] = []
    for c in cats:
        if c == special and n == 3:
            continue
        count = 2 if (c == special and n == 5) else 1
        picks = rng.choice(PER_CATEGORY, size=count, replace=False)
        solution += [c * PER_CATEGORY + int(i) for i in picks]
    evidence = [solution[int(i)] for i in rng.permutation(len(solution))]
    start = opts.start_seat
    return LadyAliceState(
        options=opts,
        n=n,
        solution=tuple(sorted(solution)),
        special=special,
        evidence=evidence,
        counters=[[] for _ in range(NUM_CLUES)],
        left=[[COUNTERS_PER_VALUE] * len(COUNTER_VALUES) for _ in range(n)],
        covered=[False] * NUM_CLUES,
        excluded=[False] * n,
        holder=start,
        current=start,
        exact=[False] * n,
    )


def position(opts: Options, evidence: list[int], holder: int = 0) -> LadyAliceState:
    """A fresh game with the evidence dealt by hand (seat ``s`` holds ``evidence[s]``); ``holder`` suspects first.

    The evidence must form a solution for the player count: one clue per category (4 players), one category
    with two (5), one category with none (3).
    """
    n = opts.num_players
    solution = tuple(sorted(evidence))
    if len(evidence) != n or solution not in {tuple(int(c) for c in row) for row in all_solutions(n)}:
        raise ValueError(f"position: {[clue_name(c) for c in evidence]} is not a {n}-player solution")
    cats = [category(c) for c in evidence]
    special = -1
    if n == 5:
        special = next(c for c in range(NUM_CATEGORIES) if cats.count(c) == 2)
    elif n == 3:
        special = next(c for c in range(NUM_CATEGORIES) if c not in cats)
    state = deal(replace(opts, start_seat=holder), np.random.default_rng(0))
    state.solution, state.special, state.evidence = solution, special, list(evidence)
    return state


def resample(state: LadyAliceState, seat: int, rng: np.random.Generator) -> LadyAliceState:
    """A copy of ``state`` with everything hidden from ``seat`` redrawn: a solution consistent with its evidence and every
    verdict, the others' evidence cards from it, and the others' face-down counters and counters in hand from what each
    could still hold."""
    g = state.clone()
    n = g.n
    own = g.evidence[seat]
    worlds = consistent_solutions(n, own, g.verdicts())
    solution = [int(c) for c in worlds[int(rng.integers(len(worlds)))]]
    others = [c for c in solution if c != own]
    others = [others[i] for i in rng.permutation(len(others))]
    for s in range(n):
        if s != seat:
            g.evidence[s] = others.pop()
    g.solution = tuple(sorted(solution))
    cats = [category(c) for c in solution]
    if n == 5:
        g.special = next(c for c in range(NUM_CATEGORIES) if cats.count(c) == 2)
    elif n == 3:
        g.special = next(c for c in range(NUM_CATEGORIES) if c not in cats)
    # Others' face-down counters and counters in hand: redrawn from what each could still hold.
    for p in range(n):
        if p == seat:
            continue
        shown = [0] * len(COUNTER_VALUES)
        hidden_entries = []
        for space in g.counters:
            for entry in space:
                if entry[0] == p:
                    if entry[2]:
                        shown[entry[1]] += 1
                    else:
                        hidden_entries.append(entry)
        pool = [v for v in COUNTER_VALUES for _ in range(COUNTERS_PER_VALUE - shown[v])]
        pool = [pool[i] for i in rng.permutation(len(pool))]
        for entry in hidden_entries:
            entry[1] = pool.pop()
        g.left[p] = [pool.count(v) for v in COUNTER_VALUES]
    return g
