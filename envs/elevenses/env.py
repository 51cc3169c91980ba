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
        # the whole source (every seat's private fields too), not only the observations: it is what the state derives from
        assert np.array_equal(self.src.vector, source(g, self._observer)), "incremental encoding drifted"
