"""Tianshou's multi-agent path (``parlour.envs.interop.tianshou``) and TorchRL's PettingZoo wrapper on our envs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import make

ts = pytest.importorskip("parlour.envs.interop.tianshou")
tianshou = pytest.importorskip("tianshou")

from tianshou.algorithm.algorithm_base import Policy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentPolicy  # noqa: E402
from tianshou.data import Batch, Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402

CASES = [("six_suspects_v0", {"reward": "vote", "num_games": 2}), ("goes_to_eleven_v0", {"reward": "margin"}),
         ("lady_alice_v1", {}), ("elevenses_v0", {})]  # fmt: skip


class MaskedRandom(Policy):
    """A uniformly random legal action (Tianshou's ``RandomActionPolicy`` ignores the mask)."""

    def __init__(self, space: Any, seed: int) -> None:
        super().__init__(action_space=space)
        self.rng = np.random.default_rng(seed)

    def forward(self, batch: Any, state: Any = None, **kwargs: Any) -> Any:
        return Batch(
            act=np.array([self.rng.choice(np.flatnonzero(m)) for m in np.asarray(batch.obs.mask)]), state=state
        )


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_each_seat_is_credited_its_whole_return_on_its_own_transitions(name: str, kwargs: dict) -> None:
    env = ts.TianshouEnv(make(name, **kwargs))
    rng = np.random.default_rng(1)
    for game in range(3):
        obs, info = env.reset(seed=game)
        credited = np.zeros(env.parlour.num_players)
        keys = set(info)
        done = False
        steps = 0
        while not done:
            seat = env.parlour.possible_agents.index(obs["agent_id"])
            obs_next, paid, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
            assert set(info) == keys and info["returns"].shape == info["winners"].shape == (env.parlour.num_players,)
            assert np.count_nonzero(paid[np.arange(len(paid)) != seat]) == 0  # a step pays only the seat that moved
            credited[seat] += paid[seat]
            done = terminated or truncated
            obs = obs_next
            steps += 1
        outcome = env.parlour.final_outcome
        assert outcome is not None and info["game_over"] and truncated == bool(outcome["truncated"])
        assert np.allclose(credited, info["returns"])  # the whole AEC return, not only the last mover's
        assert set(np.flatnonzero(info["winners"])) == set(outcome["winners"])
        assert np.any(info["returns"] != 0) and steps > env.parlour.num_players


def test_tianshou_collector_fills_its_buffers_and_every_episode_pays_its_returns() -> None:
    make_env = lambda: ts.TianshouEnv(make("goes_to_eleven_v0", reward="margin"))  # noqa: E731
    probe = make_env()
    policy = MultiAgentPolicy({a: MaskedRandom(probe.action_space, i) for i, a in enumerate(probe.agents)})
    venv = DummyVectorEnv([make_env for _ in range(2)])
    buffer = VectorReplayBuffer(4000, 2)
    collector = Collector(policy, venv, buffer)
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes == 4
    data = buffer[buffer.sample_indices(0)]  # every stored transition
    agents = probe.agents
    # over the buffer, each seat's entries on its own transitions sum to its returns over the finished episodes
    own = np.array([data.rew[np.asarray(data.obs.agent_id) == a, i].sum() for i, a in enumerate(agents)])
    ends = np.asarray(data.terminated) | np.asarray(data.truncated)
    assert ends.sum() == 4
    assert np.allclose(own, np.asarray(data.info.returns)[ends].sum(axis=0))
    assert np.allclose(data.rew.sum(), own.sum())  # nothing is paid on another seat's transition


@pytest.mark.parametrize("name", ["six_suspects_v0", "elevenses_v0"])
def test_torchrl_pettingzoo_wrapper_steps_our_envs_with_their_masks(name: str) -> None:
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    env = PettingZooWrapper(make(name), use_mask=True, categorical_actions=True, seed=0)
    rollout = env.rollout(400, break_when_any_done=True)
    group = next(iter(env.group_map))
    mask = rollout[group, "action_mask"]
    actions = rollout[group, "action"]
    assert mask.shape[-1] == make(name).num_actions
    # random_policy respects the masks it is given: every action the wrapper took was legal for its actor
    acting = mask.any(-1)
    assert acting.any()
    assert bool(mask.gather(-1, actions.unsqueeze(-1)).squeeze(-1)[acting].all())
    assert bool(rollout["next", "done"].any())
