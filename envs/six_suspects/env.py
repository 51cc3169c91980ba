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
        """The table as ``perspective`` knows it, in plain lines (``None``: the umpire's view, every card and vote).

        A seat's view holds everything its observation carries -- the cards it has seen, every seat's turns, peeks
        and last peek, the announcement, whose turn it is, its own vote, the match tallies -- and the public results
        of earlier games; never a card it has not seen nor another seat's vote before everyone has voted."""
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        lines = _header(g, self.rules_options, perspective)
        lines += _turn_lines(g, self.rules_options, seat)
        lines += _card_lines(g, seat)
        lines += _peek_lines(g, seat)
        lines += _vote_lines(g, seat)
        lines += _match_lines(g, self.rules_options)
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


# ----------------------------------------------------------------------------------------------- the text view
# render_text's parts: each takes the rules state and the viewing seat (``None``: the umpire) and returns lines.
_PHASE_HELP = (
    "each turn a player peeks at one face-down evidence card (or, once allowed, announces)",
    "after the announcement every other player takes one last peek",
    "each player in turn names the suspect they think is the culprit; the votes stay secret until everyone has voted",
    "the game is over: every card and vote is revealed",
)


def _times(k: int) -> str:
    return {1: "once", 2: "twice"}.get(k, f"{k} times")


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def _where(p: int) -> str:
    """A position as the rulebook would say it: ``Albert's top card``."""
    r, c = divmod(p, rules.NUM_SUSPECTS)
    return f"{rules.SUSPECTS[c]}'s {rules.ROW_NAMES[r]} card"


def _label(s: int, seat: int | None) -> str:
    return f"player_{s} (you)" if s == seat else f"player_{s}"


def _header(g: rules.SixSuspectsState, opts: rules.Options, perspective: str | None) -> list[str]:
    players = ", ".join(f"player_{s}" for s in range(g.n))
    if perspective is None:
        lines = ["6 Suspects — the umpire's view (every card and vote)", f"Players, clockwise: {players}."]
    else:
        lines = [
            f"6 Suspects — the table as {perspective} sees it",
            f"You are {perspective}. Players, clockwise: {players}.",
        ]
    number = g.game_index + (g.phase != rules.OVER)  # the game under way, or the last one played
    if opts.num_games == 1:
        lines.append("A single game.")
    else:
        game = f"Game {number} of a match of {opts.num_games} games (most points wins"
        game += f"; a tie plays on, at most {_plural(opts.max_tiebreak_games, 'more game')})."
        if number > opts.num_games:
            game += f" This is tie-break game {number - opts.num_games}."
        lines.append(game)
    lines.append(f"Phase: {rules.PHASE_NAMES[g.phase]} — {_PHASE_HELP[g.phase]}.")
    return lines


def _turn_lines(g: rules.SixSuspectsState, opts: rules.Options, seat: int | None) -> list[str]:
    """Whose turn it is, whether announcing is allowed, and the announcement."""
    lines = []
    if g.phase != rules.OVER:
        lines.append(
            f"It is your turn ({_label(g.current, None)})."
            if g.current == seat
            else f"It is player_{g.current}'s turn."
        )
    cap = opts.table_announcement_turns
    if g.phase == rules.PEEK:
        if g.can_announce():
            lines.append(f"Announcing is allowed: every player has taken at least {rules.ANNOUNCE_AFTER_TURNS} turns.")
        else:
            lines.append(
                f"Announcing is not allowed yet: every player must first take {rules.ANNOUNCE_AFTER_TURNS} turns."
            )
        lines.append(f"If nobody announces, the table announces once every player has taken {cap} turns.")
    if g.announcer == rules.TABLE:
        lines.append(f"Nobody announced: the table announced once every player had taken {cap} turns.")
    elif g.announcer >= 0:
        lines.append(f"{_label(g.announcer, seat)} announced.")
    return lines


def _card_lines(g: rules.SixSuspectsState, seat: int | None) -> list[str]:
    """The twelve evidence cards, suspect by suspect (a question mark for a card the seat has not seen)."""
    known = [True] * rules.NUM_POSITIONS if seat is None else g.known_positions(seat)
    names = g.options.plain_values
    if seat is None or g.phase == rules.OVER:
        lines = ["Evidence cards, under each suspect:"]
    else:
        lines = [
            f"Evidence cards, under each suspect (you have seen {sum(known)} of 12; a question mark is one you have not):"
        ]
    for c, suspect in enumerate(rules.SUSPECTS):
        top, bottom = (
            rules.card_name(int(g.layout[p]), names) if known[p] else "?" for p in (c, c + rules.NUM_SUSPECTS)
        )
        lines.append(f"{suspect}: top card {top}, bottom card {bottom}")
    return lines


