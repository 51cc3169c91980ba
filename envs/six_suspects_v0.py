"""6 Suspects (``six_suspects_v0``): a deduction game of peeking at hidden evidence.

Rules summary
-------------
Six suspects (Albert … Francine) stand in a row with two face-down evidence cards under each (2 rows × 6
columns). On a turn a player peeks at any one card (its identity is private, *which* card was peeked is public).
Once every player has taken at least four turns, a player may instead **announce**; every other player then takes
one last peek, and all vote, hidden and simultaneously, for the suspect they believe guilty. The cards are
revealed: the **Swap** (worth 4) exchanges the cards to its left and right (same row); each **Torch** then copies
its left/right neighbour; the **Mirror** copies the other card of its column; a column with the **Diamond** (or a
copy) totals exactly 9½; a column with the **Police** card (or a copy) cannot be guilty. The highest column total
among the others is the culprit (ties: all tied suspects); every player who voted for a culprit scores 1.
The rulebook's "three games in a row" is the ``num_games`` keyword.

Usage
-----
>>> from parlour.envs import six_suspects_v0
>>> env = six_suspects_v0.env(num_players=4)
>>> env.reset(seed=0)

Agents ``player_0 … player_{n-1}`` (2–8), clockwise; ``player_0`` starts (``start_seat``).

Observation
-----------
``observe(agent)`` returns ``{"observation": Box(0, 1, ({observation_size},), float32), "action_mask": Box(0, 1, ({num_actions},), int8)}``.
The observation keeps everything the player has seen, in a fixed-size encoding (not strict perfect recall: see the OpenSpiel bridge), the same size for every player count; seats
are relative to the observer. ``env.unwrapped.observation_dict(agent)`` decodes it into these named fields:

{observation_table}

Previous games of a match are not in the observation: each game is a fresh shuffle, so they say nothing about
the current one (the match scores are kept). ``state()`` returns the full-information vector (``state_space``).

Actions
-------
``Discrete({num_actions})``; the mask is all zeros for an agent that is not to act.

| Action | Meaning | Legal when |
|---|---|---|
| 0–5 | peek at the top card of Albert … Francine | your turn (not during the vote) |
| 6–11 | peek at the bottom card of Albert … Francine | your turn (not during the vote) |
| 12 | announce | your normal turn, once every player has taken four turns |
| 13–18 | vote for Albert … Francine | the vote |

Rewards
-------
``reward="vote"`` (default): when a game is resolved each seat gets +1 for a vote on a culprit, −1 otherwise (a
dense, symmetric signal that serves learning). ``reward="score"``: the rulebook's points, 1 or 0 per game.
``reward="win"``: at the end of the match +1 to each seat with the highest score and −1 to every other seat (0 to
all if nobody scored). ``reward="expected"``: when a game is resolved each seat gets ``2p − 1``, where ``p`` is the
probability that its vote is a culprit given only the cards *it* saw (uniform over the arrangements consistent with
them; exact when at most 720, else a fixed sample of 1,000 seeded by what it saw). That is the expectation of the
``vote`` reward given the seat's information, so it points learning the same way with far less variance; it uses
nothing the seat does not know. Evaluation always counts true wins. An illegal action raises ``ValueError`` unless ``illegal_action="penalize"``: then the
offender gets ``illegal_reward`` (default −1), the others 0, and the game ends (the offender's ``infos[agent][\"illegal_action\"]`` holds the action, the message and its legal actions; the other seats' outcome names only the offender). If the driver's optional
``max_turns`` cap truncates a game, every seat gets 0. Terminal ``infos[agent]["outcome"]`` holds the scores,
winners, every game's revealed layout, votes, totals and culprits.

Keywords
--------
``num_players`` (2–8, default 4); ``num_games`` (1–100, default 1); ``max_tiebreak_games`` (default 3);
``plain_values`` (six integers, default (0, 1, 2, 3, 5, 6)); ``table_announcement_turns`` (default 12);
``start_seat`` (default 0); ``rotate_start`` (default True); ``reward`` ("vote", "score", "win", "expected");
``illegal_action`` ("raise", "penalize"); ``illegal_reward`` (default −1.0); ``max_turns`` (driver cap on turns,
default None: the rules end every game); ``render_mode`` (None or "ansi").

Rulings
-------
From the project's rulings (``docs/rulings.md``), each a named constant in ``parlour.envs.six_suspects.rules`` or a keyword:

- Suspects left to right Albert, Beatrice, Charles, Denise, Edgar, Francine (Beatrice, Charles, Edgar are
  placeholders: ``SUSPECTS``). The plain cards are worth 0, 1, 2, 3, 5, 6 (**choice**, ``plain_values``).
- "Left"/"right" of a card is the neighbouring column in the same row, wrapping (Albert is right of Francine).
- Re-peeking is legal; which card was peeked is public.
- Announcing needs every player to have taken four turns (``ANNOUNCE_AFTER_TURNS``); it spends the announcer's
  turn; every other player takes exactly one more peek, clockwise from the announcer's left.
- The hidden vote is taken one seat at a time, clockwise from the seat left of the announcer; nobody's
  observation shows another's vote until all have voted (then all are revealed).
- Resolution: Swap first; then each Torch copies its neighbour on the swapped layout; then the Mirror copies the
  other card of its column. A Torch or Mirror copying the Swap is worth 4 and swaps nothing. A Torch copying the
  Mirror acts as a Mirror in its own column. A Mirror copying a Torch copies what the Torch became. A copying
  loop makes its cards worth 0 with no effect (**choice**, ``LOOP_VALUE_HALVES``); a card copying a looped card
  is worth 0 too. Diamond or a copy: the column totals 9½. Police or a copy: the column cannot be guilty.
- Turn cap (**choice**, ``table_announcement_turns``): if nobody has announced once every player has taken 12
  turns, the table announces and the vote follows at once.
- Matches (``num_games`` > 1): a tie for the top score plays one more game, at most ``max_tiebreak_games`` times
  (**choice**), then the tied players share the win; each game starts one seat further clockwise
  (``rotate_start``, **choice**). Nobody wins a match in which nobody scored.

Version history
---------------
- v0: first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.core import document, env_factory
from parlour.envs.six_suspects import GAME
from parlour.envs.six_suspects.env import SixSuspectsEnv

raw_env = SixSuspectsEnv
env = env_factory(raw_env)
__doc__ = document(__doc__, raw_env)  # the observation table, generated from the layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (at the default player
#: count): the game's declaration's (:data:`parlour.envs.six_suspects.GAME`).
VARIANTS: list[dict[str, Any]] = [dict(v) for v in GAME.variants]


__all__ = ["VARIANTS", "env", "raw_env"]
