"""Elevenses: The Guilty Party -- the pure rules (no RL imports).

Rulebook: the publisher's (not shipped); project rulings: ``docs/rulings.md``. Every ruling
that is a project choice is a named constant or an :class:`Options` field below.

Cards: each seat owns eleven Tea Party cards (its *back*); card ``c`` is number ``c % 11 + 1`` of seat ``c // 11``
(ids 0–54; ids of seats past the player count are not in play). Spread positions 2–9 hold face-down cards
(slot ``k - 2``); cards 1–10 are played face up to their own position; the 11 goes to the centre and ends the game.

*Plates* and *Guilt cards* lie at the seats and, with 2–4 players, at Mrs Lansdowne (index ``n``).

Actions (one flat space of 85; seats, plates and Guilt cards are *relative to the deciding seat*):

- ``0–54`` a card: ``11 * r + (number - 1)`` is the card of that number with the back of the seat ``r`` places left of
  the decider (to play, re-arrange, pass, take or give);
- ``55–62`` a face-down slot of the decider's spread (positions 2–9);
- ``63–68`` a plate: the seat ``r`` places left (``63 + r``, ``r < 5``) or Mrs Lansdowne's (``68``);
- ``69–74`` a Guilt card, numbered like the plates;
- ``75–78`` another player, ``1–4`` places left (Ham Sandwiches and Cakes);
- ``79`` re-arrange (instead of playing a card); ``80`` stop / decline; ``81`` claim "Murderer";
  ``82`` claim "Not Guilty"; ``83`` keep silent; ``84`` pass the turn (only when nothing else is legal).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from parlour.envs.contract import Rules, check_int
from parlour.envs.elevenses import GAME

# ----------------------------------------------------------------------------------------------- the cards
#: The player counts, from the game's declaration (:data:`parlour.envs.elevenses.GAME`).
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = GAME.min_players, GAME.max_players, GAME.default_players
NUMBERS = 11
NUM_CARDS = MAX_PLAYERS * NUMBERS
SLOTS = 8  # face-down positions 2–9
HAND_SIZE = 3
ELEVENSES = 11
CARD_NAMES = (
    "Scones",
    "Salmon Canapés",
    "Biscuits",
    "Tarts",
    "Hors d'Oeuvres",
    "Tartlets",
    "Macaroons",
    "Ham Sandwiches",
    "Cakes",
    "Cucumber Sandwiches",
    "Elevenses",
)
SCONES, CANAPES, BISCUITS, TARTS, HORS_DOEUVRES, TARTLETS, MACAROONS, HAM, CAKES, CUCUMBER = range(1, 11)
#: Teaspoons of each number 1–11 (rulebook, Special Actions).
TEASPOONS = (0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 0)
#: A revealed Guest card adds this many teaspoons.
GUEST_BONUS = 2
#: The six Guest cards' items by card number (ruling, **choice**: the printed cards are unknown).
GUESTS: tuple[tuple[int, int, int], ...] = ((1, 6, 9), (2, 7, 10), (3, 8, 9), (4, 6, 10), (5, 7, 8), (1, 4, 5))
#: Face-up cards needed in a spread before the 11 may be played.
ELEVENSES_NEEDS = 6
#: Cubes in the Sugar Bowl per player (ruling).
CUBES_PER_PLAYER = 6
#: Suspicion cubes in the box (rulebook, "Your Game Includes"): no bowl can hold more.
BOX_CUBES = 30
#: Cubes the start player, the second player and every other player put on their plates at set-up; Mrs Lansdowne 1.
START_CUBES = (3, 2, 1)
MRS_START_CUBES = 1
#: Late suspicion by tea place, for 2, 3 and 4–5 players.
PLACE_CUBES = {2: (3, 1), 3: (3, 1, 0), 4: (3, 2, 1, 0), 5: (3, 2, 1, 0, 0)}
#: Turns before the game is truncated (ruling, **choice**).
DEFAULT_MAX_TURNS = 200
#: Ruling: a player may re-arrange their 11 face down into the spread ("never passed, swapped or stolen" is read
#: as never leaving its owner; a re-arrangement keeps it in the owner's spread).
REARRANGE_ELEVENSES = True
#: Ruling: Scones and Salmon Canapés must add their cubes (while the bowl has any) and Tarts must move its cube;
#: Biscuits moves *up to* two, so the player may stop before each move. A moved cube goes to a different plate.
BISCUIT_MOVES, TART_MOVES = 2, 1
SCONE_CUBES, CANAPE_CUBES = 2, 1

# ----------------------------------------------------------------------------------------------- actions
CARD_BASE = 0
SLOT_BASE = NUM_CARDS  # 55
PLATE_BASE = SLOT_BASE + SLOTS  # 63
MRS = MAX_PLAYERS  # the plate / Guilt index of Mrs Lansdowne in actions and observations
GUILT_BASE = PLATE_BASE + MAX_PLAYERS + 1  # 69
SEAT_BASE = GUILT_BASE + MAX_PLAYERS + 1  # 75
REARRANGE = SEAT_BASE + MAX_PLAYERS - 1  # 79
STOP = REARRANGE + 1
CLAIM_MURDERER, CLAIM_INNOCENT, SILENT = STOP + 1, STOP + 2, STOP + 3
PASS_TURN = SILENT + 1
NUM_ACTIONS = PASS_TURN + 1


# ----------------------------------------------------------------------------------------------- phases
class Phase(IntEnum):
    """The decisions of an Elevenses game (a turn, then the steps of re-arranging and of each special action)."""

    TURN = 0
    REARRANGE_CARD = 1
    REARRANGE_SLOT = 2
    SWAP_1 = 3
    SWAP_2 = 4
    ADD = 5
    MOVE_FROM = 6
    MOVE_TO = 7
    LOOK = 8
    CLAIM = 9
    PASS = 10
    HAM_TARGET = 11
    HAM_TAKE = 12
    HAM_GIVE = 13
    CAKES_TARGET = 14
    CAKES_TAKE = 15
    CAKES_GIVE = 16
    CUCUMBER_1 = 17
    CUCUMBER_2 = 18
    LATE = 19
    OVER = 20


#: Plain-int aliases of :class:`Phase` for the hot paths (a state stores its phase as an int: an IntEnum member
#: costs more to compare and index with).
(
    TURN,
    REARRANGE_CARD,
    REARRANGE_SLOT,
    SWAP_1,
    SWAP_2,
    ADD,
    MOVE_FROM,
    MOVE_TO,
    LOOK,
    CLAIM,
    PASS,
    HAM_TARGET,
    HAM_TAKE,
    HAM_GIVE,
    CAKES_TARGET,
    CAKES_TAKE,
    CAKES_GIVE,
    CUCUMBER_1,
    CUCUMBER_2,
    LATE,
    OVER,
) = (int(p) for p in Phase)
PHASE_NAMES = (
    "turn: play a card or re-arrange",
    "re-arrange: which hand card",
    "re-arrange: which face-down slot",
    "guest revealed: first plate to swap (or decline)",
    "guest revealed: second plate to swap",
    "add a cube: which plate",
    "move a cube: from which plate",
    "move a cube: to which plate",
    "Hors d'Oeuvres: whose Guilt card to look at",
    "Hors d'Oeuvres: the claim",
    "pass a card",
    "Ham Sandwiches: whose hand",
    "Ham Sandwiches: which card to take (or decline)",
    "Ham Sandwiches: which card to give",
    "Cakes: who looks at the hand",
    "Cakes: which card to take (or decline)",
    "Cakes: which card to give",
    "Cucumber Sandwiches: first Guilt card",
    "Cucumber Sandwiches: second Guilt card",
    "late suspicion: which plate",
    "over",
)
NUM_PHASES = len(PHASE_NAMES)

# Claims recorded per looker and Guilt card (following the card through swaps).
NO_CLAIM, LOOKED_SILENT, SAID_MURDERER, SAID_INNOCENT = range(4)
# Cucumber swaps recorded per player and Guilt card (following the card): swapped by the player, off its own place.
MOVED, MOVED_OWN = 1, 2

# Location codes of a card.
HAND = 0  # 0–4: seat's hand
DOWN = MAX_PLAYERS  # 5–44: face-down slot: DOWN + 8 * seat + slot
UP = DOWN + MAX_PLAYERS * SLOTS  # 45–49: face up in a seat's spread
CENTRE = UP + MAX_PLAYERS  # 50: the 11 played to the centre
NOWHERE = -1  # a card of a seat not in play


def murderers(n: int) -> int:
    """Murderer cards in the Guilt deal: two with five players, else one."""
    return 2 if n == MAX_PLAYERS else 1


def number(card: int) -> int:
    return card % NUMBERS + 1


def owner(card: int) -> int:
    return card // NUMBERS


def card_name(card: int) -> str:
    k = number(card)
    return f"{k} {CARD_NAMES[k - 1]} (back of player_{owner(card)})"


def card_action(card: int, decider: int, n: int) -> int:
    return CARD_BASE + ((owner(card) - decider) % n) * NUMBERS + card % NUMBERS


def action_card(action: int, decider: int, n: int) -> int:
    return ((action // NUMBERS + decider) % n) * NUMBERS + action % NUMBERS


# ----------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Options:
    """The rule keywords of Elevenses (all validated)."""

    num_players: int = DEFAULT_PLAYERS
    #: Turns before the game is truncated (ruling, **choice**); a truncated game gives every seat 0.
    max_turns: int = DEFAULT_MAX_TURNS
    start_seat: int = 0
    #: Sugar Bowl cubes per player (ruling).
    cubes_per_player: int = CUBES_PER_PLAYER

    def __post_init__(self) -> None:

        check_int("elevenses: num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        check_int("elevenses: max_turns", self.max_turns, 1, 10000)
        check_int("elevenses: start_seat", self.start_seat, 0, self.num_players - 1)
        need = sum(START_CUBES[: min(self.num_players, 3)]) + max(0, self.num_players - 3)
        need += MRS_START_CUBES * (self.num_players < MAX_PLAYERS)
        most = BOX_CUBES // self.num_players
        check_int("elevenses: cubes_per_player", self.cubes_per_player, -(-need // self.num_players), most)

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return of one seat over a game (+1 to the winners, -1 to the others, 0 if cut)."""
        return (-1.0, 1.0)


