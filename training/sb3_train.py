"""The SB3 trainer (``trainer: sb3``): MaskablePPO on one seat of a Parlour game, after behaviour cloning when the config
names a teacher, as a :class:`~parlour.training.session.Learner` of the one session loop
(:func:`parlour.training.session.run_session`): one update is SB3's rollout and its ``train()``, exactly the steps of
SB3's own ``learn`` loop; its callback takes the self-play snapshots and hands each step of the envs to the session,
which evaluates at the exact multiples of ``train.eval_every``. Imported only where SB3 trains.

Checkpoints are written, and a stop is honoured, only between an update and the next rollout: there the whole
training state (network, optimizer, random states, the games in progress, the last observations, the session's
cadence and the snapshot pool) is on hand, so a resumed run equals one that never stopped. Snapshot files that leave
the pool are deleted only once a checkpoint that no longer needs them is written. The run folder it trains into is
:mod:`parlour.training.run`'s.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from parlour.baselines.base import Policy
from parlour.baselines.features import Features, field_index, with_features
from parlour.baselines.policy_file import PolicyFile, check_compatible, table_for
from parlour.baselines.registry import lookup
from parlour.baselines.sb3_zip import read_meta
from parlour.envs import make as make_env
from parlour.envs.fileio import atomic_write, read_json
from parlour.training.checkpoints import (
    is_checkpoint,
    read_checkpoint,
    rng_state,
    set_rng_state,
    write_checkpoint,
)
from parlour.training.config import ACTIVATIONS, SELF_PLAY, TrainConfig
from parlour.training.policies import checkpoint_meta, export_policy, save_checkpoint, training_record
from parlour.training.run import (
    CHECKPOINT_NAME,
    CLONE_STEM,
    PRETRAIN_CLONE,
    PRETRAIN_DATA,
    PRETRAIN_FILE,
    RunError,
    Session,
    Stop,
    TrainingStopped,
    does_not_fit,
    evaluations,
    old_zip,
)
from parlour.training.session import Progress, Within, periodic_evaluation, resolve_for
from parlour.training.single_agent import SingleAgentEnv


def _learner_seat(cfg: TrainConfig) -> int | str:
    return "random" if cfg.learner.seat == "random" else int(cfg.learner.seat)


def _snapshot_policy(cfg: TrainConfig, path: Path) -> Policy:
    table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
    return PolicyFile(path, table, label=f"self@{path.stem}")


def _pool(cfg: TrainConfig, snapshots: list[Path]) -> list[Policy]:
    pool = [resolve_for(cfg, s) for s in cfg.opponents if s != SELF_PLAY]
    if SELF_PLAY in cfg.opponents:
        pool += [_snapshot_policy(cfg, p) for p in snapshots]
    return pool


def _make_env_fn(cfg: TrainConfig, index: int, snapshots: list[Path], seed: int) -> Any:
    worker = cfg.train.vec_env == "subproc"

    def thunk() -> SingleAgentEnv:
        if worker:
            # Ctrl-C reaches the whole process group: the main process stops the run and closes the workers.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return SingleAgentEnv(
            cfg.game.name,
            _pool(cfg, snapshots),
            env_kwargs={"num_players": cfg.game.num_players, **cfg.game.options},
            learner_seat=_learner_seat(cfg),
            seed=seed * 1000 + index,
            features=cfg.ppo.features,
            observation_fields=cfg.ppo.observation_fields,
            opponent_draw=cfg.opponent_draw,
        )

    return thunk


def vec_env(cfg: TrainConfig, snapshots: list[Path]) -> Any:
    """The learner's ``train.n_envs`` games: scalar envs in this process or one each, or a batch on the JAX core."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if cfg.train.vec_env == "jax":
        from parlour.training.jax_vec_env import sb3_vec_env

        seat = _learner_seat(cfg)
        return sb3_vec_env(
            cfg.game.name,
            cfg.train.n_envs,
            num_players=cfg.game.num_players,
            options=dict(cfg.game.options),
            opponents=list(cfg.opponents),
            learner_seat=None if seat == "random" else int(seat),
            opponent_draw=cfg.opponent_draw,
            seed=cfg.seed,
        )
    fns = [_make_env_fn(cfg, i, snapshots, cfg.seed) for i in range(cfg.train.n_envs)]
    return SubprocVecEnv(fns) if cfg.train.vec_env == "subproc" else DummyVecEnv(fns)


