"""The This Game Goes to Eleven environment: incremental encoding, decoding and drawing over the pure rules in
``rules.py``.

The encoding itself -- the layouts and the one from-scratch writer -- is the game's pure observer
(:mod:`parlour.envs.goes_to_eleven.observer`); this env keeps the observer's source vector up to date as actions are
played (``_apply``), and its fuzz invariants hold that incremental path to the observer at every step.

See :mod:`parlour.envs.goes_to_eleven_v0` for the user-facing documentation.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import GameEnv, env_metadata
from parlour.envs.goes_to_eleven import GAME, rules
from parlour.envs.goes_to_eleven.observer import (
    MAXP,
    THIRD,
    VALUES,
    K,
    Params,
    observation_gather,
    observation_layout,
    observe,
    source_layout,
    write_source,
)
from parlour.envs.layout import Field, Layout, Source, state_from_source

# The encoding's names stay importable from here (the JAX core, the bots and the tests read them from this module).
__all__ = [
    "MARKERS",
    "MAXP",
    "VALUES",
    "GoesToElevenEnv",
    "K",
    "observation_gather",
    "observation_layout",
    "source_layout",
    "state_layout",
]

#: The source's one-hot public fields that move with the decision under way: their markers are keyed 0–5.
MARKERS = ("phase", "to_act", "eleven_player", "pending", "pick_holder", "new_pile")
#: Their keys in the source vector (:class:`~parlour.envs.layout.Source`), in :data:`MARKERS` order: small ints, the
#: cheapest dict keys on this hot path.
MARK_PHASE, MARK_TO_ACT, MARK_ELEVEN_PLAYER, MARK_PENDING, MARK_PICK_HOLDER, MARK_NEW_PILE = range(len(MARKERS))
#: The piles' marker keys: slot ``j``'s value marker is ``MARK_PILE_VALUE + j``, its top card's ``MARK_PILE_TOP + j``
#: (apart from the keys above and from each other for every pile count).
MARK_PILE_VALUE, MARK_PILE_TOP = 100, 1000


@cache
def state_layout(max_piles: int = rules.DEFAULT_MAX_PILES) -> Layout:
    mp = max_piles
    return Layout(
        (
            Field("num_players", (MAXP - 1,), "one-hot: 2–6 players"),
            Field("phase", (4,), "one-hot phase"),
            Field("hands", (MAXP, K), "every seat's cards of each kind ÷ 3"),
            Field("pile_present", (mp,), "1 where a pile lies"),
            Field("pile_value", (mp, VALUES), "one-hot pile values"),
            Field("pile_top", (mp, K), "one-hot top kinds"),
            Field("pile_size", (mp,), "pile sizes ÷ deck size"),
            Field("pending", (mp,), "one-hot pending slot"),
            Field("new_pile", (1,), "a new pile may be started"),
            Field("collected", (MAXP,), "collected cards ÷ deck size"),
            Field("hand_size", (MAXP,), "hand sizes ÷ 3"),
            Field("draw_size", (1,), "draw pile size ÷ deck size"),
            Field("draw_kinds", (K,), "draw pile cards of each kind ÷ that kind's count in the deck"),
            Field("next_card", (K,), "one-hot kind of the draw pile's top card"),
            Field("played", (K,), "face-up cards of each kind ÷ count in the deck"),
            Field("to_act", (MAXP,), "one-hot seat to decide"),
            Field("eleven_player", (MAXP,), "one-hot seat whose Eleven is being answered"),
            Field("pick_holder", (MAXP,), "one-hot pick holder"),
            Field("pick_on_me", (1,), "the variant"),
            Field("deck", (K,), f"the deck's cards of each kind ÷ {rules.MAX_KIND_COUNT}"),
        )
    )


class GoesToElevenEnv(GameEnv[rules.GoesToElevenState]):
    """PettingZoo AEC environment for This Game Goes to Eleven (see ``parlour.envs.goes_to_eleven_v0``)."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("goes_to_eleven_v0")
    declaration = GAME
    title = GAME.title
    options_class = rules.Options
    env_version = 0
    default_players = GAME.default_players
    min_players = GAME.min_players
    max_players = GAME.max_players
    num_actions = rules.Options().num_actions
    observation_layout = observation_layout()
    state_layout = state_layout()

    rules_options: rules.Options

    def _configure(self, options: rules.Options) -> None:
        # The action space and the pile fields grow with ``max_piles``.
        mp = self.max_piles = options.max_piles
        self.num_actions = options.num_actions  # type: ignore[misc]
        self.observation_layout = observation_layout(mp)  # type: ignore[misc]
        self.state_layout = state_layout(mp)  # type: ignore[misc]

    def _setup(self) -> None:
        mp = self.max_piles
        n = self.num_players
        self._observer = Params.from_options(self.rules_options)
        # the scales the incremental path writes with are the observer's
        self._deck_scale, self._kind_scale, self._third = self._observer.deck_scale, self._observer.kind_scale, THIRD
        self._give_base = rules.give_base(mp)
        self._quiet = rules.quiet_action(mp)
        self._use_source(source_layout(mp), [observation_gather(mp, o, n) for o in range(n)])
        at = self.src.at
        self._i_hands, self._i_played, self._i_draw, self._i_hand_size = (
            at["hands"],
            at["played"],
            at["draw_size"],
            at["hand_size"],
        )
        self._i_value, self._i_top, self._i_present = at["pile_value"], at["pile_top"], at["pile_present"]
        self._i_pile_size, self._i_collected = at["pile_size"], at["collected"]
        self._marker_bases = tuple(at[name] for name in MARKERS)

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> rules.GoesToElevenState:
        return rules.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.GoesToElevenState:
        return rules.resample(self.game, seat, rng)

    # ------------------------------------------------------------------------------------------ encoding
    def _reference_observation(self, seat: int) -> np.ndarray:
        return observe(self.game, seat, self._observer)  # the game's one from-scratch writer

    def _encode_state(self) -> np.ndarray:
        g = self.game
        lay = self.state_layout
        v = state_from_source(lay, self.src.layout, self.src.vector, g.n - 2)  # every field but the draw pile's
        draw = np.bincount(np.array(g.draw, dtype=np.int64), minlength=K)
        lay.view(v, "draw_kinds")[:] = draw * self._kind_scale
        if g.draw:
            lay.view(v, "next_card")[g.draw[-1]] = 1
        return v

    def _write_source(self, src: Source) -> None:
        """The source from scratch (the observer's), and where its one-hot markers stand (the incremental path's)."""
        g, at = self.game, src.at
        write_source(g, self._observer, src.vector)
        for j, top in enumerate(g.pile_top):  # the piles' markers: where their one-hots stand
            if top >= 0:
                src.marks[MARK_PILE_VALUE + j] = at["pile_value"] + j * VALUES + g.pile_value[j]
                src.marks[MARK_PILE_TOP + j] = at["pile_top"] + j * K + top
        self._markers(src)

    def _markers(self, src: Source) -> None:
        """The one-hot public fields that the decision under way moves (compared first: most actions move one).
        Their marker keys are 0–5 (:data:`MARKERS`): small ints, the cheapest keys on this hot path."""
        g = self.game
        phase_at, act_at, eleven_at, pending_at, pick_at, new_pile_at = self._marker_bases
        now = (
            phase_at + g.phase,
            act_at + g.current if g.phase != rules.OVER else -1,
            eleven_at + g.eleven_player if g.eleven_player >= 0 else -1,
            pending_at + g.pending if g.pending >= 0 else -1,
            pick_at + g.pick if g.pick >= 0 else -1,
            new_pile_at if g.new_pile or not g.occupied else -1,
        )
        src.show(now)

    def _apply(self, action: int) -> list[float] | None:
        # The rules play and note what changed; the source follows (GameEnv's mechanism): an action changes a handful
        # of source entries (written through a memoryview).
        g, src = self.game, self.src
        rewards = g.play(action)
        changes: list[tuple[Any, ...]] = g.changes  # type: ignore[assignment]
        m, marks = src.m, src.marks
        if not changes and g.phase == rules.ANSWER:  # an Eleven let stand, and the next seat is asked
            e, was = self._marker_bases[MARK_TO_ACT] + g.current, marks[MARK_TO_ACT]
            m[was] = 0.0
            m[e] = 1.0
            marks[MARK_TO_ACT] = e
            return rewards
        if len(changes) == 1 and g.phase == rules.PLAY and changes[0][0] == "play":
            # The common case, inline: a card went on a pile that stays below 11 (a pile taken would add a
            # "collect"), and the next seat plays.
            slot = self._write_hand(changes[0])
            top = g.pile_top[slot]
            e, was = self._i_value + slot * VALUES + g.pile_value[slot], marks.get(MARK_PILE_VALUE + slot, -1)
            if was != e:
                if was >= 0:
                    m[was] = 0.0
                m[e] = 1.0
                marks[MARK_PILE_VALUE + slot] = e
            e, was = self._i_top + slot * K + top, marks.get(MARK_PILE_TOP + slot, -1)
            if was != e:
                if was >= 0:
                    m[was] = 0.0
                m[e] = 1.0
                marks[MARK_PILE_TOP + slot] = e
            m[self._i_present + slot] = 1.0
            m[self._i_pile_size + slot] = g.pile_size[slot] * self._deck_scale
            e, was = self._marker_bases[MARK_TO_ACT] + g.current, marks[MARK_TO_ACT]
            m[was] = 0.0
            m[e] = 1.0
            marks[MARK_TO_ACT] = e
            if marks.get(5, -1) >= 0:  # new_pile: no longer after a card went on a pile
                src.move(MARK_NEW_PILE, -1)
            changes.clear()
            return rewards
        for change in changes:
            kind = change[0]
            if kind != "collect":  # "play" or "pile": the pile is written as it is now (it may have been taken)
                slot = self._write_hand(change) if kind == "play" else change[1]
                top = g.pile_top[slot]
                src.move(MARK_PILE_VALUE + slot, self._i_value + slot * VALUES + g.pile_value[slot] if top >= 0 else -1)
                src.move(MARK_PILE_TOP + slot, self._i_top + slot * K + top if top >= 0 else -1)
                m[self._i_present + slot] = 1.0 if top >= 0 else 0.0
                m[self._i_pile_size + slot] = g.pile_size[slot] * self._deck_scale
            else:  # "collect"
                seat = change[1]
                m[self._i_collected + seat] = g.collected[seat] * self._deck_scale
        self._markers(src)
        changes.clear()
        return rewards

    def _write_hand(self, change: tuple[Any, ...]) -> int:
        """``("play", seat, kind, drawn, slot)``: the seat's hand, the draw pile or hand size, the cards played;
        returns the slot played on."""
        _, seat, k, drawn, slot = change
        g, m = self.game, self.src.m
        hand, base, third = g.hands[seat], self._i_hands + seat * K, self._third
        m[base + k] = hand[k] * third
        if drawn >= 0:
            m[base + drawn] = hand[drawn] * third
            m[self._i_draw] = len(g.draw) * self._deck_scale
        else:
            m[self._i_hand_size + seat] = g.hand_size[seat] * third
        m[self._i_played + k] = g.played[k] * self._kind_scale[k]
        return int(slot)

    # ------------------------------------------------------------------------------------------ views
    def decode_action(self, action: int) -> str:
        action = int(action)
        mp = self.max_piles
        if 0 <= action < self._give_base:
            target, kind = divmod(action, K)
            where = "to start a new pile" if target == mp else f"on pile {target}"
            return f"play {rules.KIND_NAMES[kind]} {where}"
        if self._give_base <= action < self._give_base + MAXP - 1:
            k = action - self._give_base + 1
            return f"give the pile to the player {k} seat{'s' if k > 1 else ''} to the left"
        if action == self._quiet - 1:
            return "let the Eleven stand"
        if action == self._quiet:
            return "answer the Eleven with Quiet!"
        raise ValueError(f"action {action} is out of range: expected an integer in [0, {self.num_actions - 1}]")

    def render_text(self, perspective: str | None = None) -> str:
        """The table as ``perspective`` knows it, in plain lines (``None``: the umpire's view, every hand and the draw
        pile in order).

        A seat's view holds everything its observation carries -- its hand, the piles, the cards turned face up so
        far, every seat's hand size and collected cards, whose decision it is, the pick, the variant and the deck --
        and never another seat's hand nor the draw pile's order."""
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        lines = _header(g, seat)
        lines += _decision_lines(g, seat)
        lines += _pile_lines(g)
        lines += _seat_lines(g, seat)
        lines += _card_count_lines(g, seat)
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ audit & end
    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        g = self.game
        seat = self._seat[agent]
        public = (
            g.pile_value,
            g.pile_top,
            g.pile_size,
            g.collected,
            g.played,
            g.hand_size,
            len(g.draw),
            g.phase,
            g.current,
            g.turn_seat,
            g.new_pile,
            g.pending,
            g.eleven_player,
            g.asking,
            g.pick,
        )
        hidden = ([g.hands[s] for s in range(g.n) if s != seat], g.draw)
        return repr((g.hands[seat], public)).encode(), repr(hidden).encode()

    def outcome(self) -> dict[str, Any]:
        return self.game.outcome()

    def invariants(self) -> None:
        g = self.game
        deck = self.rules_options.deck
        held = [sum(h[k] for h in g.hands) for k in range(K)]
        draw = np.bincount(np.array(g.draw, dtype=np.int64), minlength=K).tolist()
        assert [h + d + p for h, d, p in zip(held, draw, g.played, strict=True)] == list(deck), "cards conserved"
        assert sum(g.played) == sum(g.pile_size) + sum(g.collected), "every face-up card is in a pile or collected"
        for s in range(g.n):
            assert sum(g.hands[s]) == g.hand_size[s] <= rules.HAND_SIZE
            assert g.hand_bits[s] == sum(1 << k for k in range(K) if g.hands[s][k])
            assert g.hand_size[s] == rules.HAND_SIZE or not g.draw, "hands are drawn back up while the draw pile lasts"
        assert g.num_piles <= self.max_piles
        for j, top in enumerate(g.pile_top):
            if top < 0:
                assert g.pile_size[j] == 0 and g.pile_code[j] == rules.EMPTY
            elif j == g.pending:
                assert g.pile_value[j] == rules.TARGET and g.phase in (rules.GIVE, rules.ANSWER)
            else:
                assert 0 <= g.pile_value[j] < rules.TARGET and g.pile_code[j] == g.pile_value[j] * K + top
                assert g.pile_size[j] >= 1
        if g.phase == rules.PLAY:
            assert g.pending < 0 and g.hand_size[g.current] > 0 and g.current == g.turn_seat
        if g.phase == rules.OVER:
            assert sum(g.hand_size) == 0 and not g.draw
        for s in range(g.n):
            assert np.array_equal(self._incremental_observation(s), self._reference_observation(s)), (
                "incremental encoding drifted"
            )