def _peek_lines(g: rules.SixSuspectsState, seat: int | None) -> list[str]:
    """Every seat's turns, peeks and last peek this game: public (everyone sees where a player peeks)."""
    lines = ["Turns and peeks this game (everyone sees where a player peeks, not the card):"]
    for s in range(g.n):
        peeks = [f"{_where(p)} {_times(k)}" for p, k in enumerate(g.peeks[s]) if k]
        text = f"{_label(s, seat)}: {_plural(int(g.turns_each[s]), 'turn')}"
        if g.announcer == s:
            text += ", one of them the announcement"
        text += f"; peeked at {', '.join(peeks)}" if peeks else "; no peeks yet"
        if g.last_peek[s] >= 0:
            text += f"; last peek: {_where(g.last_peek[s])}"
        lines.append(text)
    return lines


def _vote_lines(g: rules.SixSuspectsState, seat: int | None) -> list[str]:
    """The votes: one's own (the umpire: all) while the vote goes on, every vote and the culprits at the end."""
    if g.phase == rules.VOTE:
        lines = ["Votes:"]
        for s in range(g.n):
            v = g.votes[s]
            if v < 0:
                lines.append(f"{_label(s, seat)} has not voted yet")
            elif seat is None or s == seat:
                lines.append(f"{_label(s, seat)} voted {rules.SUSPECTS[v]}")
            else:
                lines.append(f"{_label(s, seat)} has voted (secret until everyone has voted)")
        return lines
    if g.phase != rules.OVER or not g.results:
        return []
    last = g.results[-1]
    lines = ["Votes:"]
    lines += [
        f"{_label(s, seat)} voted {name} ({'right' if ok else 'wrong'})"
        for s, (name, ok) in enumerate(zip(last["votes"], last["right"], strict=True))
    ]
    return lines + _resolution_lines(last)


def _resolution_lines(result: dict[str, Any]) -> list[str]:
    culprits = result["culprits"]
    totals = ", ".join(f"{s} {_number(t)}" for s, t in zip(rules.SUSPECTS, result["totals"], strict=True))
    lines = [f"Culprit{'s' if len(culprits) > 1 else ''}: {', '.join(culprits)}"]
    lines.append(f"Evidence totals, once the Swap and the copies are applied: {totals}")
    if result["police"]:
        lines.append(f"Undercover police (cannot be the culprit): {', '.join(result['police'])}")
    return lines


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{int(x)}½"


def _match_lines(g: rules.SixSuspectsState, opts: rules.Options) -> list[str]:
    """In a match: every finished game's cards, culprits and votes (revealed to all), and the points."""
    if opts.num_games == 1:
        if g.phase == rules.OVER:
            return [f"Points (1 for a right vote): {', '.join(f'player_{s} {p}' for s, p in enumerate(g.scores))}"]
        return []
    lines = []
    names = opts.plain_values
    for r in g.results:
        k = r["game"] + 1
        cards = "; ".join(
            f"{s} {rules.card_name(r['layout'][c], names)} and {rules.card_name(r['layout'][c + rules.NUM_SUSPECTS], names)}"
            for c, s in enumerate(rules.SUSPECTS)
        )
        votes = ", ".join(
            f"player_{s} {v} ({'right' if ok else 'wrong'})"
            for s, (v, ok) in enumerate(zip(r["votes"], r["right"], strict=True))
        )
        lines.append(
            f"Game {k}: culprit{'s' if len(r['culprits']) > 1 else ''} {', '.join(r['culprits'])}; votes: {votes}"
        )
        lines.append(f"The cards of game {k} (top and bottom card under each suspect): {cards}")
    lines.append(
        f"Match points after {_plural(g.game_index, 'game')} (1 per right vote): "
        + ", ".join(f"player_{s} {p}" for s, p in enumerate(g.scores))
    )
    if g.phase == rules.OVER:
        winners = g.winners()
        lines.append(
            f"Match winner{'s' if len(winners) > 1 else ''}: {', '.join(f'player_{s}' for s in winners)}"
            if winners
            else "Nobody scored: nobody wins the match."
        )
    return lines
