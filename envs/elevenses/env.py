"""The Elevenses environment: incremental encoding, decoding and drawing over the pure rules in ``rules.py``.

The encoding itself -- the layouts and the one from-scratch writer -- is the game's pure observer
(:mod:`parlour.envs.elevenses.observer`); this env keeps the observer's source vector up to date as actions are
played (``_apply``, rewriting a group with the observer's writers when the rules say it changed), and its fuzz
invariants hold that incremental source to the observer's at every step.

See :mod:`parlour.envs.elevenses_v0` for the user-facing documentation.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import GameEnv, env_metadata
from parlour.envs.elevenses import GAME, rules
from parlour.envs.elevenses.observer import (
    CUBE_SCALE,
    GROUP_SLICES,
    HAND_SCALE,
    LATE_SCALE,
    MAXP,
    OWNER,
    PLATE,
    PLATE_SCALE,
    POS,
    REL,
    SEEN_SCALE,
    TEA_SCALE,
    G,
    K,
    Params,
    card_entry,
    observation_gather,
    observation_layout,
    observe,
    plate_index,
    source,
    source_layout,
    turn_entries,
    write_back,
    write_cubes,
    write_group,
    write_source,
)
from parlour.envs.layout import Field, Layout, Source, state_from_source

# The encoding's names stay importable from here (the JAX core, the bots and the tests read them from this module).
__all__ = [
    "CUBE_SCALE",
    "HAND_SCALE",
    "LATE_SCALE",
    "MAXP",
    "OWNER",
    "PLATE",
    "PLATE_SCALE",
    "POS",
    "REL",
    "SEEN_SCALE",
    "TEA_SCALE",
    "ElevensesEnv",
    "G",
    "K",
    "observation_gather",
    "observation_layout",
    "source_layout",
    "state_layout",
]


@cache
def state_layout() -> Layout:
    src = source_layout()
    return Layout(
        (
            Field("num_players", (4,), "one-hot: 2–5 players"),
            *(f for f in src.fields if f.name not in ("zero", "one")),
            Field("guests", (MAXP, G), "one-hot: every seat's Guest card"),
            Field("guilt", (POS,), "1 where the Guilt card is the Murderer"),
            Field("hands", (MAXP, MAXP, K), "every hand: card by back and number"),
            Field("face_down", (MAXP, rules.SLOTS, K), "every face-down card: one-hot number by seat and slot"),
        )
    )


class ElevensesEnv(GameEnv[rules.ElevensesState]):
    """PettingZoo AEC environment for Elevenses: The Guilty Party (see ``parlour.envs.elevenses_v0``)."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("elevenses_v0")
    declaration = GAME
    title = GAME.title
    options_class = rules.Options
    default_players = GAME.default_players
    env_version = 0
    min_players = GAME.min_players
    max_players = GAME.max_players
    num_actions = rules.NUM_ACTIONS
    observation_layout = observation_layout()
    state_layout = state_layout()

    rules_options: rules.Options

    def _setup(self) -> None:
        n = self.num_players
        self._observer = Params.from_options(self.rules_options)
        self._use_source(source_layout(), [observation_gather(o, n) for o in range(n)])

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> rules.ElevensesState:
        return rules.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.ElevensesState:
        return rules.resample(self.game, seat, rng)

    # ------------------------------------------------------------------------------------------ encoding
    def _reference_observation(self, seat: int) -> np.ndarray:
        return observe(self.game, seat, self._observer)  # the game's one from-scratch writer

    def _write_source(self, src: Source) -> None:
        # the observer's writer; the incremental path's bookkeeping (the turn group's entries) is _on_new_state's
        write_source(self.game, self._observer, src.vector)

    def _write_group(self, name: str) -> None:
        """Rewrite one group of the source as it is now (the rules said it changed)."""
        self.src.vector[GROUP_SLICES[name]] = 0
        write_group(self.game, self.src.m, name)

    def _turn_entries(self) -> list[tuple[int, float]]:
        """The non-zero source entries of the decision under way (the observer's)."""
        return turn_entries(self.game)

    def _on_new_state(self) -> None:
        super()._on_new_state()
        self._turn = self._turn_entries()

    def _apply(self, action: int) -> list[float] | None:
        g = self.game
        rewards = g.play(action)
        log: list[tuple[Any, ...]] = g.changes  # type: ignore[assignment]
        if log:
            self._apply_log(log)
            log.clear()
        # The decision under way changes with nearly every action: clear what was shown, show what is.
        m = self.src.m
        for e, _ in self._turn:
            m[e] = 0.0
        self._turn = self._turn_entries()
        for e, x in self._turn:
            m[e] = x
        return rewards

    def _apply_log(self, log: list[tuple[Any, ...]]) -> None:
        """Write what the rules' change log says changed: cards, teaspoons, cubes, and whole groups."""
        g, m, groups = self.game, self.src.m, set()
        cards = []
        for event in log:
            kind = event[0]
            if kind == "card":
                cards.append(event)
            elif kind == "tea":  # a card played face up: that spread's teaspoons
                m[self.src.at["tea"] + event[1]] = g.tea(event[1]) * TEA_SCALE
            elif kind == "cubes":  # one player moved cubes: only its own tallies change
                write_cubes(g, m, event[1])
            else:
                groups.add(kind)
        self._move_cards(cards)
        for name in groups:
            self._write_group(name)

    def _move_cards(self, cards: list[tuple[Any, ...]]) -> None:
        """Cards move at once (a re-arrangement swaps two): every old sight is cleared before any new one is set."""
        g, m, entry = self.game, self.src.m, card_entry
        for _, c, old, new, bits, _after in cards:
            if old != new:
                write_back(g, m, c, old, 0.0)
            if old < rules.UP:
                while bits:  # each seat that knew the card where it was
                    low = bits & -bits
                    m[entry(low.bit_length() - 1, c, old)] = 0.0
                    bits ^= low
        for _, c, old, new, _before, bits in cards:
            if old != new:
                write_back(g, m, c, new, 1.0)
            if new < rules.UP:
                while bits:
                    low = bits & -bits
                    m[entry(low.bit_length() - 1, c, new)] = 1.0
                    bits ^= low

    def _encode_state(self) -> np.ndarray:
        g, lay = self.game, self.state_layout
        v = state_from_source(lay, self.src.layout, self.src.vector, g.n - rules.MIN_PLAYERS)
        guests, hands, down = lay.view(v, "guests"), lay.view(v, "hands"), lay.view(v, "face_down")
        for s in range(g.n):
            guests[s, g.guests[s]] = 1
            for c in g.hands[s]:
                hands[s, c // K, c % K] = 1
            for k, c in enumerate(g.slots[s]):
                if c >= 0:
                    down[s, k, c % K] = 1
        for pos in range(g.positions):
            v[lay["guilt"].start + plate_index(g, pos)] = g.guilt[pos]
        return v

    # ------------------------------------------------------------------------------------------ views
    def decode_action(self, action: int) -> str:
        action = int(action)
        if not 0 <= action < rules.NUM_ACTIONS:  # first: a negative number would read as a slot or a plate below
            raise ValueError(f"action {action} is out of range: expected an integer in [0, {rules.NUM_ACTIONS - 1}]")
        if action < rules.SLOT_BASE:
            return f"card {action % K + 1} {rules.CARD_NAMES[action % K]} with the back of the seat {action // K} places left"
        if action < rules.PLATE_BASE:
            return f"face-down slot {action - rules.SLOT_BASE + 2}"
        if action < rules.SEAT_BASE:
            what = "plate" if action < rules.GUILT_BASE else "Guilt card"
            rel = (action - rules.PLATE_BASE) % POS
            return f"{what} of " + ("Mrs Lansdowne" if rel == MAXP else f"the seat {rel} places left")
        if action < rules.REARRANGE:
            return f"the player {action - rules.SEAT_BASE + 1} places left"
        names = {
            rules.REARRANGE: "re-arrange",
            rules.STOP: "stop / decline",
            rules.CLAIM_MURDERER: 'claim "Murderer"',
            rules.CLAIM_INNOCENT: 'claim "Not Guilty"',
            rules.SILENT: "keep silent",
            rules.PASS_TURN: "pass the turn (no legal play)",
        }
        return names[action]

    def render_text(self, perspective: str | None = None) -> str:
        """The table as ``perspective`` knows it, in plain lines (``None``: the umpire's view: every card, guest and
        Guilt card, and what each player knows of them).

        A seat's view holds everything its observation carries -- the cards it can place (in hands, face down, face
        up) and the backs of all others, its guest and the revealed ones, the Guilt cards it knows, the plates and
        the Sugar Bowl, the public history (cubes put and taken, looks and claims, Guilt swaps, hands seen), the
        decision under way and what it has chosen itself -- and never a card, guest, Guilt card or choice hidden
        from it. The first lines after the title are the hands, one line per player."""
        g = self.game
        me = None if perspective is None else self._seat[perspective]
        lines = _title(perspective)
        lines += [_hand_line(g, s, me) for s in range(g.n)]
        lines += _table_lines(g, me)
        lines += _decision_lines(g, me)
        lines += _spread_lines(g, me)
        lines += _guest_lines(g, me)
        lines += _plate_lines(g, me)
        lines += _guilt_lines(g, me)
        lines += _seen_lines(g, me)
        lines += _knowledge_lines(g) if me is None else []
        lines += _end_lines(g)
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ audit & end
    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        g = self.game
        me = self._seat[agent]
        cards = range(g.n * K)
        public = (
            [sorted(c // K for c in h) for h in g.hands],
            [[c // K if c >= 0 else -1 for c in row] for row in g.slots],
            g.face_up,
            g.revealed,
            [g.guests[s] if g.revealed[s] else -1 for s in range(g.n)],
            g.plates,
            g.bowl,
            g.put,
            g.took,
            g.claims,
            g.moved,
            g.viewed,
            [[g.guilt_known[s][p] for p in range(g.positions)] for s in range(g.n)],
            (g.phase, g.current_player, g.turn_seat, g.effect, g.rearranged, g.first, g.cubes_left, g.moves_left),
            (g.looked, g.target, g.passers, [c >= 0 for c in g.pass_choice], g.elevenses, g.late, g.turns),
        )
        known = (
            g.guests[me],
            [(c, g.location[c]) for c in cards if g.knows(me, c)],
            [(p, g.guilt[p]) for p in range(g.positions) if g.guilt_known[me][p]],
            g.pass_choice[me],
            g.rearrange_card if g.current == me else -1,
            public,
        )
        hidden = (
            [(c, g.location[c]) for c in cards if not g.knows(me, c)],
            [g.guests[s] for s in range(g.n) if s != me and not g.revealed[s]],
            [g.guilt[p] for p in range(g.positions) if not g.guilt_known[me][p]],
            [g.pass_choice[s] for s in range(g.n) if s != me],
        )
        return repr(known).encode(), repr(hidden).encode()

    def outcome(self) -> dict[str, Any]:
        return self.game.outcome()

    def invariants(self) -> None:
        g = self.game
        n = g.n
        where = sorted(c for h in g.hands for c in h) + sorted(c for row in g.slots for c in row if c >= 0)
        where += sorted(c for row in g.face_up for c in row if c >= 0)
        centre = [c for c in range(n * K) if g.location[c] == rules.CENTRE]
        assert sorted(where + centre) == list(range(n * K)), "every card is in exactly one place"
        for s in range(n):
            for c in g.hands[s]:
                assert g.location[c] == rules.HAND + s and g.knows(s, c), "a player knows their own hand"
                if rules.number(c) == rules.ELEVENSES:
                    assert rules.owner(c) == s, "an 11 never leaves its owner"
            for k, c in enumerate(g.slots[s]):
                assert (c >= 0) == (g.face_up[s][k + 1] < 0), "a position is face down until its card is played"
                if c >= 0:
                    assert g.location[c] == rules.DOWN + rules.SLOTS * s + k
                    assert rules.number(c) != rules.ELEVENSES or rules.owner(c) == s, "an 11 never leaves its owner"
            for k, c in enumerate(g.face_up[s]):
                assert c < 0 or (rules.number(c) == k + 1 and g.location[c] == rules.UP + s)
            complete = g.guest_complete(s, g.guests[s])
            assert g.revealed[s] == complete, "a guest is revealed exactly when its three items are face up"
        late = len(g.late)
        assert sum(g.plates) + g.bowl + late == g.options.cubes_per_player * n, "cubes are conserved"
        assert min(g.plates) >= 0 and g.bowl >= 0
        assert len(g.guilt) == g.positions and sum(g.guilt) == rules.murderers(n), "every Guilt card is accounted for"
        assert sorted(g.guests) == sorted(set(g.guests))
        # the whole source (every seat's private fields too), not only the observations: it is what the state derives from
        assert np.array_equal(self.src.vector, source(g, self._observer)), "incremental encoding drifted"


# ----------------------------------------------------------------------------------------------- the text view
# render_text's parts: each takes the rules state and the viewing seat (``None``: the umpire) and returns lines.
# Cards are written number/back (``7/p1 Macaroons``; ``?/p1`` for a card with player_1's back the viewer cannot
# identify); seats, plates and Guilt cards by player (or Mrs Lansdowne), as the table would name them.
#: The special actions of the cards 1–10 (rulebook, Special Actions), as the text names them.
_ACTIONS = (
    "add 2 cubes from the Sugar Bowl to plates",
    "add 1 cube from the Sugar Bowl to a plate",
    "move up to 2 cubes from plate to plate",
    "move 1 cube to a different plate",
    "look at another Guilt card, then say what it is (truly or not) or keep silent",
    "every player passes a card to the left",
    "every player passes a card to the right",
    "see another player's hand, take a card and give one back",
    "another player sees the hand of the card's player and may take a card from it and give one back",
    "swap two Guilt cards, unseen",
)
_CLAIMS = ("", "looked at it and kept silent", 'looked at it and said "Murderer"', 'looked at it and said "Not Guilty"')
#: What the seat to decide is choosing, by phase (formatted with :func:`_facts`).
_CHOICES = {
    rules.TURN: "play a card from the hand face up to its position in the spread, or re-arrange",
    rules.REARRANGE_CARD: "re-arrangement {next} of at most 2: the hand card to put face down{stop}",
    rules.REARRANGE_SLOT: "re-arrangement {next} of at most 2: the face-down position the chosen card swaps with",
    rules.SWAP_1: "the guest is revealed: the first of two plates to swap (cubes and all), or decline",
    rules.SWAP_2: "the plate to swap with {first}'s",
    rules.ADD: "the plate to add a cube to from the Sugar Bowl ({cubes} to add)",
    rules.MOVE_FROM: "the plate to move a cube from ({moves}){stop}",
    rules.MOVE_TO: "the plate to move the cube from {first}'s plate to ({moves})",
    rules.LOOK: "the Guilt card to look at (another player's or Mrs Lansdowne's)",
    rules.CLAIM: 'having looked at the Guilt card at {looked}\'s place: say "Murderer", say "Not Guilty", or keep silent',
    rules.PASS: "the card to pass (never the 11)",
    rules.HAM_TARGET: "whose hand to see",
    rules.HAM_TAKE: "a card to take from {target}'s hand (then one is given back), or take nothing",
    rules.HAM_GIVE: "the card to give {target} in return",
    rules.CAKES_TARGET: "the player who sees this hand and may swap a card with it",
    rules.CAKES_TAKE: "a card to take from {turn}'s hand (then one is given back), or take nothing",
    rules.CAKES_GIVE: "the card to give {turn} in return",
    rules.CUCUMBER_1: "the first of two Guilt cards to swap, unseen",
    rules.CUCUMBER_2: "the Guilt card to swap with the one at {first}'s place",
    rules.LATE: "the plate for a late suspicion cube",
}


def _name(c: int) -> str:
    return rules.CARD_NAMES[rules.number(c) - 1]


def _card(g: rules.ElevensesState, c: int, me: int | None) -> str:
    """``7/p1 Macaroons``, or ``?/p1`` where ``me`` cannot tell which card of that back it is."""
    if me is None or g.knows(me, c):
        return f"{rules.number(c)}/p{rules.owner(c)} {_name(c)}"
    return f"?/p{rules.owner(c)}"


def _at(g: rules.ElevensesState, pos: int) -> str:
    """A place at the table (a plate, a Guilt card): a player's, or Mrs Lansdowne's."""
    return "Mrs Lansdowne" if pos == g.n else f"player_{pos}"


def _count(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def _title(perspective: str | None) -> list[str]:
    if perspective is None:
        return ["Elevenses: The Guilty Party — the umpire's view (every card, guest and Guilt card)"]
    return [f"Elevenses: The Guilty Party — the table as {perspective} sees it"]


def _hand_line(g: rules.ElevensesState, s: int, me: int | None) -> str:
    """A hand as the viewer can tell its cards apart: by back, known cards first by number, then the unknown ones.
    (The storage order would say which of two same-back cards left a hand, which an onlooker cannot know.)"""
    if me is None:
        cards = sorted(g.hands[s])  # card ids: by back, then number
    else:
        cards = sorted(g.hands[s], key=lambda c: (rules.owner(c), not g.knows(me, c), rules.number(c) * g.knows(me, c)))
    shown = ", ".join(_card(g, c, me) for c in cards) or "no card"
    return f"player_{s}'s hand{' (yours)' if s == me else ''}, {_count(len(cards), 'card')}: {shown}"


def _table_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    players = ", ".join(f"player_{s}" for s in range(g.n))
    centre = "; Mrs Lansdowne's plate and Guilt card lie in the centre" if g.mrs else ""
    lines = [("" if me is None else f"You are player_{me}. ") + f"Players, clockwise: {players}{centre}."]
    if me is not None and g.n > 2:
        left = ", ".join(f"player_{(me + k) % g.n} {_count(k, 'place')}" for k in range(1, g.n))
        lines.append(f"To your left (actions count places to the left): {left}.")
    elif me is not None:
        lines.append(f"player_{1 - me} is 1 place to your left.")
    unknown = "; ?/p1 is a card with player_1's back that you cannot identify" if me is not None else ""
    lines.append(f"Cards are written number/back: 7/p1 is the 7 (Macaroons) with player_1's back{unknown}.")
    lines.append(f"Turns completed: {g.turns} (the game stops unscored after {g.options.max_turns}).")
    if g.phase != rules.OVER:
        lines.append(f"It is your turn (player_{me})." if g.turn_seat == me else f"It is player_{g.turn_seat}'s turn.")
    return lines


def _facts(g: rules.ElevensesState) -> dict[str, str]:
    """The values :data:`_CHOICES` names."""
    return {
        "next": str(g.rearranged + 1),
        "stop": ", or stop" if g.rearranged or (g.phase == rules.MOVE_FROM and g.effect == rules.BISCUITS) else "",
        "first": _at(g, g.first) if g.first >= 0 else "",
        "cubes": str(g.cubes_left),
        "moves": _count(g.moves_left, "move") + " left",
        "looked": _at(g, g.looked) if g.looked >= 0 else "",
        "target": f"player_{g.target}",
        "turn": f"player_{g.turn_seat}",
    }


def _decision_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Whose decision it is and what it is about, the special action under way and what has been chosen."""
    if g.phase == rules.OVER:
        return []
    who = f"You (player_{me}) decide" if g.current == me else f"player_{g.current} decides"
    lines = [f"{who}: {_CHOICES[g.phase].format(**_facts(g))}."]
    if g.effect:
        then = " follows once the plates are swapped or not" if g.phase in (rules.SWAP_1, rules.SWAP_2) else ""
        card = f"{g.effect} {rules.CARD_NAMES[g.effect - 1]}"
        lines.append(f"Special action of {card}: {_ACTIONS[g.effect - 1]}{then}.")
    if g.rearrange_card >= 0 and me in (None, g.current):
        lines.append(f"player_{g.current} chose {_card(g, g.rearrange_card, None)} to put face down.")
    elif g.rearrange_card >= 0:
        lines.append(f"player_{g.current} chose a hand card to put face down.")
    lines += _pass_lines(g, me) + _swap_card_lines(g, me)
    if g.elevenses >= 0:
        lines.append(f"player_{g.elevenses} played the Elevenses: the game ends once the late suspicion is placed.")
        late = ", ".join(f"player_{s} {g.late.count(s)}" for s in range(g.n) if g.late.count(s))
        lines.append(f"Late suspicion cubes still to place (clockwise from player_{g.elevenses}): {late or 'none'}.")
    return lines


def _pass_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Tartlets / Macaroons: who passes, who has chosen, and one's own choice (every choice for the umpire)."""
    if g.phase != rules.PASS:
        return []
    way = "left" if g.pass_dir == 1 else "right"
    order = ", ".join(f"player_{s}" for s in g.passers)
    lines = [
        f"Passing one card each to the {way}, chosen in this order (nothing moves until all have chosen): {order}."
    ]
    for s in g.passers:
        c = g.pass_choice[s]
        if c < 0:
            lines.append(f"player_{s} has not chosen yet.")
        elif me is None or s == me:
            lines.append(f"player_{s} chose to pass {_card(g, c, None)}.")
        else:
            lines.append(f"player_{s} has chosen a card to pass.")
    return lines


def _swap_card_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Ham Sandwiches / Cakes: whose hand is seen, and the card taken (its face known only to the two players)."""
    if g.target < 0:
        return []
    ham = g.phase in (rules.HAM_TAKE, rules.HAM_GIVE)
    shown, seer = (g.target, g.current) if ham else (g.turn_seat, g.target)
    lines = [f"player_{seer} has seen player_{shown}'s hand."]
    if g.taken >= 0:
        face = _card(g, g.taken, None) if me in (None, g.target, g.turn_seat) else "a card"
        lines.append(f"player_{seer} took {face} from player_{shown}'s hand and now gives one back.")
    return lines


def _spread_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Each spread: its face-up cards and teaspoons, and its face-down cards by position (2–9)."""
    lines = [
        "Spreads (cards 1–10 are played face up to their own position; positions 2–9 start with a face-down card):"
    ]
    for s in range(g.n):
        up = ", ".join(_card(g, c, None) for c in g.face_up[s] if c >= 0) or "none"
        down = ", ".join(f"{k + 2}: {_card(g, c, me)}" for k, c in enumerate(g.slots[s]) if c >= 0) or "none"
        tea = _count(g.tea(s), "teaspoon")
        lines.append(f"player_{s}'s spread ({tea}): face up {up}; face down, by position, {down}")
    return lines


def _guest_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """The Guest cards the viewer knows (its own, the revealed ones; every one for the umpire)."""
    lines = ["Guest cards (revealed once their three items are face up in the player's spread: +2 teaspoons):"]
    for s in range(g.n):
        if me is None or s == me or g.revealed[s]:
            items = rules.GUESTS[g.guests[s]]
            wanted = ", ".join(f"{k} {rules.CARD_NAMES[k - 1]}" for k in items)
            have = sum(g.face_up[s][k - 1] >= 0 for k in items)
            state = "revealed" if g.revealed[s] else f"not revealed, {have} of 3 items face up"
            lines.append(f"player_{s}{' (you)' if s == me else ''}: guest wanting {wanted} ({state})")
        else:
            lines.append(f"player_{s}: guest not revealed")
    return lines


def _plate_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """The plates, the Sugar Bowl, and the cubes each player has put on and taken off each plate."""
    plates = ", ".join(f"{_at(g, p)} {g.plates[p]}" for p in range(g.positions))
    lines = [f"Suspicion cubes on the plates: {plates}; Sugar Bowl: {_count(g.bowl, 'cube')} left."]
    lines.append("Cubes put on and taken off the plates so far (adds, moves, plate swaps):")
    for s in range(g.n):
        put = [f"{_count(g.put[s][p], 'cube')} on {_at(g, p)}'s plate" for p in range(g.positions) if g.put[s][p]]
        took = [f"{_count(g.took[s][p], 'cube')} off {_at(g, p)}'s plate" for p in range(g.positions) if g.took[s][p]]
        moved = ([f"put {', '.join(put)}"] if put else []) + ([f"taken {', '.join(took)}"] if took else [])
        if moved:
            lines.append(f"player_{s} has {'; '.join(moved)}")
    return lines


def _guilt_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Each Guilt card where it lies now: its value if the viewer has seen it, and its public history (looks and
    claims, Cucumber swaps), which follow the card through swaps."""
    lines = ["Guilt cards, where they lie now:"]
    for p in range(g.positions):
        value = "Murderer" if g.guilt[p] else "Not Guilty"
        if me is None:
            knowers = ", ".join(f"player_{s}" for s in range(g.n) if g.guilt_known[s][p]) or "nobody"
            text = f"{value} (known to {knowers})"
        else:
            text = f"{value} (you have seen it)" if g.guilt_known[me][p] else "unknown to you"
        facts = [f"player_{s} {_CLAIMS[g.claims[s][p]]}" for s in range(g.n) if g.claims[s][p]]
        for s in range(g.n):
            if g.moved[s][p] == rules.MOVED_OWN:
                facts.append(f"player_{s} swapped it here from player_{s}'s own place")
            elif g.moved[s][p]:
                facts.append(f"player_{s} has swapped it")
        lines.append(f"at {_at(g, p)}'s place: {'; '.join([text, *facts])}")
    return lines


def _seen_lines(g: rules.ElevensesState, me: int | None) -> list[str]:
    """Who has seen whose hand (Ham Sandwiches, Cakes): public."""
    return [
        f"player_{s} has seen player_{t}'s hand {({1: 'once', 2: 'twice'}).get(k, f'{k} times')}."
        for s in range(g.n)
        for t in range(g.n)
        if (k := g.viewed[s][t])
    ]


def _knowledge_lines(g: rules.ElevensesState) -> list[str]:
    """The umpire's view of what each player knows: the hidden cards it can place outside its own hand."""
    lines = ["What each player knows of the cards outside their own hand that are not face up:"]
    for s in range(g.n):
        known = []
        for c in range(g.n * rules.NUMBERS):
            where = g.location[c]
            if where < rules.DOWN and where != rules.HAND + s and g.knows(s, c):
                known.append(f"{_card(g, c, None)} in player_{where}'s hand")
            elif rules.DOWN <= where < rules.UP and g.knows(s, c):
                k = where - rules.DOWN
                known.append(
                    f"{_card(g, c, None)} face down at player_{k // rules.SLOTS}'s position {k % rules.SLOTS + 2}"
                )
        lines.append(f"player_{s}: {', '.join(known) or 'nothing'}")
    return lines


def _end_lines(g: rules.ElevensesState) -> list[str]:
    """The result, as every seat is told it at the end (the outcome reveals the Guilt cards and the guests)."""
    if g.phase != rules.OVER:
        return []
    if g.truncated:
        return [f"The game was stopped after {g.options.max_turns} turns: nothing is scored, nobody wins."]
    out = g.outcome()
    lines = ["The game is over."]
    lines.append(f"Arrested (most cubes): {', '.join(_at(g, p) for p in out['arrested'])}.")
    lines.append(f"The Murderer card lay at: {', '.join(_at(g, p) for p in out['murderers'])}.")
    if g.winners:
        lines.append(f"Winner{'s' if len(g.winners) > 1 else ''}: {', '.join(f'player_{s}' for s in g.winners)}.")
    else:
        lines.append("Mrs Lansdowne wins: no player wins." if g.mrs_wins else "Nobody wins.")
    guests = "; ".join(
        f"player_{s} {', '.join(rules.CARD_NAMES[k - 1] for k in rules.GUESTS[x])}" for s, x in enumerate(g.guests)
    )
    lines.append(f"Guests: {guests}.")
    return lines