# ----------------------------------------------------------------------------------------------- the text view
# render_text's parts: each takes the rules state and the viewing seat (``None``: the umpire) and returns lines.
def _cards(k: int) -> str:
    return "1 card" if k == 1 else f"{k} cards"


def _seats(k: int) -> str:
    return "1 seat" if k == 1 else f"{k} seats"


def _kinds(counts: list[int] | tuple[int, ...]) -> str:
    """Cards by kind, as a hand is shown: ``3 3 7 Quiet!`` (``0 cards`` for none)."""
    return " ".join(rules.KIND_NAMES[k] for k in range(K) for _ in range(counts[k])) or "0 cards"


def _header(g: rules.GoesToElevenState, seat: int | None) -> list[str]:
    players = ", ".join(f"player_{s}" for s in range(g.n))
    if seat is None:
        lines = ["This Game Goes to Eleven — the umpire's view (every hand and the draw pile)"]
        lines.append(f"Players, clockwise (play passes to the left): {players}.")
    else:
        lines = [f"This Game Goes to Eleven — the table as player_{seat} sees it"]
        lines.append(f"You are player_{seat}. Players, clockwise (play passes to the left): {players}.")
        left = ", ".join(f"player_{(seat + k) % g.n} {_seats(k)}" for k in range(1, g.n))
        how = "" if g.options.pick_on_me else " (a pile is given by counting seats to the left)"
        lines.append(f"To your left{how}: {left}.")
    opts = g.options
    if opts.pick_on_me:
        pick = f" The pick is with player_{g.pick}." if g.pick >= 0 else ""
        lines.append(
            "Variant Pick On Me: whoever holds the guitar pick takes every pile that reaches 11, then passes the "
            f"pick to the left.{pick}"
        )
    else:
        lines.append("A player who makes a pile reach exactly 11 gives it to another player.")
    lines.append("A card may take a pile over 11 only when no other play is possible: its player then takes the pile.")
    lines.append("Fewest cards collected at the end wins.")
    lines.append(f"Turns played: {g.turns}. Phase: {rules.PHASE_NAMES[g.phase]}.")
    return lines


