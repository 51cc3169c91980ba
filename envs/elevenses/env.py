"""The Elevenses environment: encoding, decoding and drawing over the pure rules in ``rules.py``.

See :mod:`parlour.envs.elevenses_v0` for the user-facing documentation.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import GameEnv, env_metadata
from parlour.envs.elevenses import GAME, rules
from parlour.envs.layout import Field, Layout, Source, gather_index, one_hot_entries, rotated_entries, state_from_source

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
# Source groups, each contiguous and rewritten as a whole when the rules say it changed.
_GROUPS = {
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
    for names in _GROUPS.values():
        order += names
    fields = [Field("zero", (1,), "constant 0"), Field("one", (1,), "constant 1")]
    for name in order:
        f = obs.field(name)
        fields.append(Field(name, (MAXP, *f.shape) if name in _PRIVATE else f.shape, ""))
    return Layout(tuple(fields))


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


def observation_gather(observer: int, n: int) -> np.ndarray:
    """For each observation entry of ``observer`` at a table of ``n``, the source entry it is read from (the JAX core
    gathers the same)."""
    src, obs = source_layout(), observation_layout()
    special = {"num_players": one_hot_entries(src, 4, n - rules.MIN_PLAYERS)}
    for name, axes in _SEAT_AXES.items():
        block = observer if name in _PRIVATE else None
        special[name] = rotated_entries(src, name, observer, n, axes, MAXP, block)
    return gather_index(obs, src, observer, n, private={"own_guest": "own_guest"}, special=special)


def _plate(g: rules.ElevensesState, pos: int) -> int:
    """Source index of a rules position (Mrs Lansdowne is ``n`` in the rules, ``MAXP`` in the encoding)."""
    return MAXP if pos == g.n else pos


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
        self._use_source(source_layout(), [observation_gather(o, n) for o in range(n)])
        lay, at = self.src.layout, self.src.at
        self._turn_base = tuple(at[name] for name in _GROUPS["turn"])
        # Each group's fields lie one after another in the source (``source_layout`` lays them out so).
        self._group_slice = {name: slice(lay[names[0]].start, lay[names[-1]].stop) for name, names in _GROUPS.items()}

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> rules.ElevensesState:
        return rules.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.ElevensesState:
        return rules.resample(self.game, seat, rng)

    # ------------------------------------------------------------------------------------------ encoding
    def _entry(self, seat: int, card: int, where: int) -> int:
        """The source entry saying that ``seat`` knows ``card`` is at ``where`` (-1: none, the card is face up)."""
        if where < rules.DOWN:
            return self.src.at["known_in_hand"] + ((seat * MAXP + card // K) * K + card % K) * MAXP + where
        if where < rules.UP:
            return self.src.at["known_face_down"] + (seat * MAXP * rules.SLOTS + where - rules.DOWN) * K + card % K
        return -1

    def _back(self, card: int, where: int, on: float) -> None:
        """Write (``on`` = 1) or clear the public sight of ``card``'s back at ``where``."""
        i, m, o = self.src.at, self.src.m, card // K
        if where < rules.DOWN:  # a count: written from the hand as it is now (exact, whatever the order of moves)
            m[i["hand_backs"] + where * MAXP + o] = sum(d // K == o for d in self.game.hands[where]) * HAND_SCALE
        elif where < rules.UP:
            m[i["down_backs"] + (where - rules.DOWN) * MAXP + o] = on
        elif where < rules.CENTRE:
            m[i["face_up"] + ((where - rules.UP) * (K - 1) + card % K) * MAXP + o] = on

    def _write_group(self, name: str) -> None:
        g, i, m = self.game, self.src.at, self.src.m
        self.src.vector[self._group_slice[name]] = 0
        n = g.n
        if name == "guests":
            for s in range(n):
                m[i["own_guest"] + s * G + g.guests[s]] = 1.0
                if g.revealed[s]:
                    m[i["revealed_guests"] + s * G + g.guests[s]] = 1.0
                m[i["tea"] + s] = g.tea(s) * TEA_SCALE
        elif name == "guilt":
            for pos in range(g.positions):
                p = _plate(g, pos)
                for s in range(n):
                    if g.guilt_known[s][pos]:
                        m[i["guilt_known"] + (s * POS + p) * 2 + g.guilt[pos]] = 1.0
                    if g.claims[s][pos]:
                        m[i["claims"] + (s * POS + p) * 3 + g.claims[s][pos] - 1] = 1.0
                    if g.moved[s][pos]:
                        m[i["swapped"] + (s * POS + p) * 2 + g.moved[s][pos] - 1] = 1.0
            for s in range(n):
                for t in range(n):
                    m[i["hands_seen"] + s * MAXP + t] = min(1.0, g.viewed[s][t] * SEEN_SCALE)
        elif name == "plates":
            for s in range(n):
                self._write_cubes(s)
        else:
            for e, x in self._turn_entries():
                m[e] = x

    def _write_cubes(self, actor: int) -> None:
        """Rewrite the plates, the Sugar Bowl, the late cubes and ``actor``'s tallies (what moving cubes changes)."""
        g, i, m = self.game, self.src.at, self.src.m
        put, took, row = g.put[actor], g.took[actor], actor * POS
        for pos in range(g.positions):
            p = _plate(g, pos)
            m[i["plates"] + p] = g.plates[pos] * PLATE_SCALE
            m[i["put"] + row + p] = min(1.0, put[pos] * CUBE_SCALE)
            m[i["took"] + row + p] = min(1.0, took[pos] * CUBE_SCALE)
        late = i["late_cubes"]
        for s in range(g.n):
            m[late + s] = g.late.count(s) * LATE_SCALE
        m[i["bowl"]] = g.bowl * PLATE_SCALE

    def _turn_entries(self) -> list[tuple[int, float]]:
        """The non-zero source entries of the turn group: the decision under way."""
        g = self.game
        (phase, effect, to_act, turn_seat, elevenses, passers, passed, target, first, looked, chosen, progress) = (
            self._turn_base
        )
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
                out.append((looked + _plate(g, g.looked), 1.0))
            if g.phase == rules.ADD:
                out.append((progress + 1, g.cubes_left / 2))
            elif g.phase == rules.MOVE_FROM or g.phase == rules.MOVE_TO:
                out.append((progress + 2, g.moves_left / 2))
        if g.elevenses >= 0:
            out.append((elevenses + g.elevenses, 1.0))
        if g.rearrange_card >= 0:
            out.append((chosen + g.current * MAXP * K + g.rearrange_card, 1.0))
        if g.first >= 0:
            out.append((first + _plate(g, g.first), 1.0))
        if g.rearranged:
            out.append((progress, g.rearranged / 2))
        return out

    def _write_source(self, src: Source) -> None:
        """The source from scratch (the reference the incremental updates are checked against): the writers work on
        ``self.src``, so it points to ``src`` meanwhile."""
        live, self.src = self.src, src
        try:
            g = self.game
            for c in range(g.n * K):
                where = g.location[c]
                self._back(c, where, 1.0)
                for s in range(g.n):
                    if g.knowers[c] >> s & 1 and (e := self._entry(s, c, where)) >= 0:
                        src.m[e] = 1.0
            for name in _GROUPS:
                self._write_group(name)
        finally:
            self.src = live

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
                self._write_cubes(event[1])
            else:
                groups.add(kind)
        self._move_cards(cards)
        for name in groups:
            self._write_group(name)

    def _move_cards(self, cards: list[tuple[Any, ...]]) -> None:
        """Cards move at once (a re-arrangement swaps two): every old sight is cleared before any new one is set."""
        m, entry = self.src.m, self._entry
        for _, c, old, new, bits, _after in cards:
            if old != new:
                self._back(c, old, 0.0)
            if old < rules.UP:
                while bits:  # each seat that knew the card where it was
                    low = bits & -bits
                    m[entry(low.bit_length() - 1, c, old)] = 0.0
                    bits ^= low
        for _, c, old, new, _before, bits in cards:
            if old != new:
                self._back(c, new, 1.0)
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
            v[lay["guilt"].start + _plate(g, pos)] = g.guilt[pos]
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
        g = self.game
        me = None if perspective is None else self._seat[perspective]
        lines = [
            f"Elevenses — turn {g.turns}, {rules.PHASE_NAMES[g.phase]}"
            + ("" if perspective is None else f" — as seen by {perspective}")
        ]

        def show(c: int) -> str:
            known = me is None or g.knows(me, c)
            return f"{rules.number(c) if known else '?'}/p{rules.owner(c)}"

        def who(pos: int) -> str:
            return "Mrs Lansdowne" if pos == g.n else f"player_{pos}"

        def hand(s: int) -> list[int]:
            # As the viewer can tell them apart: known cards by back and number, then the unknown ones by back. The
            # storage order would say which of two same-back cards left a hand, which an onlooker cannot know.
            if me is None:
                return g.hands[s]
            return sorted(
                g.hands[s], key=lambda c: (rules.owner(c), not g.knows(me, c), rules.number(c) * g.knows(me, c))
            )

        for s in range(g.n):
            guest = g.guests[s] if me is None or me == s or g.revealed[s] else "?"
            lines.append(
                f"player_{s}: guest {guest}{' (revealed)' if g.revealed[s] else ''}; tea {g.tea(s)}; "
                f"hand [{' '.join(show(c) for c in hand(s))}]; face up "
                f"[{' '.join(str(rules.number(c)) + '/p' + str(rules.owner(c)) for c in g.face_up[s] if c >= 0)}]; face down "
                f"[{' '.join(show(c) if c >= 0 else '-' for c in g.slots[s])}]"
                + (" <- to decide" if g.current_player == s else "")
            )
        plates = ", ".join(f"{who(p)} {g.plates[p]}" for p in range(g.positions))
        lines.append(f"plates: {plates}; Sugar Bowl {g.bowl}")
        guilt = []
        for p in range(g.positions):
            known = me is None or g.guilt_known[me][p]
            guilt.append(f"{who(p)}: " + (("Murderer" if g.guilt[p] else "Not Guilty") if known else "?"))
        lines.append("Guilt cards: " + "; ".join(guilt))
        for s in range(g.n):
            for p in range(g.positions):
                if g.claims[s][p]:
                    said = ("looked", "said Murderer", "said Not Guilty")[g.claims[s][p] - 1]
                    lines.append(f"player_{s} {said} about the Guilt card now at {who(p)}")
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
        fresh = Source(self.src.layout)
        fresh.reset()
        self._write_source(fresh)
        assert np.array_equal(self.src.vector, fresh.vector), "incremental encoding drifted"
