"""``trainer: jax``: PPO with action masking, end to end in JAX (PureJaxRL-style): the rollout of ``train.n_envs``
games on the game's JAX core, the batched bots in the other seats, GAE and every epoch of minibatch updates in one
compiled function per update; ``pip install parlour[jax]`` (JAX and Optax).

The same config sections as the SB3 trainer, read the same way: ``ppo`` (``n_steps`` per game per update,
``batch_size`` minibatches, ``n_epochs``, learning rate, ``gamma``, ``gae_lambda``, clip range, entropy and value
coefficients, global gradient-norm clip, ``net_arch`` and activation with separate policy and value networks, SB3's
orthogonal initialisation and Adam with ``eps=1e-5``; advantages normalised per minibatch; a truncated game's last
reward bootstrapped with the value of its final observation), ``opponents`` (batched bots by their scalar names;
``self`` is the learner's current policy, so ``opponents: [self]`` is self-play with every seat the learner), the
learning seat and ``opponent_draw``, ``train`` (budget, checkpoints, periodic evaluations) and ``eval``.

The run folder matches the other trainers': ``checkpoints/latest/`` (parameters, optimizer state and the step, as a
pickle-free checkpoint of :mod:`parlour.training.checkpoints`, written atomically; a resume deals fresh games from
there), ``evaluations.jsonl`` (periodic evaluations in the scalar env), ``logs/session_K/progress.csv``, and
``policy.json`` + ``policy.safetensors``: the network in SB3's tensor names, so ``parlour evaluate``/``benchmark``
play it in the scalar env like any policy file.
"""

from __future__ import annotations

import csv
import json
import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from parlour.baselines.policy_file import check_compatible, mlp_network, save_policy
from parlour.envs import make as make_env
from parlour.training.checkpoints import is_checkpoint, read_checkpoint, write_checkpoint
from parlour.training.config import SELF_PLAY, TrainConfig
from parlour.training.policies import checkpoint_meta, training_record

if TYPE_CHECKING:
    import jax

    from parlour.training.trainers import Session

ALGORITHM = "PPO with action masking (Parlour's jitted JAX trainer)"
CHECKPOINT_DIR = "latest"
#: The logit of an illegal action (sb3-contrib's masked distribution uses the same).
MASKED_LOGIT = -1e8


# ------------------------------------------------------------------------------------------------- the network
def _layers(params: dict[str, Any], part: str) -> int:
    return sum(1 for k in params if k.startswith(f"mlp_extractor.{part}.") and k.endswith(".weight"))


def init_params(key: jax.Array, obs_size: int, num_actions: int, net_arch: list[int]) -> dict[str, jax.Array]:
    """SB3's MLP actor-critic in its tensor names, initialised as SB3 does (orthogonal: gain sqrt(2) for hidden
    layers, 0.01 for the action head, 1 for the value head; zero biases)."""
    import jax
    import jax.numpy as jnp

    params: dict[str, jax.Array] = {}
    for part, head, out, gain in (("policy_net", "action_net", num_actions, 0.01), ("value_net", "value_net", 1, 1.0)):
        width = obs_size
        for i, w in enumerate(net_arch):
            key, sub = jax.random.split(key)
            params[f"mlp_extractor.{part}.{2 * i}.weight"] = jax.nn.initializers.orthogonal(math.sqrt(2))(
                sub, (w, width), jnp.float32
            )
            params[f"mlp_extractor.{part}.{2 * i}.bias"] = jnp.zeros((w,), jnp.float32)
            width = w
        key, sub = jax.random.split(key)
        params[f"{head}.weight"] = jax.nn.initializers.orthogonal(gain)(sub, (out, width), jnp.float32)
        params[f"{head}.bias"] = jnp.zeros((out,), jnp.float32)
    return params