def _decision_lines(g: rules.GoesToElevenState, seat: int | None) -> list[str]:
    """Whose decision it is, and what it is about."""
    if g.phase == rules.OVER:
        winners = ", ".join(f"player_{s}" for s in g.winners())
        return [f"The game is over: the draw pile and every hand are empty. Fewest cards collected: {winners}."]
    turn = f"It is your turn (player_{g.current})" if g.current == seat else f"It is player_{g.current}'s turn"
    if g.phase == rules.PLAY:
        return [f"{turn}: play a card on a pile, or start a new pile."]
    if g.phase == rules.GIVE:
        whose = "your" if g.current == seat else f"player_{g.current}'s"
        return [f"{turn}: {whose} card made pile {g.pending} reach 11; player_{g.current} gives it to another player."]
    decide = (
        f"It is your decision (player_{g.current})" if g.current == seat else f"It is player_{g.current}'s decision"
    )
    return [
        f"player_{g.eleven_player} played an Eleven on pile {g.pending}.",
        f"{decide}: answer with Quiet! (then player_{g.eleven_player} takes the pile) or let the Eleven stand.",
    ]


def _pile_lines(g: rules.GoesToElevenState) -> list[str]:
    """The piles in their numbered places, and whether (and how) a new pile may be started."""
    mp = g.options.max_piles
    lines = [f"Piles on the table (at most {mp}; a new pile takes the lowest free number):"]
    for j, top in enumerate(g.pile_top):
        if top >= 0:
            mark = " — reached 11, waiting to be taken" if j == g.pending else ""
            lines.append(
                f"pile {j}: value {g.pile_value[j]}, top card {rules.KIND_NAMES[top]}, {_cards(g.pile_size[j])}{mark}"
            )
    if not g.occupied:
        lines.append("(no pile)")
    if g.new_pile or not g.occupied:
        lines.append("A new pile may be started with any card (a pile has just left the table, or none lies there).")
    elif g.num_piles < mp:
        lines.append("A new pile may be started only by a split: a number card equal to the top card of a pile.")
    else:
        lines.append(f"No new pile may be started: {mp} piles lie on the table.")
    return lines


