"""Scripted opponents for 6 Suspects.

- ``six_suspects_heuristic``: peeks at cards it has not seen, estimates each column's total from what it has
  seen (Police excludes a column, the Diamond makes it 9½, unknown cards count at the average plain value,
  copying effects are ignored), announces once it has seen half the table, votes for the best estimate.
- ``six_suspects_expert``: keeps the set of card arrangements consistent with what it has seen (all of them when
  few cards are unknown, a uniform sample otherwise), resolves each one exactly, and so knows the probability that
  each suspect is a culprit. It peeks where the expected best-vote probability after the peek is highest (value
  of information), announces when it is confident or no peek would help, and votes for the likeliest culprit.
- ``six_suspects_oracle``: reads the true layout from the env. It exists only to measure what the hidden
  information is worth.
"""

from __future__ import annotations

from collections import OrderedDict
from math import factorial
from typing import TYPE_CHECKING, Any

import numpy as np

from parlour.baselines.base import FeatureReadout, Policy, choose_best
from parlour.baselines.features import Features
from parlour.baselines.spec import BenchmarkTable, GameSpec
from parlour.envs.declaration import env_ids
from parlour.envs.six_suspects import GAME, rules
from parlour.envs.six_suspects.env import OBSERVATION_LAYOUT

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv

GAMES = env_ids(GAME)
_SEEN = OBSERVATION_LAYOUT["seen_cards"]
_VOTES = slice(rules.VOTE_BASE, rules.NUM_ACTIONS)
_PEEKS = slice(0, rules.NUM_POSITIONS)


def known_cards(observation: np.ndarray) -> dict[int, int]:
    """Position -> card id for every card this seat has seen (decoded through the observation layout)."""
    seen = observation[_SEEN].reshape(rules.NUM_POSITIONS, rules.NUM_CARDS)
    rows = np.flatnonzero(seen.any(axis=1))
    return {int(p): int(seen[p].argmax()) for p in rows}


def _scores(values: np.ndarray, legal: np.ndarray, part: slice) -> np.ndarray:
    scores = np.full(rules.NUM_ACTIONS, -np.inf)
    scores[part] = values
    return np.where(legal.astype(bool), scores, -np.inf)


class SixSuspectsHeuristic(Policy):
    name = "six_suspects_heuristic"
    games = GAMES

    #: Announce once this many cards have been seen.
    announce_after_seen = 6

    def __init__(self, plain_values: tuple[int, ...] = rules.DEFAULT_PLAIN_VALUES) -> None:
        self.plain_values = plain_values

    def estimates(self, known: dict[int, int]) -> np.ndarray:
        unknown_value = float(np.mean(self.plain_values))
        totals = np.zeros(rules.NUM_SUSPECTS)
        for c in range(rules.NUM_SUSPECTS):
            cards = [known.get(c), known.get(c + rules.NUM_SUSPECTS)]
            if rules.POLICE in cards:
                totals[c] = -np.inf
            elif rules.DIAMOND in cards:
                totals[c] = 9.5
            else:
                for card in cards:
                    if card is None or card in (rules.TORCH_LEFT, rules.TORCH_RIGHT, rules.MIRROR):
                        totals[c] += unknown_value
                    elif card == rules.SWAP:
                        totals[c] += rules.SWAP_VALUE_HALVES / 2
                    else:
                        totals[c] += self.plain_values[card - rules.PLAIN_CARDS[0]]
        return totals

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        known = known_cards(observation)
        if action_mask[rules.VOTE_BASE]:
            return choose_best(_scores(self.estimates(known), action_mask, _VOTES), action_mask, rng)
        if action_mask[rules.ANNOUNCE] and len(known) >= self.announce_after_seen:
            return rules.ANNOUNCE
        unseen = np.array([0.0 if p in known else 1.0 for p in range(rules.NUM_POSITIONS)])
        return choose_best(_scores(unseen, action_mask, _PEEKS), action_mask, rng)


