"""This Game Goes to Eleven: the pure rules (no RL imports).

Rulebook: the publisher's (not shipped); project rulings: ``docs/rulings.md``. Every ruling
that is a project choice is a named constant or an :class:`Options` field below.

Card kinds: ``0–8`` are the number cards 1–9 (value ``kind + 1``), ``9`` the Eleven, ``10`` the Quiet!.

Piles lie in ``max_piles`` fixed slots: a pile keeps its slot while it is on the table, a new pile takes the
lowest free slot. Actions (one flat space, ``A = NUM_KINDS * (max_piles + 1)``):

- ``target * 11 + kind`` for ``target < max_piles``: play a card of ``kind`` on the pile in slot ``target``;
  ``max_piles * 11 + kind``: play it to start a new pile;
- ``A + k - 1`` (``k`` = 1–5): give the pile that reached 11 to the player ``k`` seats to your left;
- ``A + 5``: let an Eleven stand (do not answer); ``A + 6``: answer the Eleven with a Quiet!.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from parlour.envs.contract import Rules, check_bool, check_choice, check_int
from parlour.envs.goes_to_eleven import GAME

# ----------------------------------------------------------------------------------------------- the cards
NUM_NUMBERS = 9
ELEVEN, QUIET = 9, 10
NUM_KINDS = 11
KIND_NAMES = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "Eleven", "Quiet!")
TARGET = 11
#: The 72 cards: 7 each of 1–6, 6 each of 7–9 (ruling, **choice**: the split of the 60 number cards is not in
#: the transcription), 6 Eleven and 6 Quiet! (rulebook).
DEFAULT_DECK = (7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6)
HAND_SIZE = 3
#: The most cards of one kind a ``deck`` keyword may hold.
MAX_KIND_COUNT = 99
#: The player counts, from the game's declaration (:data:`parlour.envs.goes_to_eleven.GAME`).
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = GAME.min_players, GAME.max_players, GAME.default_players
#: The most piles on the table at once (ruling, **choice**, keyword ``max_piles``; random play can reach 19).
#: At the limit no pile may be started, not even by a split; a player then left with no legal play may put a
#: number card on a pile whose top card is the same number.
DEFAULT_MAX_PILES = 12
MAX_PILES_LIMIT = 40


class Phase(IntEnum):
    """The phases of a Goes to Eleven game: a turn, giving away a pile at 11, answering an Eleven, the end."""

    PLAY = 0
    GIVE = 1
    ANSWER = 2
    OVER = 3


#: Plain-int aliases of :class:`Phase` for the hot paths (a state stores its phase as an int: an IntEnum member
#: costs more to compare and index with).
PLAY, GIVE, ANSWER, OVER = (int(p) for p in Phase)
PHASE_NAMES = ("play", "give", "answer", "over")

#: ``win``: at the end +1 to every seat with the fewest collected cards (ties share the win) and −1 to every
#: other seat. ``cards``: −``CARD_REWARD`` per card, paid when a seat collects a pile. ``margin``: as ``cards``,
#: and each other seat gets +``CARD_REWARD / (n − 1)`` per card collected (zero-sum; the sum over a game is
#: ``CARD_REWARD`` × (the others' mean collected cards − one's own)).
REWARD_MODES = ("win", "cards", "margin")
CARD_REWARD = 0.1


def value_of(kind: int) -> int:
    """A number card's value (specials are worth 0 when buried at set-up)."""
    return kind + 1 if kind < NUM_NUMBERS else 0


# ----------------------------------------------------------------------------------------------- pile tables
# A pile at rest is coded ``value * NUM_KINDS + top`` (value 0–10). Each table maps a code to the bit set of the
# card kinds that may go on that pile in one way; the last entry (index -1) is an empty slot.
_CODES = TARGET * NUM_KINDS


def _pile_tables() -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    normal, over, same_ok, same_over, top_bit = [], [], [], [], []
    for code in range(_CODES):
        value, top = divmod(code, NUM_KINDS)
        n = o = so = sv = 0
        for k in range(NUM_NUMBERS):
            fits = value + value_of(k) <= TARGET
            if k == top:
                if fits:
                    so |= 1 << k
                else:
                    sv |= 1 << k
            elif fits:
                n |= 1 << k
            else:
                o |= 1 << k
        n |= (1 << ELEVEN) | (1 << QUIET)  # a special card can go on any pile
        normal.append(n)
        over.append(o)
        same_ok.append(so)
        same_over.append(sv)
        top_bit.append(1 << top if top < NUM_NUMBERS else 0)
    for table in (normal, over, same_ok, same_over, top_bit):
        table.append(0)  # empty slot
    return normal, over, same_ok, same_over, top_bit


