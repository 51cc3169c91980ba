"""The Lady Alice observer: what each seat sees, written from the rules state alone.

This module defines the encoding (the observation layout, the source vector it is gathered from, and the gather)
and holds the game's one from-scratch writer: :func:`write_source` writes everything the source vector shows of a
rules state, and :func:`observe` hands out one seat's observation (that source gathered through
:func:`observation_gather`, then its public block as it is). Both are pure: they read the rules state and a small
frozen :class:`Params` derived from the rule options, and nothing else.

The env (:mod:`parlour.envs.lady_alice.env`) keeps the same source vector up to date incrementally as actions are
played, which is much faster; it writes its source here at every reset and at the end of the game, and its fuzz
invariants hold each seat's incremental observation to :func:`observe` at every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from parlour.envs.lady_alice import rules
from parlour.envs.layout import Field, Layout, gather_index, one_hot_entries, read_only, relative_columns, written

C = rules.NUM_CLUES
MAXP = rules.MAX_PLAYERS
V = len(rules.COUNTER_VALUES)
SMILES = MAXP + 1  # a verdict shows 0–5 smiles
SUSPICION_ROW = C + SMILES
ACCUSATION_ROW = rules.NUM_CATEGORIES + C + SMILES
#: Counters of one owner on one space, and of one value, are scaled by this (a space holds at most 5).
COUNT_SCALE = 1.0 / MAXP


@cache
def observation_layout(max_rounds: int = rules.DEFAULT_MAX_ROUNDS) -> Layout:
    rel = "relative seat"
    # The fields that depend on the observer come first; the rest is one block, copied as it is from the source.
    return Layout(
        (
            Field("num_players", (3,), "one-hot: 3–5 players", ("players",)),
            Field("own_evidence", (C,), "one-hot: this player's evidence card", ("clue",)),
            Field("counters_left", (V,), "own counters not yet placed, of each value 0/1/2 ÷ 3", ("value",)),
            Field("own_counters", (C, V), "own counters on each clue, by value ÷ 3", ("clue", "value")),
            Field(
                "face_down",
                (MAXP, C),
                "public: face-down counters on each clue by owner ÷ 5; seats relative to the observer "
                "(0 = self, 1 = left neighbour, …)",
                (rel, "clue"),
            ),
            Field(
                "revealed",
                (MAXP, C, V),
                "public: face-up counters by owner, clue and value ÷ 5",
                (rel, "clue", "value"),
            ),
            Field("excluded", (MAXP,), "public: players excluded by a false accusation", (rel,)),
            Field("holder", (MAXP,), "public: one-hot seat holding the notebook this round", (rel,)),
            Field("to_act", (MAXP,), "public: one-hot seat whose decision it is", (rel,)),
            Field("passed", (MAXP,), "public: seats that have passed since the last counter was placed", (rel,)),
            Field(
                "suspicion_seats",
                (max_rounds, MAXP),
                "public history: one-hot seat that made each suspicion, in order; empty with no_notes",
                ("round", rel),
            ),
            Field(
                "accusation_seats",
                (MAXP, MAXP),
                "public history: one-hot seat that made each accusation, in order; empty with no_notes",
                ("accusation", rel),
            ),
            Field("phase", (5,), "one-hot: suspicion, deductions, counter value, accusation, over", ("phase",)),
            Field("covered", (C,), "public: clues covered by business cards (shown red herrings)", ("clue",)),
            Field(
                "partial", (C,), "public: the clues chosen so far of the suspicion or accusation being made", ("clue",)
            ),
            Field(
                "accusation_missing",
                (rules.NUM_CATEGORIES,),
                "public: one-hot category a three-player accusation being made leaves out",
                ("category",),
            ),
            Field("place_clue", (C,), "public: one-hot clue a counter is about to be placed on", ("clue",)),
            Field("previous", (C,), "public: the last suspicion (it may not be repeated)", ("clue",)),
            Field("previous_smiles", (SMILES,), "public: one-hot smiles of the last suspicion's verdict", ("smiles",)),
            Field(
                "suspicions",
                (max_rounds, SUSPICION_ROW),
                "public history, one row per suspicion in order: the four clues (32), one-hot smiles (6); empty "
                "with no_notes",
                ("round", "entry"),
            ),
            Field(
                "accusations",
                (MAXP, ACCUSATION_ROW),
                "public history, one row per accusation in order: one-hot category left out (4; three players), "
                "the clues (32), one-hot smiles (6); empty with no_notes",
                ("accusation", "entry"),
            ),
            Field("rounds", (1,), "public: suspicions made ÷ max_rounds"),
        )
    )


#: The first field of the observation's block that is the same for every observer.
FIRST_PUBLIC = "phase"
_PUBLIC_SEAT_FIELDS = ("face_down", "revealed", "excluded", "holder", "to_act", "passed")
_PRIVATE_FIELDS = ("own_evidence", "counters_left", "own_counters")


@cache
def source_layout(max_rounds: int) -> Layout:
    """Public fields once (absolute seats), private fields once per seat."""
    obs = observation_layout(max_rounds)
    fields = [Field("zero", (1,), "constant 0"), Field("one", (1,), "constant 1")]
    for f in obs.fields:
        if f.name == "num_players":
            continue
        if f.name in _PRIVATE_FIELDS:
            fields.append(Field(f.name, (MAXP, *f.shape), ""))
        else:
            fields.append(f)
    return Layout(tuple(fields))


def observation_gather(max_rounds: int, observer: int, n: int) -> np.ndarray:
    """The source entries of ``observer``'s observation up to the public block (which is copied as a whole)."""
    src, obs = source_layout(max_rounds), observation_layout(max_rounds)
    head = Layout(tuple(f for f in obs.fields[: [f.name for f in obs.fields].index(FIRST_PUBLIC)]))
    return gather_index(
        head,
        src,
        observer,
        n,
        relative=_PUBLIC_SEAT_FIELDS,
        private={name: name for name in _PRIVATE_FIELDS},
        special={
            "num_players": one_hot_entries(src, 3, n - rules.MIN_PLAYERS),
            "suspicion_seats": relative_columns(src, "suspicion_seats", observer, n),
            "accusation_seats": relative_columns(src, "accusation_seats", observer, n),
        },
    )