def forward(params: dict[str, jax.Array], obs: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """Action logits and value of a batch (or one) of observations."""
    import jax.numpy as jnp

    act = jnp.tanh if activation == "tanh" else (lambda x: jnp.maximum(x, 0.0))
    out = []
    for part, head in (("policy_net", "action_net"), ("value_net", "value_net")):
        x = obs
        for i in range(_layers(params, part)):
            x = act(x @ params[f"mlp_extractor.{part}.{2 * i}.weight"].T + params[f"mlp_extractor.{part}.{2 * i}.bias"])
        out.append(x @ params[f"{head}.weight"].T + params[f"{head}.bias"])
    return out[0], out[1][..., 0]


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    import jax.numpy as jnp

    return jnp.where(mask, logits, MASKED_LOGIT)


# ------------------------------------------------------------------------------------------------- the algorithm
class Rollout(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array


class TrainState(NamedTuple):
    params: dict[str, jax.Array]
    opt_state: Any
    games: Any  # the single-seat states of the batch
    obs: jax.Array
    mask: jax.Array
    key: jax.Array


class PPO:
    """The compiled update of one config: ``reset(key)`` starts the batch of games, ``update(state)`` collects
    ``n_steps`` per game and learns from them."""

    def __init__(self, cfg: TrainConfig) -> None:
        import jax
        import optax

        from parlour.baselines.jax_bots import bot
        from parlour.envs.jax_core import make_core

        self.cfg = cfg
        self.core = make_core(cfg.game.name, cfg.game.num_players, **cfg.game.options)
        self.bots = [None if name == SELF_PLAY else bot(name, cfg.game.name) for name in cfg.opponents]
        seat = cfg.learner.seat
        self.learner_seat = None if seat == "random" else int(seat)
        ppo = cfg.ppo
        self.tx = optax.chain(optax.clip_by_global_norm(ppo.max_grad_norm), optax.adam(ppo.learning_rate, eps=1e-5))
        self.batch = ppo.n_steps * cfg.train.n_envs
        self.steps_per_update = self.batch
        self.update = jax.jit(self._update)
        self.reset = jax.jit(self._reset)

    def _seat(self, params: dict[str, jax.Array]) -> Any:
        """The single-seat env whose ``self`` opponents play ``params`` (sampling, as the learner does)."""
        import jax

        from parlour.envs.jax_core.single_seat import SingleSeat

        activation = self.cfg.ppo.activation

        def itself(obs: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
            logits, _ = forward(params, obs, activation)
            return jax.random.categorical(key, masked_logits(logits, mask)).astype("int32")

        pool = [itself if b is None else b for b in self.bots]
        return SingleSeat(self.core, pool, learner_seat=self.learner_seat, opponent_draw=self.cfg.opponent_draw)

    def init(self, key: jax.Array) -> TrainState:
        import jax

        k_params, k_games = jax.random.split(key)
        params = init_params(k_params, self.core.obs_size, self.core.num_actions, list(self.cfg.ppo.net_arch))
        return self.reset(params, self.tx.init(params), k_games)

    def _reset(self, params: dict[str, jax.Array], opt_state: Any, key: jax.Array) -> TrainState:
        import jax

        key, sub = jax.random.split(key)
        games, obs, mask = jax.vmap(self._seat(params).reset)(jax.random.split(sub, self.cfg.train.n_envs))
        return TrainState(params, opt_state, games, obs, mask, key)

    def _update(self, state: TrainState) -> tuple[TrainState, dict[str, jax.Array]]:
        import jax
        import jax.numpy as jnp
        import optax

        ppo, activation = self.cfg.ppo, self.cfg.ppo.activation
        seat = self._seat(state.params)
        step = seat.step_batch

        def collect(carry: tuple[Any, ...], _: Any) -> tuple[tuple[Any, ...], tuple[Rollout, jax.Array]]:
            games, obs, mask, key = carry
            key, sub = jax.random.split(key)
            logits, value = forward(state.params, obs, activation)
            logits = masked_logits(logits, mask)
            action = jax.random.categorical(sub, logits).astype(jnp.int32)
            logp = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
            t = step(games, action)
            # a truncated game's value is not zero: bootstrap it from its final observation, as SB3 does
            _, final_value = forward(state.params, t.final_observation, activation)
            reward = t.reward + ppo.gamma * jnp.where(t.truncated, final_value, 0.0)
            done = jnp.logical_or(t.terminated, t.truncated)
            return (t.state, t.observation, t.mask, key), (
                Rollout(obs, mask, action, logp, value, reward, done),
                jnp.where(done, 1.0, 0.0),
            )

        (games, obs, mask, key), (roll, ended) = jax.lax.scan(
            collect, (state.games, state.obs, state.mask, state.key), None, length=ppo.n_steps
        )
        _, last_value = forward(state.params, obs, activation)

        def gae(carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, ...]) -> tuple[Any, jax.Array]:
            advantage, next_value = carry
            reward, value, done = x
            delta = reward + ppo.gamma * next_value * (1.0 - done) - value
            advantage = delta + ppo.gamma * ppo.gae_lambda * (1.0 - done) * advantage
            return (advantage, value), advantage

        _, advantages = jax.lax.scan(
            gae,
            (jnp.zeros_like(last_value), last_value),
            (roll.reward, roll.value, roll.done.astype(jnp.float32)),
            reverse=True,
        )
        returns = advantages + roll.value
        flat = jax.tree_util.tree_map(lambda x: x.reshape((self.batch, *x.shape[2:])), (roll, advantages, returns))

        def loss(params: dict[str, jax.Array], mb: tuple[Rollout, jax.Array, jax.Array]) -> tuple[jax.Array, Any]:
            r, adv, ret = mb
            logits, value = forward(params, r.obs, activation)
            logp_all = jax.nn.log_softmax(masked_logits(logits, r.mask))
            logp = logp_all[jnp.arange(r.action.shape[0]), r.action]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            ratio = jnp.exp(logp - r.logp)
            pg = -jnp.minimum(adv * ratio, adv * jnp.clip(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)).mean()
            probs = jnp.exp(logp_all)
            entropy = -jnp.sum(jnp.where(r.mask, probs * logp_all, 0.0), axis=-1).mean()
            value_loss = jnp.mean((ret - value) ** 2)
            total = pg - ppo.ent_coef * entropy + ppo.vf_coef * value_loss
            return total, (pg, value_loss, entropy)

        grad = jax.grad(loss, has_aux=True)
        minibatches = self.batch // ppo.batch_size

        def epoch(carry: tuple[Any, Any, jax.Array], _: Any) -> tuple[tuple[Any, Any, jax.Array], Any]:
            params, opt_state, key = carry
            key, sub = jax.random.split(key)
            order = jax.random.permutation(sub, self.batch)[: minibatches * ppo.batch_size]
            shuffled = jax.tree_util.tree_map(
                lambda x: x[order].reshape((minibatches, ppo.batch_size, *x.shape[1:])), flat
            )

            def minibatch(carry: tuple[Any, Any], mb: Any) -> tuple[tuple[Any, Any], Any]:
                params, opt_state = carry
                g, aux = grad(params, mb)
                updates, opt_state = self.tx.update(g, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), shuffled)
            return (params, opt_state, key), aux

        (params, opt_state, key), aux = jax.lax.scan(
            epoch, (state.params, state.opt_state, key), None, length=ppo.n_epochs
        )
        episodes = ended.sum()
        metrics = {
            "episodes": episodes,
            "episode_reward_mean": jnp.where(episodes > 0, roll.reward.sum() / jnp.maximum(episodes, 1.0), jnp.nan),
            "policy_loss": aux[0].mean(),
            "value_loss": aux[1].mean(),
            "entropy": aux[2].mean(),
        }
        return TrainState(params, opt_state, games, obs, mask, key), metrics


# ------------------------------------------------------------------------------------------------- the run
def _tensors(params: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, np.float32) for k, v in params.items()}


