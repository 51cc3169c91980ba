"""This Game Goes to Eleven (``goes_to_eleven_v0``): a shedding card game of making piles add up to 11.

Rules summary
-------------
72 cards: number cards 1–9, six **Eleven** and six **Quiet!** cards. Each player holds three cards and draws
back up to three after every card they play, while the draw pile lasts. On a turn a player puts one card on a
discard pile (several piles may be on the table) and the pile's value grows by the number. A pile that reaches
**exactly 11** with number cards is given by its player to another player of their choice, who collects it face
down. Going **over 11** is allowed only when every legal play would go over; the player then collects the pile.
A number may not go on the same number: it may **split** off a new pile instead. After a pile leaves the table
the next player may start a new pile with any card. An **Eleven** takes a pile straight to 11; before it is given
away every other player may answer it out of turn with a **Quiet!**, and then the Eleven's player collects it. A
Quiet! played on a normal turn resets a pile to 0. The game ends when the draw pile and every hand are empty; the
fewest collected cards wins, ties share the win. In the **Pick On Me** variant (``pick_on_me=True``) the holder
of the guitar pick collects every pile that reaches 11 and passes the pick to the left.

Usage
-----
>>> from parlour.envs import goes_to_eleven_v0
>>> env = goes_to_eleven_v0.env(num_players=4)
>>> env.reset(seed=0)

Agents ``player_0 … player_{n-1}`` (2–6), clockwise; ``player_0`` starts (``start_seat``).

Observation
-----------
``observe(agent)`` returns ``{"observation": Box(0, 1, ({observation_size},), float32), "action_mask": Box(0, 1, ({num_actions},), int8)}``
(with the default ``max_piles=12``; the pile fields and the play actions grow with ``max_piles``). The
observation keeps everything the player has seen, in a fixed-size encoding (not strict perfect recall: see the OpenSpiel bridge), the same size for every player count; seats are relative to
the observer. ``env.unwrapped.observation_dict(agent)`` decodes it into these named fields:

{observation_table}

What a seat knows of the hidden cards is its own hand and every card turned face up (``played``): the unseen
cards -- the other hands and the draw pile -- are exactly the deck minus those, in unknown places. Which seat
played which card is not kept: the piles, the counts and the collected stacks are what the rules act on.
``state()`` returns the full-information vector (every hand, the draw pile's composition and next card).

Actions
-------
``Discrete({num_actions})`` (``11 × (max_piles + 1) + 7``); the mask is all zeros for an agent that is not to act. Kinds
``k`` = 0–8 are the numbers 1–9, 9 the Eleven, 10 the Quiet!.

| Action | Meaning | Legal when |
|---|---|---|
| ``11 × j + k`` (j = 0–11) | play a card of kind ``k`` on the pile in slot ``j`` | your turn, per the rules |
| 132–142 (``11 × max_piles + k``) | play a card of kind ``k`` to start a new pile | your turn, when a new pile may be started |
| 143–147 | give the pile at 11 to the player 1–5 seats to your left | you made 11 and nobody answered |
| 148 | let the Eleven stand | another player's Eleven is being answered |
| 149 | answer the Eleven with a Quiet! | as 148, and you hold a Quiet! |

Rewards
-------
``reward="win"`` (default): at the end +1 to every seat with the fewest collected cards (a tie shares the win)
and −1 to every other seat. ``reward="cards"``: −0.1 per card a seat collects, when it collects them.
``reward="margin"``: as ``cards``, and every other seat gets +0.1/(n − 1) per card collected, so the rewards
sum to zero and a game's total is 0.1 × (the others' mean collected cards − one's own): dense, and pointing the
same way as winning. An illegal action raises ``ValueError`` unless ``illegal_action="penalize"``: then the
offender gets ``illegal_reward`` (default −1), the others 0, and the game ends (the offender's ``infos[agent][\"illegal_action\"]`` holds the action, the message and its legal actions; the other seats' outcome names only the offender). Every game ends by the rules (each
turn spends a card); if the driver's optional ``max_turns`` cap truncates one, every seat gets 0. Terminal
``infos[agent]["outcome"]`` holds the collected counts, the winners and the table left at the end.

Keywords
--------
``num_players`` (2–6, default 4); ``deck`` (11 counts for 1–9, Eleven, Quiet!; default
(7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6)); ``max_piles`` (1–40, default 12); ``pick_on_me`` (default False);
``start_seat`` (default 0); ``reward`` ("win", "cards", "margin"); ``illegal_action`` ("raise", "penalize");
``illegal_reward`` (default −1.0); ``max_turns`` (driver cap on turns, default None); ``render_mode`` (None or
"ansi").

Rulings
-------
From the project's rulings (``docs/rulings.md``), each a named constant in ``parlour.envs.goes_to_eleven.rules`` or a keyword:

- The 60 number cards are 7 each of 1–6 and 6 each of 7–9 (**choice**, ``DEFAULT_DECK`` / ``deck``).
- Set-up: a Quiet! or Eleven turned up as the first pile card is covered by the next card until a number is on
  top; the buried special cards count 0 (they are in the pile and in ``played``). The deal goes round from seat 0,
  whatever ``start_seat`` is (``start_seat`` only says who plays first). A custom ``deck`` whose number cards all
  went into the hands leaves no number to cover a special: then the last card turned up stays on top and the pile
  starts at 0, as a pile that a Quiet! starts, and play goes on as usual.
- Going over 11 is legal only when every legal play of the player would go over; the player adds the card and
  collects the pile.
- A number card may not go on a pile whose top card is the same number; it may start a new pile beside it (a
  split) at any time. Other new piles may be started only by the first player to play after a pile has left the
  table; with no pile on the table, a new pile must be started.
- At most ``max_piles`` piles (**choice**, default 12; random play can reach 19): at the limit no pile may be
  started, not even by a split, and a player then left with no legal play may put a number card on a pile whose
  top is the same number (going over only if every such play does).
- Eleven: the pile goes to 11; every other player who holds cards is then asked in turn, clockwise from the
  Eleven's player, whether to answer with a Quiet! (a seat without one can only let it stand, so being asked
  tells nobody what a seat holds); the first answer ends the asking and the Eleven's player collects the pile,
  the Quiet! included. Otherwise the Eleven's player gives the pile away. A Quiet! never answers a pile that
  reached 11 with number cards. An Eleven may start a new pile where a new pile is allowed.
- Quiet! on a normal turn sets a pile to 0 and play on it goes on; a Quiet! that starts a new pile starts it at 0.
- Whoever plays a card draws back up to three at once while the draw pile lasts (an answering Quiet! included),
  before giving a pile away.
- After a pile leaves the table, play goes on with the seat left of the player whose turn it was (an answer out
  of turn does not move the turn); players with empty hands are skipped.
- The game ends when the draw pile and every hand are empty; piles still on the table are not counted. Fewest
  collected cards wins; ties share the win.
- Pick On Me: the pick starts with the first player; when a pile reaches 11 (by numbers, or by an Eleven that
  nobody answers) the pick's holder collects it and passes the pick left. An answered Eleven is collected by its
  player and the pick stays.
- Piles keep their slot while on the table; a new pile takes the lowest free slot.

Version history
---------------
- v0: first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.core import document, env_factory
from parlour.envs.goes_to_eleven import GAME
from parlour.envs.goes_to_eleven.env import GoesToElevenEnv

raw_env = GoesToElevenEnv
env = env_factory(raw_env)
__doc__ = document(__doc__, raw_env)  # the observation table, generated from the layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (at the default player
#: count): the game's declaration's (:data:`parlour.envs.goes_to_eleven.GAME`).
VARIANTS: list[dict[str, Any]] = [dict(v) for v in GAME.variants]


__all__ = ["VARIANTS", "env", "raw_env"]
