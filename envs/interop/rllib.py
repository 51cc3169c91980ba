"""Ray RLlib's multi-agent path: :class:`RLlibEnv` (a ``MultiAgentEnv``) and :class:`MaskedPPOTorchRLModule`.

>>> from ray.rllib.algorithms.ppo import PPOConfig
>>> from parlour.envs.interop.rllib import RLlibEnv, ppo_module_spec
>>> config = (PPOConfig().environment(RLlibEnv, env_config={"env": "six_suspects_v0"})
...           .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent, episode, **kw: "shared")
...           .rl_module(rl_module_spec=ppo_module_spec([256, 256], "relu")))

What the plain ``PettingZooEnv`` wrapper lacks, and what this adapter does instead:

- **Observations** are ``Dict(observations=Box, action_mask=Box(float32))``: the keys and the float mask RLlib's
  masking modules expect. :class:`MaskedPPOTorchRLModule` is RLlib's default PPO module (MLP encoders, separate policy
  and value networks) on the ``observations`` entry, with the logits of illegal actions set to the float minimum, so
  that no illegal action is sampled and its network maps one to one onto our policy files (``policy_tensors``).
- **Turns.** Only the seat to act gets an observation; the rewards of every step go to the learning seats that earned
  them (RLlib adds rewards to an agent's next transition), and at the end every learning seat gets its final
  observation and reward with ``__all__`` terminated (or truncated, for a game cut by a turn cap).
- **Fixed opponents.** ``opponents`` (policy objects with ``act(observation, action_mask, rng)``; bot names, shipped
  policy names and policy files through :class:`parlour.baselines.rllib_table.RLlibTableEnv`, which resolves them as
  every command does, so that this env package depends on no bot) play inside the env: per episode the learner takes ``learner_seat`` (``"random"``: drawn) and every other seat draws
  from the pool; a seat that draws ``"self"`` is played by the learning policy too. ``opponents: ["self"]`` (the
  default) is parameter-shared self-play: every seat learns.
- **RLlib's env pre-check passes** (it is not disabled): it steps ``action_space.sample()`` without a mask, so the
  action space is a :class:`LegalDiscrete`, a ``Discrete`` whose unmasked ``sample()`` draws among the acting seat's
  legal actions. Any other illegal action is refused by the env with the legal ones named.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from parlour.envs import make
from parlour.envs.core import ParlourEnv

#: The pool entry that stands for the learning policy itself (as in the training configs).
SELF = "self"
#: The module id of the one shared (parameter-sharing) policy.
SHARED = "shared"
OBS_KEY, MASK_KEY = "observations", "action_mask"


class LegalDiscrete(gym.spaces.Discrete):
    """A ``Discrete`` whose ``sample()`` without a mask draws a legal action of the env's acting seat (RLlib's env
    pre-check samples unmasked actions and steps them). Copies of the space (pickled to Ray workers) sample plainly."""

    def __init__(self, n: int, env: RLlibEnv | None = None) -> None:
        super().__init__(n)
        self._env = env

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None and self._env is not None and self._env.acting is not None:
            mask = self._env.legal_mask().astype(np.int8)
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_env"] = None
        return state


class RLlibEnv(MultiAgentEnv):
    """A Parlour env as an RLlib ``MultiAgentEnv`` (see the module docstring). ``config`` keys: ``env`` (id),
    ``num_players``, ``options`` (rule keywords), ``opponents`` (default ``["self"]``), ``learner_seat``
    (``"random"`` or a seat), ``seed``."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        self.env: ParlourEnv[Any] = make(
            config["env"], num_players=config.get("num_players"), **config.get("options", {})
        )
        env = self.env
        self.possible_agents = list(env.possible_agents)
        self.agents = list(self.possible_agents)
        table = (env.metadata["name"], env.num_players, config.get("options", {}))
        self.pool = [
            SELF if entry == SELF else self.resolve_opponent(entry, table, bool(config.get("trust_pickle")))
            for entry in config.get("opponents", [SELF])
        ]
        seat = config.get("learner_seat", "random")
        self.learner_seat = None if seat == "random" else int(seat)
        space = gym.spaces.Dict(
            {
                OBS_KEY: gym.spaces.Box(0.0, 1.0, (env.observation_layout.size,), np.float32),
                MASK_KEY: gym.spaces.Box(0.0, 1.0, (env.num_actions,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: LegalDiscrete(env.num_actions, self) for a in self.possible_agents}
        self._rng = np.random.default_rng(config.get("seed"))
        self._seats: list[Any] = []  # per seat: SELF (the learner) or the opponent policy playing it
        self._learners: list[str] = []  # the seats the learning policy plays this episode
        self.acting: str | None = None

    def resolve_opponent(self, entry: Any, table: tuple[str, int, dict[str, Any]], trust_pickle: bool) -> Any:
        """The policy that plays a seat drawn as ``entry``: here a policy object itself. Names are the bots' side's
        to resolve (:class:`parlour.baselines.rllib_table.RLlibTableEnv` overrides this), so they are refused."""
        if isinstance(entry, str):
            raise TypeError(
                f"RLlibEnv: opponent {entry!r} is a name; this env takes 'self' or policy objects with "
                "act(observation, action_mask, rng). Use parlour.baselines.rllib_table.RLlibTableEnv to name bots, "
                "shipped policies or policy files"
            )
        if not callable(getattr(entry, "act", None)):
            raise TypeError(f"RLlibEnv: opponent {entry!r} has no act(observation, action_mask, rng)")
        return entry

    def legal_mask(self) -> np.ndarray:
        return self.env.observe(self.env.agent_selection)["action_mask"]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        env = self.env
        env.reset(seed=int(self._rng.integers(2**63 - 1)))
        n = env.num_players
        learner = int(self._rng.integers(n)) if self.learner_seat is None else self.learner_seat
        self._seats = [SELF if s == learner else self.pool[int(self._rng.integers(len(self.pool)))] for s in range(n)]
        self._learners = [a for a, p in zip(self.env.possible_agents, self._seats, strict=True) if p == SELF]
        self.agents = list(self._learners)
        self._moved: set[str] = set()
        rewards = self._advance()
        if env.game_over or self.acting is None:  # the opponents ended it before the learner moved (none of ours can)
            raise RuntimeError(f"{env.metadata['name']}: the game ended before a learning seat moved ({rewards})")
        return {self.acting: self._obs(self.acting)}, {}

    def step(self, action_dict: dict[Any, Any]) -> Any:  # (obs, rewards, terminateds, truncateds, infos)
        env, acting = self.env, self.acting
        if acting is None or acting not in action_dict:
            raise ValueError(f"RLlibEnv.step: expected an action for {acting}, got one for {list(action_dict)}")
        env.step(int(action_dict[acting]))
        self._moved.add(acting)
        # RLlib wants a reward (0 will do) for every agent that has acted, whenever it gets its next observation
        rewards = dict.fromkeys(self._moved, 0.0) | self._collect()
        for a, r in self._advance().items():
            rewards[a] = rewards.get(a, 0.0) + r
        if env.game_over:
            done = not bool(env.final_outcome and env.final_outcome.get("truncated"))
            obs = {a: self._obs(a) for a in self._learners}
            rewards = {a: rewards.get(a, 0.0) for a in self._learners}
            self.acting = None
            return obs, rewards, {"__all__": done}, {"__all__": not done}, {}
        assert self.acting is not None  # _advance stopped at a learning seat
        return {self.acting: self._obs(self.acting)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def _collect(self) -> dict[str, float]:
        """The learning seats' rewards of the step just taken."""
        return {a: float(self.env.rewards.get(a, 0.0)) for a in self._learners if self.env.rewards.get(a, 0.0)}

    def _advance(self) -> dict[str, float]:
        """Let the opponents move until a learning seat is to act or the game is over; returns the learning seats'
        rewards meanwhile."""
        env = self.env
        earned: dict[str, float] = {}
        while not env.game_over:
            seat = env.possible_agents.index(env.agent_selection)
            policy = self._seats[seat]
            if policy == SELF:
                self.acting = env.agent_selection
                return earned
            if getattr(policy, "needs_env", False):  # e.g. the search bot, which redraws worlds through the env
                action = policy.act_with_env(env, env.agent_selection, self._rng)
            else:
                obs = env.observe(env.agent_selection)
                action = policy.act(obs["observation"], obs["action_mask"], self._rng)
            env.step(int(action))
            for a, r in self._collect().items():
                earned[a] = earned.get(a, 0.0) + r
        return earned

    def _obs(self, agent: str) -> dict[str, np.ndarray]:
        o = self.env.observe(agent)
        return {OBS_KEY: o["observation"], MASK_KEY: o["action_mask"].astype(np.float32)}


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module on the ``observations`` entry, with illegal actions' logits masked out."""

    def __init__(self, *args: Any, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space) != {OBS_KEY, MASK_KEY}:
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {[OBS_KEY, MASK_KEY]} (RLlibEnv's); "
                f"got {observation_space}"
            )
        self._spaces = observation_space
        super().__init__(*args, observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self._spaces  # the env's space, for RLlib's connectors

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        obs = batch[Columns.OBS]
        return obs[MASK_KEY], {**batch, Columns.OBS: obs[OBS_KEY]}

    @staticmethod
    def _masked(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        import torch

        out[Columns.ACTION_DIST_INPUTS] = torch.where(
            mask > 0.5, out[Columns.ACTION_DIST_INPUTS], torch.finfo(torch.float32).min
        )
        return out

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)


def ppo_module_spec(net_arch: list[int], activation: str) -> RLModuleSpec:
    """The masked PPO module with separate policy and value MLPs of ``net_arch`` (as SB3's ``MlpPolicy``)."""
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config={
            "fcnet_hiddens": list(net_arch),
            "fcnet_activation": activation,
            "vf_share_layers": False,
            "head_fcnet_hiddens": [],
        },
    )


def policy_tensors(module: Any) -> dict[str, np.ndarray]:
    """The module's weights under SB3's ``MlpPolicy`` names: what a policy file holds (``policy_file``)."""
    state = {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}
    out: dict[str, np.ndarray] = {}
    for ours, theirs in (("policy_net", "actor_encoder"), ("value_net", "critic_encoder")):
        layers = sorted(
            {int(k.split(".")[-2]) for k in state if k.startswith(f"encoder.{theirs}.") and k.endswith(".weight")}
        )
        for i, index in enumerate(layers):
            for part in ("weight", "bias"):
                key = next(k for k in state if k.startswith(f"encoder.{theirs}.") and k.endswith(f".{index}.{part}"))
                out[f"mlp_extractor.{ours}.{2 * i}.{part}"] = state[key]
    for ours, theirs in (("action_net", "pi"), ("value_net", "vf")):
        for part in ("weight", "bias"):
            (key,) = [k for k in state if k.startswith(f"{theirs}.") and k.endswith(part)]
            out[f"{ours}.{part}"] = state[key]
    return out