def export(params: dict[str, Any], path: Path, cfg: TrainConfig, meta: dict[str, Any], record: dict[str, Any]) -> Path:
    """The network as a safe policy file (SB3's ``MlpPolicy`` tensor names: the scalar env plays it)."""
    network = mlp_network(list(cfg.ppo.net_arch), list(cfg.ppo.net_arch), cfg.ppo.activation)
    return save_policy(path, _tensors(params), {**meta, "network": network, "training": record})


def _save(state: TrainState, run: Path, meta: dict[str, Any], steps: int) -> Path:
    import jax

    leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(state.opt_state)]
    tree = {"params": _tensors(state.params), "opt_state": leaves, "key": np.asarray(jax.random.key_data(state.key))}
    return write_checkpoint(run / "checkpoints" / CHECKPOINT_DIR, meta | {"timesteps": steps, "trainer": "jax"}, tree)


def _restore(ppo: PPO, run: Path, meta: dict[str, Any], seed: int) -> tuple[TrainState, int]:
    """The checkpoint's parameters and optimizer state, with a fresh batch of games dealt from its step."""
    import jax
    import jax.numpy as jnp

    from parlour.training.train import does_not_fit

    folder = run / "checkpoints" / CHECKPOINT_DIR
    saved, tree = read_checkpoint(folder)
    check_compatible(saved, meta, str(folder))
    fresh = ppo.init(jax.random.PRNGKey(seed))
    try:
        if set(tree["params"]) != set(fresh.params):
            raise ValueError(f"parameters {sorted(tree['params'])} are not {sorted(fresh.params)}")
        params = {k: jnp.asarray(tree["params"][k]) for k in fresh.params}
        for k, v in params.items():
            if v.shape != fresh.params[k].shape:
                raise ValueError(f"{k} has shape {v.shape}, the config's network {fresh.params[k].shape}")
        treedef = jax.tree_util.tree_structure(fresh.opt_state)
        opt_state = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(x) for x in tree["opt_state"]])
    except (KeyError, ValueError, TypeError) as exc:
        raise does_not_fit(folder, "network", exc) from None
    steps = int(saved["timesteps"])
    key = jax.random.PRNGKey(int(np.random.SeedSequence([seed, steps]).generate_state(1)[0]))
    return ppo.reset(params, opt_state, key), steps


