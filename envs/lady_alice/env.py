"""The Lady Alice environment: incremental encoding, decoding and drawing over the pure rules in ``rules.py``.

The encoding itself -- the layouts and the one from-scratch writer -- is the game's pure observer
(:mod:`parlour.envs.lady_alice.observer`); this env keeps the observer's source vector up to date as actions are
played (``_apply``), and its fuzz invariants hold that incremental path to the observer at every step.

See :mod:`parlour.envs.lady_alice_v2` for the user-facing documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import GameEnv, env_metadata
from parlour.envs.lady_alice import GAME, rules
from parlour.envs.lady_alice.observer import (
    ACCUSATION_ROW,
    COUNT_SCALE,
    FIRST_PUBLIC,
    MAXP,
    SMILES,
    SUSPICION_ROW,
    C,
    Params,
    V,
    observation_gather,
    observation_layout,
    observe,
    source_layout,
    write_source,
)
from parlour.envs.layout import Field, Layout, Source, state_from_source

# The encoding's names stay importable from here (the JAX core, the bots and the tests read them from this module).
__all__ = [
    "ACCUSATION_ROW",
    "COUNT_SCALE",
    "FIRST_PUBLIC",
    "MARKERS",
    "MAXP",
    "SMILES",
    "SUSPICION_ROW",
    "C",
    "LadyAliceEnv",
    "LadyAliceV0Env",
    "LadyAliceV1Env",
    "OptionsV0",
    "V",
    "observation_gather",
    "observation_layout",
    "source_layout",
    "state_layout",
]

#: The source's one-hot public fields that move with the decision under way: their markers are keyed 0–4.
MARKERS = ("phase", "to_act", "holder", "place_clue", "accusation_missing")
#: Their keys in the source vector (:class:`~parlour.envs.layout.Source`), in :data:`MARKERS` order: small ints, the
#: cheapest dict keys on this hot path.
MARK_PHASE, MARK_TO_ACT, MARK_HOLDER, MARK_PLACE_CLUE, MARK_MISSING = range(len(MARKERS))


@cache
def state_layout(max_rounds: int = rules.DEFAULT_MAX_ROUNDS) -> Layout:
    src = source_layout(max_rounds)
    return Layout(
        (
            Field("num_players", (3,), "one-hot: 3–5 players"),
            *(f for f in src.fields if f.name not in ("zero", "one")),
            Field("solution", (C,), "the solution's clues"),
            Field("special", (rules.NUM_CATEGORIES,), "one-hot: the doubled (5 players) or missing (3) category"),
            Field("evidence", (MAXP, C), "one-hot: every seat's evidence card"),
            Field("face_down_values", (MAXP, C, V), "face-down counters by owner, clue and value ÷ 5"),
        )
    )


class LadyAliceEnv(GameEnv[rules.LadyAliceState]):
    """PettingZoo AEC environment for Lady Alice (see ``parlour.envs.lady_alice_v2``)."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("lady_alice_v2")
    declaration = GAME
    title = GAME.title
    options_class = rules.Options
    default_players = GAME.default_players
    env_version = 2
    cap_scores = rules.CAP_SCORES
    min_players = GAME.min_players
    max_players = GAME.max_players
    num_actions = rules.NUM_ACTIONS
    observation_layout = observation_layout()
    state_layout = state_layout()

    rules_options: rules.Options

    def _configure(self, options: rules.Options) -> None:
        # The history fields grow with ``max_rounds``.
        self.max_rounds = options.max_rounds
        self.observation_layout = observation_layout(self.max_rounds)  # type: ignore[misc]
        self.state_layout = state_layout(self.max_rounds)  # type: ignore[misc]

    def _setup(self) -> None:
        n = self.num_players
        self._observer = Params.from_options(self.rules_options)
        self._use_source(source_layout(self.max_rounds), [observation_gather(self.max_rounds, o, n) for o in range(n)])
        # The observation's public block lies in the same order at the end of the source: one slice copy.
        first = self.src.layout[FIRST_PUBLIC].start
        self._public_block = slice(first, self.src.layout.size)
        self._obs_size = self.observation_layout.size
        assert self._obs_size - len(self._gather[0]) == self.src.layout.size - first
        at = self.src.at
        self._marker_bases = tuple(at[name] for name in MARKERS)
        self._i_partial, self._i_passed = at["partial"], at["passed"]

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> rules.LadyAliceState:
        return rules.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.LadyAliceState:
        return rules.resample(self.game, seat, rng)

    # ------------------------------------------------------------------------------------------ encoding
    def _reference_observation(self, seat: int) -> np.ndarray:
        return observe(self.game, seat, self._observer)  # the game's one from-scratch writer

    def _write_source(self, src: Source) -> None:
        """The source from scratch (the observer's), and where its one-hot markers stand (the incremental path's)."""
        write_source(self.game, self._observer, src.vector)
        self._markers(src)

    def _markers(self, src: Source) -> None:
        """The one-hot public fields that move with nearly every action (markers 0-4, :data:`MARKERS`): most
        actions move one or two, so each is compared before it moves."""
        g = self.game
        phase_at, act_at, holder_at, place_at, missing_at = self._marker_bases
        now = (
            phase_at + g.phase,
            act_at + g.current if g.phase != rules.OVER else -1,
            holder_at + g.holder,
            place_at + g.place_clue if g.place_clue >= 0 else -1,
            missing_at + g.missing if g.missing >= 0 else -1,
        )
        src.show(now)

    def _write_passed(self) -> None:
        """The seats that passed in the sequence under way (five entries: item writes beat a slice)."""
        g, m, start = self.game, self.src.m, self._i_passed
        passed = g.passed
        for s_ in range(g.n):
            m[start + s_] = 1.0 if s_ in passed else 0.0

    def _apply(self, action: int) -> list[float] | None:
        # The rules play and note what changed; the source follows (GameEnv's mechanism). The game moves a little at a
        # time: only what an action can change is rewritten (the fuzz checks the result against the from-scratch
        # encoder at every step).
        g, src = self.game, self.src
        rewards = g.play(action)
        changes: list[tuple[Any, ...]] = g.changes  # type: ignore[assignment]
        m, at = src.m, src.at
        if not changes and g.phase == rules.PLACE:  # a clue chosen for a counter: the value comes next
            phase_at, _, _, place_at, _ = self._marker_bases
            src.move(MARK_PHASE, phase_at + rules.PLACE)
            src.move(MARK_PLACE_CLUE, place_at + g.place_clue)
            return rewards
        if len(changes) == 1:  # the commonest steps first
            change = changes[0]
            if change[0] == "placed" and g.phase == rules.DEDUCE:  # the counter is down: back to the Deductions
                self._write_space(change[2], change[1])
                self._write_passed()
                phase_at, act_at, _, _, _ = self._marker_bases
                src.move(MARK_PHASE, phase_at + rules.DEDUCE)
                src.move(MARK_PLACE_CLUE, -1)
                src.move(MARK_TO_ACT, act_at + g.current)
                changes.clear()
                return rewards
            if change[0] == "partial":  # the next clue of a suspicion or accusation: nothing else moves
                m[self._i_partial + change[1]] = 1.0
                changes.clear()
                return rewards
            if change[0] == "pass" and g.phase == rules.DEDUCE:  # a pass that does not end the phase
                m[self._i_passed + change[1]] = 1.0
                src.move(MARK_TO_ACT, self._marker_bases[MARK_TO_ACT] + g.current)
                changes.clear()
                return rewards
        for change in changes:
            kind = change[0]
            if kind == "partial":
                m[at["partial"] + change[1]] = 1.0
            elif kind == "pass":
                m[at["passed"] + change[1]] = 1.0
            elif kind == "placed":
                self._write_space(change[2], change[1])
                self._write_passed()
            elif kind == "verdict":
                self._write_record()
                for c in g.history[-1].clues:  # the clues of the verdict were the partial choice: cleared
                    m[self._i_partial + c] = 0.0
                self._write_passed()
            else:  # "over": once a game, the end shows everything at once
                src.reset()
                self._write_source(src)
                changes.clear()
                return rewards
        self._markers(src)
        changes.clear()
        return rewards

    def _write_record(self) -> None:
        """A verdict was given: write its history row and what it changed (covered clues, the previous
        suspicion, the round count, an exclusion)."""
        g, v, i = self.game, self.src.vector, self.src.at
        record = g.history[-1]
        if record.accusation:
            k = sum(r.accusation for r in g.history) - 1
            v[i["excluded"] + record.seat] = float(g.excluded[record.seat])
            if record.smiles == 0 and self.rules_options.accusation_covers:
                v[i["covered"] + np.array(record.clues)] = 1
            if not self.rules_options.no_notes:
                v[i["accusation_seats"] + k * MAXP + record.seat] = 1
                base = i["accusations"] + k * ACCUSATION_ROW
                if record.missing >= 0:
                    v[base + record.missing] = 1
                v[base + rules.NUM_CATEGORIES + np.array(record.clues)] = 1
                v[base + rules.NUM_CATEGORIES + C + record.smiles] = 1
            return
        k = g.rounds - 1
        v[i["rounds"]] = g.rounds / self.max_rounds
        v[i["previous"] : i["previous"] + C] = 0
        v[i["previous"] + np.array(record.clues)] = 1
        v[i["previous_smiles"] : i["previous_smiles"] + SMILES] = 0
        v[i["previous_smiles"] + record.smiles] = 1
        if record.smiles == 0:
            v[i["covered"] + np.array(record.clues)] = 1
        if not self.rules_options.no_notes:
            v[i["suspicion_seats"] + k * MAXP + record.seat] = 1
            base = i["suspicions"] + k * SUSPICION_ROW
            v[base + np.array(record.clues)] = 1
            v[base + C + record.smiles] = 1

    def _write_space(self, clue: int, seat: int) -> None:
        """Rewrite the counters of one space (and the placing seat's own counters)."""
        g, v, i = self.game, self.src.vector, self.src.at
        space = g.counters[clue]
        owners = {owner for owner, _, _ in space}
        i_fd, i_rv = i["face_down"], i["revealed"]
        for owner in owners:
            v[i_fd + owner * C + clue] = 0
            base = i_rv + (owner * C + clue) * V
            v[base : base + V] = 0
        own = i["own_counters"] + (seat * C + clue) * V
        v[own : own + V] = 0
        for owner, value, up in space:
            if up:
                v[i_rv + (owner * C + clue) * V + value] += COUNT_SCALE
            else:
                v[i_fd + owner * C + clue] += COUNT_SCALE
            if owner == seat:
                v[own + value] += 1 / rules.COUNTERS_PER_VALUE
        left = i["counters_left"] + seat * V
        v[left : left + V] = np.array(g.left[seat]) / rules.COUNTERS_PER_VALUE

    def _incremental_observation(self, seat: int) -> np.ndarray:
        out = np.empty(self._obs_size, np.float32)
        head = self._gather[seat]
        out[: len(head)] = self.src.vector[head]
        out[len(head) :] = self.src.vector[self._public_block]
        return out

    def _encode_state(self) -> np.ndarray:
        g = self.game
        lay = self.state_layout
        v = state_from_source(lay, self.src.layout, self.src.vector, g.n - rules.MIN_PLAYERS)
        v[lay["solution"].start + np.array(g.solution)] = 1
        if g.special >= 0:
            v[lay["special"].start + g.special] = 1
        lay.view(v, "evidence")[np.arange(g.n), g.evidence] = 1
        values = lay.view(v, "face_down_values")
        for clue, space in enumerate(g.counters):
            for owner, value, up in space:
                if not up:
                    values[owner, clue, value] += COUNT_SCALE
        return v

    # ------------------------------------------------------------------------------------------ views
    def decode_action(self, action: int) -> str:
        action = int(action)
        if 0 <= action < C:
            return f"clue {rules.clue_name(action)} ({rules.CATEGORY_NAMES[rules.category(action)]})"
        if rules.VALUE_BASE <= action < rules.PASS:
            return f"counter value {action - rules.VALUE_BASE}"
        if action == rules.PASS:
            return "pass"
        if action == rules.ACCUSE:
            return "accuse"
        if rules.MISSING_BASE <= action < rules.NUM_ACTIONS:
            return f"accusation leaves out the {rules.CATEGORY_NAMES[action - rules.MISSING_BASE]} category"
        raise ValueError(f"action {action} is out of range: expected an integer in [0, {rules.NUM_ACTIONS - 1}]")

    def render_text(self, perspective: str | None = None) -> str:
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        lines = [
            f"Lady Alice — round {g.rounds}, phase: {rules.PHASE_NAMES[g.phase]}"
            + ("" if perspective is None else f" — as seen by {perspective}")
        ]
        if seat is None:
            special = "" if g.special < 0 else f" (special category: {rules.CATEGORY_NAMES[g.special]})"
            lines.append("solution: " + ", ".join(rules.clue_name(c) for c in g.solution) + special)
        for cat in range(rules.NUM_CATEGORIES):
            cells = []
            for clue in range(cat * rules.PER_CATEGORY, (cat + 1) * rules.PER_CATEGORY):
                marks = []
                for owner, value, up in g.counters[clue]:
                    shown = up or seat is None or owner == seat
                    marks.append(f"p{owner}:{value if shown else '?'}")
                cover = "[covered] " if g.covered[clue] else ""
                cells.append(f"{cover}{rules.clue_name(clue)}" + (f" ({' '.join(marks)})" if marks else ""))
            lines.append(f"{rules.CATEGORY_NAMES[cat]}s: " + "; ".join(cells))
        for r in g.history:
            kind = "accuses" if r.accusation else "suspects"
            lines.append(f"player_{r.seat} {kind} {', '.join(rules.clue_name(c) for c in r.clues)}: {r.smiles} smiles")
        for s in range(g.n):
            evidence = rules.clue_name(g.evidence[s]) if seat is None or seat == s else "?"
            left = g.left[s] if seat is None or seat == s else sum(g.left[s])
            flags = (" (excluded)" if g.excluded[s] else "") + (" [notebook]" if g.holder == s else "")
            flags += " <- to decide" if g.current_player == s else ""
            lines.append(f"player_{s}: evidence {evidence}; counters left {left}{flags}")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ audit & end
    def consistent_solutions(self, agent: str) -> np.ndarray:
        """The solutions (rows of clue ids) consistent with everything ``agent`` knows: its evidence card and every
        verdict so far; with 3 or 5 players each row also fixes the hidden category. All are equally likely."""
        g = self.game
        return rules.consistent_solutions(g.n, g.evidence[self._seat[agent]], g.verdicts())

    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        g = self.game
        seat = self._seat[agent]
        board = [[(o, v if (up or o == seat) else -1, up) for o, v, up in space] for space in g.counters]
        public = (
            board,
            g.covered,
            g.excluded,
            g.phase,
            g.holder,
            g.current,
            g.partial,
            g.missing,
            g.place_clue,
            [(r.seat, r.clues, r.smiles, r.accusation, r.missing) for r in g.history],
            g.passed,
            g.rounds,
        )
        known = (g.evidence[seat], g.left[seat], public)
        hidden = (
            [g.evidence[s] for s in range(g.n) if s != seat],
            g.solution,
            g.special,
            [[(o, v) for o, v, up in space if o != seat and not up] for space in g.counters],
            [g.left[s] for s in range(g.n) if s != seat],
        )
        return repr(known).encode(), repr(hidden).encode()

    def outcome(self) -> dict[str, Any]:
        return self.game.outcome()

    def invariants(self) -> None:
        g = self.game
        n = g.n
        assert sorted(g.evidence) == sorted(g.solution), "every evidence card is a clue of the solution"
        assert len(g.solution) == n
        for s in range(n):
            placed = [e for space in g.counters for e in space if e[0] == s]
            for value in rules.COUNTER_VALUES:
                assert g.left[s][value] + sum(1 for e in placed if e[1] == value) == rules.COUNTERS_PER_VALUE
        for space in g.counters:
            assert len(space) <= n, "a space holds at most as many counters as players"
            if len(space) > 1:
                assert all(e[2] for e in space[:-1]), "placing a counter turns the ones already there face up"
        for r in g.history:
            assert r.smiles == g.verdict(r.clues)
            if not r.accusation and r.smiles == 0:
                assert all(g.covered[c] for c in r.clues)
        assert len(g.active) >= 1
        for k in range(rules.NUM_CATEGORIES):
            assert g.uncovered[k] == sum(
                not g.covered[c] for c in range(k * rules.PER_CATEGORY, (k + 1) * rules.PER_CATEGORY)
            )
        assert list(g.open) == [int(not g.covered[c] and len(g.counters[c]) < n) for c in range(C)]
        assert len(set(g.passed)) == len(g.passed) and not any(g.excluded[s] for s in g.passed)
        if g.phase != rules.OVER:
            assert not g.excluded[g.current], "an excluded player neither suspects nor deduces"
        if g.phase == rules.SUSPECT:
            assert g.current == g.holder and not g.excluded[g.holder]
        for s in range(n):
            assert np.array_equal(self._incremental_observation(s), self._reference_observation(s)), (
                "incremental encoding drifted"
            )


@dataclass(frozen=True)
class OptionsV0(rules.Options):
    """``lady_alice_v0``'s keywords: as v1's, but a zero-smile accusation does not cover its clues by default."""

    accusation_covers: bool = False


class LadyAliceV1Env(LadyAliceEnv):
    """``lady_alice_v1``: a previous version (see ``parlour.envs.lady_alice_v1``): the round cap, which scores the
    game, ends it as a truncation."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("lady_alice_v1")
    title = f"{GAME.title} (v1: the scored round cap is a truncation)"
    env_version = 1
    scored_cap_terminates = False


class LadyAliceV0Env(LadyAliceV1Env):
    """``lady_alice_v0``: the first version (see ``parlour.envs.lady_alice_v0``)."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("lady_alice_v0")
    title = f"{GAME.title} (v0: zero-smile accusations cover nothing)"
    options_class = OptionsV0
    env_version = 0
