"""Behaviour cloning before PPO: the learner's network first imitates a teacher (``pretrain`` in a config).

Some decisions pay only after a sequence no random exploration finds: in Lady Alice an accusation wins only if all
four of its clues are right, so a learner that has not yet learned to name the clues its belief is sure of never
sees an accusation pay, and never learns to make one. Imitating a teacher (a scripted bot) on the learner's own
tables gives PPO a starting policy that already reaches those rewards; PPO then improves on it.

The teacher plays the learner's seat in :class:`~parlour.training.single_agent.SingleAgentEnv` -- the same tables,
opponents and feature sets as training -- and every decision is kept: the learner's input, its mask, the teacher's
action and the return that followed. The policy head is fitted by masked cross-entropy and the value head by the
squared error to those returns (so PPO does not start with a critic that knows nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from parlour.baselines.base import Policy
from parlour.training.single_agent import SingleAgentEnv

#: The arrays of a cloning data set.
DATA_KEYS = ("obs", "masks", "actions", "returns")


def teacher_data(
    env: SingleAgentEnv,
    teacher: Policy,
    games: int,
    rng: np.random.Generator,
    *,
    data: dict[str, np.ndarray] | None = None,
    games_done: int = 0,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """``games`` games of ``teacher`` in the learner's seat of ``env``: inputs, masks, actions and returns-to-go.

    Every game is dealt from ``rng`` (and the teacher draws from it), so the games from ``games_done`` on continue
    ``data`` exactly when ``rng`` is in the state it had after them. ``should_stop`` is asked between games: a stop
    returns the games played so far. Returns the data and the number of games in it."""
    obs, masks, actions, returns = [], [], [], []
    done_games = games_done
    while done_games < games and not (should_stop is not None and should_stop()):
        x, _ = env.reset(seed=int(rng.integers(2**63 - 1)))
        rewards: list[float] = []
        done = False
        while not done:
            mask = env.action_masks()
            action = teacher.act_with_env(env.aec, env.learner, rng)
            obs.append(x)
            masks.append(mask)
            actions.append(action)
            x, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        returns += list(np.cumsum(rewards[::-1])[::-1])  # undiscounted return from each decision on (gamma 1)
        done_games += 1
    if not actions:
        return dict(data or {}), done_games
    new = {
        "obs": np.asarray(obs, np.float32),
        "masks": np.asarray(masks, bool),
        "actions": np.asarray(actions, np.int64),
        "returns": np.asarray(returns, np.float32),
    }
    if data:
        new = {k: np.concatenate([data[k], new[k]]) for k in DATA_KEYS}
    return new, done_games


def behaviour_clone(
    policy: Any,
    data: dict[str, np.ndarray],
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    resume: dict[str, Any] | None = None,
    on_epoch: Callable[[int, Any, Any], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, float] | None:
    """Fit an SB3 ``MaskableActorCriticPolicy`` to ``data``; returns the final epoch's loss, the teacher-action
    accuracy (greedy, on the data) and the value error.

    ``on_epoch(epoch, optimizer, generator)`` is called after every whole epoch (to checkpoint it); ``resume``
    continues from such a checkpoint (``epoch``, ``optimizer`` and ``generator`` states; the policy's weights loaded
    by the caller), with the same result as a fit that never stopped. ``should_stop`` is asked between minibatches:
    a stop returns ``None`` (the last epoch's checkpoint is what is kept)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    first = 0
    if resume:
        opt.load_state_dict(resume["optimizer"])
        gen.set_state(torch.as_tensor(resume["generator"], dtype=torch.uint8))
        first = int(resume["epoch"])
    tensors = {k: torch.as_tensor(v) for k, v in data.items()}
    n = len(tensors["actions"])
    policy.set_training_mode(True)
    for epoch in range(first, epochs):
        order = torch.randperm(n, generator=gen)
        for start in range(0, n, batch_size):
            if should_stop is not None and should_stop():
                policy.set_training_mode(False)
                return None
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(
                tensors["obs"][idx], tensors["actions"][idx], action_masks=tensors["masks"][idx].numpy()
            )
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(values.flatten(), tensors["returns"][idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
        if on_epoch is not None:
            on_epoch(epoch + 1, opt, gen)
    policy.set_training_mode(False)
    with torch.no_grad():
        dist = policy.get_distribution(tensors["obs"], action_masks=tensors["masks"].numpy())
        greedy = dist.distribution.probs.argmax(dim=1)
        values = policy.predict_values(tensors["obs"]).flatten()
        log_prob = dist.log_prob(tensors["actions"])
    return {
        "decisions": float(n),
        "nll": float(-log_prob.mean()),
        "accuracy": float((greedy == tensors["actions"]).float().mean()),
        "value_rmse": float(torch.sqrt(((values - tensors["returns"]) ** 2).mean())),
    }
