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
        """The table as ``perspective`` knows it, in plain lines (``None``: the umpire's view, with the solution, every
        evidence card and every counter's value).

        A seat's view holds everything its observation carries -- its evidence card and counters, the counters on the
        clues (values of face-up ones and of its own), covered clues, the notebook, whose decision it is and what is
        being chosen, the passes, the last suspicion and (unless notes are forbidden) every verdict so far -- and
        never another seat's evidence or face-down values."""
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        opts = self.rules_options
        lines = _header(g, opts, perspective)
        lines += _decision_lines(g, seat)
        lines += _clue_lines(g)
        lines += _counter_lines(g, seat)
        lines += _history_lines(g, opts)
        lines += _player_lines(g, seat)
        lines += _end_lines(g)
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


# ----------------------------------------------------------------------------------------------- the text view
# render_text's parts: each takes the rules state and the viewing seat (``None``: the umpire) and returns lines.
_CATEGORY_PLURALS = ("Suspects", "Places", "Times", "Objects")
_PHASE_HELP = (
    "the notebook's holder names one clue of each category, in order: Suspect, Place, Time, Object",
    "from the holder's left, each player still in the game places a counter, passes or accuses; the phase ends "
    "when all of them have passed in a row",
    "a player has chosen the clue for a counter and now chooses its value",
    "a player is naming the clues of an accusation",
    "the game is over",
)


def _clue(c: int) -> str:
    return f"{rules.clue_name(c)} ({rules.CATEGORY_NAMES[rules.category(c)]})"


def _clues(clues: Any) -> str:
    return ", ".join(rules.clue_name(c) for c in clues)


def _smiles(k: int) -> str:
    return "1 smile" if k == 1 else f"{k} smiles"


def _who(s: int, seat: int | None) -> str:
    return f"player_{s} (you)" if s == seat else f"player_{s}"


def _header(g: rules.LadyAliceState, opts: rules.Options, perspective: str | None) -> list[str]:
    players = ", ".join(f"player_{s}" for s in range(g.n))
    if perspective is None:
        lines = ["Lady Alice — the umpire's view (the solution, every evidence card and counter)"]
        lines.append(f"Players, clockwise: {players}.")
    else:
        lines = [
            f"Lady Alice — the table as {perspective} sees it",
            f"You are {perspective}. Players, clockwise: {players}.",
        ]
    solution = {
        3: "3 clues: one hidden category has none",
        4: "4 clues, one of each category",
        5: "5 clues: one hidden category has two",
    }[g.n]
    need = rules.smiles_needed(g.n)
    lines.append(f"The solution is {solution}; each player holds one of them as evidence.")
    if perspective is None:
        special = "" if g.special < 0 else f" (hidden category: {rules.CATEGORY_NAMES[g.special]})"
        lines.append(f"The solution: {_clues(g.solution)}{special}")
    lines.append(
        f"A verdict counts the evidence cards among the clues named (smiles); an accusation is right with {need}."
    )
    if opts.no_notes:
        lines.append("Notes are forbidden: only the last suspicion and its verdict stay on the table.")
    lines.append(
        f"Suspicions made so far: {g.rounds}; after {opts.max_rounds} the game ends, scored without the accusation bonus."
    )
    lines.append(f"Phase: {rules.PHASE_NAMES[g.phase]} — {_PHASE_HELP[g.phase]}.")
    return lines


def _decision_lines(g: rules.LadyAliceState, seat: int | None) -> list[str]:
    """The notebook, whose decision it is, and what is being chosen (clues so far, the category left out, the clue
    a counter goes on)."""
    lines = [f"{_who(g.holder, seat)} holds the notebook this round."]
    if g.phase == rules.OVER:
        return lines
    turn = f"It is your decision (player_{g.current})" if g.current == seat else f"It is player_{g.current}'s decision"
    lines.append(f"{turn}: {_choice(g)}.")
    if g.partial or g.phase == rules.ACCUSING:
        what = "suspicion" if g.phase == rules.SUSPECT else "accusation"
        lines.append(f"Clues of the {what} so far: {_clues(g.partial) or 'none'}")
    if g.phase == rules.ACCUSING and g.missing >= 0:
        lines.append(f"The accusation leaves out the {rules.CATEGORY_NAMES[g.missing]} category.")
    if g.phase in (rules.DEDUCE, rules.PLACE, rules.ACCUSING):
        passed = ", ".join(_who(s, seat) for s in sorted(g.passed)) or "nobody"
        lines.append(f"Passed since the last counter was placed: {passed}.")
    return lines


def _choice(g: rules.LadyAliceState) -> str:
    """What the seat to decide is choosing."""
    if g.phase == rules.SUSPECT:
        return f"the {rules.CATEGORY_NAMES[len(g.partial)]} of the suspicion"
    if g.phase == rules.DEDUCE:
        return "place a counter on a clue, pass, or accuse"
    if g.phase == rules.PLACE:
        return f"the value of the counter going on {_clue(g.place_clue)}"
    if g.n == 3 and g.missing < 0:
        return "the category the accusation leaves out"
    cats = [c for c in range(rules.NUM_CATEGORIES) if c != g.missing]
    return f"the {rules.CATEGORY_NAMES[cats[len(g.partial)]]} of the accusation"