_NORMAL, _OVER, _SAME_OK, _SAME_OVER, _TOP_BIT = _pile_tables()
EMPTY = -1
#: 11 mask bytes for each set of card kinds.
_BLOCK = [bytes((b >> k) & 1 for k in range(NUM_KINDS)) for b in range(1 << NUM_KINDS)]


# ----------------------------------------------------------------------------------------------- options
@dataclass(frozen=True)
class Options:
    """The rule keywords of This Game Goes to Eleven (all validated)."""

    num_players: int = DEFAULT_PLAYERS
    #: Cards of each kind (1–9, Eleven, Quiet!): replaces the deck composition.
    deck: tuple[int, ...] = DEFAULT_DECK
    max_piles: int = DEFAULT_MAX_PILES
    #: The rulebook's "Pick On Me" variant: the guitar pick's holder receives every pile that reaches 11.
    pick_on_me: bool = False
    start_seat: int = 0
    reward: str = "win"

    def __post_init__(self) -> None:

        check_int("goes_to_eleven: num_players", self.num_players, MIN_PLAYERS, MAX_PLAYERS)
        check_int("goes_to_eleven: max_piles", self.max_piles, 1, MAX_PILES_LIMIT)
        check_bool("goes_to_eleven: pick_on_me", self.pick_on_me)
        check_int("goes_to_eleven: start_seat", self.start_seat, 0, self.num_players - 1)
        check_choice("goes_to_eleven: reward", self.reward, REWARD_MODES)
        deck = tuple(self.deck) if isinstance(self.deck, list | tuple) else None
        need = self.num_players * HAND_SIZE + 1
        if (
            deck is None
            or len(deck) != NUM_KINDS
            or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_KIND_COUNT for c in deck)
            or sum(deck[:NUM_NUMBERS]) == 0
            or sum(deck) < need
        ):
            raise ValueError(
                f"goes_to_eleven: deck={self.deck!r} is not valid: expected {NUM_KINDS} counts in [0, {MAX_KIND_COUNT}] for "
                f"the kinds {list(KIND_NAMES)}, with at least one number card and at least {need} cards in all "
                f"({HAND_SIZE} per player and one to start the pile)"
            )
        object.__setattr__(self, "deck", deck)

    @property
    def num_actions(self) -> int:
        return give_base(self.max_piles) + (MAX_PLAYERS - 1) + 2

    def return_bounds(self) -> tuple[float, float]:
        """The least and greatest return of one seat over a game (``cards``/``margin``: at most the whole deck)."""
        deck = CARD_REWARD * sum(self.deck)
        return {"cards": (-deck, 0.0), "margin": (-deck, deck)}.get(self.reward, (-1.0, 1.0))


def give_base(max_piles: int) -> int:
    return NUM_KINDS * (max_piles + 1)


