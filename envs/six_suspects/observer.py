"""The 6 Suspects observer: what each seat sees, written from the rules state alone.

This module defines the encoding (the observation layout, the source vector it is gathered from, and the gather)
and holds the game's one from-scratch writer: :func:`write_source` writes everything the source vector shows of a
rules state, and :func:`observe` hands out one seat's observation (that source gathered through
:func:`observation_gather`). Both are pure: they read the rules state and a small frozen :class:`Params` derived
from the rule options, and nothing else.

The env (:mod:`parlour.envs.six_suspects.env`) keeps the same source vector up to date incrementally as actions are
played, which is much faster; it writes its source here at every new deal, and its fuzz invariants hold each seat's
incremental observation to :func:`observe` at every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from parlour.envs.layout import Field, Layout, gather_index, one_hot_entries, read_only, relative_rows, written
from parlour.envs.six_suspects import GAME, rules

MAX_PLAYERS = GAME.max_players
P = rules.NUM_POSITIONS

OBSERVATION_LAYOUT = Layout(
    (
        Field("num_players", (7,), "one-hot: 2–8 players", ("players",)),
        Field("phase", (4,), "one-hot: peek, last turns, vote, over", ("phase",)),
        Field(
            "seen_cards",
            (P, rules.NUM_CARDS),
            "one-hot: the card this player has seen at each position (row 0 then row 1, Albert..Francine); "
            "card ids Swap, Torch Left, Torch Right, Mirror, Diamond, Police, then the plain cards in value order. "
            "Zero where unseen; every position once the game is over (all cards revealed)",
            ("position", "card"),
        ),
        Field(
            "peek_counts",
            (MAX_PLAYERS, P),
            "public: times each seat peeked at each position this game ÷ (table_announcement_turns + 1); "
            "seats relative to the observer (0 = self, 1 = left neighbour, …)",
            ("relative seat", "position"),
        ),
        Field(
            "last_peek",
            (MAX_PLAYERS, P),
            "public: one-hot of each seat's most recent peek",
            ("relative seat", "position"),
        ),
        Field(
            "turns_taken",
            (MAX_PLAYERS,),
            "public: turns each seat has taken this game ÷ (table_announcement_turns + 1)",
            ("relative seat",),
        ),
        Field(
            "can_announce",
            (1,),
            "public: 1 once every player has taken at least four turns (and no announcement yet)",
        ),
        Field(
            "announcer",
            (MAX_PLAYERS + 1,),
            "public: one-hot relative seat of the announcer; the last entry = the table announced at the turn cap",
            ("relative seat",),
        ),
        Field("to_act", (MAX_PLAYERS,), "public: one-hot relative seat whose decision it is", ("relative seat",)),
        Field("own_vote", (rules.NUM_SUSPECTS,), "one-hot: this player's own vote", ("suspect",)),
        Field(
            "votes_revealed",
            (MAX_PLAYERS, rules.NUM_SUSPECTS),
            "every seat's vote, shown once the game is over",
            ("relative seat", "suspect"),
        ),
        Field("match_scores", (MAX_PLAYERS,), "public: match points ÷ maximum games", ("relative seat",)),
        Field("games_played", (1,), "public: games finished in this match ÷ maximum games"),
    )
)

#: The internal source vector that observations are gathered from: public fields once, in absolute seats, and
#: private fields once per seat. A step updates a handful of its entries; ``observe`` is one gather.
SOURCE_LAYOUT = Layout(
    (
        Field("zero", (1,), "constant 0"),
        Field("one", (1,), "constant 1"),
        Field("phase", (4,), ""),
        Field("peek_counts", (MAX_PLAYERS, P), ""),
        Field("last_peek", (MAX_PLAYERS, P), ""),
        Field("turns_taken", (MAX_PLAYERS,), ""),
        Field("can_announce", (1,), ""),
        Field("announcer", (MAX_PLAYERS + 1,), ""),
        Field("to_act", (MAX_PLAYERS,), ""),
        Field("votes_revealed", (MAX_PLAYERS, rules.NUM_SUSPECTS), ""),
        Field("match_scores", (MAX_PLAYERS,), ""),
        Field("games_played", (1,), ""),
        Field("seen_cards", (MAX_PLAYERS, P, rules.NUM_CARDS), ""),
        Field("own_vote", (MAX_PLAYERS, rules.NUM_SUSPECTS), ""),
    )
)


def observation_gather(observer: int, n: int) -> np.ndarray:
    """For each observation entry of ``observer``, the source entry it is read from."""
    src = SOURCE_LAYOUT
    table = relative_rows(src, "announcer", MAX_PLAYERS, observer, n)
    return gather_index(
        OBSERVATION_LAYOUT,
        src,
        observer,
        n,
        relative=("peek_counts", "last_peek", "votes_revealed", "turns_taken", "to_act", "match_scores"),
        private={"seen_cards": "seen_cards", "own_vote": "own_vote"},
        special={
            "num_players": one_hot_entries(src, 7, n - 2),
            "announcer": np.append(table, src["announcer"].stop - 1),  # the last entry: the table announced
        },
    )


@dataclass(frozen=True)
class Params:
    """What the encoding takes from the rule options: the scales of the turn counts and of the match tallies."""

    turn_scale: float
    game_scale: float

    def __deepcopy__(self, memo: dict[int, Any]) -> Params:
        return self  # immutable: an env's deep copy (clone, resample_hidden) shares it, as it would a tuple

    @classmethod
    def from_options(cls, options: rules.Options) -> Params:
        return cls(turn_scale=1.0 / (options.table_announcement_turns + 1), game_scale=1.0 / options.max_games)


def write_source(state: rules.SixSuspectsState, params: Params, vector: np.ndarray) -> None:
    """Write everything the source shows of ``state`` into ``vector`` (a zeroed vector of :data:`SOURCE_LAYOUT`)."""
    g, lay, v = state, SOURCE_LAYOUT, vector
    n = g.n
    v[lay["one"].start] = 1
    v[lay["phase"].start + g.phase] = 1
    if g.phase != rules.OVER:
        v[lay["to_act"].start + g.current] = 1
    if g.game_index:  # zero before the first game of a match is resolved (most resets)
        lay.view(v, "match_scores")[:n] = np.array(g.scores) * params.game_scale
        lay.view(v, "games_played")[0] = g.game_index * params.game_scale
    if g.phase == rules.PEEK and g.peek_phase_turns == 0:
        return  # a fresh deal: nothing else to show yet
    v[lay["can_announce"].start] = float(g.can_announce())
    lay.view(v, "peek_counts")[:n] = np.array(g.peeks) * params.turn_scale
    last = lay.view(v, "last_peek")
    for s, p in enumerate(g.last_peek):
        if p >= 0:
            last[s, p] = 1
    lay.view(v, "turns_taken")[:n] = np.array(g.turns_each) * params.turn_scale
    if g.announcer == rules.TABLE:
        v[lay["announcer"].start + MAX_PLAYERS] = 1
    elif g.announcer >= 0:
        v[lay["announcer"].start + g.announcer] = 1
    seats, positions = np.nonzero([g.known_positions(s) for s in range(n)])
    lay.view(v, "seen_cards")[seats, positions, np.array(g.layout)[positions]] = 1
    own = lay.view(v, "own_vote")
    for s in range(n):
        if g.votes[s] >= 0:
            own[s, g.votes[s]] = 1
    if g.phase == rules.OVER:
        lay.view(v, "votes_revealed")[np.arange(n), g.votes] = 1


def source(state: rules.SixSuspectsState, params: Params) -> np.ndarray:
    """A new source vector of ``state``, written from scratch."""
    return written(SOURCE_LAYOUT.size, lambda vector: write_source(state, params, vector))


@cache
def _gather(observer: int, n: int) -> np.ndarray:
    # made once per seat and table size (the env makes its own at set-up); read-only, as it is shared
    return read_only(observation_gather(observer, n))


def observe(state: rules.SixSuspectsState, seat: int, params: Params) -> np.ndarray:
    """``seat``'s observation of ``state`` as a new ``float32`` vector of :data:`OBSERVATION_LAYOUT`."""
    return source(state, params)[_gather(seat, state.n)]
