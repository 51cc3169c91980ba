"""The 6 Suspects environment: encoding, decoding and drawing over the pure rules in ``rules.py``.

See :mod:`parlour.envs.six_suspects_v0` for the user-facing documentation.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from parlour.envs.core import ParlourEnv, build_options
from parlour.envs.layout import Field, Layout
from parlour.envs.six_suspects import rules as R

MAX_PLAYERS = 8
P = R.NUM_POSITIONS

OBSERVATION_LAYOUT = Layout(
    (
        Field("num_players", (7,), "one-hot: 2–8 players", ("players",)),
        Field("phase", (4,), "one-hot: peek, last turns, vote, over", ("phase",)),
        Field(
            "seen_cards",
            (P, R.NUM_CARDS),
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
        Field("last_peek", (MAX_PLAYERS, P), "public: one-hot of each seat's most recent peek", ("relative seat", "position")),
        Field(
            "turns_taken",
            (MAX_PLAYERS,),
            "public: turns each seat has taken this game ÷ (table_announcement_turns + 1)",
            ("relative seat",),
        ),
        Field("can_announce", (1,), "public: 1 once every player has taken at least four turns (and no announcement yet)"),
        Field(
            "announcer",
            (MAX_PLAYERS + 1,),
            "public: one-hot relative seat of the announcer; the last entry = the table announced at the turn cap",
            ("relative seat",),
        ),
        Field("to_act", (MAX_PLAYERS,), "public: one-hot relative seat whose decision it is", ("relative seat",)),
        Field("own_vote", (R.NUM_SUSPECTS,), "one-hot: this player's own vote", ("suspect",)),
        Field(
            "votes_revealed",
            (MAX_PLAYERS, R.NUM_SUSPECTS),
            "every seat's vote, shown once the game is over",
            ("relative seat", "suspect"),
        ),
        Field("match_scores", (MAX_PLAYERS,), "public: match points ÷ maximum games", ("relative seat",)),
        Field("games_played", (1,), "public: games finished in this match ÷ maximum games"),
    )
)

STATE_LAYOUT = Layout(
    (
        Field("num_players", (7,), "one-hot: 2–8 players"),
        Field("phase", (4,), "one-hot phase"),
        Field("layout", (P, R.NUM_CARDS), "one-hot: the true card at each position"),
        Field("seen", (MAX_PLAYERS, P), "which positions each seat has seen this game"),
        Field("peek_counts", (MAX_PLAYERS, P), "peeks per seat and position ÷ (table_announcement_turns + 1)"),
        Field("turns_taken", (MAX_PLAYERS,), "turns per seat ÷ (table_announcement_turns + 1)"),
        Field("announcer", (MAX_PLAYERS + 1,), "one-hot announcer seat; last entry = the table"),
        Field("to_act", (MAX_PLAYERS,), "one-hot seat to act"),
        Field("votes", (MAX_PLAYERS, R.NUM_SUSPECTS), "every vote cast so far"),
        Field("match_scores", (MAX_PLAYERS,), "match points ÷ maximum games"),
        Field("games_played", (1,), "games finished ÷ maximum games"),
    )
)


class SixSuspectsEnv(ParlourEnv[R.SixSuspectsState]):
    """PettingZoo AEC environment for 6 Suspects (see ``parlour.envs.six_suspects_v0``)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "six_suspects_v0",
        "is_parallelizable": False,
    }
    env_version = 0
    min_players = 2
    max_players = MAX_PLAYERS
    num_actions = R.NUM_ACTIONS
    observation_layout = OBSERVATION_LAYOUT
    state_layout = STATE_LAYOUT

    def __init__(
        self,
        num_players: int = 4,
        render_mode: str | None = None,
        *,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        max_turns: int | None = None,
        **rule_options: Any,
    ) -> None:
        self.rules_options: R.Options = build_options(
            R.Options, "six_suspects", {"num_players": num_players, **rule_options}
        )
        super().__init__(
            num_players,
            render_mode,
            illegal_action=illegal_action,
            illegal_reward=illegal_reward,
            max_turns=max_turns,
            options={k: v for k, v in vars(self.rules_options).items() if k != "num_players"}
            | {"plain_values": list(self.rules_options.plain_values)},
        )
        n = self.num_players
        self._turn_scale = 1.0 / (self.rules_options.table_announcement_turns + 1)
        self._game_scale = 1.0 / self.rules_options.max_games
        # rel[observer, seat] = seat's position relative to observer; used by the incremental encoder.
        self._rel = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n
        lay = OBSERVATION_LAYOUT
        self._rows = np.arange(n)
        self._peek_base = lay["peek_counts"].start + self._rel * P  # [observer, seat] -> start of that row
        self._last_base = lay["last_peek"].start + self._rel * P
        self._turn_idx = lay["turns_taken"].start + self._rel
        self._act_idx = lay["to_act"].start + self._rel
        self._obs = np.zeros((n, lay.size), np.float32)

    # ------------------------------------------------------------------------------------------ rules
    def _deal(self, rng: np.random.Generator) -> R.SixSuspectsState:
        return R.deal(self.rules_options, rng)

    def _resample_state(self, seat: int, rng: np.random.Generator) -> R.SixSuspectsState:
        g = self.game.clone()
        hidden = np.flatnonzero(~g.known_positions(seat))
        g.layout[hidden] = g.layout[hidden][rng.permutation(len(hidden))]
        if g.phase == R.VOTE:
            # Votes cast by others are hidden until everyone has voted.
            for s in range(g.n):
                if s != seat and g.votes[s] >= 0:
                    g.votes[s] = rng.integers(R.NUM_SUSPECTS)
        g.rng = np.random.default_rng(int(rng.integers(2**63 - 1)))  # the deals of later games
        return g

    # ------------------------------------------------------------------------------------------ encoding
    def _encode_observation(self, seat: int) -> np.ndarray:
        g = self.game
        n = g.n
        lay = OBSERVATION_LAYOUT
        v = np.zeros(lay.size, np.float32)
        v[lay["num_players"].start + n - 2] = 1
        v[lay["phase"].start + g.phase] = 1
        seen = lay.view(v, "seen_cards")
        known = g.known_positions(seat)
        for p in np.flatnonzero(known):
            seen[p, g.layout[p]] = 1
        order = [(seat + k) % n for k in range(n)]  # relative seat k -> absolute seat
        lay.view(v, "peek_counts")[:n] = g.peeks[order] * self._turn_scale
        last = lay.view(v, "last_peek")
        for k, s in enumerate(order):
            if g.last_peek[s] >= 0:
                last[k, g.last_peek[s]] = 1
        v[lay["turns_taken"]][:n] = g.turns_each[order] * self._turn_scale
        v[lay["can_announce"].start] = float(g.can_announce() and g.announcer == R.NO_ANNOUNCER)
        if g.announcer == R.TABLE:
            v[lay["announcer"].stop - 1] = 1
        elif g.announcer >= 0:
            v[lay["announcer"].start + (g.announcer - seat) % n] = 1
        if g.phase != R.OVER:
            v[lay["to_act"].start + (g.current - seat) % n] = 1
        if g.votes[seat] >= 0:
            v[lay["own_vote"].start + g.votes[seat]] = 1
        if g.phase == R.OVER:
            revealed = lay.view(v, "votes_revealed")
            for k, s in enumerate(order):
                revealed[k, g.votes[s]] = 1
        v[lay["match_scores"]][:n] = g.scores[order] * self._game_scale
        v[lay["games_played"].start] = g.game_index * self._game_scale
        return v

    def _on_new_state(self) -> None:
        for s in range(self.num_players):
            self._obs[s] = self._encode_observation(s)

    def _apply(self, action: int) -> np.ndarray | None:
        g = self.game
        seat = g.current
        phase, game_index, could_announce = g.phase, g.game_index, g.can_announce()
        rewards = g.apply(action)
        if g.phase != phase or g.game_index != game_index or action >= R.NUM_POSITIONS:
            self._on_new_state()  # phase changes, announcements and votes are rare: re-encode from scratch
            return rewards
        # A peek within the same phase: update every observer's vector in place (the hot path).
        obs, rows, lay = self._obs, self._rows, OBSERVATION_LAYOUT
        obs[rows, self._peek_base[:, seat] + action] += self._turn_scale
        obs[rows[:, None], self._last_base[:, seat][:, None] + np.arange(P)] = 0
        obs[rows, self._last_base[:, seat] + action] = 1
        obs[rows, self._turn_idx[:, seat]] += self._turn_scale
        obs[rows, self._act_idx[:, seat]] = 0
        obs[rows, self._act_idx[:, g.current]] = 1
        obs[seat, lay["seen_cards"].start + action * R.NUM_CARDS + g.layout[action]] = 1
        if g.can_announce() != could_announce:
            obs[:, lay["can_announce"].start] = 1
        return rewards

    def _observation(self, seat: int) -> np.ndarray:
        return self._obs[seat].copy()

    def _encode_state(self) -> np.ndarray:
        g = self.game
        n = g.n
        lay = STATE_LAYOUT
        v = np.zeros(lay.size, np.float32)
        v[lay["num_players"].start + n - 2] = 1
        v[lay["phase"].start + g.phase] = 1
        lay.view(v, "layout")[np.arange(P), g.layout] = 1
        lay.view(v, "seen")[:n] = g.seen
        lay.view(v, "peek_counts")[:n] = g.peeks * self._turn_scale
        v[lay["turns_taken"]][:n] = g.turns_each * self._turn_scale
        if g.announcer == R.TABLE:
            v[lay["announcer"].stop - 1] = 1
        elif g.announcer >= 0:
            v[lay["announcer"].start + g.announcer] = 1
        if g.phase != R.OVER:
            v[lay["to_act"].start + g.current] = 1
        votes = lay.view(v, "votes")
        for s in range(n):
            if g.votes[s] >= 0:
                votes[s, g.votes[s]] = 1
        v[lay["match_scores"]][:n] = g.scores * self._game_scale
        v[lay["games_played"].start] = g.game_index * self._game_scale
        return v

    # ------------------------------------------------------------------------------------------ views
    def decode_action(self, action: int) -> str:
        action = int(action)
        if 0 <= action < R.NUM_POSITIONS:
            return f"peek {R.position_name(action)}"
        if action == R.ANNOUNCE:
            return "announce"
        if R.VOTE_BASE <= action < R.NUM_ACTIONS:
            return f"vote {R.SUSPECTS[action - R.VOTE_BASE]}"
        raise ValueError(f"action {action} is out of range: expected an integer in [0, {R.NUM_ACTIONS - 1}]")

    def render_text(self, perspective: str | None = None) -> str:
        g = self.game
        seat = None if perspective is None else self._seat[perspective]
        names = self.rules_options.plain_values
        lines = [
            f"6 Suspects — game {min(g.game_index + 1, self.rules_options.max_games)}, "
            f"phase: {R.PHASE_NAMES[g.phase]}"
            + ("" if perspective is None else f" — as seen by {perspective}")
        ]
        lines.append("          " + " ".join(f"{s:>12}" for s in R.SUSPECTS))
        for r in range(R.NUM_ROWS):
            cells = []
            for c in range(R.NUM_SUSPECTS):
                p = r * R.NUM_SUSPECTS + c
                visible = seat is None or g.known_positions(seat)[p]
                cells.append(f"{R.card_name(int(g.layout[p]), names) if visible else "?":>12}")
            lines.append(f"{R.ROW_NAMES[r]:>9} " + " ".join(cells))
        for s in range(g.n):
            peeks = ", ".join(f"{R.position_name(p)}×{int(k)}" for p, k in enumerate(g.peeks[s]) if k)
            vote = ""
            if g.votes[s] >= 0 and (seat is None or seat == s or g.phase == R.OVER):
                vote = f"; vote: {R.SUSPECTS[g.votes[s]]}"
            elif g.votes[s] >= 0:
                vote = "; has voted"
            marks = (" (announced)" if g.announcer == s else "") + (
                " <- to act" if g.phase != R.OVER and g.current == s else ""
            )
            lines.append(
                f"player_{s}: turns {int(g.turns_each[s])}, score {int(g.scores[s])}{vote}{marks}; "
                f"peeks: {peeks or '-'}"
            )
        if g.announcer == R.TABLE:
            lines.append("The table announced (turn cap reached).")
        if g.phase == R.OVER and g.results:
            last = g.results[-1]
            lines.append(f"Culprit(s): {', '.join(last['culprits'])}; totals: {last['totals']}")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ audit & end
    def private_knowledge(self, agent: str) -> tuple[bytes, bytes]:
        g = self.game
        seat = self._seat[agent]
        known = g.known_positions(seat)
        votes_hidden = g.phase == R.VOTE
        known_votes = [int(g.votes[s]) if (s == seat or not votes_hidden) else -9 for s in range(g.n)]
        hidden_votes = [int(g.votes[s]) if (s != seat and votes_hidden) else -9 for s in range(g.n)]
        known_bytes = np.where(known, g.layout, -1).tobytes() + bytes(np.array(known_votes, np.int64))
        hidden_bytes = np.where(known, -1, g.layout).tobytes() + bytes(np.array(hidden_votes, np.int64))
        return known_bytes, hidden_bytes

    def outcome(self) -> dict[str, Any]:
        return self.game.outcome()

    def invariants(self) -> None:
        g = self.game
        assert sorted(int(x) for x in g.layout) == list(range(R.NUM_CARDS)), "the 12 cards are a permutation"
        announced = 1 if g.announcer >= 0 else 0
        assert int(g.peeks.sum()) == int(g.turns_each.sum()) - announced, "every turn but an announcement peeks"
        assert (g.seen == (g.peeks > 0)).all(), "a seat has seen exactly the positions it peeked at"
        assert g.turns_each.max() - g.turns_each.min() <= 1 or g.announcer != R.NO_ANNOUNCER
        assert g.turns_each.max() <= self.rules_options.table_announcement_turns + 1
        if g.phase == R.PEEK:
            assert g.announcer == R.NO_ANNOUNCER
        if g.phase in (R.PEEK, R.LAST_TURNS):
            assert (g.votes == -1).all(), "nobody votes before the vote"
        assert int(g.scores.sum()) <= g.game_index * g.n
        for s in range(g.n):
            assert np.array_equal(self._obs[s], self._encode_observation(s)), "incremental encoding drifted"
