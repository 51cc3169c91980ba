"""Scripted opponents for This Game Goes to Eleven. Each reads only its observation (decoded through the layout).

- ``goes_to_eleven_heuristic``: makes 11 when it can; otherwise plays where the pile it leaves is least tempting
  (a pile worth 2–10 can be finished by one number card, and the bigger it is the more it costs whoever
  receives it); keeps its Quiet! cards to answer Elevens and answers every Eleven it can; gives piles to the
  player with the fewest collected cards (the one closest to winning); goes over on the smallest pile.
- ``goes_to_eleven_expert``: counts cards. From the deck, its own hand and every card turned face up it knows
  how many of each kind are unseen, and so the chance (hypergeometric) that the next player holds a card that
  finishes each pile -- the number ``11 − value`` unless that is the pile's top card, or an Eleven -- and that
  somebody holds a Quiet! to answer an Eleven. It weighs each play by the cards it gives away or takes now,
  minus the expected cards it receives from the piles it leaves (the next player gives a finished pile to the
  player closest to winning, or to the pick's holder in Pick On Me), minus what spending an Eleven or a Quiet!
  is worth; it answers an Eleven when it would otherwise be the likely receiver or the pile is big.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from math import comb

import numpy as np

from parlour.baselines.base import Policy, choose_best
from parlour.baselines.spec import BenchmarkTable, GameSpec
from parlour.envs.declaration import env_ids
from parlour.envs.goes_to_eleven import GAME, rules
from parlour.envs.goes_to_eleven.env import observation_layout
from parlour.envs.layout import keyword_for_size

GAMES = env_ids(GAME)
K = rules.NUM_KINDS


@cache
def piles_for_size(size: int) -> int:
    """The ``max_piles`` keyword of an observation of ``size`` values (the batched bots read it too)."""
    return keyword_for_size(observation_layout, size, range(1, rules.MAX_PILES_LIMIT + 1), GAMES[0])


@dataclass
class View:
    """A seat's observation decoded into counts (seats relative to the observer: 0 = self, 1 = left, …)."""

    n: int
    max_piles: int
    phase: int
    hand: list[int]
    piles: dict[int, tuple[int, int, int]]  # slot -> (value, top kind, size), the piles at rest
    pending: int
    pending_size: int
    new_pile: bool
    collected: list[int]
    hand_size: list[int]
    draw: int
    played: list[int]
    deck: list[int]
    eleven_player: int
    pick: int
    pick_on_me: bool

    @property
    def unseen(self) -> list[int]:
        return [d - p - h for d, p, h in zip(self.deck, self.played, self.hand, strict=True)]

    def next_seat(self, after: int = 0) -> int:
        """The next relative seat after ``after`` that holds cards (``after`` itself if nobody else does)."""
        for k in range(1, self.n + 1):
            s = (after + k) % self.n
            if self.hand_size[s]:
                return s
        return after


def _counts(fractions: np.ndarray, scale: float | np.ndarray) -> list[int]:
    """Counts stored as fractions of ``scale``, rounded back (float32 arithmetic, half to even: as ``round`` of each
    float32 product, at one NumPy call for the field instead of one Python call per entry)."""
    return np.rint(np.asarray(fractions, np.float32) * np.asarray(scale, np.float32)).astype(int).tolist()


def decode(observation: np.ndarray) -> View:
    mp = piles_for_size(len(observation))
    d = observation_layout(mp).decode(observation)
    n = int(d["num_players"].argmax()) + 2
    deck = _counts(d["deck"], rules.MAX_KIND_COUNT)
    total = sum(deck)
    present = np.flatnonzero(d["pile_present"])
    values, tops = d["pile_value"][present].argmax(axis=1).tolist(), d["pile_top"][present].argmax(axis=1).tolist()
    sizes = _counts(d["pile_size"][present], total)
    piles = {int(j): (v, t, z) for j, v, t, z in zip(present.tolist(), values, tops, sizes, strict=True)}
    pending = int(d["pending"].argmax()) if d["pending"].any() else -1
    pending_size = piles.pop(pending)[2] if pending >= 0 else 0

    def seat(name: str) -> int:
        return int(d[name].argmax()) if d[name].any() else -1

    return View(
        n=n,
        max_piles=mp,
        phase=int(d["phase"].argmax()),
        hand=_counts(d["hand"], rules.HAND_SIZE),
        piles=piles,
        pending=pending,
        pending_size=pending_size,
        new_pile=bool(d["new_pile"][0]),
        collected=_counts(d["collected"][:n], total),
        hand_size=_counts(d["hand_size"][:n], rules.HAND_SIZE),
        draw=int(round(d["draw_size"][0] * total)),
        played=_counts(d["played"], np.asarray(deck)),
        deck=deck,
        eleven_player=seat("eleven_player"),
        pick=seat("pick_holder"),
        pick_on_me=bool(d["pick_on_me"][0]),
    )


