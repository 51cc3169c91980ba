"""The 6 Suspects environment: incremental encoding, decoding and drawing over the pure rules in ``rules.py``.

The encoding itself -- the layouts and the one from-scratch writer -- is the game's pure observer
(:mod:`parlour.envs.six_suspects.observer`); this env keeps the observer's source vector up to date as actions are
played (``_apply``), and its fuzz invariants hold that incremental path to the observer at every step.

See :mod:`parlour.envs.six_suspects_v0` for the user-facing documentation.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import GameEnv, env_metadata
from parlour.envs.layout import Field, Layout, Source, state_from_source
from parlour.envs.six_suspects import GAME, rules
from parlour.envs.six_suspects.observer import (
    MAX_PLAYERS,
    OBSERVATION_LAYOUT,
    SOURCE_LAYOUT,
    P,
    Params,
    observation_gather,
    observe,
    write_source,
)

# The encoding's names stay importable from here (the JAX core, the bots and the tests read them from this module).
__all__ = [
    "MARK_ANNOUNCER",
    "MARK_LAST_PEEK",
    "MARK_PHASE",
    "MARK_TO_ACT",
    "MAX_PLAYERS",
    "OBSERVATION_LAYOUT",
    "SOURCE_LAYOUT",
    "STATE_LAYOUT",
    "P",
    "SixSuspectsEnv",
    "observation_gather",
]

#: The source vector's marker keys (:class:`~parlour.envs.layout.Source`): one-hot fields that move as the game does.
#: Small ints, the cheapest dict keys on this hot path; a seat's last peek is ``MARK_LAST_PEEK + seat``.
MARK_PHASE, MARK_TO_ACT, MARK_ANNOUNCER, MARK_LAST_PEEK = 0, 1, 2, 3

STATE_LAYOUT = Layout(
    (
        Field("num_players", (7,), "one-hot: 2–8 players"),
        Field("phase", (4,), "one-hot phase"),
        Field("layout", (P, rules.NUM_CARDS), "one-hot: the true card at each position"),
        Field("seen", (MAX_PLAYERS, P), "which positions each seat has seen this game"),
        Field("peek_counts", (MAX_PLAYERS, P), "peeks per seat and position ÷ (table_announcement_turns + 1)"),
        Field("turns_taken", (MAX_PLAYERS,), "turns per seat ÷ (table_announcement_turns + 1)"),
        Field("announcer", (MAX_PLAYERS + 1,), "one-hot announcer seat; last entry = the table"),
        Field("to_act", (MAX_PLAYERS,), "one-hot seat to act"),
        Field("votes", (MAX_PLAYERS, rules.NUM_SUSPECTS), "every vote cast so far"),
        Field("match_scores", (MAX_PLAYERS,), "match points ÷ maximum games"),
        Field("games_played", (1,), "games finished ÷ maximum games"),
    )
)


class SixSuspectsEnv(GameEnv[rules.SixSuspectsState]):
    """PettingZoo AEC environment for 6 Suspects (see ``parlour.envs.six_suspects_v0``)."""

    metadata: ClassVar[dict[str, Any]] = env_metadata("six_suspects_v0")
    declaration = GAME
    title = GAME.title
    options_class = rules.Options
    env_version = 0
    default_players = GAME.default_players
    min_players = GAME.min_players
    max_players = GAME.max_players
    num_actions = rules.NUM_ACTIONS
    observation_layout = OBSERVATION_LAYOUT
    state_layout = STATE_LAYOUT

    rules_options: rules.Options

    def _setup(self) -> None:
        n = self.num_players
        self._observer = Params.from_options(self.rules_options)
        self._turn_scale, self._game_scale = self._observer.turn_scale, self._observer.game_scale
        self._use_source(SOURCE_LAYOUT, [observation_gather(o, n) for o in range(n)])
        at = self.src.at
        self._i_peeks, self._i_last, self._i_turns, self._i_act = (
            at["peek_counts"],
            at["last_peek"],
            at["turns_taken"],
            at["to_act"],
        )
        self._i_can, self._i_seen, self._i_vote, self._i_phase = (
            at["can_announce"],
            at["seen_cards"],
            at["own_vote"],
            at["phase"],
        )
        self._i_announcer = at["announcer"]

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> rules.SixSuspectsState:
        return rules.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.SixSuspectsState:
        return rules.resample(self.game, seat, rng)

    # ------------------------------------------------------------------------------------------ encoding
    def _reference_observation(self, seat: int) -> np.ndarray:
        return observe(self.game, seat, self._observer)  # the game's one from-scratch writer

    def _write_source(self, src: Source) -> None:
        """The source from scratch (the observer's), and where its one-hot markers stand (the incremental path's)."""
        write_source(self.game, self._observer, src.vector)
        g, marks = self.game, src.marks
        marks[MARK_PHASE] = self._i_phase + g.phase
        if g.phase != rules.OVER:
            marks[MARK_TO_ACT] = self._i_act + g.current
        if g.phase == rules.PEEK and g.peek_phase_turns == 0:
            return  # a fresh deal: the observer shows no peek nor announcer yet
        for s_, p in enumerate(g.last_peek):
            if p >= 0:
                marks[MARK_LAST_PEEK + s_] = self._i_last + s_ * P + p
        if g.announcer == rules.TABLE:
            marks[MARK_ANNOUNCER] = self._i_announcer + MAX_PLAYERS
        elif g.announcer >= 0:
            marks[MARK_ANNOUNCER] = self._i_announcer + g.announcer

    def _apply(self, action: int) -> list[float] | None:
        # The rules play and note what moved; a handful of source entries follow (GameEnv's mechanism).
        g, src = self.game, self.src
        rewards = g.play(action)
        changes: list[tuple[Any, ...]] = g.changes  # type: ignore[assignment]
        m, marks = src.m, src.marks
        for change in changes:
            kind = change[0]
            if kind == "peek":
                _, seat, pos = change
                row = seat * P
                m[self._i_peeks + row + pos] = g.peeks[seat][pos] * self._turn_scale
                e, was = self._i_last + row + pos, marks.get(3 + seat, -1)  # the seat's last-peek marker, inline
                if was != e:
                    if was >= 0:
                        m[was] = 0.0
                    m[e] = 1.0
                    marks[MARK_LAST_PEEK + seat] = e
                m[self._i_turns + seat] = g.turns_each[seat] * self._turn_scale
                m[self._i_seen + (row + pos) * rules.NUM_CARDS + g.layout[pos]] = 1.0
            elif kind == "announce":
                seat = change[1]
                if seat == rules.TABLE:
                    src.move(MARK_ANNOUNCER, self._i_announcer + MAX_PLAYERS)
                else:
                    src.move(MARK_ANNOUNCER, self._i_announcer + seat)
                    m[self._i_turns + seat] = g.turns_each[seat] * self._turn_scale
            elif kind == "vote":
                seat = change[1]
                m[self._i_vote + seat * rules.NUM_SUSPECTS + g.votes[seat]] = 1.0
            elif kind == "phase":
                src.move(MARK_PHASE, self._i_phase + g.phase)
            elif g.phase == rules.OVER:  # "resolved", and the match is over: every card and vote is shown
                self._reveal()
                changes.clear()
                return rewards
            else:  # "resolved", and the match goes on with a new deal: everything afresh
                src.reset()
                self._write_source(src)
                changes.clear()
                return rewards
        e, was = self._i_act + g.current, marks[MARK_TO_ACT]
        m[was] = 0.0
        m[e] = 1.0
        marks[MARK_TO_ACT] = e
        m[self._i_can] = float(g.can_announce())
        changes.clear()
        return rewards

    def _reveal(self) -> None:
        g, src = self.game, self.src
        n = g.n
        src.move(MARK_PHASE, self._i_phase + rules.OVER)
        src.move(MARK_TO_ACT, -1)
        src.view("seen_cards")[:n, np.arange(P), g.layout] = 1
        src.view("votes_revealed")[np.arange(n), g.votes] = 1
        src.view("match_scores")[:n] = np.array(g.scores) * self._game_scale
        src.view("games_played")[0] = g.game_index * self._game_scale
        src.m[self._i_can] = 0.0

    def _encode_state(self) -> np.ndarray:
        g = self.game
        lay = STATE_LAYOUT
        # Everything public or per seat comes from the source (every seat's vote is its ``own_vote`` there).
        v = state_from_source(lay, SOURCE_LAYOUT, self.src.vector, g.n - 2, rename={"votes": "own_vote"})
        lay.view(v, "layout")[np.arange(P), g.layout] = 1
        lay.view(v, "seen")[: g.n] = np.array(g.seen)
        return v

    # ------------------------------------------------------------------------------------------ views
    def decode_action(self, action: int) -> str:
        action = int(action)
        if 0 <= action < rules.NUM_POSITIONS:
            return f"peek {rules.position_name(action)}"
        if action == rules.ANNOUNCE:
            return "announce"
        if rules.VOTE_BASE <= action < rules.NUM_ACTIONS:
            return f"vote {rules.SUSPECTS[action - rules.VOTE_BASE]}"
        raise ValueError(f"action {action} is out of range: expected an integer in [0, {rules.NUM_ACTIONS - 1}]")

    def render_text(self, perspective: str | None = None) -> str:
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        names = self.rules_options.plain_values
        lines = [
            f"6 Suspects — game {min(g.game_index + 1, self.rules_options.max_games)}, "
            f"phase: {rules.PHASE_NAMES[g.phase]}" + ("" if perspective is None else f" — as seen by {perspective}")
        ]
        lines.append("          " + " ".join(f"{s:>12}" for s in rules.SUSPECTS))
        for r in range(rules.NUM_ROWS):
            cells = []
            for c in range(rules.NUM_SUSPECTS):
                p = r * rules.NUM_SUSPECTS + c
                visible = seat is None or g.known_positions(seat)[p]
                cells.append(f"{rules.card_name(int(g.layout[p]), names) if visible else '?':>12}")
            lines.append(f"{rules.ROW_NAMES[r]:>9} " + " ".join(cells))
        for s in range(g.n):
            peeks = ", ".join(f"{rules.position_name(p)}×{int(k)}" for p, k in enumerate(g.peeks[s]) if k)
            vote = ""
            if g.votes[s] >= 0 and (seat is None or seat == s or g.phase == rules.OVER):
                vote = f"; vote: {rules.SUSPECTS[g.votes[s]]}"
            elif g.votes[s] >= 0:
                vote = "; has voted"
            marks = (" (announced)" if g.announcer == s else "") + (
                " <- to act" if g.phase != rules.OVER and g.current == s else ""
            )
            lines.append(
                f"player_{s}: turns {int(g.turns_each[s])}, score {int(g.scores[s])}{vote}{marks}; "
                f"peeks: {peeks or '-'}"
            )
        if g.announcer == rules.TABLE:
            lines.append("The table announced (turn cap reached).")
        if g.phase == rules.OVER and g.results:
            last = g.results[-1]
            lines.append(f"Culprit(s): {', '.join(last['culprits'])}; totals: {last['totals']}")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ audit & end
    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        g = self.game
        seat = self._seat[agent]
        known = g.known_positions(seat)
        votes_hidden = g.phase == rules.VOTE
        known_votes = [int(g.votes[s]) if (s == seat or not votes_hidden) else -9 for s in range(g.n)]
        hidden_votes = [int(g.votes[s]) if (s != seat and votes_hidden) else -9 for s in range(g.n)]
        cards = (
            [c if k else -9 for c, k in zip(g.layout, known, strict=False)],
            [-9 if k else c for c, k in zip(g.layout, known, strict=False)],
        )
        # Finished games of a match were revealed to everyone: they are known.
        revealed = [(r["layout"], r["votes"]) for r in g.results]
        return repr((cards[0], known_votes, revealed)).encode(), repr((cards[1], hidden_votes)).encode()

    def outcome(self) -> dict[str, Any]:
        return self.game.outcome()

    def invariants(self) -> None:
        g = self.game
        assert sorted(int(x) for x in g.layout) == list(range(rules.NUM_CARDS)), "the 12 cards are a permutation"
        announced = 1 if g.announcer >= 0 else 0
        peeks, turns = np.array(g.peeks), np.array(g.turns_each)
        assert int(peeks.sum()) == int(turns.sum()) - announced, "every turn but an announcement peeks"
        assert (np.array(g.seen) == (peeks > 0)).all(), "a seat has seen exactly the positions it peeked at"
        assert turns.max() - turns.min() <= 1 or g.announcer != rules.NO_ANNOUNCER, "turns go round the table"
        assert turns.max() <= self.rules_options.table_announcement_turns + 1
        if g.phase == rules.PEEK:
            assert g.announcer == rules.NO_ANNOUNCER
        if g.phase in (rules.PEEK, rules.LAST_TURNS):
            assert all(v == -1 for v in g.votes), "nobody votes before the vote"
        assert sum(g.scores) <= g.game_index * g.n
        for s in range(g.n):
            assert np.array_equal(self._incremental_observation(s), self._reference_observation(s)), (
                "incremental encoding drifted"
            )