def train_jax(cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
    import jax

    from parlour.training.train import (
        FINAL_REPORT,
        POLICY_STEM,
        TrainingStopped,
        _previous_metrics,
        _Stop,
        _wall_before,
        _write_metrics,
        evaluations,
        final_evaluation,
        format_evaluation,
        new_session,
        periodic_evaluation,
        plot_learning_curve,
    )

    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg))), "trainer": "jax"})
    ppo = PPO(cfg)
    latest = run / "checkpoints" / CHECKPOINT_DIR
    if session.resume and is_checkpoint(latest):
        state, steps = _restore(ppo, run, meta, cfg.seed)
    else:
        state, steps = ppo.init(jax.random.PRNGKey(cfg.seed)), 0
    done_steps = steps
    previous = _previous_metrics(run) if session.resume else {}
    budget = cfg.train
    marks = {"ckpt": steps, "eval": steps - steps % budget.eval_every if budget.eval_every else steps}
    start = time.perf_counter()
    bar = None
    if session.progress:
        from tqdm import tqdm

        bar = tqdm(total=budget.total_timesteps, initial=steps, desc="train (jax)", unit="step", dynamic_ncols=True)
    try:
        with _Stop() as stop, open(new_session(run) / "progress.csv", "w", newline="") as f:
            log = csv.writer(f)
            log.writerow(["time/total_timesteps", "rollout/ep_rew_mean", "train/entropy_loss", "time/time_elapsed"])
            first_update = None
            while steps < budget.total_timesteps and stop.signum is None:
                state, metrics = ppo.update(state)
                steps += ppo.steps_per_update
                if first_update is None:  # compiling is in the first update: kept apart for the bench
                    jax.block_until_ready(state)
                    first_update = time.perf_counter() - start
                log.writerow(
                    [
                        steps,
                        float(metrics["episode_reward_mean"]),
                        -float(metrics["entropy"]),
                        round(time.perf_counter() - start, 1),
                    ]
                )
                f.flush()
                if bar is not None:
                    bar.update(ppo.steps_per_update)
                if steps - marks["ckpt"] >= budget.checkpoint_every:
                    marks["ckpt"] = steps
                    _save(state, run, meta, steps)
                    # the time so far beside each checkpoint (a session killed outright loses only what followed)
                    so_far = _wall_before(previous) + time.perf_counter() - start
                    _write_metrics(run, {"timesteps": steps, "train_wall_seconds": so_far})
                if budget.eval_every and steps - marks["eval"] >= budget.eval_every:
                    marks["eval"] = steps - steps % budget.eval_every
                    export(state.params, run / "checkpoints" / "periodic", cfg, meta, training_record(meta, steps))
                    row = periodic_evaluation(cfg, run, run / "checkpoints" / "periodic.json", steps)
                    (bar.write if bar is not None else print)(format_evaluation(row, cfg.game.num_players))
            wall = time.perf_counter() - start
            train_wall = _wall_before(previous) + wall
            _save(state, run, meta, steps)
            if stop.signum is not None:
                _write_metrics(run, {"timesteps": steps, "train_wall_seconds": train_wall})
                raise TrainingStopped(
                    stop.signum, f"at step {steps:,} of {budget.total_timesteps:,}; checkpoint saved to {latest}"
                )
    finally:
        if bar is not None:
            bar.close()
    record = training_record(
        meta, steps, algorithm=ALGORITHM, evaluations=evaluations(run), train_wall_seconds=train_wall
    )
    export(state.params, run / POLICY_STEM, cfg, meta, record)
    report = final_evaluation(cfg, run, session.progress) if session.final_eval else None
    plot_learning_curve(run)
    session_steps = steps - done_steps
    metrics_out = {
        "finished": True,
        "trainer": "jax",
        "timesteps": steps,
        "session_steps": session_steps,
        "session_wall_seconds": wall,
        "train_wall_seconds": train_wall,
        "steps_per_second": session_steps / wall if wall > 0 else None,
        # the first update's seconds hold the compilation; the rate after it is the steady one
        "first_update_seconds": first_update,
        "steady_steps_per_second": (session_steps - ppo.steps_per_update) / (wall - first_update)
        if first_update is not None and session_steps > ppo.steps_per_update and wall > first_update
        else None,
        "env_seconds": None,
        "env_share": None,
        "learner_share": None,
        "final_eval": dict(report["policies"]) if report is not None else None,
    }
    _write_metrics(run, metrics_out)
    return {**metrics_out, FINAL_REPORT: report}