class SixSuspectsExpert(Policy):
    name = "six_suspects_expert"
    games = GAMES

    #: Enumerate every consistent arrangement when there are at most this many; sample this many otherwise.
    max_worlds = rules.MAX_WORLDS
    #: Announce when the likeliest culprit is at least this likely ...
    announce_confidence = 0.8
    #: ... or when no single peek is expected to raise that probability by more than this.
    min_peek_gain = 0.02

    def __init__(self, plain_values: tuple[int, ...] = rules.DEFAULT_PLAIN_VALUES) -> None:
        self.plain_values = plain_values
        self._cache: OrderedDict[tuple[tuple[int, int], ...], tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def worlds(self, known: dict[int, int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(layouts, culprits)``: consistent arrangements ``(W, 12)`` and their culprit sets ``(W, 6)``."""
        key = tuple(sorted(known.items()))
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        layouts = rules.consistent_layouts(known, rng, self.max_worlds)
        culprits = rules.culprits_many(layouts, self.plain_values)
        if factorial(rules.NUM_POSITIONS - len(known)) > self.max_worlds:
            # A sample: drawn afresh from this decision's rng, never reused, so that what the bot does in a game
            # does not depend on the games this instance played before (evaluations compose in any order).
            return layouts, culprits
        self._cache[key] = (layouts, culprits)
        if len(self._cache) > 256:
            self._cache.popitem(last=False)
        return layouts, culprits

    def peek_values(self, layouts: np.ndarray, culprits: np.ndarray) -> np.ndarray:
        """For each position, the expected probability of the best vote after peeking there."""
        onehot = np.zeros((len(layouts), rules.NUM_POSITIONS, rules.NUM_CARDS))
        np.put_along_axis(onehot, layouts[:, :, None], 1.0, axis=2)
        counts = np.einsum("wpk,wc->pkc", onehot, culprits.astype(float))
        return counts.max(axis=2).sum(axis=1) / len(layouts)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        known = known_cards(observation)
        layouts, culprits = self.worlds(known, rng)
        p_culprit = culprits.mean(axis=0)
        if action_mask[rules.VOTE_BASE]:
            return choose_best(_scores(p_culprit, action_mask, _VOTES), action_mask, rng)
        values = self.peek_values(layouts, culprits)
        best_now = float(p_culprit.max())
        if action_mask[rules.ANNOUNCE] and (
            best_now >= self.announce_confidence or float(values.max()) - best_now < self.min_peek_gain
        ):
            return rules.ANNOUNCE
        values[list(known)] -= 1.0  # a known card teaches nothing: peek elsewhere while anything is unknown
        return choose_best(_scores(values, action_mask, _PEEKS), action_mask, rng)


def belief_features(observation: np.ndarray) -> np.ndarray:
    """The expert's inference as numbers a network can take: each suspect's chance of being a culprit (6), the
    expected chance of the best vote after peeking at each position (12; a card already seen counts as the best
    vote now, since it teaches nothing), the best vote's chance now and the most a single peek is expected to add
    (2). Over every consistent arrangement, or a sample of the expert's size from a fixed seed when there are more,
    so the values are a function of the observation alone (at the rulebook's plain card values, as the expert's)."""
    known = known_cards(observation)
    layouts, culprits = _BELIEF_EXPERT.worlds(known, np.random.default_rng(BELIEF_SEED))
    p_culprit = culprits.mean(axis=0)
    best_now = float(p_culprit.max())
    values = _BELIEF_EXPERT.peek_values(layouts, culprits)
    values[list(known)] = best_now
    return np.concatenate([p_culprit, values, [best_now, float(values.max()) - best_now]]).astype(np.float32)


#: The fixed seed of the arrangements :func:`belief_features` samples when more are consistent.
BELIEF_SEED = 0
BELIEF_SIZE = rules.NUM_SUSPECTS + rules.NUM_POSITIONS + 2
_BELIEF_EXPERT = SixSuspectsExpert()  # its cache holds only enumerated (exact) arrangement sets


#: The readout announces once its likeliest culprit is this likely, or once no peek is expected to add anything.
READOUT_ANNOUNCE_AT = 0.8


class SixSuspectsReadout(FeatureReadout):
    """Zero parameters: reads ``six_suspects_belief`` and nothing else -- votes for the likeliest culprit, peeks
    where the expected gain is highest, announces once the best vote is :data:`READOUT_ANNOUNCE_AT` likely or no
    peek adds anything."""

    name = "six_suspects_readout"
    games = GAMES
    features = ("six_suspects_belief",)

    def scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        f = belief_features(observation)
        p_culprit, values = f[: rules.NUM_SUSPECTS], f[rules.NUM_SUSPECTS : rules.NUM_SUSPECTS + rules.NUM_POSITIONS]
        best_now, gain = float(f[-2]), float(f[-1])
        s = np.full(rules.NUM_ACTIONS, -np.inf)
        s[rules.VOTE_BASE :] = p_culprit
        if action_mask[rules.ANNOUNCE] and (best_now >= READOUT_ANNOUNCE_AT or gain <= 1e-9):
            s[rules.ANNOUNCE] = 1.0
        else:
            s[: rules.NUM_POSITIONS] = values
        return s


class SixSuspectsOracle(Policy):
    """Sees the true layout (an oracle: for measuring what hidden information is worth, not a fair opponent)."""

    name = "six_suspects_oracle"
    games = GAMES
    needs_env = True

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        raise TypeError("six_suspects_oracle reads the hidden state: call act_with_env(env, agent, rng)")

    def act_with_env(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> int:
        game = env.unwrapped.game
        mask = env.observe(agent)["action_mask"]
        if mask[rules.VOTE_BASE]:
            culprits = rules.resolve(game.layout, game.options.plain_values).culprits
            return rules.VOTE_BASE + int(culprits[rng.integers(len(culprits))])
        if mask[rules.ANNOUNCE]:
            return rules.ANNOUNCE
        return int(rng.integers(rules.NUM_POSITIONS))


# ----------------------------------------------------------------------------------------------- the game's declaration
#: What ``parlour.baselines`` registers for this game (found by the game's name: nothing to list elsewhere).
SPEC = GameSpec(
    game=GAME,
    jax_bots="parlour.baselines.jax_bots.six_suspects",
    bots=(
        SixSuspectsHeuristic,
        SixSuspectsExpert,
        SixSuspectsOracle,
        SixSuspectsReadout,
    ),
    rollout_policy=None,
    rollout_horizon=None,
    features=(
        Features(
            "six_suspects_belief",
            GAMES,
            BELIEF_SIZE,
            belief_features,
            "the expert's inference: each suspect's chance of being a culprit, the value of peeking at each position, "
            "the best vote's chance now and the most a peek is expected to add",
        ),
    ),
    benchmark={"v1": BenchmarkTable(4, ("random", "six_suspects_heuristic", "six_suspects_expert"), 200)},
)
