"""What a training session does around its trainer's updates: the periodic evaluations of the policy being trained
(one line each, appended to ``evaluations.jsonl``), the final evaluation at the config's tables, the learning curve,
and the one session loop (:func:`run_session`) of every trainer -- SB3, the jitted JAX PPO and RLlib, each a
:class:`Learner` -- with its behaviour-cloning step, its cadence of evaluations and checkpoints, its progress bar, its
stops and its budget. :mod:`parlour.training.run` holds the run folder below them."""

from __future__ import annotations

import csv
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from parlour.baselines import resolve
from parlour.baselines.base import Policy
from parlour.baselines.policy_file import PolicyFile, table_for
from parlour.envs.fileio import append_text, atomic_write
from parlour.training.config import TrainConfig
from parlour.training.evaluation.matchups import play_matchup, run_evaluation, write_report
from parlour.training.run import POLICY_STEM, Session, evaluations


def resolve_for(cfg: TrainConfig, spec: str, label: str | None = None) -> Policy:
    """A policy spec of the config (opponent, evaluation entry) at the config's table."""
    game = cfg.game
    return resolve(spec, game.name, game.num_players, game.options, trust_pickle=cfg.trust_pickle, label=label)


def format_evaluation(row: dict[str, Any], num_players: int) -> str:
    """One line for a periodic evaluation: the step, its games (``eval.periodic_games`` counts deals, each played once
    per seat) and the win rate against each opponent."""
    parts = [
        f"vs {k} {v['win_rate']:.3f} ({v['win_ci'][0]:.3f}-{v['win_ci'][1]:.3f})"
        for k, v in row.items()
        if isinstance(v, dict)
    ]
    games = next((v["games"] for v in row.values() if isinstance(v, dict)), 0)
    d = games // num_players if num_players else 0
    deals = f"{d} deal{'s' if d != 1 else ''} × {num_players} seats = " if d and games % num_players == 0 else ""
    return f"evaluation at step {row['timesteps']:,} ({deals}{games} games each): win rate " + ", ".join(parts)


def periodic_evaluation(cfg: TrainConfig, run: Path, policy: Policy | Path, timesteps: int) -> dict[str, Any]:
    """Play the policy (or the policy file at a path) against each evaluation opponent on ``eval.periodic_games``
    deals and append the row to ``evaluations.jsonl``; returns the row."""
    row = evaluation_row(cfg, policy, timesteps)
    append_text(run / "evaluations.jsonl", json.dumps(row) + "\n")
    return row


def exported_evaluation(cfg: TrainConfig, run: Path, timesteps: int, write: Callable[[Path], object]) -> dict[str, Any]:
    """:func:`periodic_evaluation` of a trainer's policy as its policy file: ``write(path)`` exports it to
    ``checkpoints/periodic`` (the scalar env plays files, not a trainer's live weights), then it is played."""
    periodic = run / "checkpoints" / "periodic"
    write(periodic)
    return periodic_evaluation(cfg, run, periodic.with_suffix(".json"), timesteps)


def evaluation_row(cfg: TrainConfig, policy: Policy | Path, timesteps: int) -> dict[str, Any]:
    """:func:`periodic_evaluation`'s row, written nowhere: the policy (or the policy file at a path) against each
    evaluation opponent on the first ``eval.periodic_games`` deals of ``eval.seed_set``."""
    if isinstance(policy, Path):
        table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
        policy = PolicyFile(policy, table, deterministic=cfg.learner.deterministic, label="ppo")
    row: dict[str, Any] = {"timesteps": timesteps, "time": time.time()}
    for name in cfg.eval.opponents:
        m = play_matchup(
            cfg.game.name,
            policy,
            resolve_for(cfg, name),
            num_players=cfg.game.num_players,
            games=cfg.eval.periodic_games,
            seed_set=cfg.eval.seed_set,
            env_kwargs=cfg.game.options,
        ).summary()
        row[name] = {k: m[k] for k in ("games", "win_rate", "win_ci", "mean_reward")}
    return row


def final_evaluation(cfg: TrainConfig, run: Path, progress: bool) -> dict[str, Any]:
    """The trained policy (and the config's reference bots) against every evaluation opponent."""
    table = table_for(cfg.game.name, cfg.game.num_players, cfg.game.options)
    trained = PolicyFile(run / f"{POLICY_STEM}.json", table, deterministic=cfg.learner.deterministic, label="ppo")
    report = run_evaluation(
        cfg.game.name,
        [trained, *(resolve_for(cfg, n) for n in cfg.eval.reference)],
        [resolve_for(cfg, n) for n in cfg.eval.opponents],
        num_players=cfg.game.num_players,
        games=cfg.eval.games,
        seed_set=cfg.eval.seed_set,
        env_kwargs=cfg.game.options,
        progress=progress,
    )
    write_report(report, run, "final_eval")
    return report


