"""The This Game Goes to Eleven observer: what each seat sees, written from the rules state alone.

This module defines the encoding (the observation layout, the source vector it is gathered from, and the gather)
and holds the game's one from-scratch writer: :func:`write_source` writes everything the source vector shows of a
rules state, and :func:`observe` hands out one seat's observation (that source gathered through
:func:`observation_gather`). Both are pure: they read the rules state and a small frozen :class:`Params` derived
from the rule options, and nothing else.

The env (:mod:`parlour.envs.goes_to_eleven.env`) keeps the same source vector up to date incrementally as actions are
played, which is much faster; it writes its source here at every reset, and its fuzz invariants hold each seat's
incremental observation to :func:`observe` at every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from parlour.envs.goes_to_eleven import rules
from parlour.envs.layout import Field, Layout, gather_index, one_hot_entries, read_only, written

K = rules.NUM_KINDS
MAXP = rules.MAX_PLAYERS
VALUES = rules.TARGET + 1  # pile values 0–11 (11 only while a pile waits for an answer or a receiver)
#: Hand counts and hand sizes are scaled by this (a hand holds at most three cards).
THIRD = 1.0 / rules.HAND_SIZE


@cache
def observation_layout(max_piles: int = rules.DEFAULT_MAX_PILES) -> Layout:
    mp = max_piles
    return Layout(
        (
            Field("num_players", (MAXP - 1,), "one-hot: 2–6 players", ("players",)),
            Field("phase", (4,), "one-hot: play, give (a pile made 11), answer (an Eleven), over", ("phase",)),
            Field("hand", (K,), "own cards of each kind ÷ 3 (kinds 1–9, Eleven, Quiet!)", ("kind",)),
            Field("pile_present", (mp,), "public: 1 where a pile lies in the slot", ("slot",)),
            Field("pile_value", (mp, VALUES), "public: one-hot value of each pile (0–11)", ("slot", "value")),
            Field("pile_top", (mp, K), "public: one-hot kind of each pile's top card", ("slot", "kind")),
            Field("pile_size", (mp,), "public: cards in each pile ÷ cards in the deck", ("slot",)),
            Field(
                "pending",
                (mp,),
                "public: one-hot slot of the pile at 11 waiting for an answer or a receiver",
                ("slot",),
            ),
            Field(
                "new_pile", (1,), "public: a pile has just left the table (or none is on it): a new pile may be started"
            ),
            Field(
                "collected",
                (MAXP,),
                "public: cards each seat has collected ÷ cards in the deck; seats relative to the observer "
                "(0 = self, 1 = left neighbour, …)",
                ("relative seat",),
            ),
            Field("hand_size", (MAXP,), "public: cards in each seat's hand ÷ 3", ("relative seat",)),
            Field("draw_size", (1,), "public: cards left in the draw pile ÷ cards in the deck"),
            Field(
                "played",
                (K,),
                "public: cards of each kind turned face up so far (set-up, plays, answers) ÷ that kind's count in "
                "the deck",
                ("kind",),
            ),
            Field("to_act", (MAXP,), "public: one-hot relative seat whose decision it is", ("relative seat",)),
            Field(
                "eleven_player",
                (MAXP,),
                "public: one-hot relative seat that played the Eleven being answered",
                ("relative seat",),
            ),
            Field(
                "pick_holder",
                (MAXP,),
                "public: one-hot relative seat holding the guitar pick (Pick On Me; zero otherwise)",
                ("relative seat",),
            ),
            Field("pick_on_me", (1,), "1 when the Pick On Me variant is played"),
            Field(
                "deck",
                (K,),
                f"cards of each kind in the deck ÷ {rules.MAX_KIND_COUNT} (constant; lets a reader recover the counts)",
                ("kind",),
            ),
        )
    )


@cache
def source_layout(max_piles: int) -> Layout:
    """The internal vector observations are gathered from: public fields once (absolute seats), hands per seat."""
    names = {f.name: f for f in observation_layout(max_piles).fields if f.name not in ("num_players", "hand")}
    return Layout(
        (
            Field("zero", (1,), "constant 0"),
            Field("one", (1,), "constant 1"),
            *names.values(),
            Field("hands", (MAXP, K), "every seat's hand"),
        )
    )


def observation_gather(max_piles: int, observer: int, n: int) -> np.ndarray:
    """For each observation entry of ``observer``, the source entry it is read from."""
    src = source_layout(max_piles)
    return gather_index(
        observation_layout(max_piles),
        src,
        observer,
        n,
        relative=("collected", "hand_size", "to_act", "eleven_player", "pick_holder"),
        private={"hand": "hands"},
        special={"num_players": one_hot_entries(src, MAXP - 1, n - 2)},
    )


@dataclass(frozen=True)
class Params:
    """What the encoding takes from the rule options: the pile slots, the deck and its scales, the variant."""

    max_piles: int
    deck: tuple[int, ...]
    pick_on_me: bool
    #: 1 ÷ the cards in the deck (pile sizes, collected cards, the draw pile).
    deck_scale: float
    #: Per kind, 1 ÷ its count in the deck (0 for a kind the deck lacks): the cards of each kind played.
    kind_scale: tuple[float, ...]

    def __deepcopy__(self, memo: dict[int, Any]) -> Params:
        return self  # immutable: an env's deep copy (clone, resample_hidden) shares it, as it would a tuple

    @classmethod
    def from_options(cls, options: rules.Options) -> Params:
        deck = tuple(options.deck)
        return cls(
            max_piles=options.max_piles,
            deck=deck,
            pick_on_me=options.pick_on_me,
            deck_scale=1.0 / sum(deck),
            kind_scale=tuple(1.0 / c if c else 0.0 for c in deck),
        )


def _pile_fields(lay: Layout, v: np.ndarray, g: rules.GoesToElevenState, params: Params) -> None:
    """The piles, the draw pile, the cards played, the phase and the constants."""
    for j, top in enumerate(g.pile_top):
        if top >= 0:
            lay.view(v, "pile_present")[j] = 1
            lay.view(v, "pile_value")[j, g.pile_value[j]] = 1
            lay.view(v, "pile_top")[j, top] = 1
            lay.view(v, "pile_size")[j] = g.pile_size[j] * params.deck_scale
    if g.pending >= 0:
        lay.view(v, "pending")[g.pending] = 1
    lay.view(v, "new_pile")[0] = float(g.new_pile or not g.occupied)
    lay.view(v, "played")[:] = np.array(g.played) * params.kind_scale
    lay.view(v, "pick_on_me")[0] = float(params.pick_on_me)
    lay.view(v, "deck")[:] = np.array(params.deck) / rules.MAX_KIND_COUNT
    lay.view(v, "draw_size")[0] = len(g.draw) * params.deck_scale
    lay.view(v, "phase")[g.phase] = 1


def _seat_fields(lay: Layout, v: np.ndarray, g: rules.GoesToElevenState, params: Params) -> None:
    """The per-seat public fields, in absolute seats (the gather turns them to the observer's)."""
    n = g.n
    lay.view(v, "collected")[:n] = np.array(g.collected) * params.deck_scale
    lay.view(v, "hand_size")[:n] = np.array(g.hand_size) * THIRD
    for name, who in (("to_act", g.current_player), ("eleven_player", g.eleven_player), ("pick_holder", g.pick)):
        if who >= 0:
            lay.view(v, name)[who] = 1


def write_source(state: rules.GoesToElevenState, params: Params, vector: np.ndarray) -> None:
    """Write everything the source shows of ``state`` into ``vector`` (a zeroed vector of
    ``source_layout(params.max_piles)``)."""
    lay = source_layout(params.max_piles)
    vector[lay["one"].start] = 1
    _pile_fields(lay, vector, state, params)
    lay.view(vector, "hands")[: state.n] = np.array(state.hands) * THIRD
    _seat_fields(lay, vector, state, params)


def source(state: rules.GoesToElevenState, params: Params) -> np.ndarray:
    """A new source vector of ``state``, written from scratch."""
    return written(source_layout(params.max_piles).size, lambda vector: write_source(state, params, vector))


@cache
def _gather(max_piles: int, observer: int, n: int) -> np.ndarray:
    # made once per seat, table size and pile count (the env makes its own at set-up); read-only, as it is shared
    return read_only(observation_gather(max_piles, observer, n))


def observe(state: rules.GoesToElevenState, seat: int, params: Params) -> np.ndarray:
    """``seat``'s observation of ``state`` as a new ``float32`` vector of ``observation_layout(params.max_piles)``."""
    return source(state, params)[_gather(params.max_piles, seat, state.n)]
