"""The SB3 trainer's callback: atomic checkpoints, periodic evaluations at the multiples of ``train.eval_every``,
self-play snapshots, stopping on a signal, the progress bar (imported only where SB3 trains).

Checkpoints are written, and a stop is honoured, only between an update and the next rollout: there the whole
training state (network, optimizer, random states, the games in progress, the last observations, this callback's
cadence and snapshot pool) is on hand, so a resumed run equals one that never stopped. Snapshot files that leave the
pool are deleted only once a checkpoint that no longer needs them is written."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from parlour.training.config import SELF_PLAY, TrainConfig
from parlour.training.policies import export_policy, training_record
from parlour.training.run import CHECKPOINT_NAME, Stop, evaluations, write_metrics
from parlour.training.session import format_evaluation, periodic_evaluation
from parlour.training.train import StopAtBoundary, _snapshot_policy, initial_rng, model_policy, save_resume_checkpoint


class PeriodicCallback(BaseCallback):
    """Atomic checkpoints, periodic evaluations, self-play snapshots, stopping on a signal, the progress bar."""

    def __init__(
        self,
        cfg: TrainConfig,
        run: Path,
        env_name: str,
        meta: dict[str, Any],
        progress: bool,
        stop: Stop,
        wall_before: float = 0.0,
        resumed: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.cfg, self.run, self.env_name, self.meta, self.progress, self.stop = (
            cfg,
            run,
            env_name,
            meta,
            progress,
            stop,
        )
        #: Training seconds of the run's earlier sessions (a resumed run adds its sessions up).
        self.wall_before = wall_before
        #: The cadence state saved in the checkpoint resumed from (see :meth:`session_state`).
        self.resumed = resumed or {}

    def _on_training_start(self) -> None:
        self._started = time.perf_counter()
        # the last snapshot's step comes from the checkpoint: the snapshots fall on the same steps across a resume
        self._last = {"ckpt": self.num_timesteps, "snap": int(self.resumed.get("last_snap", self.num_timesteps))}
        self.bar = None
        self._ticking = threading.Event()
        if self.progress:
            from tqdm import tqdm

            # smoothing=0: the rate (and the ETA) averages the whole session, updates and evaluations
            # included, instead of jumping between fast rollouts and slow updates
            self.bar = tqdm(
                total=self.cfg.train.total_timesteps,
                initial=self.num_timesteps,
                desc="train",
                unit="step",
                smoothing=0,
                dynamic_ncols=True,
            )
            threading.Thread(target=self._tick, daemon=True).start()
        # Evaluations fall on the multiples of eval_every whatever the resumes (every seed's curve has the same
        # points), 0 among them: the policy before its first rollout (the untrained network, or the clone of a run
        # that imitates a teacher), once per run -- a resume at step 0 whose session already wrote that point does
        # not write it again. One owed at the resumed step -- a stop during the evaluation at the checkpoint's step
        # abandoned it, and the weights resumed are the ones it was to evaluate -- is done now.
        done = [r["timesteps"] for r in evaluations(self.run)]
        self._next_eval = self._eval_after(max(done, default=0))
        if self.cfg.train.eval_every > 0 and self.num_timesteps == 0 and 0 not in done:
            with initial_rng(self.cfg):  # the training draws what it would without this point
                self._evaluate_now()
        elif self.cfg.train.eval_every > 0 and self.num_timesteps >= self._next_eval:
            self._next_eval = self._eval_after(self.num_timesteps)
            self._evaluate_now()

    def _eval_after(self, step: int) -> int:
        every = self.cfg.train.eval_every
        return (step // every + 1) * every if every > 0 else 0

    def _tick(self) -> None:
        # redraw every second, so that elapsed time and ETA keep moving through an update or evaluation
        while not self._ticking.wait(1.0):
            if self.bar is not None:
                self.bar.refresh()

    def _phase(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)

    def _on_rollout_start(self) -> None:
        # between an update and the next rollout: the only place a run stops or checkpoints (see the module's doc)
        if self.stop.signum is not None:
            raise StopAtBoundary
        if self._due("ckpt", self.cfg.train.checkpoint_every):
            save_resume_checkpoint(
                self.model, self.run / "checkpoints" / CHECKPOINT_NAME, self.meta, self.session_state()
            )
            self.prune_snapshots()
            # the time so far beside each checkpoint: a session killed outright (no signal to catch) loses at most
            # the time since its last checkpoint from the run's total, as it loses those steps
            wall = self.wall_before + time.perf_counter() - self._started
            write_metrics(self.run, {"timesteps": int(self.num_timesteps), "train_wall_seconds": wall})
        self._phase("collecting")

    def session_state(self) -> dict[str, Any]:
        """What the checkpoint keeps of this callback: the last snapshot's step and the snapshots in the pool."""
        return {"last_snap": int(self._last["snap"]), "snapshots": pool_snapshots(self.training_env)}

    def prune_snapshots(self) -> None:
        """Delete the snapshot files no longer in the pool (after a checkpoint that no longer needs them)."""
        keep = set(pool_snapshots(self.training_env))
        for old in sorted((self.run / "snapshots").glob("snap_*.json")):
            if old.stem not in keep:
                old.unlink()
                old.with_suffix(".safetensors").unlink(missing_ok=True)

    def _on_rollout_end(self) -> None:
        self._phase("updating the network")

    def _say(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def _due(self, key: str, every: int) -> bool:
        if every > 0 and self.num_timesteps - self._last[key] >= every:
            self._last[key] = self.num_timesteps
            return True
        return False

    def _on_step(self) -> bool:
        # A stop asked for during a rollout is honoured at the next rollout's start (:meth:`_on_rollout_start`): the
        # rollout and its update finish first, so that nothing is lost and the checkpoint holds a whole state.
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)  # tqdm throttles the redraws
            if self.stop.signum is not None:
                self._phase("stopping after this rollout and its update")
        if SELF_PLAY in self.cfg.opponents and self._due("snap", self.cfg.self_play.snapshot_every):
            self._snapshot()
        if self.cfg.train.eval_every > 0 and self.num_timesteps >= self._next_eval:
            self._next_eval = self._eval_after(self.num_timesteps)
            self._evaluate_now()
        return True

    def _evaluate_now(self) -> None:
        """Evaluate (a stop asked for meanwhile waits for it: the run's curve keeps every point; a second Ctrl-C
        stops at once, and the run resumes from its last checkpoint)."""
        self._phase("evaluating")
        self._evaluate()
        self._phase("collecting")

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

    def _evaluate(self) -> None:
        row = periodic_evaluation(self.cfg, self.run, model_policy(self.cfg, self.model), self.num_timesteps)
        for name in self.cfg.eval.opponents:
            self.logger.record(f"eval/win_rate_vs_{name}", row[name]["win_rate"])
        self._say(format_evaluation(row, self.cfg.game.num_players))

    def on_stop(self) -> None:
        """The run stops at a rollout's start (:class:`StopAtBoundary`): SB3 did not end the training, so close here."""
        self._on_training_end()

    def _on_training_end(self) -> None:
        self._ticking.set()
        if self.bar is not None:
            self.bar.n = self.num_timesteps
            self.bar.set_postfix_str("stopping" if self.stop.signum is not None else "done", refresh=False)
            self.bar.close()


def pool_snapshots(venv: Any) -> list[str]:
    """The names (file stems) of the learner's snapshots in the training envs' opponent pool, in pool order."""
    try:
        pool = venv.get_attr("pool")[0]
    except AttributeError:  # the JAX batch holds batched bots only: no snapshots
        return []
    return [p.name[5:] for p in pool if p.name.startswith("self@")]