def plot_learning_curve(run: Path) -> Path:
    """Periodic evaluation win rates (and the training episodes' mean reward) against timesteps."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    rows = evaluations(run)
    # the opponents' entries (a JAX evaluation's row also says its "backend")
    names = [k for k, v in (rows[0] if rows else {}).items() if k not in ("timesteps", "time") and isinstance(v, dict)]
    for name in names:
        xs = [r["timesteps"] for r in rows if name in r]
        ax1.plot(xs, [r[name]["win_rate"] for r in rows if name in r], marker="o", label=f"vs {name}")
        ax1.fill_between(
            xs,
            [r[name]["win_ci"][0] for r in rows if name in r],
            [r[name]["win_ci"][1] for r in rows if name in r],
            alpha=0.15,
        )
    ax1.set(xlabel="timesteps", ylabel="win rate (95% CI)", title="periodic evaluation", ylim=(0, 1))
    if names:
        ax1.legend()
    xs, ys = [], []
    for session in sorted((run / "logs").glob("session_*")):
        progress = session / "progress.csv"
        if progress.is_file() and progress.stat().st_size:
            with open(progress) as f:
                for r in csv.DictReader(f):
                    if r.get("rollout/ep_rew_mean") and r.get("time/total_timesteps"):
                        xs.append(float(r["time/total_timesteps"]))
                        ys.append(float(r["rollout/ep_rew_mean"]))
    ax2.plot(xs, ys)
    ax2.set(xlabel="timesteps", ylabel="mean episode reward", title="training episodes")
    fig.tight_layout()
    out = atomic_write(run / "learning_curve.png", lambda path: fig.savefig(path, dpi=100, format="png"))
    plt.close(fig)
    return out


def keep_evaluations_to(run: Path, last: int) -> None:
    """Drop the periodic evaluations after step ``last`` (the last one the checkpoint resumed from knows of): a
    session killed after its last checkpoint wrote them, and the resumed run evaluates those steps again."""

    def later(row: Any) -> bool:
        steps = row.get("timesteps") if isinstance(row, dict) else None
        return isinstance(steps, int) and steps > last

    rows = evaluations(run)  # a line that is not JSON is refused there, naming the file
    if not any(later(r) for r in rows):
        return
    path = run / "evaluations.jsonl"
    lines = [line for line in path.read_text().splitlines() if line.strip()]  # the lines evaluations() read
    atomic_write(path, "".join(f"{line}\n" for line, r in zip(lines, rows, strict=True) if not later(r)))


class Progress:
    """The session's progress bar (tqdm, the rate averaged over the whole session, redrawn every second so that the
    time keeps moving through an update or an evaluation, with the phase under way beside it) and its printed lines;
    with ``enabled`` false, lines are printed and nothing else is shown."""

    def __init__(self, enabled: bool, total: int, initial: int, desc: str) -> None:
        self.bar: Any = None
        self._ticking = threading.Event()
        if enabled:
            from tqdm import tqdm

            # smoothing=0: the rate (and the ETA) averages the session, updates and evaluations included, instead of
            # jumping between fast rollouts and slow updates
            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="step", smoothing=0, dynamic_ncols=True)
            threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        while not self._ticking.wait(1.0):
            if self.bar is not None:
                self.bar.refresh()

    def phase(self, text: str) -> None:
        """Show what the session is doing (collecting, updating, evaluating, stopping)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)

    def update(self, steps: int) -> None:
        """The run is at ``steps`` (tqdm throttles the redraws)."""
        if self.bar is not None:
            self.bar.update(steps - self.bar.n)

    def say(self, line: str) -> None:
        """A line above the bar (printed without one)."""
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def close(self, steps: int, text: str) -> None:
        self._ticking.set()
        if self.bar is not None:
            self.bar.n = steps
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.close()


class Within:
    """What a learner may call inside an update (SB3 does, after each step of its envs): the session's progress bar,
    and :meth:`step`, which moves it and runs the periodic evaluation due at that step (evaluations then fall on the
    exact multiples of ``train.eval_every``, whatever the update's length). A learner that steps whole updates at a
    time calls nothing: the session evaluates between its updates."""

    def __init__(self, progress: Progress, step: Callable[[int], None]) -> None:
        self.progress = progress
        self.step = step


