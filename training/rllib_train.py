"""``trainer: rllib``: ``parlour train`` with Ray RLlib's PPO and the masked module, into the same run folder.

The same config sections as the SB3 trainer, read the same way: ``game``, ``learner``, ``opponents``, ``ppo`` (one
PPO update is ``ppo.n_steps × train.n_envs`` steps, minibatches of ``ppo.batch_size``, ``ppo.n_epochs`` passes, the
same ``net_arch`` and activation with separate policy and value networks), ``train`` (budget, checkpoints, periodic
evaluations, threads) and ``eval``; plus ``rllib`` (``ray_address``, ``num_env_runners``). Opponents play inside the
env (``parlour.baselines.rllib_table.RLlibTableEnv``); ``self`` in the pool is the learning policy itself, so
``opponents: [self]`` is parameter-shared self-play. ``self_play``, ``train.vec_env`` and ``train.device`` are the SB3
trainer's and are not used (RLlib samples with its env runners and learns on the CPU here).

The run folder matches the SB3 trainer's: ``checkpoints/latest/`` (the algorithm's state as a pickle-free checkpoint
of :mod:`parlour.training.checkpoints`, written beside and renamed over the last one, with ``parlour.json``: the table
it was trained for and its step), ``evaluations.jsonl``,
``logs/session_K/progress.csv``, ``policy.json`` + ``policy.safetensors`` (the module's weights as a safe policy
file, what evaluation loads), ``final_eval.*``, ``learning_curve.png`` and ``metrics.json``.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from parlour.baselines.policy_file import check_compatible, mlp_network, save_policy
from parlour.envs import make as make_env
from parlour.training.checkpoints import is_checkpoint, read_checkpoint, write_checkpoint
from parlour.training.config import SELF_PLAY, TrainConfig
from parlour.training.distributed import start_ray
from parlour.training.policies import checkpoint_meta, training_record
from parlour.training.run import Session

#: The checkpoint folder of an RLlib run (under ``RUN/checkpoints/``), as the SB3 trainer's.
CHECKPOINT_DIR = "latest"
ALGORITHM = "PPO (Ray RLlib, masked module)"


def env_config(cfg: TrainConfig) -> dict[str, Any]:
    """``RLlibEnv``'s config for a training config."""
    return {
        "env": cfg.game.name,
        "num_players": cfg.game.num_players,
        "options": dict(cfg.game.options),
        "opponents": [SELF_PLAY if o == SELF_PLAY else o for o in cfg.opponents],
        "learner_seat": cfg.learner.seat,
        "trust_pickle": cfg.trust_pickle,
    }