@dataclass(frozen=True)
class Params:
    """What the encoding takes from the rule options: the rounds the history holds and whether it is kept."""

    max_rounds: int
    no_notes: bool

    def __deepcopy__(self, memo: dict[int, Any]) -> Params:
        return self  # immutable: an env's deep copy (clone, resample_hidden) shares it, as it would a tuple

    @classmethod
    def from_options(cls, options: rules.Options) -> Params:
        return cls(max_rounds=options.max_rounds, no_notes=options.no_notes)


def write_source(state: rules.LadyAliceState, params: Params, vector: np.ndarray) -> None:
    """Write everything the source shows of ``state`` into ``vector`` (a zeroed vector of
    ``source_layout(params.max_rounds)``): public fields in absolute seats, every seat's private fields in its block."""
    g, lay, v = state, source_layout(params.max_rounds), vector
    v[lay["one"].start] = 1
    v[lay["phase"].start + g.phase] = 1
    _write_counters(v, lay, g)
    lay.view(v, "covered")[:] = g.covered
    for s in range(g.n):
        if g.excluded[s]:
            lay.view(v, "excluded")[s] = 1
        if s in g.passed:
            lay.view(v, "passed")[s] = 1
    lay.view(v, "holder")[g.holder] = 1
    if g.phase != rules.OVER:
        lay.view(v, "to_act")[g.current] = 1
    lay.view(v, "partial")[g.partial] = 1
    if g.missing >= 0:
        lay.view(v, "accusation_missing")[g.missing] = 1
    if g.place_clue >= 0:
        lay.view(v, "place_clue")[g.place_clue] = 1
    suspicions = [r for r in g.history if not r.accusation]
    if suspicions:
        lay.view(v, "previous")[list(suspicions[-1].clues)] = 1
        lay.view(v, "previous_smiles")[suspicions[-1].smiles] = 1
    v[lay["rounds"].start] = g.rounds / params.max_rounds
    if params.no_notes:
        return
    _write_notes(v, lay, g, suspicions)


def _write_counters(v: np.ndarray, lay: Layout, g: rules.LadyAliceState) -> None:
    """The evidence cards and counters of :func:`write_source`: each seat's own, and every seat's public rows."""
    evidence, left = lay.view(v, "own_evidence"), lay.view(v, "counters_left")
    for s in range(g.n):
        evidence[s, g.evidence[s]] = 1
        left[s] = np.array(g.left[s]) / rules.COUNTERS_PER_VALUE
    own = lay.view(v, "own_counters")
    face_down, revealed = lay.view(v, "face_down"), lay.view(v, "revealed")
    for clue, space in enumerate(g.counters):
        for owner, value, up in space:
            own[owner, clue, value] += 1 / rules.COUNTERS_PER_VALUE
            if up:
                revealed[owner, clue, value] += COUNT_SCALE
            else:
                face_down[owner, clue] += COUNT_SCALE


def _write_notes(v: np.ndarray, lay: Layout, g: rules.LadyAliceState, suspicions: list[Any]) -> None:
    """The notes of :func:`write_source` (the game's history of suspicions and accusations, unless ``no_notes``)."""
    hist_s, hist_a = lay.view(v, "suspicions"), lay.view(v, "accusations")
    seats_s, seats_a = lay.view(v, "suspicion_seats"), lay.view(v, "accusation_seats")
    for i, r in enumerate(suspicions):
        seats_s[i, r.seat] = 1
        hist_s[i, np.array(r.clues)] = 1
        hist_s[i, C + r.smiles] = 1
    for i, r in enumerate(x for x in g.history if x.accusation):
        seats_a[i, r.seat] = 1
        if r.missing >= 0:
            hist_a[i, r.missing] = 1
        hist_a[i, rules.NUM_CATEGORIES + np.array(r.clues)] = 1
        hist_a[i, rules.NUM_CATEGORIES + C + r.smiles] = 1


def source(state: rules.LadyAliceState, params: Params) -> np.ndarray:
    """A new source vector of ``state``, written from scratch."""
    return written(source_layout(params.max_rounds).size, lambda vector: write_source(state, params, vector))


@cache
def _gather(max_rounds: int, observer: int, n: int) -> np.ndarray:
    # The whole observation as one gather: the observer's head, then the public block as it lies in the source. Made
    # once per seat, table size and round count; read-only, as it is shared.
    src = source_layout(max_rounds)
    return read_only(
        np.concatenate((observation_gather(max_rounds, observer, n), np.arange(src[FIRST_PUBLIC].start, src.size)))
    )


def observe(state: rules.LadyAliceState, seat: int, params: Params) -> np.ndarray:
    """``seat``'s observation of ``state`` as a new ``float32`` vector of ``observation_layout(params.max_rounds)``."""
    return source(state, params)[_gather(params.max_rounds, seat, state.n)]
