"""Scripted opponents for Lady Alice. Each reads only its observation (decoded through the layout).

- ``lady_alice_heuristic``: rates each clue by the verdicts of the suspicions that named it (a covered clue is out,
  a clue in a suspicion with many smiles is promising); suspects the best-rated open clue of each category; puts a
  2 on its own evidence and 1s on well-rated clues; accuses only a suspicion whose verdict was full.
- ``lady_alice_expert``: a logician. It keeps the exact set of solutions consistent with its own card and every
  verdict (``parlour.envs.lady_alice.rules.consistent_solutions``; with 3 or 5 players each solution also fixes the
  hidden category) and so knows each clue's probability. It suspects the combination whose verdict splits that
  set best (the most expected information: the entropy of the smiles count), places counters by probability (2
  when sure, 1 when likely), bluffs with zeros on unlikely clues, and accuses as soon as every consistent solution
  agrees on the accusation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from parlour.baselines.base import FeatureReadout, Policy, choose_best
from parlour.baselines.features import Features
from parlour.baselines.spec import BenchmarkTable, GameSpec, Horizon
from parlour.envs.declaration import env_ids
from parlour.envs.lady_alice import GAME, rules
from parlour.envs.lady_alice.env import observation_layout
from parlour.envs.layout import keyword_for_size

GAMES = env_ids(GAME)
C, K, P = rules.NUM_CLUES, rules.NUM_CATEGORIES, rules.PER_CATEGORY


@cache
def rounds_for_size(size: int) -> int:
    """The ``max_rounds`` keyword of an observation of ``size`` values (the batched bots read it too)."""
    return keyword_for_size(observation_layout, size, range(1, 1001), GAMES[0])


def value_scores(p: float, sure: float) -> list[float]:
    """Scores of the counter values 0, 1, 2 for a clue of probability ``p``: 2 when at least ``sure``, 1 when
    likelier than not, else a zero (a decoy)."""
    want = 2 if p >= sure else 1 if p >= 0.5 else 0
    return [-abs(v - want) for v in rules.COUNTER_VALUES]


@dataclass
class View:
    """What a seat sees, decoded: its card, its counters, and the public verdicts."""

    n: int
    phase: int
    own: int
    left: list[int]
    own_counters: np.ndarray  # clue × value counts
    covered: np.ndarray
    partial: list[int]
    place_clue: int
    missing: int
    previous: tuple[int, ...] | None
    verdicts: list[tuple[tuple[int, ...], int]]
    suspicion_clues: np.ndarray  # suspicions × 4
    suspicion_smiles: np.ndarray
    open_space: np.ndarray  # clues where a counter may go (not covered, not full)


def decode(observation: np.ndarray) -> View:
    lay = observation_layout(rounds_for_size(len(observation)))

    def field(name: str) -> np.ndarray:  # a view, not a copy: bots call this for every decision
        return observation[lay.slices[name]].reshape(lay.by_name[name].shape)

    n = int(field("num_players").argmax()) + rules.MIN_PLAYERS
    sus = field("suspicions")
    sus = sus[sus[:, C:].any(axis=1)]  # the rows of suspicions made, in order
    clues = np.nonzero(sus[:, :C])[1].reshape(len(sus), K)  # four clues a suspicion
    smiles = sus[:, C:].argmax(axis=1)
    verdicts = [(tuple(row), k) for row, k in zip(clues.tolist(), smiles.tolist(), strict=True)]
    acc = field("accusations")
    for row in acc[acc[:, K + C :].any(axis=1)]:
        verdicts.append((tuple(np.flatnonzero(row[K : K + C]).tolist()), int(row[K + C :].argmax())))
    count = np.rint((field("face_down").sum(axis=0) + field("revealed").sum(axis=(0, 2))) * rules.MAX_PLAYERS)
    covered = field("covered") > 0
    partial, place, missing = field("partial"), field("place_clue"), field("accusation_missing")
    return View(
        n=n,
        phase=int(field("phase").argmax()),
        own=int(field("own_evidence").argmax()),
        left=np.rint(field("counters_left") * rules.COUNTERS_PER_VALUE).astype(int).tolist(),
        own_counters=np.rint(field("own_counters") * rules.COUNTERS_PER_VALUE).astype(int),
        covered=covered,
        partial=np.flatnonzero(partial).tolist(),
        place_clue=int(place.argmax()) if place.any() else -1,
        missing=int(missing.argmax()) if missing.any() else -1,
        previous=tuple(np.flatnonzero(field("previous")).tolist()) or None,
        verdicts=verdicts,
        suspicion_clues=clues,
        suspicion_smiles=smiles,
        open_space=~covered & (count < n),
    )


def _best(scores: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return choose_best(scores, mask, rng)


class LadyAliceHeuristic(Policy):
    name = "lady_alice_heuristic"
    games = GAMES

    def ratings(self, view: View) -> np.ndarray:
        """Mean share of smiles of the suspicions naming each clue (0.5 when never named; 0 when covered; 1 for
        the own card)."""
        total = np.bincount(view.suspicion_clues.ravel(), np.repeat(view.suspicion_smiles / K, K), minlength=C)
        seen = np.bincount(view.suspicion_clues.ravel(), minlength=C)
        rating = np.where(seen > 0, total / np.maximum(seen, 1), 0.5)
        rating[view.covered] = 0.0
        rating[view.own] = 1.0
        return rating

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode(observation)
        rating = self.ratings(view)
        scores = np.full(len(action_mask), -np.inf)
        if view.phase in (rules.SUSPECT, rules.ACCUSING):
            if view.phase == rules.ACCUSING and view.n == 3 and view.missing < 0:
                lows = [rating[k * P : (k + 1) * P].max() for k in range(K)]
                scores[rules.MISSING_BASE : rules.NUM_ACTIONS] = -np.array(lows)
            else:
                scores[:C] = rating
            return _best(scores, action_mask, rng)
        if view.phase == rules.PLACE:
            scores[rules.VALUE_BASE : rules.PASS] = value_scores(rating[view.place_clue], sure=0.99)
            return _best(scores, action_mask, rng)
        # Deductions: accuse a full verdict, else a counter on the own card or a promising clue, else pass.
        need = rules.smiles_needed(view.n)
        for clues, smiles in view.verdicts:
            if smiles == need and len(clues) == K and view.n != 3 and action_mask[rules.ACCUSE]:
                return rules.ACCUSE
        mine = view.own_counters.sum(axis=1) > 0
        candidates = np.flatnonzero(view.open_space & ~mine & (rating >= 0.5))
        if len(candidates) and sum(view.left[1:]) and action_mask[candidates].any():
            scores[candidates] = rating[candidates]
            return _best(scores, action_mask, rng)
        return rules.PASS


def solution_probabilities(view: View) -> tuple[np.ndarray, np.ndarray]:
    """The consistent solutions as rows of clue membership (solutions × 32) and each clue's probability of being
    in the solution (all consistent solutions are equally likely)."""
    member = rules.membership(view.n)[rules.consistent_mask(view.n, view.own, view.verdicts)]
    return member, member.mean(axis=0)


class LadyAliceExpert(Policy):
    name = "lady_alice_expert"
    games = GAMES

    #: Solutions sampled to score suspicions when more are consistent.
    max_worlds = 1500
    #: Chance of a bluff (a zero on an unlikely clue) on a Deductions turn with nothing better to do.
    bluff_rate = 0.25

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        view = decode(observation)
        member, prob = solution_probabilities(view)
        scores = np.full(len(action_mask), -np.inf)
        if view.phase == rules.SUSPECT:
            return self._suspect(view, member, action_mask, rng)
        if view.phase == rules.ACCUSING:
            target = self.accusation(view, member)
            if view.n == 3 and view.missing < 0:
                missing = target[0] if target else int(np.argmin([prob[k * P : (k + 1) * P].sum() for k in range(K)]))
                return rules.MISSING_BASE + missing
            scores[:C] = prob
            if target:
                scores[list(target[1])] += 10.0
            return _best(scores, action_mask, rng)
        if view.phase == rules.PLACE:
            scores[rules.VALUE_BASE : rules.PASS] = value_scores(prob[view.place_clue], sure=0.95)
            return _best(scores, action_mask, rng)
        # Deductions.
        if self.accusation(view, member) is not None and action_mask[rules.ACCUSE]:
            return rules.ACCUSE
        mine = view.own_counters.sum(axis=1) > 0
        placeable = view.open_space & ~mine & action_mask[:C].astype(bool)
        if view.left[2] and (placeable & (prob >= 0.95)).any():
            scores[:C] = np.where(placeable & (prob >= 0.95), prob, -np.inf)
            return _best(scores, action_mask, rng)
        if view.left[1] and (placeable & (prob >= 0.5)).any():
            scores[:C] = np.where(placeable & (prob >= 0.5), prob, -np.inf)
            return _best(scores, action_mask, rng)
        if view.left[0] and (placeable & (prob <= 0.15)).any() and rng.random() < self.bluff_rate:
            scores[:C] = np.where(placeable & (prob <= 0.15), -prob, -np.inf)
            return _best(scores, action_mask, rng)
        return rules.PASS

    def accusation(self, view: View, member: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
        """``(missing category, clues)`` when every consistent solution (rows of ``member``) agrees on a winning
        accusation."""
        if len(member) == 0:
            return None
        blocks = [member[:, k * P : (k + 1) * P] for k in range(K)]
        sure = [np.flatnonzero(b.all(axis=0)) for b in blocks]  # clues in every consistent solution
        if view.n == 3:
            never = [k for k in range(K) if not blocks[k].any()]  # a category no consistent solution uses
            if len(never) == 1 and all(len(sure[k]) for k in range(K) if k != never[0]):
                missing = never[0]
                return missing, tuple(k * P + int(sure[k][0]) for k in range(K) if k != missing)
            return None
        if all(len(x) for x in sure):
            return -1, tuple(k * P + int(sure[k][0]) for k in range(K))
        return None

    def _suspect(self, view: View, member: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        """The next clue of the suspicion whose verdict is most informative, given the clues already chosen."""
        k0 = len(view.partial)
        scores = np.full(len(mask), -np.inf)
        scores[k0 * P : (k0 + 1) * P] = suspicion_information(view, member, self.max_worlds, rng)
        return _best(scores, mask, rng)


def suspicion_information(view: View, member: np.ndarray, max_worlds: int, rng: np.random.Generator) -> np.ndarray:
    """For each clue of the suspicion's next category (8 values): the entropy, in nats, of the verdict (how many
    smiles) of the best suspicion that starts with the clues already chosen and this one, over the consistent
    solutions (rows of ``member``; a sample of ``max_worlds`` of them when more are consistent)."""
    if len(member) > max_worlds:
        member = member[rng.choice(len(member), max_worlds, replace=False)]
    k0 = len(view.partial)
    base = member[:, view.partial].sum(axis=1) if view.partial else np.zeros(len(member), int)
    # Smiles for every completion of the remaining categories: worlds × 8^(4 - k0).
    smiles = base[:, None].astype(np.int16)
    for k in range(k0, K):
        block = member[:, k * P : (k + 1) * P].astype(np.int16)
        smiles = (smiles[:, :, None] + block[:, None, :]).reshape(len(member), -1)
    counts = np.stack([(smiles == s).sum(axis=0) for s in range(rules.MAX_PLAYERS + 1)])
    p = counts / max(1, len(member))
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(np.where(p > 0, p * np.log(p), 0.0)).sum(axis=0)
    return entropy.reshape(P, -1).max(axis=1)  # the best completion for each choice of the next clue


def belief_features(observation: np.ndarray) -> np.ndarray:
    """The exact posterior a seat's observation allows (the expert's inference, as numbers a network can take):
    each clue's probability of being in the solution (32), each category's probability of being the hidden one
    (4; non-zero only with 3 players), whether every consistent solution agrees on a winning accusation (1), and
    the share of all solutions still consistent, on a log scale (1)."""
    view = decode(observation)
    member, prob = solution_probabilities(view)
    if len(member) == 0:  # cannot happen in a real game (the true solution stays consistent); keep it finite
        return np.zeros(BELIEF_SIZE, np.float32)
    absent = np.array([1.0 - member[:, k * P : (k + 1) * P].any(axis=1).mean() for k in range(K)])
    certain = float(LadyAliceExpert().accusation(view, member) is not None)
    share = np.log(len(member)) / np.log(len(rules.membership(view.n)))
    return np.concatenate([prob, absent, [certain, share]]).astype(np.float32)


BELIEF_SIZE = C + K + 2


def inquiry_features(observation: np.ndarray) -> np.ndarray:
    """While a suspicion is being chosen, how informative each clue of its next category would be (the expert's
    suspicion scores, as a share of the most a verdict can tell): 32 values, zero outside that category and outside
    a suspicion. The worlds sampled when many solutions are consistent come from a fixed seed, so the values are a
    function of the observation alone."""
    view = decode(observation)
    out = np.zeros(C, np.float32)
    if view.phase != rules.SUSPECT:
        return out
    member, _ = solution_probabilities(view)
    if len(member) == 0:
        return out
    k0 = len(view.partial)
    info = suspicion_information(view, member, LadyAliceExpert.max_worlds, np.random.default_rng(INQUIRY_SEED))
    out[k0 * P : (k0 + 1) * P] = info / np.log(rules.MAX_PLAYERS + 1)
    return out


#: The fixed seed of the worlds :func:`inquiry_features` samples when more solutions are consistent.
INQUIRY_SEED = 0


class LadyAliceReadout(FeatureReadout):
    """Zero parameters: reads ``lady_alice_belief`` and ``lady_alice_inquiry`` and nothing else -- suspects the clue
    whose verdict tells most, accuses only when every consistent solution agrees (naming the likeliest clue of each
    category and the likeliest hidden category), and otherwise passes: the features score no counter, so it never
    places one."""

    name = "lady_alice_readout"
    games = GAMES
    features = ("lady_alice_belief", "lady_alice_inquiry")

    def scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        s = np.full(rules.NUM_ACTIONS, -np.inf)
        phase = decode(observation).phase
        if phase == rules.SUSPECT:
            s[:C] = inquiry_features(observation)
            return s
        belief = belief_features(observation)
        if phase == rules.DEDUCE:
            s[rules.PASS] = 0.0
            if belief[C + K] >= 0.5:  # every consistent solution agrees: a winning accusation
                s[rules.ACCUSE] = 1.0
        elif phase == rules.ACCUSING:
            s[:C] = belief[:C]
            s[rules.MISSING_BASE : rules.MISSING_BASE + K] = belief[C : C + K]
        return s


#: In the search bot's playouts: pass this often on a Deductions turn (else put a random counter down).
PLAYOUT_PASS = 0.8


def rollout_action(state: rules.LadyAliceState, u: float) -> int:
    """A fast playout policy on the rules state (for the search bot): random suspicions, mostly passing, an
    occasional random counter, never an accusation (a random one only gets its maker excluded)."""
    if state.phase == rules.DEDUCE:
        if u < PLAYOUT_PASS:
            return rules.PASS
        options = [c for c in range(C) if state.open[c]] if sum(state.left[state.current]) else []
        if not options:
            return rules.PASS
        return options[int((u - PLAYOUT_PASS) / (1 - PLAYOUT_PASS) * len(options))]
    legal = state.legal_actions()
    return legal[int(u * len(legal))]


def finish(state: rules.LadyAliceState) -> list[float] | None:
    """Score a playout at the horizon as the turn cap would."""
    return state.truncate()


#: Where the search bot's playouts stop in Lady Alice: about a round later, scored as at the turn cap.
HORIZON = Horizon(steps=12, finish=finish)

# ----------------------------------------------------------------------------------------------- the game's declaration
#: What ``parlour.baselines`` registers for this game (found by the game's name: nothing to list elsewhere).
SPEC = GameSpec(
    game=GAME,
    jax_bots="parlour.baselines.jax_bots.lady_alice",
    bots=(
        LadyAliceHeuristic,
        LadyAliceExpert,
        LadyAliceReadout,
    ),
    rollout_policy=rollout_action,
    rollout_horizon=HORIZON,
    features=(
        Features(
            "lady_alice_belief",
            GAMES,
            BELIEF_SIZE,
            belief_features,
            "the exact posterior over solutions the observation allows: clue and hidden-category probabilities, "
            "whether an accusation is certain, the log share of solutions left",
        ),
        Features(
            "lady_alice_inquiry",
            GAMES,
            C,
            inquiry_features,
            "while choosing a suspicion, how much each clue of its next category can tell (the expert's scores)",
        ),
    ),
    benchmark={"v1": BenchmarkTable(4, ("random", "lady_alice_heuristic", "lady_alice_expert"), 50)},
    # how often a policy's accusations are right, and made while another solution was possible (parlour accusations)
)