# ----------------------------------------------------------------------------------------------- the state
@dataclass
class ElevensesState(Rules):
    options: Options
    n: int
    mrs: bool  # Mrs Lansdowne at the table (2–4 players)
    location: list[int]  # per card id, its location code
    hands: list[list[int]]
    slots: list[list[int]]  # per seat, 8 face-down slots: card or -1 once that position is face up
    face_up: list[list[int]]  # per seat, numbers 1–10: the face-up card or -1
    knowers: list[int]  # per card, a bit per seat: the seat knows where the card is
    guests: list[int]
    revealed: list[bool]
    guilt: list[int]  # per Guilt card position (seats, then Mrs Lansdowne): 1 = Murderer
    guilt_known: list[bytearray]  # per seat, per position: 1 if the seat knows that card
    claims: list[list[int]]  # per looker, per position: NO_CLAIM / LOOKED_SILENT / SAID_*
    #: Per player, per position: the Guilt card there was swapped by that player (MOVED), off that player's own
    #: place (MOVED_OWN) -- public, and following the card through later swaps.
    moved: list[list[int]]
    viewed: list[list[int]]  # per player, per player: hands seen (Ham Sandwiches, Cakes) -- public
    plates: list[int]
    bowl: int
    put: list[list[int]]  # per actor, per plate: cubes the actor put on that guest's plate (public history)
    took: list[list[int]]  # per actor, per plate: cubes the actor took off it (moves, plate swaps)
    phase: int = TURN
    current: int = 0
    turn_seat: int = 0
    effect: int = 0  # the number whose special action is under way (0: none)
    rearranged: int = 0
    rearrange_card: int = -1
    first: int = -1  # the first plate / Guilt card chosen for a swap, or the plate a cube moves from
    cubes_left: int = 0
    moves_left: int = 0
    looked: int = -1
    target: int = -1  # Ham Sandwiches / Cakes: the other player
    taken: int = -1
    passers: list[int] = field(default_factory=list)  # seats passing this round, in decision order
    pass_dir: int = 1
    pass_choice: list[int] = field(default_factory=list)  # per seat: the card chosen, -1
    elevenses: int = -1
    late: list[int] = field(default_factory=list)  # seats to place late cubes, one entry per cube, in order
    earned: list[int] = field(default_factory=list)
    turns: int = 0
    truncated: bool = False
    arrested: list[int] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    mrs_wins: bool = False
    # ``changes`` (the Rules base) notes, for an incremental encoder: ``("card", c, old place, new place,
    # knowledge bits before, after)``, ``("tea", seat)`` (a card played face up), ``("cubes", actor)`` (cubes moved
    # by that player) and ``(group,)`` for the guests, the Guilt cards and their history, or all the plates.

    # -------------------------------------------------------------------------------------- protocol
    @property
    def current_player(self) -> int:
        return -1 if self.phase == OVER else self.current

    @property
    def positions(self) -> int:
        """Plates (and Guilt cards) at the table: the seats and, with 2–4 players, Mrs Lansdowne."""
        return self.n + self.mrs

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def clone(self) -> ElevensesState:
        new = copy.copy(self)
        new.location = self.location[:]
        new.hands = [h[:] for h in self.hands]
        new.slots = [s[:] for s in self.slots]
        new.face_up = [u[:] for u in self.face_up]
        new.knowers = self.knowers[:]
        new.revealed = self.revealed[:]
        new.guests = self.guests[:]
        new.guilt = self.guilt[:]
        new.guilt_known = [k[:] for k in self.guilt_known]
        new.claims = [c[:] for c in self.claims]
        new.moved = [c[:] for c in self.moved]
        new.viewed = [c[:] for c in self.viewed]
        new.plates = self.plates[:]
        new.put = [t[:] for t in self.put]
        new.took = [t[:] for t in self.took]
        new.passers = self.passers[:]
        new.pass_choice = self.pass_choice[:]
        new.late = self.late[:]
        new.earned = self.earned[:]
        new.arrested = self.arrested[:]
        new.winners = self.winners[:]
        new.changes = None
        return new

    # -------------------------------------------------------------------------------------- helpers
    def seat_of(self, rel: int, decider: int) -> int:
        """The plate / Guilt position of relative index ``rel`` (``MRS`` is Mrs Lansdowne), or -1."""
        if rel == MRS:
            return self.n if self.mrs else -1
        return (decider + rel) % self.n if rel < self.n else -1

    def rel_of(self, pos: int, decider: int) -> int:
        return MRS if pos == self.n else (pos - decider) % self.n

    def face_up_count(self, seat: int) -> int:
        return sum(c >= 0 for c in self.face_up[seat])

    def guest_complete(self, seat: int, guest: int) -> bool:
        """Whether the three items of ``guest`` are face up in ``seat``'s spread."""
        return all(self.face_up[seat][i - 1] >= 0 for i in GUESTS[guest])

    def tea(self, seat: int) -> int:
        return sum(TEASPOONS[number(c) - 1] for c in self.face_up[seat] if c >= 0) + GUEST_BONUS * self.revealed[seat]

    def _note(self, *event: Any) -> None:
        """Tell a listening encoder what changed (see ``changes``)."""
        if self.changes is not None:
            self.changes.append(event)

    def _shift(self, actor: int, pos: int, cubes: int) -> None:
        if cubes > 0:
            self.put[actor][pos] += cubes
        else:
            self.took[actor][pos] -= cubes

    def knows(self, seat: int, card: int) -> bool:
        """Whether ``seat`` knows where ``card`` is (its face, where it lies)."""
        return bool(self.knowers[card] >> seat & 1)

    def _learn(self, seat: int, cards: Sequence[int]) -> None:
        """``seat`` sees the faces of ``cards`` where they lie."""
        bit = 1 << seat
        for c in cards:
            before = self.knowers[c]
            if not before & bit:
                self.knowers[c] = before | bit
                if self.changes is not None:
                    self.changes.append(("card", c, self.location[c], self.location[c], before, before | bit))

    def _move(self, moves: Sequence[tuple[int, int, Sequence[int]]]) -> None:
        """Move cards at once: ``(card, destination, seats that see its face)``. Everyone sees the backs; a seat
        that does not see the face keeps track of a card only if it can tell which card left (a slot holds one
        card; a hand with one card of that back) -- otherwise it loses track of every card of that back there."""
        log, know = self.changes, self.knowers
        before = [know[c] for c, _, _ in moves]
        for c, dest, seers in moves:
            self._blur(c, dest, seers)
        for c, _, _ in moves:
            src = self.location[c]
            if src < DOWN:
                self.hands[src].remove(c)
            elif src < UP:
                k = src - DOWN
                self.slots[k // SLOTS][k % SLOTS] = -1
        for (c, dest, seers), b in zip(moves, before, strict=True):
            if dest < DOWN:
                self.hands[dest].append(c)
            elif dest < UP:
                k = dest - DOWN
                self.slots[k // SLOTS][k % SLOTS] = c
            elif dest < CENTRE:
                self.face_up[dest - UP][number(c) - 1] = c
            if dest >= UP:
                know[c] = (1 << self.n) - 1
            else:
                for x in seers:
                    know[c] |= 1 << x
            if log is not None:
                log.append(("card", c, self.location[c], dest, b, know[c]))
            self.location[c] = dest

    def _blur(self, c: int, dest: int, seers: Sequence[int]) -> None:
        """Onlookers lose track of ``c``'s back in its hand when it leaves for a hidden place: ambiguous to them if
        the hand holds other cards of that back (the hand's owner always knows what left; a card played face up is
        seen by all)."""
        src = self.location[c]
        if not (src < DOWN and dest < UP):
            return
        back = c // NUMBERS
        same = [d for d in self.hands[src] if d // NUMBERS == back]
        if len(same) <= 1:
            return
        log, know = self.changes, self.knowers
        keep = 1 << src
        for x in seers:
            keep |= 1 << x
        for d in same:
            b = know[d]
            know[d] = b & keep
            if d != c and log is not None and know[d] != b:
                log.append(("card", d, src, src, b, know[d]))

    # -------------------------------------------------------------------------------------- legality
    def playable(self, seat: int, card: int) -> bool:
        k = number(card)
        if k == ELEVENSES:
            return self.face_up_count(seat) >= ELEVENSES_NEEDS
        return self.face_up[seat][k - 1] < 0

    def _can_rearrange(self, seat: int) -> bool:
        if max(self.slots[seat]) < 0:  # no face-down card left
            return False
        return any(REARRANGE_ELEVENSES or number(c) != ELEVENSES for c in self.hands[seat])

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.legal_mask()).tolist()

    def legal_mask(self) -> np.ndarray:
        p = self.phase
        return _mask([] if p == OVER else LEGAL[p](self, p, self.current, self.n))

    # One legal-action list per phase (``LEGAL``): ``(phase, seat to decide, players)``.
    def _legal_turn(self, p: int, s: int, n: int) -> list[int]:
        acts = [card_action(c, s, n) for c in self.hands[s] if self.playable(s, c)]
        if self._can_rearrange(s):
            acts.append(REARRANGE)
        if not acts:
            acts.append(PASS_TURN)
        return acts

    def _legal_rearrange_card(self, p: int, s: int, n: int) -> list[int]:
        acts = [card_action(c, s, n) for c in self.hands[s] if REARRANGE_ELEVENSES or number(c) != ELEVENSES]
        if self.rearranged:
            acts.append(STOP)
        return acts

    def _legal_rearrange_slot(self, p: int, s: int, n: int) -> list[int]:
        return [SLOT_BASE + k for k, c in enumerate(self.slots[s]) if c >= 0]

    def _legal_plate(self, p: int, s: int, n: int) -> list[int]:
        first = -1 if p in (ADD, LATE) else self.first
        acts = [PLATE_BASE + self.rel_of(pos, s) for pos in range(self.positions) if pos != first]
        if p == SWAP_1:
            acts.append(STOP)
        return acts

    def _legal_move_from(self, p: int, s: int, n: int) -> list[int]:
        acts = [PLATE_BASE + self.rel_of(pos, s) for pos in range(self.positions) if self.plates[pos] > 0]
        if self.effect == BISCUITS:  # up to two: the player may stop
            acts.append(STOP)
        return acts

    def _legal_guilt(self, p: int, s: int, n: int) -> list[int]:
        skip = s if p == LOOK else self.first  # -1 for the first Cucumber choice
        return [GUILT_BASE + self.rel_of(pos, s) for pos in range(self.positions) if pos != skip]

    def _legal_claim(self, p: int, s: int, n: int) -> list[int]:
        return [CLAIM_MURDERER, CLAIM_INNOCENT, SILENT]

    def _legal_target(self, p: int, s: int, n: int) -> list[int]:
        return [SEAT_BASE + r - 1 for r in range(1, n)]

    def _legal_give(self, p: int, s: int, n: int) -> list[int]:
        return [card_action(c, s, n) for c in self.hands[s] if number(c) != ELEVENSES and c != self.taken]

    def _legal_take(self, p: int, s: int, n: int) -> list[int]:
        # Ham: take from the target's hand; Cakes: the target (deciding) takes from the turn player's hand. A card
        # may be taken only by a decider with another card than the 11 to give for it.
        other = self.target if p == HAM_TAKE else self.turn_seat
        acts: list[int] = []
        if any(number(c) != ELEVENSES for c in self.hands[s]):
            acts = [card_action(c, s, n) for c in self.hands[other] if number(c) != ELEVENSES]
        acts.append(STOP)
        return acts

    # -------------------------------------------------------------------------------------- apply
    def play(self, action: int) -> list[float] | None:
        return HANDLERS[self.phase](self, action)

    # One handler per phase (``HANDLERS``): ``action`` for the seat to decide, ``self.current``.
    def _on_turn(self, action: int) -> list[float] | None:
        if action == REARRANGE:
            self.phase = REARRANGE_CARD
            return None
        if action == PASS_TURN:
            return self._end_turn()
        return self._play(self.current, action_card(action, self.current, self.n))

    def _on_rearrange_card(self, action: int) -> list[float] | None:
        if action == STOP:
            return self._end_turn()
        self.rearrange_card = action_card(action, self.current, self.n)
        self.phase = REARRANGE_SLOT
        return None

    def _on_rearrange_slot(self, action: int) -> list[float] | None:
        s, k = self.current, action - SLOT_BASE
        down = self.slots[s][k]
        self._move([(self.rearrange_card, DOWN + SLOTS * s + k, (s,)), (down, HAND + s, (s,))])
        self.rearranged += 1
        self.rearrange_card = -1
        if self.rearranged == 2:
            return self._end_turn()
        self.phase = REARRANGE_CARD
        return None

    def _plate_of(self, action: int) -> int:
        """The rules position (a seat's plate, or Mrs Lansdowne's) that a plate action names."""
        return self.seat_of((action - PLATE_BASE) % (MAX_PLAYERS + 1), self.current)

    def _on_swap_1(self, action: int) -> list[float] | None:
        if action == STOP:
            return self._start_effect()
        self.first, self.phase = self._plate_of(action), SWAP_2
        return None

    def _on_swap_2(self, action: int) -> list[float] | None:
        s, a, b = self.current, self.first, self._plate_of(action)
        pa, pb = self.plates[a], self.plates[b]
        self.plates[a], self.plates[b] = pb, pa
        self._shift(s, a, pb - pa)
        self._shift(s, b, pa - pb)
        self.first = -1
        self._note("cubes", s)
        return self._start_effect()

    def _on_add(self, action: int) -> list[float] | None:
        self._add_cube(action)
        self.bowl -= 1
        self.cubes_left -= 1
        if self.cubes_left and self.bowl:
            return None
        return self._end_turn()

    def _on_late(self, action: int) -> list[float] | None:
        self._add_cube(action)
        self.late.pop(0)
        if self.late:
            self.current = self.late[0]
            return None
        return self._resolve()

    def _add_cube(self, action: int) -> None:
        pos = self._plate_of(action)
        self.plates[pos] += 1
        self._shift(self.current, pos, 1)
        self._note("cubes", self.current)

    def _on_move_from(self, action: int) -> list[float] | None:
        if action == STOP:
            return self._end_turn()
        self.first, self.phase = self._plate_of(action), MOVE_TO
        return None

    def _on_move_to(self, action: int) -> list[float] | None:
        s, a, pos = self.current, self.first, self._plate_of(action)
        self.plates[a] -= 1
        self.plates[pos] += 1
        self._shift(s, a, -1)
        self._shift(s, pos, 1)
        self.first = -1
        self.moves_left -= 1
        self._note("cubes", s)
        if self.moves_left:
            self.phase = MOVE_FROM
            return None
        return self._end_turn()

    def _on_look(self, action: int) -> list[float] | None:
        s, pos = self.current, self._plate_of(action)
        self.looked = pos
        self.guilt_known[s][pos] = 1
        self.claims[s][pos] = LOOKED_SILENT
        self.phase = CLAIM
        self._note("guilt")
        return None

    def _on_claim(self, action: int) -> list[float] | None:
        if action != SILENT:
            self.claims[self.current][self.looked] = SAID_MURDERER if action == CLAIM_MURDERER else SAID_INNOCENT
            self._note("guilt")
        self.looked = -1
        return self._end_turn()

    def _on_cucumber_1(self, action: int) -> list[float] | None:
        self.first, self.phase = self._plate_of(action), CUCUMBER_2
        return None

    def _on_cucumber_2(self, action: int) -> list[float] | None:
        s, a, b = self.current, self.first, self._plate_of(action)
        self.guilt[a], self.guilt[b] = self.guilt[b], self.guilt[a]
        for row in (*self.guilt_known, *self.claims, *self.moved):
            row[a], row[b] = row[b], row[a]
        for x, y in ((a, b), (b, a)):  # the card that left the player's own place is now at the other one
            self.moved[s][y] = MOVED_OWN if x == s else max(self.moved[s][y], MOVED)
        self.first = -1
        self._note("guilt")
        return self._end_turn()

    def _on_pass(self, action: int) -> list[float] | None:
        s = self.current
        self.pass_choice[s] = action_card(action, s, self.n)
        i = self.passers.index(s) + 1
        if i < len(self.passers):
            self.current = self.passers[i]
            return None
        return self._resolve_passing()

    def _on_target(self, action: int) -> list[float] | None:
        s, ham = self.current, self.phase == HAM_TARGET
        t = (s + action - SEAT_BASE + 1) % self.n
        self.target = t
        shown, decider = (t, s) if ham else (s, t)
        self._learn(decider, self.hands[shown])
        self.viewed[decider][shown] += 1
        self._note("guilt")
        # Always a take decision, even when nothing may be taken (then only "take nothing" is legal): ending the
        # action early would tell the table that a hand holds nothing but the 11.
        self.phase = HAM_TAKE if ham else CAKES_TAKE
        self.current = decider
        return None

    def _on_take(self, action: int) -> list[float] | None:
        if action == STOP:
            return self._end_turn()
        s, ham = self.current, self.phase == HAM_TAKE
        other = self.target if ham else self.turn_seat
        card = action_card(action, s, self.n)
        self._move([(card, HAND + s, (s, other))])
        self.taken = card
        self.phase = HAM_GIVE if ham else CAKES_GIVE
        return None

    def _on_give(self, action: int) -> list[float] | None:
        s = self.current
        other = self.target if self.phase == HAM_GIVE else self.turn_seat
        self._move([(action_card(action, s, self.n), HAND + other, (s, other))])
        return self._end_turn()

    def _on_over(self, action: int) -> list[float] | None:
        raise ValueError("the game is over: no action is legal")

    def _play(self, s: int, card: int) -> list[float] | None:
        k = number(card)
        if k == ELEVENSES:
            self._move([(card, CENTRE, ())])
            return self._game_end(s)
        moves: list[tuple[int, int, Sequence[int]]] = [(card, UP + s, ())]
        if 2 <= k <= 9:
            moves.append((self.slots[s][k - 2], HAND + s, (s,)))
        self._move(moves)
        self._note("tea", s)
        self.effect = k
        if not self.revealed[s] and self.guest_complete(s, self.guests[s]):
            self.revealed[s] = True
            self._note("guests")
            self.phase = SWAP_1
            return None
        return self._start_effect()

    def _start_effect(self) -> list[float] | None:
        k, s, n = self.effect, self.turn_seat, self.n
        self.current = s
        if k in (SCONES, CANAPES):
            self.cubes_left = min(SCONE_CUBES if k == SCONES else CANAPE_CUBES, self.bowl)
            if not self.cubes_left:
                return self._end_turn()
            self.phase = ADD
        elif k in (BISCUITS, TARTS):
            self.moves_left = BISCUIT_MOVES if k == BISCUITS else TART_MOVES
            self.phase = MOVE_FROM
        elif k == HORS_DOEUVRES:
            self.phase = LOOK
        elif k in (TARTLETS, MACAROONS):
            self.pass_dir = 1 if k == TARTLETS else -1  # left is the next seat
            order = [(s + i) % n for i in range(n)]
            self.passers = [x for x in order if any(number(c) != ELEVENSES for c in self.hands[x])]
            for x in order:
                if x not in self.passers:  # "they must say so": their hand (the 11 or nothing) is known to all
                    for t in range(n):
                        self._learn(t, self.hands[x])
            if not self.passers:
                return self._end_turn()
            self.pass_choice = [-1] * n
            self.phase = PASS
            self.current = self.passers[0]
        elif k == HAM:
            self.phase = HAM_TARGET
        elif k == CAKES:
            self.phase = CAKES_TARGET
        elif k == CUCUMBER:
            self.phase = CUCUMBER_1
        else:
            raise AssertionError(f"no special action for {k}")
        return None

    def _resolve_passing(self) -> list[float] | None:
        n, moves = self.n, []
        passing = set(self.passers)
        for src in self.passers:
            dest = (src + self.pass_dir) % n
            while dest not in passing:  # a seat with nothing to pass slides the card on unseen
                dest = (dest + self.pass_dir) % n
            moves.append((self.pass_choice[src], HAND + dest, (src, dest)))
        self._move(moves)
        self.pass_choice = [-1] * n
        self.passers = []
        return self._end_turn()

    def _end_turn(self) -> list[float] | None:
        self.effect = 0
        self.rearranged = 0
        self.rearrange_card = self.first = self.target = self.taken = self.looked = -1
        self.turns += 1
        if self.turns >= self.options.max_turns:
            self.truncated = True
            self.phase = OVER
            return [0.0] * self.n
        self.turn_seat = self.current = (self.turn_seat + 1) % self.n
        self.phase = TURN
        return None

    # -------------------------------------------------------------------------------------- the end
    def ranking(self, e: int) -> list[int]:
        """Seats by teaspoons, most first; ties go to the Elevenses player, then clockwise from their left."""
        return sorted(range(self.n), key=lambda x: (-self.tea(x), (x - e) % self.n))

    def _game_end(self, e: int) -> list[float] | None:
        self.elevenses = e
        self.effect = 0
        quotas = PLACE_CUBES[self.n]
        self.earned = [0] * self.n
        for place, seat in enumerate(self.ranking(e)):  # a short bowl: the higher place takes first
            take = min(quotas[place], self.bowl)
            self.earned[seat] = take
            self.bowl -= take
        clockwise = [(e + i) % self.n for i in range(self.n)]  # late suspicion starts with the Elevenses player
        self.late = [seat for seat in clockwise for _ in range(self.earned[seat])]
        self._note("plates")
        if self.late:
            self.phase, self.current = LATE, self.late[0]
            return None
        return self._resolve()

    def _resolve(self) -> list[float]:
        e, n = self.elevenses, self.n
        most = max(self.plates)
        self.arrested = [p for p in range(self.positions) if self.plates[p] == most]
        murderers = [p for p in range(self.positions) if self.guilt[p]]
        if any(p in murderers for p in self.arrested):
            free = [p for p in range(self.positions) if p not in self.arrested and not self.guilt[p]]
            if free:
                least = min(self.plates[p] for p in free)
                # Ties: the Elevenses player, then clockwise from their left; Mrs Lansdowne loses every tie.
                best = min((p for p in free if self.plates[p] == least), key=lambda p: (p == n, (p - e) % n))
                self.winners = [best] if best < n else []
                self.mrs_wins = best == n
        else:
            self.winners = [p for p in murderers if p < n]
            self.mrs_wins = self.mrs and self.guilt[n] == 1
        self.phase = OVER
        self.current = -1
        return [1.0 if s in self.winners else -1.0 for s in range(n)]

    def outcome(self) -> dict[str, Any]:
        return {
            "winners": list(self.winners),
            "scores": [self.tea(s) for s in range(self.n)],
            "cubes": list(self.plates),
            "arrested": list(self.arrested),
            "murderers": [p for p in range(self.positions) if self.guilt[p]],
            "mrs_lansdowne_wins": self.mrs_wins,
            "elevenses_player": self.elevenses,
            "guests": list(self.guests),
            "truncated": self.truncated,
        }


_MASKS: dict[tuple[int, ...], np.ndarray] = {}


#: The handler of each phase, indexed by :class:`Phase` (public: the JAX core follows the same dispatch).
HANDLERS: tuple[Callable[[ElevensesState, int], list[float] | None], ...] = tuple(
    {
        TURN: ElevensesState._on_turn,
        REARRANGE_CARD: ElevensesState._on_rearrange_card,
        REARRANGE_SLOT: ElevensesState._on_rearrange_slot,
        SWAP_1: ElevensesState._on_swap_1,
        SWAP_2: ElevensesState._on_swap_2,
        ADD: ElevensesState._on_add,
        MOVE_FROM: ElevensesState._on_move_from,
        MOVE_TO: ElevensesState._on_move_to,
        LOOK: ElevensesState._on_look,
        CLAIM: ElevensesState._on_claim,
        PASS: ElevensesState._on_pass,
        HAM_TARGET: ElevensesState._on_target,
        HAM_TAKE: ElevensesState._on_take,
        HAM_GIVE: ElevensesState._on_give,
        CAKES_TARGET: ElevensesState._on_target,
        CAKES_TAKE: ElevensesState._on_take,
        CAKES_GIVE: ElevensesState._on_give,
        CUCUMBER_1: ElevensesState._on_cucumber_1,
        CUCUMBER_2: ElevensesState._on_cucumber_2,
        LATE: ElevensesState._on_late,
        OVER: ElevensesState._on_over,
    }[p]
    for p in range(len(Phase))
)


#: The legal actions of each phase but OVER (which has none): the method listing them, by phase number.
LEGAL: dict[int, Callable[[ElevensesState, int, int, int], list[int]]] = {
    TURN: ElevensesState._legal_turn,
    REARRANGE_CARD: ElevensesState._legal_rearrange_card,
    REARRANGE_SLOT: ElevensesState._legal_rearrange_slot,
    SWAP_1: ElevensesState._legal_plate,
    SWAP_2: ElevensesState._legal_plate,
    ADD: ElevensesState._legal_plate,
    LATE: ElevensesState._legal_plate,
    MOVE_TO: ElevensesState._legal_plate,
    MOVE_FROM: ElevensesState._legal_move_from,
    LOOK: ElevensesState._legal_guilt,
    CUCUMBER_1: ElevensesState._legal_guilt,
    CUCUMBER_2: ElevensesState._legal_guilt,
    CLAIM: ElevensesState._legal_claim,
    HAM_TARGET: ElevensesState._legal_target,
    CAKES_TARGET: ElevensesState._legal_target,
    PASS: ElevensesState._legal_give,
    HAM_GIVE: ElevensesState._legal_give,
    CAKES_GIVE: ElevensesState._legal_give,
    HAM_TAKE: ElevensesState._legal_take,
    CAKES_TAKE: ElevensesState._legal_take,
}


def _mask(actions: list[int]) -> np.ndarray:
    """The read-only mask of ``actions``, shared between states with the same legal actions."""
    key = tuple(actions)  # the rules list actions in a fixed order for a given state: no need to sort
    m = _MASKS.get(key)
    if m is None:
        if len(_MASKS) > 100_000:  # a bound on memory; the common masks come back at once
            _MASKS.clear()
        buf = bytearray(NUM_ACTIONS)
        for a in key:
            buf[a] = 1
        m = _MASKS[key] = np.frombuffer(bytes(buf), np.int8)
    return m


# ----------------------------------------------------------------------------------------------- set-up
def _blank(opts: Options) -> ElevensesState:
    n = opts.num_players
    mrs = n < MAX_PLAYERS
    p = n + mrs
    return ElevensesState(
        options=opts,
        n=n,
        mrs=mrs,
        location=[NOWHERE] * NUM_CARDS,
        hands=[[] for _ in range(n)],
        slots=[[-1] * SLOTS for _ in range(n)],
        face_up=[[-1] * (NUMBERS - 1) for _ in range(n)],
        knowers=[0] * NUM_CARDS,
        guests=[0] * n,
        revealed=[False] * n,
        guilt=[0] * p,
        guilt_known=[bytearray(p) for _ in range(n)],
        claims=[[NO_CLAIM] * p for _ in range(n)],
        moved=[[0] * p for _ in range(n)],
        viewed=[[0] * n for _ in range(n)],
        plates=[0] * p,
        bowl=opts.cubes_per_player * n,
        put=[[0] * p for _ in range(n)],
        took=[[0] * p for _ in range(n)],
        pass_choice=[-1] * n,
    )


def _start_cubes(g: ElevensesState) -> None:
    first = g.options.start_seat
    for i in range(g.n):
        g.plates[(first + i) % g.n] = START_CUBES[min(i, 2)]
    if g.mrs:
        g.plates[g.n] = MRS_START_CUBES
    g.bowl -= sum(g.plates)
    g.turn_seat = g.current = first


def deal(opts: Options, rng: np.random.Generator) -> ElevensesState:
    """A new game: spreads and hands, guests, the Guilt deal, the start cubes."""
    g = _blank(opts)
    n = g.n
    for s in range(n):
        cards = [s * NUMBERS + int(i) for i in rng.permutation(NUMBERS)]
        for k in range(SLOTS):
            g.slots[s][k] = cards[k]
            g.location[cards[k]] = DOWN + SLOTS * s + k
        g.hands[s] = cards[SLOTS:]
        for c in g.hands[s]:
            g.location[c] = HAND + s
            g.knowers[c] = 1 << s
    g.guests = [int(x) for x in rng.permutation(len(GUESTS))[:n]]
    deck = [1] * murderers(n) + [0] * (g.positions - murderers(n))
    g.guilt = [deck[int(i)] for i in rng.permutation(len(deck))]
    for s in range(n):
        g.guilt_known[s][s] = 1  # each player looks at their own card once, at set-up
    _start_cubes(g)
    return g


def _place_by_hand(g: ElevensesState, hands: Sequence[Sequence[int]], up: Sequence[Sequence[int]]) -> None:
    """:func:`position`'s cards: the hands and face-up cards given, every other card of a seat's set face down in
    that seat's free slots in id order; who knows which card."""
    n = g.n
    placed: set[int] = set()
    for s in range(n):
        for c in up[s]:
            k = number(c)
            if k == ELEVENSES or g.face_up[s][k - 1] >= 0:
                raise ValueError(f"position: seat {s} cannot have {card_name(c)} face up")
            g.face_up[s][k - 1], g.location[c] = c, UP + s
            placed.add(c)
        for c in hands[s]:
            g.hands[s].append(c)
            g.location[c] = HAND + s
            placed.add(c)
    for s in range(n):
        free = [k for k in range(SLOTS) if g.face_up[s][k + 1] < 0]
        rest = [c for c in range(s * NUMBERS, (s + 1) * NUMBERS) if c not in placed]
        # another seat's cards held here leave room in this seat's spread for this seat's own extra cards
        if len(rest) != len(free):
            raise ValueError(f"position: seat {s} has {len(rest)} cards left for {len(free)} face-down slots")
        for k, c in zip(free, rest, strict=True):
            g.slots[s][k], g.location[c] = c, DOWN + SLOTS * s + k
    if len(placed) + sum(c >= 0 for row in g.slots for c in row) != n * NUMBERS:
        raise ValueError("position: every card must be in exactly one place")
    for s in range(n):
        for c in g.hands[s]:
            g.knowers[c] |= 1 << s
        for c in g.face_up[s]:
            if c >= 0:
                g.knowers[c] = (1 << n) - 1


def position(
    opts: Options,
    hands: Sequence[Sequence[int]],
    up: Sequence[Sequence[int]] = (),
    guests: Sequence[int] | None = None,
    guilt: Sequence[int] | None = None,
    plates: Sequence[int] | None = None,
    revealed: Sequence[bool] | None = None,
    current: int = 0,
) -> ElevensesState:
    """A state set up by hand (tests, puzzles). Cards are ids (``11 * owner + number - 1``).

    ``hands``: each seat's hand; ``up``: each seat's face-up cards. Every other card of a seat's set goes face down
    into that seat's free slots in id order (so a seat's hand + face-up + face-down must hold 11 cards, counting
    other seats' cards in the hand). Each seat knows its hand; ``plates`` default to the set-up cubes.
    """
    g = _blank(opts)
    n = g.n
    if len(hands) != n:
        raise ValueError(f"position: expected {n} hands, got {len(hands)}")
    _place_by_hand(g, hands, list(up) or [[] for _ in range(n)])
    g.guests = list(guests) if guests is not None else list(range(n))
    g.revealed = list(revealed) if revealed is not None else [False] * n
    g.guilt = list(guilt) if guilt is not None else [1] + [0] * (g.positions - 1)
    if len(g.guilt) != g.positions or sum(g.guilt) != murderers(n):
        raise ValueError(f"position: {g.positions} Guilt cards with {murderers(n)} Murderer(s) expected")
    for s in range(n):
        g.guilt_known[s][s] = 1
    _start_cubes(g)
    if plates is not None:
        if len(plates) != g.positions:
            raise ValueError(f"position: expected {g.positions} plates")
        g.bowl += sum(g.plates) - sum(plates)
        g.plates = list(plates)
    g.turn_seat = g.current = current
    return g


def card(owner_seat: int, num: int) -> int:
    """The id of ``owner_seat``'s card numbered ``num``."""
    return owner_seat * NUMBERS + num - 1


# ----------------------------------------------------------------------------------------------- determinisation
def resample(g: ElevensesState, seat: int, rng: np.random.Generator) -> ElevensesState:
    """A copy with everything hidden from ``seat`` redrawn (see :func:`_resample`); a draw that would leave the
    player to decide without a legal action (an 11 where a pass or a gift is due) is drawn again."""
    for _ in range(100):
        new = _resample(g, seat, rng)
        if _can_finish(new):
            break
    else:
        new = _resample(g, seat, rng, cards=False)
    # A hand is a set: its storage order is nobody's information. Shuffling it (after every other draw, so those
    # stay as they were) lets the hidden-information audit catch a view that shows that order.
    for hand in new.hands:
        hand[:] = [hand[i] for i in rng.permutation(len(hand))]
    return new


def _can_finish(g: ElevensesState) -> bool:
    """The decisions under way can be completed: every passer still to choose, and a Ham Sandwiches / Cakes
    player who has taken a card and is to give one, holds a card other than the 11 (and than the card taken)."""

    def can_give(seat: int) -> bool:
        return any(number(c) != ELEVENSES and c != g.taken for c in g.hands[seat])

    if g.phase == PASS:
        return all(can_give(x) for x in g.passers if g.pass_choice[x] < 0)
    if g.phase in (HAM_GIVE, CAKES_GIVE):
        return can_give(g.current)
    return True


def _resample(g: ElevensesState, seat: int, rng: np.random.Generator, cards: bool = True) -> ElevensesState:
    """A copy with everything hidden from ``seat`` redrawn consistently with what it knows.

    Cards ``seat`` cannot place are shuffled among the places that hold a card of the same (public) back; other
    seats' knowledge follows the place (a seat that knew the card there knows the new one); an 11 stays with its
    owner, never where a pending pass points. Unrevealed guests are redrawn among the unseen ones (never one whose
    three items are already face up); the Guilt cards ``seat`` has not seen are redrawn.
    """
    new = g.clone()
    n = g.n
    for x in range(n if cards else 0):
        free = [c for c in range(x * NUMBERS, (x + 1) * NUMBERS) if not g.knowers[c] >> seat & 1 and g.location[c] < UP]
        if len(free) < 2:
            continue
        places = [g.location[c] for c in free]
        eleven = x * NUMBERS + ELEVENSES - 1
        order = [free[i] for i in rng.permutation(len(free))]
        if eleven in free:
            pending = set(g.pass_choice) | {g.taken}
            ok = [
                i
                for i, c in enumerate(free)
                if c not in pending
                and (places[i] == HAND + x or DOWN + SLOTS * x <= places[i] < DOWN + SLOTS * (x + 1))
            ]
            i = ok[int(rng.integers(len(ok)))]
            order.remove(eleven)
            order.insert(i, eleven)
        mapping = dict(zip(free, order, strict=True))  # the card at old card's place is now mapping[old]
        for old, c in mapping.items():
            where = g.location[old]
            new.location[c] = where
            if where < DOWN:
                new.hands[where][g.hands[where].index(old)] = c
            else:
                k = where - DOWN
                new.slots[k // SLOTS][k % SLOTS] = c
            new.knowers[c] = g.knowers[old]  # ``seat`` knows neither: the others' knowledge follows the place
        new.pass_choice = [mapping.get(c, c) for c in new.pass_choice]
        if g.taken in mapping:
            new.taken = mapping[g.taken]
        if g.rearrange_card in mapping:
            new.rearrange_card = mapping[g.rearrange_card]
    # Guests.
    hidden = [s for s in range(n) if s != seat and not g.revealed[s]]
    if hidden:
        pool = [x for x in range(len(GUESTS)) if x not in [g.guests[s] for s in range(n) if s not in hidden]]
        for _ in range(1000):
            pick = [pool[i] for i in rng.permutation(len(pool))[: len(hidden)]]
            if not any(g.guest_complete(s, x) for s, x in zip(hidden, pick, strict=True)):
                for s, x in zip(hidden, pick, strict=True):
                    new.guests[s] = x
                break
    # Guilt cards.
    unseen = [p for p in range(g.positions) if not g.guilt_known[seat][p]]
    murderers = sum(g.guilt[p] for p in unseen)
    chosen = set(int(i) for i in rng.permutation(len(unseen))[:murderers])
    for i, p in enumerate(unseen):
        new.guilt[p] = int(i in chosen)
    return new