# ----------------------------------------------------------------------------------------------- the state
@dataclass
class GoesToElevenState(Rules):
    """A game of This Game Goes to Eleven. Mutated in place by :meth:`apply` (written for speed: plain lists)."""

    options: Options
    n: int
    hands: list[list[int]]  # per seat, cards of each kind
    hand_bits: list[int]  # per seat, the set of kinds held
    hand_size: list[int]
    draw: list[int]  # the draw pile; the top card is the last
    pile_value: list[int]  # per slot; 0 for an empty slot
    pile_top: list[int]  # per slot; -1 for an empty slot
    pile_size: list[int]  # per slot; 0 for an empty slot
    pile_code: list[int]  # per slot: value * NUM_KINDS + top at rest, EMPTY otherwise
    occupied: list[int]  # slots holding a pile
    collected: list[int]
    played: list[int]  # face-up cards of each kind so far (public: set-up, piles, collected piles)
    phase: int = PLAY
    current: int = 0  # the seat to decide
    turn_seat: int = 0  # the seat whose turn it is
    new_pile: bool = False  # a pile has just left the table: this turn may start a new pile
    pending: int = -1  # the slot of the pile at 11 awaiting an answer or a receiver
    eleven_player: int = -1  # who played the Eleven being answered
    asking: list[int] | None = None  # seats still to be asked whether to answer, in order
    pick: int = -1  # the guitar pick's holder (Pick On Me)
    turns: int = 0

    @property
    def current_player(self) -> int:
        return -1 if self.phase == OVER else self.current

    @property
    def num_piles(self) -> int:
        return len(self.occupied)

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def clone(self) -> GoesToElevenState:
        new = copy.copy(self)
        new.hands = [h[:] for h in self.hands]
        new.hand_bits = self.hand_bits[:]
        new.hand_size = self.hand_size[:]
        new.draw = self.draw[:]
        new.pile_value = self.pile_value[:]
        new.pile_top = self.pile_top[:]
        new.pile_size = self.pile_size[:]
        new.pile_code = self.pile_code[:]
        new.occupied = self.occupied[:]
        new.collected = self.collected[:]
        new.played = self.played[:]
        new.asking = None if self.asking is None else self.asking[:]
        new.changes = None
        return new

    # ------------------------------------------------------------------------------------------ legality
    def play_bits(self) -> tuple[list[int], int]:
        """For the seat to play: per slot, the kinds it may play there; and the kinds it may start a pile with."""
        h = self.hand_bits[self.current]
        codes = self.pile_code
        normal = [_NORMAL[c] & h for c in codes]
        tops = 0
        for j in self.occupied:
            tops |= _TOP_BIT[codes[j]]
        new_bits = 0
        piles = len(self.occupied)
        if piles < self.options.max_piles:
            # A new pile: right after a pile left (or with none on the table) any card; else only a split.
            new_bits = h if (self.new_pile or piles == 0) else h & tops
        if new_bits or any(normal):
            return normal, new_bits
        # Going over 11 is legal only when every legal play goes over.
        over = [_OVER[c] & h for c in codes]
        if any(over):
            return over, 0
        # At the pile limit a player left with no legal play may put a number on the same number.
        same = [_SAME_OK[c] & h for c in codes]
        if any(same):
            return same, 0
        return [_SAME_OVER[c] & h for c in codes], 0

    def legal_mask(self) -> np.ndarray:
        phase = self.phase
        if phase == PLAY:
            # The common case, kept fast: write the blocks of the piles on the table into a zero buffer.
            h = self.hand_bits[self.current]
            codes = self.pile_code
            mp = self.options.max_piles
            buf = bytearray(_ZEROS[mp])
            found = 0
            tops = 0
            for j in self.occupied:
                c = codes[j]
                tops |= _TOP_BIT[c]
                b = _NORMAL[c] & h
                if b:
                    found = 1
                    o = j * NUM_KINDS
                    buf[o : o + NUM_KINDS] = _BLOCK[b]
            piles = len(self.occupied)
            if piles < mp:
                b = h if (self.new_pile or piles == 0) else h & tops
                if b:
                    found = 1
                    o = mp * NUM_KINDS
                    buf[o : o + NUM_KINDS] = _BLOCK[b]
            if not found:
                blocks, new_bits = self.play_bits()  # going over, or the pile limit: rare
                body = b"".join([_BLOCK[b] for b in blocks])
                return np.frombuffer(body + _BLOCK[new_bits] + _TAIL, np.int8)
            return np.frombuffer(bytes(buf), np.int8)  # read-only
        if phase == GIVE:
            return _GIVE_MASKS[self.options.max_piles][self.n]
        if phase == ANSWER:
            return _ANSWER_MASKS[self.options.max_piles][self.hands[self.current][QUIET] > 0]
        return _NONE_MASKS[self.options.max_piles]

    # ------------------------------------------------------------------------------------------ moves
    def play(self, action: int) -> list[float] | None:
        """Play ``action`` for the seat to decide (unchecked: :meth:`apply` checks it against :meth:`legal_mask`).

        Notes in ``changes`` (when listened to): ``("play", seat, kind, drawn, slot)`` (a card of ``kind`` went
        from the seat's hand onto the pile in ``slot``; ``drawn`` came from the draw pile, or -1), ``("pile",
        slot)`` (the pile in the slot was taken) and ``("collect", seat)`` (by that seat)."""
        phase = self.phase
        if phase == PLAY:
            return self._play(action)
        gb = give_base(self.options.max_piles)
        if phase == GIVE:
            return self._collect((self.current + action - gb + 1) % self.n)
        if action == gb + MAX_PLAYERS:  # answering an Eleven with Quiet!
            seat = self.current
            drawn = self._take_from_hand(seat, QUIET)
            self.played[QUIET] += 1
            self.pile_size[self.pending] += 1
            self.pile_top[self.pending] = QUIET
            if self.changes is not None:
                self.changes.append(("play", seat, QUIET, drawn, self.pending))
            return self._collect(self.eleven_player)
        return self._ask_next()

    def _take_from_hand(self, seat: int, kind: int) -> int:
        """``seat`` plays a card of ``kind`` and draws back up while the draw pile lasts; returns the card drawn
        (-1: none)."""
        hand = self.hands[seat]
        hand[kind] -= 1
        if not hand[kind]:
            self.hand_bits[seat] &= ~(1 << kind)
        card = -1
        if self.draw:
            card = self.draw.pop()
            hand[card] += 1
            self.hand_bits[seat] |= 1 << card
        else:
            self.hand_size[seat] -= 1
        return card

    def _play(self, action: int) -> list[float] | None:
        target, kind = divmod(action, NUM_KINDS)
        seat = self.current
        self.turns += 1
        self.new_pile = False
        drawn = self._take_from_hand(seat, kind)
        self.played[kind] += 1
        if target == self.options.max_piles:
            slot = self.pile_top.index(-1)  # the lowest free slot
            self.occupied.append(slot)
            value = TARGET if kind == ELEVEN else kind + 1 if kind < NUM_NUMBERS else 0
            self.pile_size[slot] = 1
        else:
            slot = target
            self.pile_size[slot] += 1
            value = self.pile_value[slot] + kind + 1 if kind < NUM_NUMBERS else TARGET if kind == ELEVEN else 0
        self.pile_value[slot] = value
        self.pile_top[slot] = kind
        if self.changes is not None:
            self.changes.append(("play", seat, kind, drawn, slot))
        if value < TARGET:
            self.pile_code[slot] = value * NUM_KINDS + kind
            return self._next_turn()
        self.pile_code[slot] = EMPTY
        self.pending = slot
        if value > TARGET:
            return self._collect(seat)  # forced over 11: the player takes the pile
        if kind == ELEVEN:
            # Ask every other seat with cards, clockwise: asking only Quiet! holders would tell the table who
            # holds one; a seat without a Quiet! can only let the Eleven stand.
            n = self.n
            self.eleven_player = seat
            self.asking = [s for s in ((seat + k) % n for k in range(1, n)) if self.hand_size[s] > 0]
            return self._ask_next()
        return self._made_eleven()

    def _ask_next(self) -> list[float] | None:
        assert self.asking is not None
        if self.asking:
            self.phase = ANSWER
            self.current = self.asking.pop(0)
            return None
        self.asking = None
        return self._made_eleven()

    def _made_eleven(self) -> list[float] | None:
        """A pile stands at 11 unanswered: its player gives it away (or, Pick On Me, the pick's holder takes it)."""
        if self.options.pick_on_me:
            holder = self.pick
            self.pick = (holder + 1) % self.n
            return self._collect(holder)
        self.phase = GIVE
        self.current = self.turn_seat
        return None

    def _collect(self, seat: int) -> list[float] | None:
        """``seat`` takes the pending pile face down; play goes on left of the seat whose turn it was."""
        slot = self.pending
        size = self.pile_size[slot]
        self.collected[seat] += size
        if self.changes is not None:
            self.changes.append(("pile", slot))
            self.changes.append(("collect", seat))
        self.pile_value[slot] = 0
        self.pile_top[slot] = -1
        self.pile_size[slot] = 0
        self.pile_code[slot] = EMPTY
        self.occupied.remove(slot)
        self.pending = -1
        self.eleven_player = -1
        self.asking = None
        self.new_pile = True
        mode = self.options.reward
        rewards: list[float] | None = None
        if mode != "win":
            rewards = [0.0] * self.n
            rewards[seat] = -CARD_REWARD * size
            if mode == "margin":
                share = CARD_REWARD * size / (self.n - 1)
                for s in range(self.n):
                    if s != seat:
                        rewards[s] = share
        end = self._next_turn()
        return end if rewards is None else rewards

    def _next_turn(self) -> list[float] | None:
        n, sizes = self.n, self.hand_size
        seat = self.turn_seat
        self.phase = PLAY
        for _ in range(n):
            seat = (seat + 1) % n
            if sizes[seat]:
                self.turn_seat = self.current = seat
                return None
        return self._end()

    def _end(self) -> list[float] | None:
        """Nobody has a card left (the draw pile is out too): the game is over."""
        self.phase = OVER
        self.current = -1
        if self.options.reward == "win":
            best = min(self.collected)
            return [1.0 if c == best else -1.0 for c in self.collected]
        return None

    # ------------------------------------------------------------------------------------------ results
    def winners(self) -> list[int]:
        best = min(self.collected)
        return [s for s in range(self.n) if self.collected[s] == best]

    def outcome(self) -> dict[str, Any]:
        return {
            "collected": list(self.collected),
            "scores": list(self.collected),
            "winners": self.winners() if self.phase == OVER else [],
            "hands": [[KIND_NAMES[k] for k in range(NUM_KINDS) for _ in range(h[k])] for h in self.hands],
            "draw_pile": [KIND_NAMES[k] for k in reversed(self.draw)],
            "piles_left": [
                {"slot": j, "value": self.pile_value[j], "top": KIND_NAMES[t], "size": self.pile_size[j]}
                for j, t in enumerate(self.pile_top)
                if t >= 0
            ],
            "turns": self.turns,
        }

    def unseen(self, seat: int) -> list[int]:
        """Cards of each kind that ``seat`` has not seen: in other hands and the draw pile."""
        own = self.hands[seat]
        return [d - p - h for d, p, h in zip(self.options.deck, self.played, own, strict=True)]


