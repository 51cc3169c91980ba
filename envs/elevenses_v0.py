"""Elevenses: The Guilty Party (``elevenses_v0``): a tea party, a murder, and the constable on his way.

Rules summary
-------------
2–5 players, each a suspect in Mrs Lansdowne's murder. Each owns eleven Tea Party cards (their *back* shows whose
they are): eight lie face down in a *spread* at positions 2–9, three form the hand. Each has a secret Guest card (three
wanted items) and a Guilt card: Not Guilty, or the Murderer (with 2–4 players one more Guilt card lies, unseen, with
Mrs Lansdowne; with 5 players two of the five are Murderers). Each player has seen only their own Guilt card. Cubes
of suspicion start on the plates: 3 on the start player's, 2 on the next, 1 on every other and 1 on Mrs
Lansdowne's. A turn either **plays** a card face up to its position (2–9 take the face-down card there into the
hand; 1 and 10 have none; no number twice face up in a spread; another player's card may be played) and then does
its special action, or makes **one or two re-arrangements** (a hand card swapped, unseen, with a face-down card of
the spread). A guest whose three items are face up is revealed (+2 teaspoons) and its player may swap two plates
(cubes and all). Special actions: **1 Scones** add 2 cubes; **2 Salmon Canapés** add 1; **3 Biscuits** move up to 2
cubes; **4 Tarts** move 1; **5 Hors d'Oeuvres** look at another Guilt card (or Mrs Lansdowne's), then claim
"Murderer", "Not Guilty" -- truthfully or not -- or keep silent; **6 Tartlets / 7 Macaroons** everyone passes one
card left / right (never the 11; a player with nothing else slides the incoming card on, unseen); **8 Ham
Sandwiches** see another player's hand, take one card and give back another; **9 Cakes** another player sees your
hand, may take one and give one of theirs; **10 Cucumber Sandwiches** swap any two Guilt cards unseen; **11
Elevenses** (with six cards face up) ends the game. Then teaspoons are ranked (ties: the Elevenses player, then
clockwise from their left) and cubes taken from the Sugar Bowl by place (3/1 with 2 players, 3/1/0 with 3, 3/2/1/0
with 4–5) are placed clockwise from the Elevenses player. The most suspicious (all tied) are arrested. If a
Murderer is arrested, the least suspicious innocent still free wins (ties as for tea; Mrs Lansdowne loses ties);
otherwise the Murderer(s) win. Mrs Lansdowne can be arrested and can "win": then no player wins.

Usage
-----
>>> from parlour.envs import elevenses_v0
>>> env = elevenses_v0.env(num_players=4)
>>> env.reset(seed=0)

Agents ``player_0 … player_{n-1}`` (2–5), clockwise; ``player_0`` starts (``start_seat``).

Observation
-----------
``observe(agent)`` returns ``{"observation": Box(0, 1, ({observation_size},), float32), "action_mask": Box(0, 1, ({num_actions},), int8)}``.
The observation keeps everything the player has seen, in a fixed-size encoding (not strict perfect recall: see the OpenSpiel bridge); seats, backs, plates and Guilt cards are relative to the
observer (0 = itself, 1 = its left neighbour, …; plate and Guilt index 5 is Mrs Lansdowne's).
``env.unwrapped.observation_dict(agent)`` decodes it into these fields:

{observation_table}

What is hidden: the faces of cards in other hands and of face-down cards (one's own too, until one has put a
known card there), other players' Guests until revealed, the Guilt cards one has not seen, and the cards others
have chosen to pass. Card knowledge is *tracked*: a seat that saw a card (its hand, Ham Sandwiches, Cakes, a pass,
a player left holding only the 11) keeps knowing where it is while it can tell which card moved -- a card leaving
a hand that holds other cards of the same back is lost track of (with all of them), as a player at the table would.
Guilt knowledge follows the cards through Cucumber swaps, and so do the public claims and the record of who swapped
which card (a card moved off its swapper's own place is a tell). Who has seen whose hand is public too. ``state()`` returns the
full-information vector.

Actions
-------
``Discrete({num_actions})``; the mask is all zeros for an agent that is not to act. Every part of a choice is its own
decision for the seat that makes it (a cube: its plate; a move: from, then to; a swap: first, then second; Cakes:
the other player decides what to take and give; passing: each seat in turn from the card's player, clockwise,
nothing moving until all have chosen). Seats, backs, plates and Guilt cards are relative to the deciding seat.

| Action | Meaning | Legal when |
|---|---|---|
| 0–54 | the card ``11·b + (number − 1)`` with the back of the seat ``b`` places left | to play (turn), re-arrange, pass, take (Ham / Cakes, from the other hand) or give |
| 55–62 | face-down slot of positions 2–9 of your spread | re-arranging, after choosing the hand card |
| 63–68 | a plate: seat ``r`` places left (63 + r), Mrs Lansdowne (68) | adding, moving (from, to), swapping plates, late suspicion |
| 69–74 | a Guilt card, numbered like the plates | Hors d'Oeuvres (not your own), Cucumber Sandwiches |
| 75–78 | the player 1–4 places left | choosing the other player of Ham Sandwiches / Cakes |
| 79 | re-arrange | your turn, with a face-down card left |
| 80 | stop / decline | after one re-arrangement; Biscuits' moves; the plate swap; taking nothing |
| 81 / 82 / 83 | claim "Murderer" / claim "Not Guilty" / keep silent | after an Hors d'Oeuvres look |
| 84 | pass the turn | only when nothing else is legal (never, under the default rulings) |

Rewards
-------
At the end +1 to every winner and −1 to every other seat (Mrs Lansdowne's "win", or nobody left to win, gives
every seat −1). At the turn cap (``max_turns``, default 200 turns) the game is truncated (a PettingZoo
truncation) and every seat gets 0. An illegal action raises ``ValueError`` unless ``illegal_action="penalize"``:
then the offender gets ``illegal_reward`` (default −1), the others 0, and the game ends (the offender's ``infos[agent][\"illegal_action\"]`` holds the action, the message and its legal actions; the other seats' outcome names only the offender). Terminal
``infos[agent]["outcome"]`` holds the winners, teaspoons (``scores``), cubes per plate, the arrested, where the
Murderer card(s) lay, Mrs Lansdowne's win, the Elevenses player and every Guest card.

Keywords
--------
``num_players`` (2–5, default 4); ``max_turns`` (1–10000, default 200); ``start_seat`` (default 0);
``cubes_per_player`` (the Sugar Bowl, default 6; at most 30 in all, the cubes in the box); ``illegal_action`` ("raise", "penalize"); ``illegal_reward``
(default −1.0); ``render_mode`` (None or "ansi").

Rulings
-------
From the project's rulings (``docs/rulings.md``), each a named constant in ``parlour.envs.elevenses.rules`` or a keyword:

- The Guilt deck: (players) Not Guilty + 1 Murderer, the last card to Mrs Lansdowne; 3 + 2 with five players.
- The six Guest cards (**choice**, ``GUESTS``): 1-6-9, 2-7-10, 3-8-9, 4-6-10, 5-7-8, 1-4-5.
- The Sugar Bowl holds 6 cubes per player (``cubes_per_player``); a cube that should come from an empty bowl is not
  added.
- Card backs are public. A player never looks at their own Guilt card after set-up; Hors d'Oeuvres looks at
  another's or Mrs Lansdowne's; the claim after it is public and may be false.
- A player with nothing they may pass (only the 11) says so -- the whole table then knows their hand -- and slides
  the incoming card on unseen.
- Mrs Lansdowne (2–4 players) has a plate and a Guilt card but no agent; she can be arrested and can "win".
- The tea tie-break orders every place; with a short Sugar Bowl the higher place takes its cubes first. Arrested
  players lose; the least suspicious innocent is chosen among the innocents not arrested (none left: nobody wins);
  Mrs Lansdowne loses every such tie to a seated player.
- Turn cap (**choice**, ``max_turns``): 200 turns, then truncation with 0 for everyone.

Rulings of this project where the rulebook and the project's rulings are silent:

- ``REARRANGE_ELEVENSES``: the 11 may be re-arranged face down into its owner's spread ("never passed, swapped or
  stolen" is read as never leaving its owner). With it, a player always has a legal turn; with the other reading a
  player holding only the 11 before six cards are face up passes the turn (action 84).
- Scones and Salmon Canapés must add their cubes and Tarts must move its cube; Biscuits moves *up to* two, so the
  player may stop before each. A moved cube goes to a different plate.
- Ham Sandwiches: the player may take nothing; a card taken must be paid with a different card (not the 11), so a
  player with nothing but the 11 to give cannot take. Cakes likewise for the other player. The take is a decision
  even when only "take nothing" is legal, so that the table does not learn that a hand holds nothing but the 11.
- A turn's parts are in the rulebook's order: play, draw, reveal the guest and the optional plate swap, then the
  special action. The Elevenses card reveals no guest.

Version history
---------------
- v0: first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.core import document, env_factory
from parlour.envs.elevenses import GAME
from parlour.envs.elevenses.env import ElevensesEnv

raw_env = ElevensesEnv
env = env_factory(raw_env)
__doc__ = document(__doc__, raw_env)  # the observation table, generated from the layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (at the default player
#: count): the game's declaration's (:data:`parlour.envs.elevenses.GAME`).
VARIANTS: list[dict[str, Any]] = [dict(v) for v in GAME.variants]


__all__ = ["VARIANTS", "env", "raw_env"]