class Learner(Protocol):
    """One trainer's learner as :func:`run_session` drives it: an update at a time, between which the session
    evaluates, checkpoints and stops. Adding a trainer is a module with one of these and a ``train`` function that
    builds it and calls :func:`run_session` (docs/layout.md shows the smallest)."""

    #: The ``trainer:`` it belongs to (``metrics.json``'s ``trainer``; the progress bar's label).
    trainer: str
    #: The progress log's columns (``logs/session_K/progress.csv``), the step count first; empty: the learner writes
    #: its own log into the session's folder (SB3's logger, TensorBoard included).
    header: list[str]

    def behaviour_clone(self, stop: Any) -> dict[str, Any] | None:
        """The session's first step: imitate ``pretrain.teacher`` if the config names one and the run has not cloned
        yet, export the clone (``clone.json``) and return its report; ``None``: nothing to clone (no teacher, a
        trainer without imitation, or a run resumed past it). A stop (``stop.signum``) keeps what was done and
        raises :class:`~parlour.training.run.TrainingStopped`."""

    def begin(self, folder: Path, progress: Progress) -> None:
        """The session starts training (after cloning): ``folder`` is its log folder (``logs/session_K``)."""

    def update(self, started: float, within: Within) -> tuple[int, list[Any]]:
        """One update (its rollout and its learning); returns the run's steps after it and the log row's values
        after the step count (the session began at ``time.perf_counter()`` ``started``)."""

    def save(self, steps: int, marks: dict[str, int]) -> None:
        """Write the resume checkpoint at ``steps`` with the session's cadence ``marks``."""

    def evaluate(self, steps: int) -> dict[str, Any]:
        """The periodic evaluation at ``steps``, appended to ``evaluations.jsonl``; returns its row."""

    def export(self, path: Path, steps: int, train_wall: float) -> None:
        """Write the trained policy as a policy file at ``path`` (the record says ``steps`` and the training time)."""

    def finish(self, session_steps: int, started: float, wall: float) -> dict[str, Any]:
        """The learner's own entries of ``metrics.json`` once the budget is reached (the session began at
        ``time.perf_counter()`` ``started`` and trained ``wall`` seconds)."""

    def close(self) -> None:
        """Release what the learner holds (envs, workers); called however the session ends."""


def new_marks(steps: int, every: int) -> dict[str, int]:
    """The cadence of a run started at ``steps``: the last checkpoint, the last evaluation, the multiple of
    ``eval_every`` the next evaluation counts from, and that ``eval_every``."""
    return {
        "checkpoint": steps,
        "evaluation": steps,
        "eval_base": steps - steps % every if every else steps,
        "eval_every": every,
    }


def run_session(
    cfg: TrainConfig, run: Path, learner: Learner, steps: int, marks: dict[str, int], session: Session
) -> dict[str, Any]:
    """The one session loop of every trainer: from ``steps`` with the checkpoint's cadence ``marks``, clone the
    teacher first where the run has not (:meth:`Learner.behaviour_clone`), evaluate at the multiples of
    ``train.eval_every`` (and once at step 0), update, checkpoint every ``train.checkpoint_every`` steps, until the
    budget or a stop; then export the policy, run the final evaluation and write ``metrics.json``. Between two
    updates the whole state is in hand: the evaluation due there (also one a session killed after its checkpoint left
    undone), then a stop or the end of the budget, else the next update and the checkpoint due after it. A stop asked
    for during an update or an evaluation waits for it; the run raises
    :class:`~parlour.training.run.TrainingStopped` after saving."""
    from parlour.training.run import Stop, previous_metrics

    budget = cfg.train
    if session.resume:
        keep_evaluations_to(run, marks["evaluation"])
    every = budget.eval_every
    if marks["eval_every"] != every:
        # eval_every changed on resume (or an earlier Parlour's checkpoint): the multiples of the new one from here on
        marks["eval_base"], marks["eval_every"] = steps - steps % every if every else steps, every
    done_steps = steps
    previous = previous_metrics(run) if session.resume else {}
    progress: Progress | None = None
    try:
        with Stop() as stop:
            cloned = learner.behaviour_clone(stop)
            if cloned is not None:
                if session.clone_only:
                    return {"finished": False, "timesteps": 0, "clone": cloned}
                _cloned(run, learner, marks)
            progress = Progress(session.progress, budget.total_timesteps, steps, f"train ({learner.trainer})")
            steps, start, wall = _train(cfg, run, learner, steps, marks, stop, progress, previous)
    finally:
        if progress is not None:
            progress.close(steps, "stopping" if stop.signum is not None else "done")
        learner.close()
    return _finish(cfg, run, learner, steps, steps - done_steps, start, wall, previous, session)