# ----------------------------------------------------------------------------------------------- static masks
def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


#: The give and answer actions are never legal in the play phase.
_TAIL = bytes(MAX_PLAYERS - 1 + 2)
_GIVE_MASKS: dict[int, dict[int, np.ndarray]] = {}
_ANSWER_MASKS: dict[int, dict[bool, np.ndarray]] = {}
_NONE_MASKS: dict[int, np.ndarray] = {}
_ZEROS: dict[int, bytes] = {}


def _static_masks(max_piles: int) -> None:
    if max_piles in _NONE_MASKS:
        return
    gb = give_base(max_piles)
    size = gb + MAX_PLAYERS - 1 + 2
    _NONE_MASKS[max_piles] = _frozen(np.zeros(size, np.int8))
    _ZEROS[max_piles] = bytes(size)
    give: dict[int, np.ndarray] = {}
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        m = np.zeros(size, np.int8)
        m[gb : gb + n - 1] = 1
        give[n] = _frozen(m)
    _GIVE_MASKS[max_piles] = give
    answer: dict[bool, np.ndarray] = {}
    for has_quiet in (False, True):
        m = np.zeros(size, np.int8)
        m[gb + MAX_PLAYERS - 1] = 1
        m[gb + MAX_PLAYERS] = int(has_quiet)
        answer[has_quiet] = _frozen(m)
    _ANSWER_MASKS[max_piles] = answer