def _seat_lines(g: rules.GoesToElevenState, seat: int | None) -> list[str]:
    """Each seat's collected cards and hand (its own, or every one for the umpire; a count for the others)."""
    lines = [f"Draw pile: {_cards(len(g.draw))}"]
    if seat is None and g.draw:
        lines.append(f"Draw pile, top card first: {' '.join(rules.KIND_NAMES[k] for k in reversed(g.draw))}")
    for s in range(g.n):
        hand = _kinds(g.hands[s]) if seat is None or seat == s else _cards(g.hand_size[s])
        marks = (" — you" if s == seat else "") + ("; holds the guitar pick" if g.pick == s else "")
        marks += "; to decide" if g.current_player == s else ""
        lines.append(f"player_{s}: collected {g.collected[s]}; hand: {hand}{marks}")
    return lines


def _card_count_lines(g: rules.GoesToElevenState, seat: int | None) -> list[str]:
    """The cards of each kind turned face up so far out of the deck's, and those the seat has not seen."""
    deck = g.options.deck
    shown = ", ".join(f"{rules.KIND_NAMES[k]}: {g.played[k]}/{deck[k]}" for k in range(K))
    lines = [f"Cards turned face up so far (on piles or collected), by kind (face up/in the deck): {shown}"]
    if seat is not None:
        unseen = g.unseen(seat)
        counts = ", ".join(f"{rules.KIND_NAMES[k]} ×{c}" for k, c in enumerate(unseen) if c) or "none"
        lines.append(f"Cards you have not seen (other hands and the draw pile), by kind: {counts}")
    return lines