def _cloned(run: Path, learner: Learner, marks: dict[str, int]) -> None:
    """After the clone: PPO starts from the cloned weights, also on a resume after a stop from here on; the
    teacher's games and the cloning's own checkpoints are then kept in the checkpoint just written."""
    from parlour.training.run import PRETRAIN_CLONE, PRETRAIN_DATA

    learner.save(0, marks)
    for done in (PRETRAIN_DATA, PRETRAIN_CLONE):
        shutil.rmtree(run / "checkpoints" / done, ignore_errors=True)


def _train(
    cfg: TrainConfig,
    run: Path,
    learner: Learner,
    steps: int,
    marks: dict[str, int],
    stop: Any,
    progress: Progress,
    previous: dict[str, Any],
) -> tuple[int, float, float]:
    """The updates of :func:`run_session` with their evaluations and checkpoints, until the budget or a stop (then
    :class:`~parlour.training.run.TrainingStopped` after the checkpoint); returns the steps, the
    ``time.perf_counter()`` the training began at and its seconds."""
    from parlour.training.run import CHECKPOINT_NAME, TrainingStopped, new_session, wall_before, write_metrics

    budget, every = cfg.train, cfg.train.eval_every
    # step 0 is a point of the curve too (the untrained network, or the clone), once per run: a resume at step 0
    # whose session already wrote it does not write it again. The evaluation draws nothing from the training state,
    # so the run trains as it would without it.
    written = [r.get("timesteps") for r in evaluations(run) if isinstance(r, dict)]
    initial = [bool(every) and steps == 0 and 0 not in written]

    def evaluate_if_due(at: int) -> None:
        if every and (initial[0] or at - marks["eval_base"] >= every):
            initial[0] = False
            marks["eval_base"], marks["evaluation"] = at - at % every, at
            progress.phase("evaluating")
            row = learner.evaluate(at)
            progress.say(format_evaluation(row, cfg.game.num_players))
            progress.phase("training")

    def step(at: int) -> None:
        progress.update(at)
        if stop.signum is not None:
            progress.phase("stopping after this update")
        evaluate_if_due(at)

    within = Within(progress, step)
    folder = new_session(run)
    learner.begin(folder, progress)
    start = time.perf_counter()
    with open(folder / "progress.csv", "w", newline="") if learner.header else _no_log() as f:
        log = csv.writer(f) if f is not None else None
        if log is not None:
            log.writerow(learner.header)
        while True:
            evaluate_if_due(steps)
            if steps >= budget.total_timesteps or stop.signum is not None:
                break
            steps, values = learner.update(start, within)
            if log is not None and f is not None:
                log.writerow([steps, *values])
                f.flush()
            progress.update(steps)
            if steps - marks["checkpoint"] >= budget.checkpoint_every:
                marks["checkpoint"] = steps
                learner.save(steps, marks)
                # the time so far beside each checkpoint (a session killed outright loses only what followed)
                write_metrics(
                    run, {"timesteps": steps, "train_wall_seconds": wall_before(previous) + time.perf_counter() - start}
                )
    wall = time.perf_counter() - start
    learner.save(steps, marks)
    if stop.signum is not None:
        write_metrics(run, {"timesteps": steps, "train_wall_seconds": wall_before(previous) + wall})
        latest = run / "checkpoints" / CHECKPOINT_NAME
        raise TrainingStopped(
            stop.signum, f"at step {steps:,} of {budget.total_timesteps:,}; checkpoint saved to {latest}"
        )
    return steps, start, wall


@contextmanager
def _no_log() -> Iterator[None]:
    yield None


def _finish(
    cfg: TrainConfig,
    run: Path,
    learner: Learner,
    steps: int,
    session_steps: int,
    start: float,
    wall: float,
    previous: dict[str, Any],
    session: Session,
) -> dict[str, Any]:
    """:func:`run_session`'s end at the budget: the policy file, the final evaluation, the curve, ``metrics.json``."""
    from parlour.training.run import FINAL_REPORT, wall_before, write_metrics

    train_wall = wall_before(previous) + wall
    learner.export(run / POLICY_STEM, steps, train_wall)
    own = learner.finish(session_steps, start, wall)
    report = final_evaluation(cfg, run, session.progress) if session.final_eval else None
    plot_learning_curve(run)
    metrics = {
        "finished": True,
        "trainer": learner.trainer,
        "timesteps": steps,
        "session_steps": session_steps,
        "session_wall_seconds": wall,
        "train_wall_seconds": train_wall,
        "steps_per_second": session_steps / wall if wall > 0 else None,
        "env_seconds": None,
        "env_share": None,
        "learner_share": None,
        **own,
        "final_eval": dict(report["policies"]) if report is not None else None,
    }
    write_metrics(run, metrics)
    return {**metrics, FINAL_REPORT: report}  # the whole report for the caller to print; metrics.json keeps rates