def pass_action(max_piles: int) -> int:
    return give_base(max_piles) + MAX_PLAYERS - 1


def quiet_action(max_piles: int) -> int:
    return give_base(max_piles) + MAX_PLAYERS


# ----------------------------------------------------------------------------------------------- the deal
def deal(opts: Options, rng: np.random.Generator) -> GoesToElevenState:
    """Shuffle, deal three cards each, and turn up the first pile (covering any special card, per the rulings)."""
    _static_masks(opts.max_piles)
    n, mp = opts.num_players, opts.max_piles
    deck = [k for k, c in enumerate(opts.deck) for _ in range(c)]
    order = rng.permutation(len(deck))
    draw = [deck[i] for i in order]  # the top card is the last
    hands = [[0] * NUM_KINDS for _ in range(n)]
    for _ in range(HAND_SIZE):
        for s in range(n):
            hands[s][draw.pop()] += 1
    played = [0] * NUM_KINDS
    size = 0
    top = -1
    while draw:
        top = draw.pop()
        played[top] += 1
        size += 1
        if top < NUM_NUMBERS:
            break  # a Quiet! or Eleven turned up is covered by the next card, until a number is on top
    value = value_of(top)
    pile_value, pile_top, pile_size, pile_code = [0] * mp, [-1] * mp, [0] * mp, [EMPTY] * mp
    pile_value[0], pile_top[0], pile_size[0], pile_code[0] = value, top, size, value * NUM_KINDS + top
    start = opts.start_seat
    return GoesToElevenState(
        options=opts,
        n=n,
        hands=hands,
        hand_bits=[sum(1 << k for k in range(NUM_KINDS) if h[k]) for h in hands],
        hand_size=[HAND_SIZE] * n,
        draw=draw,
        pile_value=pile_value,
        pile_top=pile_top,
        pile_size=pile_size,
        pile_code=pile_code,
        occupied=[0],
        collected=[0] * n,
        played=played,
        current=start,
        turn_seat=start,
        pick=start if opts.pick_on_me else -1,
    )


