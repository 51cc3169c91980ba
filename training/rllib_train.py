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


def _save(algo: Any, run: Path, meta: dict[str, Any], steps: int, marks: dict[str, int]) -> Path:
    """The algorithm's whole state (``Algorithm.get_state()``: weights, optimizer, counters, metrics) as a
    pickle-free checkpoint folder (:mod:`parlour.training.checkpoints`), written atomically. RLlib's own
    ``save_to_path`` pickles, so it is not used: a run folder must resume without unpickling anything."""
    meta = meta | {"timesteps": steps, "trainer": "rllib", "marks": dict(marks)}
    return write_checkpoint(run / "checkpoints" / CHECKPOINT_DIR, meta, algo.get_state())


def _restore(algo: Any, run: Path, meta: dict[str, Any], eval_every: int) -> tuple[int, dict[str, int]]:
    """Load :func:`_save`'s checkpoint into ``algo`` (built from the run's config); returns its step and the session's
    cadence it saved (a checkpoint of an earlier Parlour, which saved none: the multiples of ``eval_every`` from its
    step)."""
    from parlour.training.run import does_not_fit
    from parlour.training.session import new_marks

    folder = run / "checkpoints" / CHECKPOINT_DIR
    saved, state = read_checkpoint(folder)
    check_compatible(saved, meta, str(folder))
    try:
        algo.set_state(state)
    except Exception as exc:  # noqa: BLE001 - RLlib raises many kinds for a state that does not fit
        raise does_not_fit(folder, "algorithm", exc) from None
    steps = int(saved["timesteps"])
    marks = saved.get("marks")
    keys = ("checkpoint", "evaluation", "eval_base", "eval_every")
    if not (isinstance(marks, dict) and set(marks) == set(keys) and all(type(marks[k]) is int for k in keys)):
        marks = new_marks(steps, eval_every)
    return steps, marks


def export(algo: Any, path: Path, cfg: TrainConfig, meta: dict[str, Any], record: dict[str, Any]) -> Path:
    """The shared module's weights as a safe policy file (the network SB3's ``MlpPolicy`` would have)."""
    from parlour.envs.interop.rllib import SHARED, policy_tensors

    network = mlp_network(list(cfg.ppo.net_arch), list(cfg.ppo.net_arch), cfg.ppo.activation)
    spec = {**meta, "network": network, "training": record}
    return save_policy(path, policy_tensors(algo.get_module(SHARED)), spec)


class _RLlibLearner:
    """RLlib's algorithm as :func:`parlour.training.session.run_session` drives it: one ``algo.train()`` an update."""

    trainer = "rllib"
    header = ["time/total_timesteps", "rollout/ep_rew_mean", "time/time_elapsed"]

    def __init__(self, cfg: TrainConfig, run: Path, algo: Any, steps: int, meta: dict[str, Any]) -> None:
        self.cfg, self.run, self.algo, self.steps, self.meta = cfg, run, algo, steps, meta

    def behaviour_clone(self, stop: Any) -> dict[str, Any] | None:
        return None  # the trainer's check refuses a teacher: nothing to clone

    def begin(self, folder: Path, progress: Any) -> None:
        pass  # the session writes the log from update's rows

    def update(self, started: float, within: Any) -> tuple[int, list[Any]]:
        result = self.algo.train()
        runners = result.get("env_runners", {})
        new = int(runners.get("num_env_steps_sampled_lifetime", 0))
        if new <= self.steps:  # a restored run continues RLlib's own count; a count that stalls would loop
            raise RuntimeError(f"RLlib reported {new} steps sampled in all after {self.steps}: no progress")
        self.steps = new
        returns = runners.get("agent_episode_returns_mean") or {}
        mean = sum(returns.values()) / len(returns) if returns else float("nan")
        return new, [mean, round(time.perf_counter() - started, 1)]

    def save(self, steps: int, marks: dict[str, int]) -> None:
        _save(self.algo, self.run, self.meta, steps, marks)

    def evaluate(self, steps: int) -> dict[str, Any]:
        from parlour.training import session

        record = training_record(self.meta, steps)
        return session.exported_evaluation(
            self.cfg, self.run, steps, lambda path: export(self.algo, path, self.cfg, self.meta, record)
        )

    def export(self, path: Path, steps: int, train_wall: float) -> None:
        from parlour.training.run import evaluations

        record = training_record(
            self.meta, steps, algorithm=ALGORITHM, evaluations=evaluations(self.run), train_wall_seconds=train_wall
        )
        export(self.algo, path, self.cfg, self.meta, record)

    def finish(self, session_steps: int, started: float, wall: float) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        self.algo.stop()


def train_rllib(cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
    """RLlib's session: the algorithm built from the config, new or resumed from the run's checkpoint, through the one
    session loop (:func:`parlour.training.session.run_session`)."""
    import torch

    from parlour.training.session import new_marks, run_session

    torch.set_num_threads(cfg.train.torch_threads)
    start_ray(cfg.rllib.ray_address)
    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg))), "trainer": "rllib"})
    algo = algorithm_config(cfg).build_algo()
    latest = run / "checkpoints" / CHECKPOINT_DIR
    steps, marks = 0, new_marks(0, cfg.train.eval_every)
    if session.resume and is_checkpoint(latest):
        steps, marks = _restore(algo, run, meta, cfg.train.eval_every)
    return run_session(cfg, run, _RLlibLearner(cfg, run, algo, steps, meta), steps, marks, session)