def _clue_lines(g: rules.LadyAliceState) -> list[str]:
    """The 32 clues by category; covered ones are red herrings shown by a verdict with no smile."""
    lines = ["Clues (covered: shown to be a red herring by a verdict with no smile):"]
    for cat in range(rules.NUM_CATEGORIES):
        clues = range(cat * rules.PER_CATEGORY, (cat + 1) * rules.PER_CATEGORY)
        cells = [rules.clue_name(c) + (" (covered)" if g.covered[c] else "") for c in clues]
        lines.append(f"{_CATEGORY_PLURALS[cat]}: {', '.join(cells)}")
    return lines


def _counter_lines(g: rules.LadyAliceState, seat: int | None) -> list[str]:
    """The counters on each clue, in the order they were placed (a new one turns those already there face up)."""
    lines = [f"Counters on the clues, in the order placed (at most {g.n} on a clue):"]
    for c, space in enumerate(g.counters):
        if not space:
            continue
        marks = []
        for owner, value, up in space:
            if up:
                marks.append(f"{_who(owner, seat)} face up, value {value}")
            elif seat is None or owner == seat:
                marks.append(f"{_who(owner, seat)} face down, value {value}")
            else:
                marks.append(f"{_who(owner, seat)} face down")
        lines.append(f"{_clue(c)}: {'; '.join(marks)}")
    if len(lines) == 1:
        lines.append("(none yet)")
    return lines


def _history_lines(g: rules.LadyAliceState, opts: rules.Options) -> list[str]:
    """The verdicts so far (every one, or only the last suspicion's when notes are forbidden)."""
    suspicions = [r for r in g.history if not r.accusation]
    last = suspicions[-1] if suspicions else None
    if opts.no_notes:
        return [] if last is None else [_last_suspicion(last)]
    if not g.history:
        return ["No suspicion yet."]
    lines = ["Suspicions and accusations so far, with their verdicts:"]
    k = 0
    for r in g.history:
        if r.accusation:
            left = f", leaving out the {rules.CATEGORY_NAMES[r.missing]} category" if r.missing >= 0 else ""
            right = r.smiles == rules.smiles_needed(g.n)
            result = "right" if right else f"wrong: player_{r.seat} is excluded"
            lines.append(f"Accusation by player_{r.seat}{left}: {_clues(r.clues)} — {_smiles(r.smiles)} ({result})")
        else:
            k += 1
            lines.append(f"Suspicion {k} by player_{r.seat}: {_clues(r.clues)} — {_smiles(r.smiles)}")
    if last is not None:
        lines.append(_last_suspicion(last))
    return lines


def _last_suspicion(record: rules.Record) -> str:
    return f"Last suspicion (may not be repeated): {_clues(record.clues)} — {_smiles(record.smiles)}"


def _player_lines(g: rules.LadyAliceState, seat: int | None) -> list[str]:
    """Each player: evidence card (one's own; every one for the umpire), counters in hand, exclusion, turn."""
    lines = []
    for s in range(g.n):
        if seat is None or seat == s:
            evidence = rules.clue_name(g.evidence[s])
            left = ", ".join(f"value {v} ×{k}" for v, k in zip(rules.COUNTER_VALUES, g.left[s], strict=True))
            hand = f"counters in hand: {left}"
        else:
            count = sum(g.left[s])
            evidence, hand = "?", f"{count} counter{'' if count == 1 else 's'} in hand"
        flags = " — you" if s == seat else ""
        flags += "; excluded by a false accusation" if g.excluded[s] else ""
        flags += "; holds the notebook" if g.holder == s else ""
        flags += "; to decide" if g.current_player == s else ""
        lines.append(f"player_{s}: evidence {evidence}; {hand}{flags}")
    return lines


def _end_lines(g: rules.LadyAliceState) -> list[str]:
    """The result, as every seat is told it at the end (the outcome reveals the solution and the evidence)."""
    if g.phase != rules.OVER:
        return []
    out = g.outcome()
    how = (
        "a right accusation"
        if g.accuser >= 0
        else "the round cap"
        if g.truncated
        else "only one player is left in the game"
    )
    evidence = ", ".join(f"player_{s} {e}" for s, e in enumerate(out["evidence"]))
    lines = [f"The game is over ({how}). The solution: {', '.join(out['solution'])}."]
    lines.append(f"Evidence cards: {evidence}.")
    lines.append("Points: " + ", ".join(f"player_{s} {p}" for s, p in enumerate(g.scores)))
    lines.append("Winners: " + ", ".join(f"player_{s}" for s in g.winners))
    return lines