def result_of(view: View, target: int, kind: int) -> tuple[int, int, int]:
    """``(value, top, size)`` of the pile after playing ``kind`` on slot ``target`` (``max_piles``: a new pile)."""
    value, _, size = view.piles.get(target, (0, -1, 0))
    if kind == rules.ELEVEN:
        value = rules.TARGET
    elif kind == rules.QUIET:
        value = 0
    else:
        value += kind + 1
    return value, kind, size + 1


def likely_receivers(view: View, maker: int) -> list[int]:
    """Who gets a pile finished by relative seat ``maker``: the pick's holder, or the closest to winning."""
    if view.pick_on_me:
        return [view.pick] if view.pick >= 0 else []
    others = [s for s in range(view.n) if s != maker]
    best = min(view.collected[s] for s in others)
    return [s for s in others if view.collected[s] == best]


def closest_to_winning(view: View, rng: np.random.Generator) -> int:
    """The other seat with the fewest collected cards (ties at random): the one to give a pile to."""
    others = list(range(1, view.n))
    best = min(view.collected[s] for s in others)
    ties = [s for s in others if view.collected[s] == best]
    return ties[int(rng.integers(len(ties)))]


def _scores_over_legal(mask: np.ndarray, score: dict[int, float]) -> np.ndarray:
    scores = np.full(len(mask), -np.inf)
    for a, s in score.items():
        scores[a] = s
    return scores


class GoesToElevenHeuristic(Policy):
    name = "goes_to_eleven_heuristic"
    games = GAMES

    #: How much spending a Quiet! on a normal turn costs (it is kept to answer Elevens).
    quiet_cost = 3.0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode(observation)
        legal = np.flatnonzero(action_mask)
        gb = rules.give_base(view.max_piles)
        if view.phase == rules.GIVE:
            return gb + closest_to_winning(view, rng) - 1
        if view.phase == rules.ANSWER:
            return (
                rules.quiet_action(view.max_piles) if action_mask[rules.quiet_action(view.max_piles)] else int(legal[0])
            )
        score: dict[int, float] = {}
        for a in legal:
            target, kind = divmod(int(a), K)
            value, _, size = result_of(view, target, kind)
            if value == rules.TARGET:
                mine = view.pick_on_me and view.pick == 0
                score[int(a)] = -size if mine else size
            elif value > rules.TARGET:
                score[int(a)] = -2.0 * size
            else:
                easy = 2 <= value <= 10  # one number card finishes it
                score[int(a)] = -0.5 * size * easy - (self.quiet_cost if kind == rules.QUIET else 0.0)
        return choose_best(_scores_over_legal(action_mask, score), action_mask, rng)


def p_holds(unseen: list[int], hand: int, kinds: set[int]) -> float:
    """Chance that ``hand`` cards drawn from the unseen cards include one of ``kinds`` (hypergeometric)."""
    total = sum(unseen)
    if hand <= 0 or total <= 0 or not kinds:
        return 0.0
    hand = min(hand, total)
    without = total - sum(unseen[k] for k in kinds)
    return 1.0 - comb(without, hand) / comb(total, hand)


def finishers(value: int, top: int) -> set[int]:
    """The kinds that take a pile at rest to exactly 11 in one play."""
    need = rules.TARGET - value
    kinds = {rules.ELEVEN}
    if 1 <= need <= rules.NUM_NUMBERS and need - 1 != top:
        kinds.add(need - 1)
    return kinds