def algorithm_config(cfg: TrainConfig) -> Any:
    """The RLlib ``PPOConfig`` for a training config."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from parlour.baselines.rllib_table import RLlibTableEnv
    from parlour.envs.interop.rllib import SHARED, ppo_module_spec

    ppo, budget = cfg.ppo, cfg.train
    runners = cfg.rllib.num_env_runners
    return (
        PPOConfig()
        .environment(RLlibTableEnv, env_config=env_config(cfg))
        .multi_agent(policies={SHARED}, policy_mapping_fn=lambda agent, episode, **kw: SHARED)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: ppo_module_spec(ppo.net_arch, ppo.activation)})
        )
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=max(1, budget.n_envs // max(1, runners)),
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=ppo.n_steps * budget.n_envs,
            minibatch_size=ppo.batch_size,
            num_epochs=ppo.n_epochs,
            lr=ppo.learning_rate,
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_range,
            entropy_coeff=ppo.ent_coef,
            vf_loss_coeff=ppo.vf_coef,
            grad_clip=ppo.max_grad_norm,
            grad_clip_by="global_norm",
            vf_clip_param=float("inf"),  # SB3 does not clip the value loss
            use_kl_loss=False,  # nor penalise the KL divergence
        )
        .debugging(seed=cfg.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def _save(algo: Any, run: Path, meta: dict[str, Any], steps: int) -> Path:
    """The algorithm's whole state (``Algorithm.get_state()``: weights, optimizer, counters, metrics) as a
    pickle-free checkpoint folder (:mod:`parlour.training.checkpoints`), written atomically. RLlib's own
    ``save_to_path`` pickles, so it is not used: a run folder must resume without unpickling anything."""
    meta = meta | {"timesteps": steps, "trainer": "rllib"}
    return write_checkpoint(run / "checkpoints" / CHECKPOINT_DIR, meta, algo.get_state())


def _restore(algo: Any, run: Path, meta: dict[str, Any]) -> int:
    """Load :func:`_save`'s checkpoint into ``algo`` (built from the run's config); returns its step."""
    from parlour.training.run import does_not_fit

    folder = run / "checkpoints" / CHECKPOINT_DIR
    saved, state = read_checkpoint(folder)
    check_compatible(saved, meta, str(folder))
    try:
        algo.set_state(state)
    except Exception as exc:  # noqa: BLE001 - RLlib raises many kinds for a state that does not fit
        raise does_not_fit(folder, "algorithm", exc) from None
    return int(saved["timesteps"])


def export(algo: Any, path: Path, cfg: TrainConfig, meta: dict[str, Any], record: dict[str, Any]) -> Path:
    """The shared module's weights as a safe policy file (the network SB3's ``MlpPolicy`` would have)."""
    from parlour.envs.interop.rllib import SHARED, policy_tensors

    network = mlp_network(list(cfg.ppo.net_arch), list(cfg.ppo.net_arch), cfg.ppo.activation)
    spec = {**meta, "network": network, "training": record}
    return save_policy(path, policy_tensors(algo.get_module(SHARED)), spec)


def train_rllib(cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
    import torch

    from parlour.training.run import (
        FINAL_REPORT,
        POLICY_STEM,
        Stop,
        TrainingStopped,
        evaluations,
        new_session,
        previous_metrics,
        wall_before,
        write_metrics,
    )
    from parlour.training.session import final_evaluation, format_evaluation, periodic_evaluation, plot_learning_curve

    torch.set_num_threads(cfg.train.torch_threads)
    start_ray(cfg.rllib.ray_address)
    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg))), "trainer": "rllib"})
    algo = algorithm_config(cfg).build_algo()
    latest = run / "checkpoints" / CHECKPOINT_DIR
    steps = 0
    if session.resume and is_checkpoint(latest):
        steps = _restore(algo, run, meta)
    done_steps = steps
    previous = previous_metrics(run) if session.resume else {}
    log_dir = new_session(run)
    budget = cfg.train
    marks = {"ckpt": steps, "eval": steps}
    start = time.perf_counter()
    bar = None
    if session.progress:
        from tqdm import tqdm

        bar = tqdm(total=budget.total_timesteps, initial=steps, desc="train (rllib)", unit="step", dynamic_ncols=True)
    try:
        with Stop() as stop, open(log_dir / "progress.csv", "w", newline="") as f:
            log = csv.writer(f)
            log.writerow(["time/total_timesteps", "rollout/ep_rew_mean", "time/time_elapsed"])
            while steps < budget.total_timesteps and stop.signum is None:
                result = algo.train()
                runners = result.get("env_runners", {})
                new = int(runners.get("num_env_steps_sampled_lifetime", 0))
                if new <= steps:  # a restored run continues RLlib's own count; a count that stalls would loop
                    raise RuntimeError(f"RLlib reported {new} steps sampled in all after {steps}: no progress")
                steps = new
                returns = runners.get("agent_episode_returns_mean") or {}
                mean = sum(returns.values()) / len(returns) if returns else float("nan")
                log.writerow([steps, mean, round(time.perf_counter() - start, 1)])
                f.flush()
                if bar is not None:
                    bar.update(steps - bar.n)
                if steps - marks["ckpt"] >= budget.checkpoint_every:
                    marks["ckpt"] = steps
                    _save(algo, run, meta, steps)
                    # the time so far beside each checkpoint (a session killed outright loses only what followed)
                    so_far = wall_before(previous) + time.perf_counter() - start
                    write_metrics(run, {"timesteps": steps, "train_wall_seconds": so_far})
                if budget.eval_every and steps - marks["eval"] >= budget.eval_every:
                    marks["eval"] = steps
                    export(algo, run / "checkpoints" / "periodic", cfg, meta, training_record(meta, steps))
                    row = periodic_evaluation(cfg, run, run / "checkpoints" / "periodic.json", steps)
                    (bar.write if bar is not None else print)(format_evaluation(row, cfg.game.num_players))
            wall = time.perf_counter() - start
            train_wall = wall_before(previous) + wall
            _save(algo, run, meta, steps)
            if stop.signum is not None:
                write_metrics(run, {"timesteps": steps, "train_wall_seconds": train_wall})
                raise TrainingStopped(
                    stop.signum, f"at step {steps:,} of {budget.total_timesteps:,}; checkpoint saved to {latest}"
                )
    finally:
        if bar is not None:
            bar.close()
    record = training_record(
        meta, steps, algorithm=ALGORITHM, evaluations=evaluations(run), train_wall_seconds=train_wall
    )
    export(algo, run / POLICY_STEM, cfg, meta, record)
    algo.stop()
    report = final_evaluation(cfg, run, session.progress) if session.final_eval else None
    plot_learning_curve(run)
    session_steps = steps - done_steps
    metrics = {
        "finished": True,
        "trainer": "rllib",
        "timesteps": steps,
        "session_steps": session_steps,
        "session_wall_seconds": wall,
        "train_wall_seconds": train_wall,
        "steps_per_second": session_steps / wall if wall > 0 else None,
        "env_seconds": None,
        "env_share": None,
        "learner_share": None,
        "final_eval": dict(report["policies"]) if report is not None else None,
    }
    write_metrics(run, metrics)
    return {**metrics, FINAL_REPORT: report}  # the whole report for the caller to print; metrics.json keeps rates
