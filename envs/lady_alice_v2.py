"""Lady Alice (``lady_alice_v2``): a deduction game about Stanley's disappearance.

Rules summary
-------------
32 clues in four categories (Suspects, Places, Times, Objects; eight each). The evidence -- one clue of each
category with 4 players; with 5 a hidden category gives two; with 3 a hidden category gives none -- is dealt one
card to each player. Each turn has three phases. **Suspicions**: the notebook's holder names one clue of each
category (not the previous suspicion again, not only covered clues). **Verdict**: every player's folder shows a
smile if their evidence is among the four clues; the folders are shuffled, so only the number of smiles is known;
with no smile the four clues are covered by business cards. **Deductions**: from the holder's left, clockwise,
each player still in the game places one of their nine counters (values 0, 1, 2, three each) face down on an
uncovered clue -- turning face up the counters already there; a space holds at most as many counters as players
--, passes, or **accuses** (names the solution: with 3 players three clues and the category left out). The phase
ends when every player still in the game has passed in one unbroken sequence; the notebook then passes left. A
correct accusation (every folder smiling; four of five with 5 players) ends the game; a false one excludes the
accuser (their counters stay and they still show verdicts, but they neither suspect nor deduce). The last player
standing wins. Scoring (steps I–IX): counters of players still in the game on the solution's clues score their
value; +2 for a non-zero counter on every solution clue; +1 for having suspected the exact solution; +3 for the
correct accusation; with 5 players +2 for non-zero counters on both clues of the doubled category. Most points
wins; a tie goes to the correct accuser if tied, else is shared.

Usage
-----
>>> from parlour.envs import lady_alice_v2
>>> env = lady_alice_v2.env(num_players=4)
>>> env.reset(seed=0)

Agents ``player_0 … player_{n-1}`` (3–5), clockwise; ``player_0`` holds the notebook first (``start_seat``).
``env.unwrapped.consistent_solutions(agent)`` returns the solutions consistent with what ``agent`` knows (its
evidence and every verdict), all equally likely: its size measures how far the agent has deduced.

Observation
-----------
``observe(agent)`` returns ``{"observation": Box(0, 1, ({observation_size},), float32), "action_mask": Box(0, 1, ({num_actions},), int8)}``
(with the default ``max_rounds=40``; the history grows with it). The observation keeps everything the player has seen, in a fixed-size encoding (not strict perfect recall: see the OpenSpiel bridge);
seats are relative to the observer. ``env.unwrapped.observation_dict(agent)`` decodes it into these fields:

{observation_table}

What is hidden: the other players' evidence (so the solution and, with 3 or 5 players, the hidden category) and
the values of other players' face-down counters and of the counters in their hands. With ``no_notes=True`` (the
rulebook's "taking notes is forbidden") the two history fields stay empty: only the last suspicion and its verdict
are on the table. ``state()`` returns the full-information vector.

Actions
-------
``Discrete({num_actions})``; the mask is all zeros for an agent that is not to act. Multi-part choices are sequences of
decisions by the same seat: a suspicion is four clue actions (Suspect, Place, Time, Object); a counter is a clue
action, then a value action; an accusation is the accuse action, then (3 players) the category left out, then one
clue action per named category.

| Action | Meaning | Legal when |
|---|---|---|
| 0–31 | a clue (Suspects 0–7, Places 8–15, Times 16–23, Objects 24–31) | the next clue of a suspicion or accusation (that category); in Deductions, a clue to put a counter on (uncovered, not full, counters left) |
| 32–34 | the counter's value 0, 1, 2 | after choosing a clue for a counter, with such a counter left |
| 35 | pass | your Deductions turn |
| 36 | accuse | your Deductions turn |
| 37–40 | the accusation leaves out the Suspect / Place / Time / Object category | a three-player accusation, first |

Rewards
-------
``reward="win"`` (default): at the end +1 to every winner and −1 to every other seat. ``reward="score"``: each
seat's points (steps I–IX) at the end. At the round cap (``max_rounds``) the game ends scored without the
accusation bonus; winners are those with the most points. That end is part of the game, so it is a PettingZoo
**termination** (``outcome["capped"]`` says the cap ended it): a trainer must not add a bootstrapped value to a final
score. Only the driver's ``max_turns`` cuts a game unscored (every reward 0), as a truncation. An illegal action raises ``ValueError``
unless ``illegal_action="penalize"``: then the offender gets ``illegal_reward`` (default −1), the others 0, and the
game ends (the offender's ``infos[agent][\"illegal_action\"]`` holds the action, the message and its legal actions; the other seats' outcome names only the offender). Terminal ``infos[agent]["outcome"]`` holds the scores, the winners, the solution, everyone's evidence,
the hidden category, the accuser and the excluded players.

Keywords
--------
``num_players`` (3–5, default 4); ``max_rounds`` (1–1000, default 40); ``no_notes`` (default False);
``start_seat`` (default 0); ``reward`` ("win", "score"); ``illegal_action`` ("raise", "penalize");
``illegal_reward`` (default −1.0); ``max_turns`` (driver cap on suspicion rounds, default None); ``render_mode``
(None or "ansi").

Rulings
-------
From the project's rulings (``docs/rulings.md``), each a named constant in ``parlour.envs.lady_alice.rules`` or a keyword:

- The clue names: the eight suspects of the rulebook's cast; Waterloo Station and Place 2–8; 5 p.m., 7:00 and
  Time 3–8; compass and Object 2–8 (**choice**, ``CLUE_NAMES``: only the rulebook's examples are known).
- The evidence: one random clue of each category (4 players); with 5 one hidden random category gives two; with
  3 one hidden random category gives none; one evidence card is dealt to each player.
- A space holds at most as many counters as there are players; counters cannot go on a covered clue; placing a
  counter turns face up every counter already on that space.
- A suspicion may not repeat the previous suspicion nor consist only of covered clues (the mask also refuses a
  first clue that would leave no legal suspicion). A verdict shows only the number of smiles; with none, the four
  clues are covered (counters on them stay, covered) -- after an accusation too (the rulebook: "the accuser
  proceeds as in phase two"; ``ACCUSATION_COVERS``, keyword ``accusation_covers``).
- Accusations are made in the Deductions phase. With 3 players the accuser names the category left out and three
  clues; with 5, four clues, and four smiles succeed. A false accusation excludes the accuser, who still shows
  verdicts but neither suspects (the notebook skips them) nor deduces; it does not break the sequence of passes.
  If only one player remains, that player wins at once (the scores are still reported).
- The Deductions phase ends when every player still in the game has passed since the last counter was placed.
- Scoring: step VII needs a non-zero counter on every clue of the solution (all five with 5 players, the three with
  3); the five-player bonus needs non-zero counters on both clues of the doubled category; step VIII's +1 goes,
  once, to each player whose suspicion showed as many smiles as a successful accusation needs; an excluded player
  keeps that point but cannot win. Ties: joint winners, unless the correct accuser is among them.
- Turn cap (**choice**, ``max_rounds``): after 40 suspicion rounds the game ends, scored without the accusation
  bonus; as it scores the game, it ends the episode as a termination (``CAP_SCORES``; RULINGS.md's general ruling:
  a cap that scores the game is a termination, one that leaves it unscored a truncation).
- Multi-part choices cannot be taken back: after the accuse action the accusation must be completed.

Version history
---------------
- v2: the round cap, which scores the game, ends the episode as a termination (v1 and v0 signalled it as a
  truncation, so trainers that honour the flag bootstrapped a value on top of the final score). The rules, the
  observations, the actions and the rewards are v1's; ``lady_alice_v1`` stays available (its policies were trained
  with the old signal).
- v1: a false accusation whose verdict shows zero smiles covers its clues, as a suspicion's does (the ruling
  above). Everything else is as in v0; ``lady_alice_v0`` stays available with the old rule.
- v0: first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.core import document, env_factory
from parlour.envs.lady_alice import GAME
from parlour.envs.lady_alice.env import LadyAliceEnv

raw_env = LadyAliceEnv
env = env_factory(raw_env)
__doc__ = document(__doc__, raw_env)  # the observation table, generated from the layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (at the default player
#: count): the game's declaration's (:data:`parlour.envs.lady_alice.GAME`).
VARIANTS: list[dict[str, Any]] = [dict(v) for v in GAME.variants]


__all__ = ["VARIANTS", "env", "raw_env"]