class GoesToElevenExpert(Policy):
    name = "goes_to_eleven_expert"
    games = GAMES

    #: What holding an Eleven or a Quiet! is worth in cards (spending one on a small pile wastes it).
    eleven_value = 2.0
    quiet_value = 2.0
    #: Answer an Eleven when not the likely receiver if the pile has at least this many cards.
    answer_size = 3

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode(observation)
        legal = np.flatnonzero(action_mask)
        mp = view.max_piles
        if view.phase == rules.GIVE:
            return rules.give_base(mp) + closest_to_winning(view, rng) - 1
        if view.phase == rules.ANSWER:
            quiet = rules.quiet_action(mp)
            if not action_mask[quiet]:
                return int(legal[0])
            receivers = likely_receivers(view, view.eleven_player)
            if 0 in receivers or view.pending_size + 1 >= self.answer_size:
                return quiet
            return rules.pass_action(mp)
        unseen = view.unseen
        nxt = view.next_seat(0)
        h_next = view.hand_size[nxt] if nxt != 0 else 0
        # Cards the next player would give to this seat from a finished pile: its share of the receivers.
        receivers = likely_receivers(view, nxt)
        my_share = (1.0 / len(receivers)) if 0 in receivers else 0.0
        others_cards = sum(view.hand_size[1:])
        p_answer = p_holds(unseen, others_cards, {rules.QUIET})
        i_hold_pick = view.pick_on_me and view.pick == 0
        risk = {j: p_holds(unseen, h_next, finishers(v, t)) * s * my_share for j, (v, t, s) in view.piles.items()}
        base_risk = sum(risk.values())
        score: dict[int, float] = {}
        for a in legal:
            target, kind = divmod(int(a), K)
            value, top, size = result_of(view, target, kind)
            after = base_risk - risk.get(target, 0.0)
            if value == rules.TARGET:
                gain = -size if i_hold_pick else float(size)
                if kind == rules.ELEVEN:
                    gain = (1 - p_answer) * gain - p_answer * (size + 1)
                s = gain
            elif value > rules.TARGET:
                s = -float(size)
            else:
                s = -p_holds(unseen, h_next, finishers(value, top)) * size * my_share
            s -= after
            if kind == rules.ELEVEN:
                s -= self.eleven_value
            elif kind == rules.QUIET:
                s -= self.quiet_value
            score[int(a)] = s
        return choose_best(_scores_over_legal(action_mask, score), action_mask, rng)


#: Share of playout decisions taken uniformly at random: playouts that always follow the rule of thumb are too
#: sure of what the others will do (measured: at a table of random bots the search won 0.25 with pure rules of
#: thumb and 0.50 with this mix; 0.575 against heuristic bots either way).
PLAYOUT_EXPLORE = 0.3


def rollout_action(state: rules.GoesToElevenState, u: float) -> int:
    """A fast playout policy on the rules state (for the search bot): mostly the rule of thumb -- make 11 when
    possible, give piles to the player with the fewest cards, answer every Eleven it can, never spend a special
    card idly, else at random -- and a uniformly random legal action ``PLAYOUT_EXPLORE`` of the time."""
    if u < PLAYOUT_EXPLORE:
        legal = state.legal_mask().nonzero()[0]
        return int(legal[int(u / PLAYOUT_EXPLORE * len(legal))])
    u = (u - PLAYOUT_EXPLORE) / (1 - PLAYOUT_EXPLORE)
    mp = state.options.max_piles
    if state.phase == rules.GIVE:
        me, n = state.current, state.n
        others = [(state.collected[s], (s - me) % n) for s in range(n) if s != me]
        return rules.give_base(mp) + min(others)[1] - 1
    if state.phase == rules.ANSWER:
        return rules.quiet_action(mp) if state.hands[state.current][rules.QUIET] else rules.pass_action(mp)
    legal = state.legal_mask().nonzero()[0]
    plain: list[int] = []
    for a in legal:
        target, kind = divmod(int(a), K)
        if kind < rules.NUM_NUMBERS:
            if target < mp and state.pile_value[target] + kind + 1 == rules.TARGET:
                return int(a)
            plain.append(int(a))
    choices = plain or [int(a) for a in legal]
    return choices[int(u * len(choices))]


# ----------------------------------------------------------------------------------------------- the game's declaration
#: What ``parlour.baselines`` registers for this game (found by the game's name: nothing to list elsewhere).
SPEC = GameSpec(
    game=GAME,
    jax_bots="parlour.baselines.jax_bots.goes_to_eleven",
    bots=(
        GoesToElevenHeuristic,
        GoesToElevenExpert,
    ),
    rollout_policy=rollout_action,
    rollout_horizon=None,
    benchmark={"v1": BenchmarkTable(4, ("random", "goes_to_eleven_heuristic", "goes_to_eleven_expert"), 100)},
)
