"""The policy interface shared by scripted opponents, trained agents and oracles."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv


@dataclass(frozen=True)
class Table:
    """What a policy must match to sit at a table: the game, its version, the player count, the rule keywords and the
    shapes the network reads and writes. A trained policy's file records the table it was trained for (these same
    keys); :meth:`Policy.check_table` refuses a table that differs, before the first step."""

    env: str
    env_version: int
    num_players: int
    #: The rule keywords the env was made with (``num_players`` aside).
    options: dict[str, Any] = field(hash=False)
    observation_size: int
    num_actions: int

    @classmethod
    def of(cls, env: Any) -> Table:
        """The table of a made env (a ``ParlourEnv``)."""
        return cls(
            env=env.metadata["name"],
            env_version=int(env.env_version),
            num_players=int(env.num_players),
            options={k: v for k, v in env.make_kwargs.items() if k != "num_players"},
            observation_size=int(env.observation_layout.size),
            num_actions=int(env.num_actions),
        )

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Table:
        """The table a policy file's spec or a checkpoint's metadata records."""
        return cls(
            env=record["env"],
            env_version=int(record["env_version"]),
            num_players=int(record["num_players"]),
            options=dict(record.get("options", {})),
            observation_size=int(record["observation_size"]),
            num_actions=int(record["num_actions"]),
        )

    def as_dict(self) -> dict[str, Any]:
        """The table as a policy file's spec records it."""
        return asdict(self)


class Policy(ABC):
    """A player. It sees exactly what its seat sees: the observation vector and the action mask.

    ``act`` must return a legal action (one whose mask entry is 1). Every random choice comes from ``rng``.
    """

    #: Registry name.
    name: ClassVar[str] = "policy"
    #: Env ids the policy can play (``None``: any Parlour env).
    games: ClassVar[tuple[str, ...] | None] = None
    #: True for oracles, which read the hidden state through the env (``act_with_env``).
    needs_env: ClassVar[bool] = False

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        """Choose an action from what the seat sees."""

    def check_table(self, table: Table) -> None:
        """Refuse, before the first step, a table this policy cannot play. Bots check the game; trained policies
        check everything they were trained for."""
        if self.games is not None and table.env not in self.games:
            raise ValueError(f"policy {self.name} plays {list(self.games)}, not {table.env}")

    def act_with_env(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> int:
        """Choose with access to the env (oracles override this; others just observe)."""
        obs = env.observe(agent)
        return self.act(obs["observation"], obs["action_mask"], rng)

    def __repr__(self) -> str:
        return self.name


class RandomPolicy(Policy):
    """Uniform over the legal actions (any game)."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[rng.integers(len(legal))])


def choose_best(scores: np.ndarray, legal: np.ndarray, rng: np.random.Generator, tol: float = 1e-9) -> int:
    """The legal action with the highest score, ties broken uniformly at random."""
    s = np.where(legal.astype(bool), scores, -np.inf)
    best = np.flatnonzero(s >= s.max() - tol)
    return int(best[rng.integers(len(best))])


class FeatureReadout(Policy):
    """A zero-parameter policy that plays what a game's feature sets say (the distilled track's readout row: how
    far the expert's inference alone goes, with nothing learned). :meth:`scores` gives one score per action from
    the observation and mask -- ``-inf`` where the features say nothing -- and the legal action scored highest is
    played (ties at random); where they score no legal action, a legal action is drawn uniformly."""

    #: The feature sets it reads (``parlour.baselines.features``), for the docs and tables.
    features: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def scores(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """One score per action; ``-inf`` where the features say nothing."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        s = np.asarray(self.scores(observation, action_mask), float)
        scored = action_mask.astype(bool) & np.isfinite(s)
        if scored.any():
            return choose_best(s, scored, rng)
        legal = np.flatnonzero(action_mask)
        return int(legal[rng.integers(len(legal))])


#: The policy-spec prefix of a mixed table: ``mixed:A+B+C`` (:class:`MixedTable`).
MIXED_PREFIX = "mixed:"
#: Policy-spec prefixes of language agents (:mod:`parlour.baselines.language`): a model behind an OpenAI-compatible
#: endpoint, and a function ``prompt -> answer`` of your own.
CHAT_PREFIX = "chat:"
TEXT_PREFIX = "text:"


class MixedTable(Policy):
    """An opponent that is a table of several policies rather than one: in a matchup, the other seats are filled by
    ``members`` in turn, rotated by deal (:meth:`seated`), so over a deal set every member sits in every position
    relative to the evaluated seat equally often. Its spec is ``mixed:A+B+C`` (each member any policy spec).

    It is a held-out table for any policy trained with one draw filling the table (``opponent_draw: table``): no
    such policy has met bots of different kinds at one table. It does not act itself."""

    def __init__(self, members: list[Policy]) -> None:
        if len(members) < 2:
            raise ValueError(f"a mixed table needs at least two members, got {[m.name for m in members]}")
        if any(isinstance(m, MixedTable) for m in members):
            raise ValueError("a mixed table's members are players, not mixed tables")
        self.members = tuple(members)
        self.name = "mixed(" + "+".join(m.name for m in members) + ")"  # type: ignore[misc]
        self.needs_env = any(m.needs_env for m in members)  # type: ignore[misc]

    def seated(self, position: int, deal: int) -> Policy:
        """The member in the ``position``-th other seat (counted from the evaluated seat, in seat order) on the
        ``deal``-th deal of a set: member ``(position + deal) mod len(members)``."""
        return self.members[(position + deal) % len(self.members)]

    def check_table(self, table: Table) -> None:
        for m in self.members:
            m.check_table(table)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        raise TypeError(f"{self.name} is a table of players, not one player: seat its members (MixedTable.seated)")