def position(
    opts: Options,
    hands: Sequence[Sequence[int]],
    piles: Sequence[Sequence[int]],
    draw: Sequence[int] = (),
    collected: Sequence[int] | None = None,
    current: int = 0,
    new_pile: bool = False,
    pick: int | None = None,
) -> GoesToElevenState:
    """A state set up by hand, for tests, puzzles and analysis; ``current`` is to play.

    ``hands``: each seat's cards (kinds); ``piles``: each pile's cards bottom to top, in slots 0, 1, …;
    ``draw``: the draw pile, the next card first; ``collected``: cards each seat has collected. Every card of
    ``opts.deck`` that is in no hand and not in the draw pile has been turned face up: it lies in a pile or in a
    collected stack, so the counts must add up.
    """
    _static_masks(opts.max_piles)
    n = opts.num_players
    if len(hands) != n:
        raise ValueError(f"position: expected {n} hands, got {len(hands)}")
    if len(piles) > opts.max_piles:
        raise ValueError(f"position: {len(piles)} piles is more than max_piles={opts.max_piles}")
    counts = [[0] * NUM_KINDS for _ in range(n)]
    for s, hand in enumerate(hands):
        if len(hand) > HAND_SIZE or (draw and len(hand) != HAND_SIZE):
            raise ValueError(
                f"position: seat {s} holds {len(hand)} cards; hands hold {HAND_SIZE} while cards remain to draw"
            )
        for k in hand:
            counts[s][k] += 1
    unseen = [sum(h[k] for h in counts) + list(draw).count(k) for k in range(NUM_KINDS)]
    played = [d - u for d, u in zip(opts.deck, unseen, strict=True)]
    collected = [0] * n if collected is None else list(collected)
    on_piles = [sum(list(p).count(k) for p in piles) for k in range(NUM_KINDS)]
    if min(played) < 0 or any(o > p for o, p in zip(on_piles, played, strict=True)):
        raise ValueError("position: the hands, draw pile and piles hold more cards of some kind than the deck")
    if sum(played) != sum(len(p) for p in piles) + sum(collected):
        raise ValueError("position: cards in the piles plus collected cards must equal the deck minus hands and draw")
    mp = opts.max_piles
    value, top, size, code = [0] * mp, [-1] * mp, [0] * mp, [EMPTY] * mp
    for j, cards in enumerate(piles):
        if not cards:
            raise ValueError(f"position: pile {j} is empty")
        v = 0
        for k in cards:
            v = 0 if k == QUIET else TARGET if k == ELEVEN else v + value_of(k)
        if v >= TARGET:
            raise ValueError(f"position: pile {j} is worth {v}; piles on the table are worth less than {TARGET}")
        value[j], top[j], size[j], code[j] = v, cards[-1], len(cards), v * NUM_KINDS + cards[-1]
    state = GoesToElevenState(
        options=opts,
        n=n,
        hands=counts,
        hand_bits=[sum(1 << k for k in range(NUM_KINDS) if h[k]) for h in counts],
        hand_size=[len(h) for h in hands],
        draw=list(reversed(draw)),
        pile_value=value,
        pile_top=top,
        pile_size=size,
        pile_code=code,
        occupied=list(range(len(piles))),
        collected=collected,
        played=played,
        current=current,
        turn_seat=current,
        new_pile=new_pile,
        pick=(opts.start_seat if pick is None else pick) if opts.pick_on_me else -1,
    )
    if not state.hand_size[current]:
        raise ValueError(f"position: seat {current} is to play but holds no card")
    return state


def resample(state: GoesToElevenState, seat: int, rng: np.random.Generator) -> GoesToElevenState:
    """A copy of ``state`` with everything hidden from ``seat`` redrawn: the other hands and the draw pile are dealt
    again from the cards it cannot see, each hand keeping its size."""
    g = state.clone()
    others = [s for s in range(g.n) if s != seat]
    pool = [k for s in others for k in range(NUM_KINDS) for _ in range(g.hands[s][k])] + g.draw
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for s in others:
        hand = [0] * NUM_KINDS
        for _ in range(g.hand_size[s]):
            hand[pool.pop()] += 1
        g.hands[s] = hand
        g.hand_bits[s] = sum(1 << k for k in range(NUM_KINDS) if hand[k])
    g.draw = pool
    return g