def _timed_vec_env(venv: Any) -> Any:
    """Wrap a VecEnv so that the seconds spent stepping and resetting environments are counted."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class Timed(VecEnvWrapper):
        env_seconds = 0.0

        def reset(self) -> Any:
            t = time.perf_counter()
            out = self.venv.reset()
            Timed.env_seconds += time.perf_counter() - t
            return out

        def step_async(self, actions: np.ndarray) -> None:
            self._t = time.perf_counter()
            self.venv.step_async(actions)

        def step_wait(self) -> Any:
            out = self.venv.step_wait()
            Timed.env_seconds += time.perf_counter() - self._t
            return out

    return Timed(venv)


#: The spawn key of :func:`initial_rng`'s seed (a stream of the run's seed that nothing else draws from).
INITIAL_EVAL_STREAM = 0x5E0


@contextmanager
def initial_rng(cfg: TrainConfig) -> Iterator[None]:
    """The process-wide random streams (Python's, NumPy's legacy global, torch's CPU and CUDA ones) for the evaluation
    at step 0: seeded from the run's seed alone inside, and put back as they were after. The training that follows
    draws exactly what it would have drawn without this evaluation, and a policy that samples its actions
    (``learner.deterministic: false``) samples the same ones when the point is rebuilt after the run
    (:func:`parlour.training.publish.initial_point.initial_point`)."""
    import random

    import torch

    seed = int(np.random.SeedSequence(cfg.seed, spawn_key=(INITIAL_EVAL_STREAM,)).generate_state(1)[0])
    python, legacy = random.getstate(), np.random.get_state()
    # CUDA's states only where the process already uses CUDA (a CPU run must not start it here)
    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=cuda):  # torch's states, put back on leaving
        random.seed(seed)
        np.random.seed(seed)
        torch.default_generator.manual_seed(seed)
        if cuda:
            torch.cuda.manual_seed_all(seed)
        try:
            yield
        finally:
            random.setstate(python)
            np.random.set_state(legacy)


class _ModelPolicy(Policy):
    """The model being trained, as a policy (for periodic evaluation)."""

    name = "ppo"

    def __init__(
        self, model: Any, deterministic: bool, features: tuple[Features, ...] = (), keep: np.ndarray | None = None
    ) -> None:
        self.model = model
        self.deterministic = deterministic
        self.features = features
        self.keep = keep

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        action, _ = self.model.predict(
            with_features(self.features, observation, self.keep, action_mask),
            action_masks=action_mask.astype(bool),
            deterministic=self.deterministic,
        )
        return int(action)


def model_policy(cfg: TrainConfig, model: Any) -> Policy:
    """The SB3 model being trained, as the policy its periodic evaluations play (its input the config's feature sets
    and observation fields, greedy or sampled as ``learner.deterministic`` says)."""
    keep = field_index(cfg.game.name, cfg.game.num_players, cfg.game.options, cfg.ppo.observation_fields)
    return _ModelPolicy(model, cfg.learner.deterministic, lookup(cfg.ppo.features, cfg.game.name), keep)


def new_model(cfg: TrainConfig, venv: Any) -> Any:
    """A MaskablePPO of the config's network and hyper-parameters, seeded with the run's seed."""
    import torch
    from sb3_contrib import MaskablePPO

    ppo = cfg.ppo
    policy: Any = "MlpPolicy"
    skip: dict[str, Any] = {}
    if ppo.skip_features:
        from parlour.baselines.features import size
        from parlour.training.networks import SkipFeaturesPolicy

        policy, skip = SkipFeaturesPolicy, {"skip": size(lookup(ppo.features, cfg.game.name))}
    return MaskablePPO(
        policy,
        venv,
        learning_rate=ppo.learning_rate,
        n_steps=ppo.n_steps,
        batch_size=ppo.batch_size,
        n_epochs=ppo.n_epochs,
        gamma=ppo.gamma,
        gae_lambda=ppo.gae_lambda,
        clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef,
        vf_coef=ppo.vf_coef,
        max_grad_norm=ppo.max_grad_norm,
        policy_kwargs={
            "net_arch": list(ppo.net_arch),
            "activation_fn": getattr(torch.nn, ACTIVATIONS[ppo.activation]),
            **skip,
        },
        seed=cfg.seed,
        device=cfg.train.device,
        verbose=0,
    )


def _vec_chain(venv: Any) -> list[Any]:
    """``venv`` and every VecEnv it wraps, outermost first."""
    chain = [venv]
    while hasattr(chain[-1], "venv"):
        chain.append(chain[-1].venv)
    return chain


def venv_state(venv: Any) -> dict[str, Any]:
    """The training envs' state (for an exact resume): each game's (:meth:`SingleAgentEnv.get_state`, or the JAX
    batch's own ``get_state``) and the episode statistics ``VecMonitor`` keeps for the logs."""
    from stable_baselines3.common.vec_env import VecMonitor

    chain = _vec_chain(venv)
    base = chain[-1]
    out: dict[str, Any] = {"envs": base.get_state() if hasattr(base, "get_state") else venv.env_method("get_state")}
    for v in chain:
        if isinstance(v, VecMonitor):
            out["monitor"] = {"returns": np.asarray(v.episode_returns), "lengths": np.asarray(v.episode_lengths)}
    return out


def set_venv_state(venv: Any, state: dict[str, Any], source: str) -> None:
    """Restore :func:`venv_state` into freshly built training envs; one line naming ``source`` if it does not fit."""
    from stable_baselines3.common.vec_env import VecMonitor

    chain = _vec_chain(venv)
    base = chain[-1]
    try:
        envs = state["envs"]
        if hasattr(base, "set_state"):
            base.set_state(envs)
        else:
            if not isinstance(envs, list) or len(envs) != base.num_envs:
                raise ValueError(
                    f"it holds {len(envs) if isinstance(envs, list) else 'no'} envs, the run has {base.num_envs}"
                )
            for i, env_state in enumerate(envs):
                venv.env_method("set_state", env_state, indices=[i])
        for v in chain:
            if isinstance(v, VecMonitor) and "monitor" in state:
                v.episode_returns = np.asarray(state["monitor"]["returns"], np.float32).reshape(v.num_envs)
                v.episode_lengths = np.asarray(state["monitor"]["lengths"], np.int32).reshape(v.num_envs)
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{source}: the training envs saved in this checkpoint do not fit the run ({exc})") from None


def save_resume_checkpoint(
    model: Any, folder: Path, meta: dict[str, Any], session: dict[str, Any] | None = None
) -> Path:
    """The model's whole training state as a pickle-free checkpoint (:mod:`parlour.training.checkpoints`): the
    policy's and optimizer's tensors, the counters and the random states; and, once training has started, the
    training envs, the last observations and the callback's ``session`` state -- everything the next rollout depends
    on, so that a resume equals a run that never stopped. Written between an update and the next rollout only."""
    state: dict[str, Any] = {
        "policy": model.policy.state_dict(),
        "optimizer": model.policy.optimizer.state_dict(),
        "counters": {"num_timesteps": int(model.num_timesteps), "n_updates": int(model._n_updates)},
        "rng": rng_state(),
    }
    if model._last_obs is not None and model.get_env() is not None:
        state["rollout"] = {
            "last_obs": np.asarray(model._last_obs),
            "last_episode_starts": np.asarray(model._last_episode_starts),
            "ep_info_buffer": [dict(e) for e in (model.ep_info_buffer or [])],
            "venv": venv_state(model.get_env()),
        }
    if session is not None:
        state["session"] = session
    return write_checkpoint(folder, meta | {"timesteps": int(model.num_timesteps), "trainer": "sb3"}, state)


def load_resume_checkpoint(model: Any, folder: Path, meta: dict[str, Any], state: Any = None) -> int:
    """Load a checkpoint of :func:`save_resume_checkpoint` into ``model`` (built from the run's config), after
    checking that it was trained for this config's table; returns its step. ``state``: the checkpoint already
    read (with its table checked), else it is read here. The training envs' state is restored by
    :func:`restore_rollout`."""
    if state is None:
        saved, state = read_checkpoint(folder)
        check_compatible(saved, meta, str(folder))  # meta holds this config's table
    source = str(folder / "state.json")
    try:
        model.policy.load_state_dict(state["policy"])
        model.policy.optimizer.load_state_dict(state["optimizer"])
        counters = state["counters"]
        model.num_timesteps = int(counters["num_timesteps"])
        model._n_updates = int(counters["n_updates"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise does_not_fit(folder, "network", exc) from None
    set_rng_state(state["rng"], source)
    return int(model.num_timesteps)


def restore_rollout(model: Any, folder: Path, state: dict[str, Any]) -> bool:
    """Put the training envs, the last observations and the episode statistics of a checkpoint back (``False``: the
    checkpoint has none -- it was written before training started, or by an earlier Parlour)."""
    from collections import deque

    rollout = state.get("rollout")
    if rollout is None:
        return False
    source = str(folder / "state.json")
    venv = model.get_env()
    set_venv_state(venv, rollout["venv"], source)
    try:
        obs = np.asarray(rollout["last_obs"])
        starts = np.asarray(rollout["last_episode_starts"])
        expected = (venv.num_envs, *venv.observation_space.shape)
        if obs.shape != expected or starts.shape != (venv.num_envs,):
            raise ValueError(f"observations of shape {obs.shape}, the run's are {expected}")
        model._last_obs = obs.astype(venv.observation_space.dtype)
        model._last_episode_starts = starts.astype(bool)
        model.ep_info_buffer = deque(
            ({"r": float(e["r"]), "l": int(e["l"]), "t": float(e["t"])} for e in rollout["ep_info_buffer"]),
            maxlen=model._stats_window_size,
        )
        model.ep_success_buffer = deque(maxlen=model._stats_window_size)  # SB3 makes both or neither on learn()
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(f"{source}: the rollout saved in this checkpoint does not fit the run ({exc})") from None
    return True


def train_sb3(cfg: TrainConfig, run: Path, session: Session) -> dict:
    """The SB3 trainer's run (:class:`parlour.training.trainers.sb3.SB3Trainer`): MaskablePPO on one seat, new or
    resumed from the run's checkpoint, through the one session loop (behaviour cloning first when the config names a
    teacher)."""
    import torch

    from parlour.training.session import run_session

    torch.set_num_threads(cfg.train.torch_threads)
    learner = SB3Learner(cfg, run, session)
    return run_session(cfg, run, learner, learner.done_steps, learner.marks, session)


class SB3Learner:
    """MaskablePPO as :func:`parlour.training.session.run_session` drives it: built from the config, the run's
    checkpoint (or, behind ``--trust-pickle``, an earlier Parlour's SB3 zip) loaded into it."""

    trainer = "sb3"
    header: list[str] = []  # SB3's own logger writes the session's progress.csv (and TensorBoard's events)

    def __init__(self, cfg: TrainConfig, run: Path, session: Session) -> None:
        from stable_baselines3.common.vec_env import VecMonitor

        self.cfg, self.run, self.session = cfg, run, session
        probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
        self.meta = checkpoint_meta(
            probe,
            {
                "config": json.loads(json.dumps(asdict(cfg))),
                "features": list(cfg.ppo.features),
                "observation_fields": list(cfg.ppo.observation_fields),
            },
        )
        self.latest = run / "checkpoints" / CHECKPOINT_NAME
        saved = self._saved_state()
        self.venv = _timed_vec_env(VecMonitor(vec_env(cfg, _pool_snapshots(run, saved))))
        self.model = new_model(cfg, self.venv)
        self.resumed: dict[str, Any] = (saved or {}).get("session") or {}
        self.fresh = False
        if saved is not None:
            self.done_steps = self._resume(saved)
        elif session.resume and (old := old_zip(run)) is not None and session.trust_pickle:
            from sb3_contrib import MaskablePPO

            check_compatible(read_meta(old), self.meta, str(old))
            self.model = MaskablePPO.load(old, env=self.venv, device=cfg.train.device)  # unpickles: trusted
            self.done_steps = int(self.model.num_timesteps)
        else:
            self.done_steps, self.fresh = 0, True
        self.marks = self._marks()
        self.callback: PeriodicCallback | None = None
        self.sb3_callback: Any = None
        self.iteration = 0

    def _saved_state(self) -> dict[str, Any] | None:
        """The run's resume checkpoint's state (checked against this config's table), if it is resumed from one."""
        if not (self.session.resume and is_checkpoint(self.latest)):
            return None
        saved_meta, saved = read_checkpoint(self.latest)
        check_compatible(saved_meta, self.meta, str(self.latest))  # meta holds this config's table
        counted = (saved.get("counters") or {}).get("num_timesteps") if isinstance(saved, dict) else None
        if counted != saved_meta.get("timesteps"):
            raise RunError(
                f"{self.latest}: parlour.json says step {saved_meta.get('timesteps')!r}, its state step {counted!r}; "
                "a checkpoint Parlour wrote agrees with itself"
            )
        return dict(saved)

    def _resume(self, saved: dict[str, Any]) -> int:
        done_steps = load_resume_checkpoint(self.model, self.latest, self.meta, saved)
        if not restore_rollout(self.model, self.latest, saved) and done_steps > 0:
            # an earlier Parlour's checkpoint, written mid-rollout without the games in progress: fresh deals from
            # here on (the same ones on every resume from this step), so this run no longer equals an unstopped one
            print(
                f"{self.latest} holds no training envs (an earlier Parlour wrote it): the run continues on fresh "
                "deals from this step",
                flush=True,
            )
            self.venv.seed(int(np.random.SeedSequence([self.cfg.seed, done_steps]).generate_state(1)[0]))
        return done_steps

    def _marks(self) -> dict[str, int]:
        """The session's cadence: the checkpoint's, or (a checkpoint of an earlier Parlour, which kept none) the
        evaluations written up to its step decide where the next falls."""
        from parlour.training.session import new_marks

        every = self.cfg.train.eval_every
        marks = self.resumed.get("marks")
        keys = ("checkpoint", "evaluation", "eval_base", "eval_every")
        if isinstance(marks, dict) and set(marks) == set(keys) and all(type(marks[k]) is int for k in keys):
            return dict(marks)
        steps = self.done_steps
        marks = new_marks(steps, every)
        done = [r["timesteps"] for r in evaluations(self.run) if r["timesteps"] <= steps]
        if every and done:
            marks["eval_base"] = max(done) - max(done) % every
        return marks

    def behaviour_clone(self, stop: Stop) -> dict[str, Any] | None:
        if not (self.fresh and self.cfg.pretrain.teacher):
            return None
        cloned = _pretrain(self.cfg, self.model, self.run, self.meta, stop)
        # the clone alone, before any PPO step: what imitation reached (the distilled track's clone row)
        export_policy(self.model, self.run / CLONE_STEM, self.meta, training_record(self.meta, 0, pretrain=cloned))
        return cloned

    def begin(self, folder: Path, progress: Progress) -> None:
        from stable_baselines3.common.logger import configure

        model = self.model
        model.set_logger(configure(str(folder), ["csv", "tensorboard"]))
        # the last snapshot's step comes from the checkpoint: the snapshots fall on the same steps across a resume
        callback = PeriodicCallback(self.cfg, self.run, self.meta, progress, self._resumed_pool()["last_snap"])
        # SB3's learn() up to its loop, as it would run it for the rest of the budget
        self.total, self.sb3_callback = model._setup_learn(
            max(self.cfg.train.total_timesteps - self.done_steps, 0), callback, False, "MaskablePPO", False
        )
        self.callback = callback
        self.sb3_callback.on_training_start(locals(), globals())

    def update(self, started: float, within: Within) -> tuple[int, list[Any]]:
        """One turn of SB3's ``learn`` loop: a rollout (the callback hands each step to the session), then
        ``train()``."""
        model = self.model
        assert self.callback is not None
        self.callback.within = within
        model.collect_rollouts(model.env, self.sb3_callback, model.rollout_buffer, model.n_steps, True)
        self.iteration += 1
        model._update_current_progress_remaining(model.num_timesteps, self.total)
        model.dump_logs(self.iteration)
        model.train()
        return int(model.num_timesteps), []

    def save(self, steps: int, marks: dict[str, int]) -> None:
        # the envs are still open: their games in progress go into the checkpoint (a finished run's too, so that a
        # raised budget continues exactly)
        state = {**(self.callback.session_state() if self.callback else self._resumed_pool()), "marks": dict(marks)}
        save_resume_checkpoint(self.model, self.latest, self.meta, state)
        prune_snapshots(self.run, self.venv)

    def _resumed_pool(self) -> dict[str, Any]:
        return {
            "last_snap": int(self.resumed.get("last_snap", self.done_steps)),
            "snapshots": pool_snapshots(self.venv),
        }

    def evaluate(self, steps: int) -> dict[str, Any]:
        policy = model_policy(self.cfg, self.model)
        if steps == 0:
            with initial_rng(self.cfg):  # the training draws what it would without this point
                row = periodic_evaluation(self.cfg, self.run, policy, steps)
        else:
            row = periodic_evaluation(self.cfg, self.run, policy, steps)
        for name in self.cfg.eval.opponents:
            self.model.logger.record(f"eval/win_rate_vs_{name}", row[name]["win_rate"])
        return row

    def export(self, path: Path, steps: int, train_wall: float) -> None:
        model, meta = self.model, self.meta
        # SB3's own archive, for users who fine-tune with SB3 (loading it unpickles it: only behind --trust-pickle)
        save_checkpoint(model, self.run / "model.zip", meta | {"timesteps": model.num_timesteps})
        pre = self.run / PRETRAIN_FILE
        pretrained = read_json(pre, "pretraining report") if pre.is_file() else None
        record = training_record(
            meta,
            model.num_timesteps,
            evaluations=evaluations(self.run),
            train_wall_seconds=train_wall,
            pretrain=pretrained,
        )
        export_policy(model, path, meta, record)

    def finish(self, session_steps: int, started: float, wall: float) -> dict[str, Any]:
        env_seconds = type(self.venv).env_seconds
        return {
            "env_seconds": env_seconds,
            "env_share": env_seconds / wall if wall > 0 else None,
            "learner_share": 1 - env_seconds / wall if wall > 0 else None,
        }

    def close(self) -> None:
        if self.sb3_callback is not None:
            self.sb3_callback.on_training_end()
            self.callback = self.sb3_callback = None
        self.venv.close()


def _pool_snapshots(run: Path, saved: dict[str, Any] | None) -> list[Path]:
    """The self-play snapshots in the opponent pool: those the checkpoint resumed from names (in its order), else
    every snapshot in the run folder. A named one that is missing is refused in one line."""
    names = ((saved or {}).get("session") or {}).get("snapshots")
    if names is None:
        return sorted((run / "snapshots").glob("snap_*.json"))
    paths = [run / "snapshots" / f"{name}.json" for name in names]
    missing = [str(p) for p in paths if not p.is_file() or p.is_symlink() or p.name.startswith(".")]
    if missing:
        raise RunError(f"--resume: the checkpoint's opponent pool needs {', '.join(missing)}, which is missing")
    return paths


def _pretrain(cfg: TrainConfig, model: Any, run: Path, meta: dict[str, Any], stop: Stop) -> dict[str, Any]:
    """Behaviour cloning of ``cfg.pretrain.teacher`` on the learner's tables (a separate env, its own seed).

    Resumable: a stop while the teacher plays saves the games played so far and the random state
    (``checkpoints/pretrain_data``), and one while cloning keeps the network after its last whole epoch
    (``checkpoints/pretrain_clone``); the next start continues from there, with the same result as a run that never
    stopped. Raises :class:`TrainingStopped` after saving."""
    from parlour.training.pretrain import behaviour_clone, teacher_data

    pre = cfg.pretrain
    data_dir, clone_dir = run / "checkpoints" / PRETRAIN_DATA, run / "checkpoints" / PRETRAIN_CLONE
    saved: dict[str, Any] = read_checkpoint(data_dir)[1] if is_checkpoint(data_dir) else {}
    seconds = float(saved.get("seconds", 0.0))
    start = time.perf_counter()
    rng = np.random.default_rng([cfg.seed, 1])
    data: dict[str, np.ndarray] = saved.get("data", {})
    games = int(saved.get("games", 0))
    if games < pre.games:
        if saved:
            rng.bit_generator.state = saved["rng"]
        env = _make_env_fn(cfg, cfg.train.n_envs, [], cfg.seed)()  # the training tables, one index past the envs'
        data, games = teacher_data(
            env,
            resolve_for(cfg, pre.teacher),
            pre.games,
            rng,
            data=data,
            games_done=games,
            should_stop=lambda: stop.signum is not None,  # asked between games: a stop keeps the games played
        )
        seconds += time.perf_counter() - start
        start = time.perf_counter()
        write_checkpoint(
            data_dir,
            meta | {"timesteps": 0},
            {"games": games, "rng": rng.bit_generator.state, "data": data, "seconds": seconds},
        )
        if stop.signum is not None:
            raise TrainingStopped(
                stop.signum,
                f"during behaviour cloning ({games:,} of {pre.games:,} teacher games played); they are saved in "
                f"{data_dir}",
            )
    progress: dict[str, Any] = {}
    if is_checkpoint(clone_dir):
        progress = read_checkpoint(clone_dir)[1]
        model.policy.load_state_dict(progress["policy"])
        seconds += float(progress.get("seconds", 0.0))
    kept = [int(progress.get("epoch", 0))]  # the last whole epoch on disk

    def keep_epoch(epoch: int, optimizer: Any, generator: Any) -> None:
        kept[0] = epoch
        state = {
            "epoch": epoch,
            "policy": model.policy.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generator": generator.get_state(),
            "seconds": seconds + time.perf_counter() - start,
        }
        write_checkpoint(clone_dir, meta | {"timesteps": 0}, state)

    stats = behaviour_clone(
        model.policy,
        data,
        epochs=pre.epochs,
        batch_size=pre.batch_size,
        learning_rate=pre.learning_rate,
        seed=cfg.seed,
        resume=progress or None,
        on_epoch=keep_epoch,
        should_stop=lambda: stop.signum is not None,
    )
    if stats is None:
        assert stop.signum is not None
        raise TrainingStopped(
            stop.signum,
            f"during behaviour cloning (epoch {kept[0]} of {pre.epochs} done); the teacher's games and the cloned "
            f"network are saved in {run / 'checkpoints'}",
        )
    seconds += time.perf_counter() - start
    report = {"teacher": pre.teacher, "games": pre.games, **stats, "seconds": seconds}
    atomic_write(run / PRETRAIN_FILE, json.dumps(report, indent=2))
    print(
        f"pretrained on {pre.teacher} ({pre.games} games, {int(stats['decisions'])} decisions): teacher's action "
        f"{stats['accuracy']:.3f} of the time, value RMSE {stats['value_rmse']:.3f}, {report['seconds']:.0f} s",
        flush=True,
    )
    return report


class PeriodicCallback(BaseCallback):
    """SB3's side of the session: self-play snapshots, each step of the envs handed to the session (its progress bar
    and the evaluation due there), the phase shown beside the bar."""

    def __init__(self, cfg: TrainConfig, run: Path, meta: dict[str, Any], progress: Progress, last_snap: int) -> None:
        super().__init__()
        self.cfg, self.run, self.meta, self.progress = cfg, run, meta, progress
        #: The step of the last self-play snapshot (kept in the checkpoint: see :meth:`session_state`).
        self._last_snap = last_snap
        #: What the session offers inside an update (set before each one).
        self.within: Within | None = None

    def _on_rollout_start(self) -> None:
        self.progress.phase("collecting")

    def _on_rollout_end(self) -> None:
        self.progress.phase("updating the network")

    def session_state(self) -> dict[str, Any]:
        """What the checkpoint keeps of this callback: the last snapshot's step and the snapshots in the pool."""
        return {"last_snap": int(self._last_snap), "snapshots": pool_snapshots(self.training_env)}

    def _on_step(self) -> bool:
        snap_every = self.cfg.self_play.snapshot_every
        if SELF_PLAY in self.cfg.opponents and snap_every > 0 and self.num_timesteps - self._last_snap >= snap_every:
            self._last_snap = self.num_timesteps
            self._snapshot()
        if self.within is not None:
            self.within.step(self.num_timesteps)
        return True

    def _snapshot(self) -> None:
        folder = self.run / "snapshots"
        record = training_record(self.meta, self.num_timesteps)
        path = export_policy(self.model, folder / f"snap_{self.num_timesteps:010d}", self.meta, record)
        self.training_env.env_method("add_opponent", _snapshot_policy(self.cfg, path))
        pool = self.training_env.get_attr("pool")[0]
        # the newest max_snapshots stay in the pool; the files of the others go at the next checkpoint
        names = sorted(p.name for p in pool if p.name.startswith("self@"))
        keep = [
            p for p in pool if not p.name.startswith("self@") or p.name in names[-self.cfg.self_play.max_snapshots :]
        ]
        self.training_env.env_method("set_opponents", keep)


def prune_snapshots(run: Path, venv: Any) -> None:
    """Delete the snapshot files no longer in the pool (after a checkpoint that no longer needs them)."""
    keep = set(pool_snapshots(venv))
    for old in sorted((run / "snapshots").glob("snap_*.json")):
        if old.stem not in keep:
            old.unlink()
            old.with_suffix(".safetensors").unlink(missing_ok=True)


def pool_snapshots(venv: Any) -> list[str]:
    """The names (file stems) of the learner's snapshots in the training envs' opponent pool, in pool order."""
    try:
        pool = venv.get_attr("pool")[0]
    except AttributeError:  # the JAX batch holds batched bots only: no snapshots
        return []
    return [p.name[5:] for p in pool if p.name.startswith("self@")]
