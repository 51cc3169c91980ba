"""A run folder: what it holds, how it is made, reopened, resumed and deleted, its markers and lock, its metrics, and
the stop signals every trainer honours. Below every trainer (:mod:`parlour.training.trainers`); it imports none.

The run folder holds: ``.parlour-run.json`` (the marker that makes it a run folder: ``--overwrite`` deletes nothing
else), ``.parlour-lock`` (held while a process uses the folder), ``config.yaml`` (resolved), ``command.txt``,
``versions.json``, ``logs/session_K/`` (CSV and TensorBoard, one session per start or resume), ``evaluations.jsonl``
(periodic evaluations), ``checkpoints/latest/`` (the resume checkpoint, written atomically every
``train.checkpoint_every`` steps and at every stop: tensors in safetensors and counters and random states in JSON,
no pickle; see :mod:`parlour.training.checkpoints`), ``checkpoints/pretrain_data/`` and ``pretrain_clone/`` (behaviour
cloning's own, until PPO starts), ``snapshots/`` (self-play), ``model.zip`` (the final model as SB3's archive, for
fine-tuning with SB3; loading it unpickles it, so Parlour loads it only behind ``--trust-pickle``), ``policy.json`` +
``policy.safetensors`` (the final policy as a safe policy file: what evaluation loads), ``final_eval.json`` /
``final_eval.md``, ``learning_curve.png`` and ``metrics.json`` (throughput, the environment's share of the time, wall
time). Every file is written atomically (a unique temporary file renamed over it) and never through a link.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import signal
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from parlour.baselines.sb3_zip import read_meta
from parlour.envs.fileio import FolderLock, LockedError, append_text, atomic_write, read_json
from parlour.training.checkpoints import is_checkpoint
from parlour.training.checkpoints import read_meta as read_checkpoint_meta
from parlour.training.config import TrainConfig, to_yaml, with_defaults

#: The resume checkpoint's folder under ``RUN/checkpoints/`` (both trainers).
CHECKPOINT_NAME = "latest"


#: The trained policy as a safe policy file in the run folder: ``policy.json`` + ``policy.safetensors``.
POLICY_STEM = "policy"


#: The key of a trainer's returned metrics that holds the final evaluation's whole report (not written to
#: ``metrics.json``, which keeps its win rates; the report itself is ``final_eval.json``).
FINAL_REPORT = "final_report"


#: The clone's policy file (behaviour cloning alone, before PPO) in a run that imitates a teacher.
CLONE_STEM = "clone"


class RunError(RuntimeError):
    """A run folder that cannot be used as asked."""


class TrainingStopped(RuntimeError):
    """A run stopped by SIGINT (Ctrl-C) or SIGTERM, after saving its work: ``--resume`` continues it."""

    def __init__(self, signum: int, what: str) -> None:
        self.signum = signum
        #: The shell's convention for a process ended by a signal.
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name} {what}")


class RunFinished(RunError):
    """``--resume`` of a run that has reached its budget and written its results: nothing to do."""

    def __init__(self, run: Path, total: int) -> None:
        super().__init__(
            f"--resume: {run} is finished (it reached its {total:,} steps and wrote metrics.json); nothing to do. "
            f"To train it further, raise its budget: parlour train --resume --out {shlex.quote(str(run))} "
            "train.total_timesteps=N"
        )


class Stop:
    """SIGINT/SIGTERM while training: noted here; the trainer finishes the rollout and update (or evaluation) under way,
    writes the checkpoint and stops at the next boundary. A second Ctrl-C stops at once (without saving: the run
    resumes from its last checkpoint). Only the main thread can take signals; elsewhere this does nothing."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signum is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signum = signum


def evaluations(run: Path) -> list[dict[str, Any]]:
    """The periodic evaluations of a run (``evaluations.jsonl``), oldest first."""
    path = run / "evaluations.jsonl"
    if not path.is_file():
        return []
    rows = []
    for k, line in enumerate(path.read_text().splitlines()):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise RunError(f"{path}: line {k + 1} is not JSON ({exc})") from None
    return rows


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for pkg in ("parlour", "numpy", "gymnasium", "pettingzoo", "torch", "stable-baselines3", "sb3-contrib"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def has_checkpoint(run: Path) -> bool:
    """Whether a run folder holds a checkpoint to resume training from."""
    return is_checkpoint(run / "checkpoints" / CHECKPOINT_NAME) or old_zip(run) is not None


def checkpoint_step(run: Path) -> int | None:
    """The step a run's checkpoint was written at (``None``: no checkpoint)."""
    folder = run / "checkpoints" / CHECKPOINT_NAME
    if is_checkpoint(folder):
        return int(read_checkpoint_meta(folder)["timesteps"])
    zipped = old_zip(run)
    return int(read_meta(zipped).get("timesteps", 0)) if zipped is not None else None


#: Config keys a resumed run may change (``parlour train --resume --out RUN key=value``): its budget and how
#: often it checkpoints, evaluates and how many threads it uses; everything else is the run that was started.
RESUMABLE_KEYS = (
    "train.total_timesteps",
    "train.checkpoint_every",
    "train.eval_every",
    "train.torch_threads",
    "rllib.ray_address",  # where the run computes, not what it computes (--ray-address on the command line)
)


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v and k != "options":
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def config_changes(before: TrainConfig, after: TrainConfig) -> dict[str, tuple[Any, Any]]:
    """Dotted key -> (before, after) for every value that differs."""
    a, b = _flat(asdict(before)), _flat(asdict(after))
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


def _saved_path(run: Path) -> Path:
    saved = run / "config.yaml"
    if not saved.is_file() or saved.is_symlink():
        raise RunError(f"--resume: {run} holds no run (no config.yaml); start it without --resume")
    return saved


def read_saved_config(run: Path) -> TrainConfig:
    """A run's ``config.yaml``, typed but not validated: nothing it names is imported or reached (for comparing a
    run's config with another, e.g. before reusing a finished run)."""
    from parlour.training.config import read_config

    return read_config(_saved_path(run))


def resume_config(
    run: Path, overrides: list[str], *, trust: bool = False, trust_pickle: bool = False
) -> tuple[TrainConfig, dict[str, tuple[Any, Any]]]:
    """The config a resumed run continues with: the one it was started with, plus explicit ``overrides`` of
    :data:`RESUMABLE_KEYS` (an override equal to the saved value changes nothing). Returns it and the changes.

    Unless ``trust`` (``--trust``) or ``trust_pickle`` (``--trust-pickle``, which trusts everything the run names),
    every value that reaches beyond the run folder (an address, an importable name, a process count:
    :data:`~parlour.training.config.UNTRUSTED_KEYS`) must be given again in ``overrides``; otherwise it is refused in
    one line naming the key, before anything is imported or reached. A saved ``trust_pickle: true`` needs
    ``trust_pickle``."""
    from parlour.training.config import check_untrusted, read_config, validate

    saved = _saved_path(run)
    before = read_config(saved)
    after = read_config(saved, overrides)
    changes = config_changes(before, after)
    _check_resumable(run, changes)
    if not trust_pickle:
        # a key given on the command line is confirmed: it equals the saved value (any other change of a fixed key
        # was refused just now) or is a resumable key the user set; --trust confirms them all
        given = {item.split("=", 1)[0].strip() for item in overrides}
        check_untrusted(after, str(saved), given, trust_keys=trust)
    _check_checkpoint_config(run, after)
    validate(after)
    return after, changes


def _check_resumable(run: Path, changes: dict[str, tuple[Any, Any]]) -> None:
    fixed = {k: v for k, v in changes.items() if k not in RESUMABLE_KEYS}
    if fixed:
        what = "; ".join(f"{k}: started with {old!r}, now {new!r}" for k, (old, new) in fixed.items())
        raise RunError(
            f"--resume: {run} continues the run it started, so these cannot change ({what}); a resume may change "
            f"only {list(RESUMABLE_KEYS)}: start a new run (another --out) for the rest"
        )


#: The file that marks a folder as a Parlour run folder (written when the run starts; holds the run's id).
RUN_MARKER = ".parlour-run.json"


#: Every name a run folder may hold (what ``parlour train`` writes): ``--overwrite`` deletes a folder only if it
#: carries :data:`RUN_MARKER` and holds nothing else.
RUN_ENTRIES = frozenset(
    {
        RUN_MARKER,
        FolderLock.NAME,
        "config.yaml",
        "command.txt",
        "versions.json",
        "logs",
        "evaluations.jsonl",
        "checkpoints",
        "snapshots",
        "model.zip",
        f"{POLICY_STEM}.json",
        f"{POLICY_STEM}.safetensors",
        f"{CLONE_STEM}.json",
        f"{CLONE_STEM}.safetensors",
        "final_eval.json",
        "final_eval.md",
        "learning_curve.png",
        "metrics.json",
        "pretrain.json",
    }
)


def _protected(folder: Path) -> str | None:
    """Why ``folder`` may never be deleted (the current folder, a home folder, the root, or a folder holding one
    of them), or ``None``."""
    target = folder.resolve()
    homes = {Path.home().resolve()}
    if os.environ.get("HOME"):
        homes.add(Path(os.environ["HOME"]).resolve())
    for what, place in [("the current folder", Path.cwd().resolve())] + [("a home folder", h) for h in homes]:
        if target == place or target in place.parents:
            return f"it is {what}" if target == place else f"it holds {what} ({place})"
    if target == Path(target.anchor):
        return "it is the root of the file system"
    return None


def check_deletable(run: Path, who: str = "--overwrite") -> None:
    """Refuse, with one line naming ``run`` and what it holds, to delete anything but a run folder Parlour made:
    one that carries :data:`RUN_MARKER` and nothing unknown to it, and is not the current folder, a home folder
    or the root. ``who`` starts the message (the flag or command that asked)."""
    why = _protected(run)
    if why is not None:
        raise RunError(f"{who}: refusing to delete {run}: {why}")
    if run.is_symlink() or not run.is_dir():
        raise RunError(f"{who}: refusing to delete {run}: it is not a folder")
    entries = sorted(p.name for p in run.iterdir())
    shown = ", ".join(entries[:8]) + (f", … ({len(entries)} entries)" if len(entries) > 8 else "")
    marker = run / RUN_MARKER
    try:
        ok = marker.is_file() and not marker.is_symlink() and "run_id" in read_json(marker, "run marker")
    except ValueError:
        ok = False
    if not ok:
        raise RunError(
            f"{who}: refusing to delete {run}: it is not a run folder Parlour made (no {RUN_MARKER}); it "
            f"holds {shown}. {'Choose another --out, or delete' if who == '--overwrite' else 'Move it away, or delete'} it "
            "yourself"
        )
    unknown = [e for e in entries if e not in RUN_ENTRIES]
    if unknown:
        raise RunError(
            f"{who}: refusing to delete {run}: besides its run it holds {', '.join(unknown[:8])}, which "
            f"Parlour did not write. Move those away{', or choose another --out' if who == '--overwrite' else ''}"
        )


def delete_run(run: Path, who: str) -> None:
    """Delete the run folder ``run`` -- the one way any Parlour command deletes a run: only a folder Parlour made
    (:func:`check_deletable`), and only while no process holds it (its lock is taken first, so a live run is refused
    naming its holder). ``who`` names the command in the one-line refusal."""
    if not run.exists() and not run.is_symlink():
        return
    check_deletable(run, who)
    try:
        lock = FolderLock(run, "run folder").acquire()
    except LockedError as exc:
        raise RunError(f"{who}: refusing to delete {run}: {exc}") from None
    try:
        check_deletable(run, who)  # again under the lock: nothing was added while it was taken
        clear_run(run)
    finally:
        lock.release()
    (run / FolderLock.NAME).unlink(missing_ok=True)
    run.rmdir()


def clear_run(run: Path) -> None:
    """Delete a run folder's contents (checked by :func:`check_deletable`), keeping the lock file we hold."""
    for entry in run.iterdir():
        if entry.name == FolderLock.NAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def is_run(run: Path) -> bool:
    """Whether ``run`` is a run folder that ``--resume`` can continue (it holds its config)."""
    return (run / "config.yaml").is_file()


def is_finished(run: Path, cfg: TrainConfig) -> bool:
    """Whether the run reached ``cfg``'s budget and wrote its final metrics."""
    try:
        metrics = read_json(run / "metrics.json", "metrics file")
    except ValueError:
        return False
    return (
        isinstance(metrics, dict)
        and metrics.get("finished", "session_steps" in metrics) is True
        and int(metrics.get("timesteps", 0)) >= cfg.train.total_timesteps
    )


def prepare_run(cfg: TrainConfig, run: Path, resume: bool, command: str, overwrite: bool = False) -> TrainConfig:
    """Create (or, with ``resume``, reopen) the run folder; the caller holds its lock. Returns the config the run
    uses.

    A resumed run uses the config it was started with; ``cfg`` may differ from it only in :data:`RESUMABLE_KEYS`
    (anything else is refused), and a change is written to ``config.yaml`` and noted in ``command.txt``. A new run
    goes into a missing or empty folder, or, with ``overwrite``, replaces a run folder Parlour made (see
    :func:`check_deletable`).
    """
    saved = run / "config.yaml"
    if resume:
        _check_no_links(run)
        changes = config_changes(read_saved_config(run), cfg)  # cfg was read and checked by the caller
        _check_resumable(run, changes)  # what the caller asks to change
        _check_checkpoint_config(run, cfg)  # what the folder's own files disagree on
        if changes:
            atomic_write(saved, to_yaml(cfg))  # the next resume continues with these values
            note = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changes.items())
            command = f"{command}  # resumed with {note}"
    else:
        if any(p.name != FolderLock.NAME for p in run.iterdir()):
            if not overwrite:
                raise RunError(
                    f"run folder {run} exists and is not empty: resume it with --resume, start afresh with "
                    "--overwrite, or choose another --out"
                )
            check_deletable(run)
            clear_run(run)
        marker = {"format": "parlour-run/1", "run_id": uuid.uuid4().hex, "env": cfg.game.name, "created": time.time()}
        atomic_write(run / RUN_MARKER, json.dumps(marker, indent=2))
        atomic_write(saved, to_yaml(cfg))
        atomic_write(run / "versions.json", json.dumps(versions(), indent=2))
    append_text(run / "command.txt", command + "\n")
    return cfg


def _check_no_links(run: Path) -> None:
    """A run folder Parlour wrote holds no symbolic links: one planted in a handed-over folder is refused before
    anything is written, so no write follows it out of the folder."""
    for folder in (run, *(run / d for d in ("checkpoints", "logs", "snapshots"))):
        if not folder.is_dir():
            continue
        for entry in [folder, *folder.iterdir(), *(p for d in folder.iterdir() if d.is_dir() for p in d.iterdir())]:
            if entry.is_symlink():
                raise RunError(f"{entry} is a symbolic link; refusing to write through it (a run folder holds none)")


def open_run(run: Path, resume: bool, overwrite: bool) -> FolderLock:
    """Make the run folder if it is new and take its lock (a second process is refused, naming the holder)."""
    if run.exists() and (run.is_symlink() or not run.is_dir()):
        raise RunError(f"run folder {run} is not a folder")
    if not resume and overwrite and run.is_dir():
        check_deletable(run)  # refuse before anything is written into it
    if not resume:
        run.mkdir(parents=True, exist_ok=True)
    try:
        return FolderLock(run, "run folder").acquire()
    except LockedError as exc:
        raise RunError(str(exc)) from None


def _check_checkpoint_config(run: Path, cfg: TrainConfig) -> None:
    """A resume continues what the checkpoints were trained with: a run folder whose ``config.yaml`` differs from the
    config its checkpoints record (beyond :data:`RESUMABLE_KEYS`) was edited or mixed up, and is refused naming the
    keys -- whatever a resume runs is then exactly the run that was checkpointed."""

    now = _flat(json.loads(json.dumps(asdict(cfg))))
    for name in (CHECKPOINT_NAME, PRETRAIN_DATA, PRETRAIN_CLONE):
        folder = run / "checkpoints" / name
        if not is_checkpoint(folder):
            continue
        recorded = read_checkpoint_meta(folder).get("config")
        if not isinstance(recorded, dict):
            raise RunError(f"{folder / 'parlour.json'}: records no config (a checkpoint Parlour wrote records its own)")
        # a key added to the schema after the checkpoint was written held its default then (``ppo.network``, say)
        then = _flat(with_defaults(recorded) or recorded)
        differ = [k for k in sorted(then.keys() | now.keys()) if k not in RESUMABLE_KEYS and then.get(k) != now.get(k)]
        if differ:
            what = "; ".join(f"{k}: checkpoint {then.get(k)!r}, config.yaml {now.get(k)!r}" for k in differ[:6])
            raise RunError(
                f"--resume: {run}'s config.yaml is not the config its checkpoint {folder} was trained with ({what}"
                f"{'; …' if len(differ) > 6 else ''}); a resume continues that run only: start a new run instead"
            )


def has_checkpoint_folder(run: Path) -> bool:
    """Whether the run holds this Parlour's (pickle-free) resume checkpoint."""
    return is_checkpoint(run / "checkpoints" / CHECKPOINT_NAME)


def has_work_or_damage(run: Path) -> bool:
    """:func:`_has_work`, counting a damaged checkpoint as work (a failed run's cleanup never deletes one, and never
    hides the error that ended the run behind the checkpoint's)."""
    try:
        return _has_work(run)
    except ValueError:  # CheckpointError: something is there
        return True


def _has_work(run: Path) -> bool:
    """Whether a run folder holds work to resume from: a checkpoint, or behaviour cloning's."""
    return has_checkpoint(run) or any(is_checkpoint(run / "checkpoints" / d) for d in (PRETRAIN_DATA, PRETRAIN_CLONE))


def does_not_fit(folder: Path, what: str, exc: BaseException) -> RunError:
    """The one-line refusal of a checkpoint whose state does not load into the model rebuilt from the run's config."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return RunError(f"{folder}: this checkpoint does not fit the run's {what} ({first})")


def old_zip(run: Path) -> Path | None:
    """An SB3 zip checkpoint written by an earlier Parlour (loading it unpickles it)."""
    path = run / "checkpoints" / "latest.zip"
    return path if path.is_file() else None


def new_session(run: Path) -> Path:
    """A new, empty log folder for this start or resume (``logs/session_K``, K one past the highest there): made
    afresh, so nothing planted in the run folder is written through."""
    numbers = [int(p.name[8:]) for p in (run / "logs").glob("session_*") if p.name[8:].isdigit()]
    folder = run / "logs" / f"session_{max(numbers, default=-1) + 1}"
    folder.mkdir(parents=True)
    return folder


def wall_before(previous: dict[str, Any]) -> float:
    """The training seconds of a run's earlier sessions, from the metrics they wrote."""
    return float(previous.get("train_wall_seconds", previous.get("session_wall_seconds", 0.0)))


def previous_metrics(run: Path) -> dict[str, Any]:
    """The metrics an earlier session of the run wrote (``{}`` if none); a broken file is named in the error."""
    path = run / "metrics.json"
    if not path.is_file():
        return {}
    metrics = read_json(path, "metrics file")
    if not isinstance(metrics, dict):
        raise RunError(f"{path} is not a metrics file (expected a JSON object)")
    return metrics


def write_metrics(run: Path, metrics: dict[str, Any]) -> None:
    atomic_write(run / "metrics.json", json.dumps(metrics, indent=2))


#: The pretraining report in a run folder (``pretrain`` in the config).
PRETRAIN_FILE = "pretrain.json"


#: Behaviour cloning's own checkpoints, under ``RUN/checkpoints/``: the teacher's games (``data``) and the cloned
#: network after each epoch (``clone``).
PRETRAIN_DATA, PRETRAIN_CLONE = "pretrain_data", "pretrain_clone"


@dataclass(frozen=True)
class Session:
    """How one training session runs (the flags of ``parlour train``), as every trainer receives it."""

    #: Continue the run folder from its latest checkpoint.
    resume: bool = False
    #: Show progress bars.
    progress: bool = True
    #: Evaluate the final policy at the config's tables (``parlour baselines`` evaluates every seed itself).
    final_eval: bool = True
    #: Load an SB3 zip checkpoint of an earlier Parlour (unpickling it).
    trust_pickle: bool = False
    #: Stop after behaviour cloning (the distilled track's clone row).
    clone_only: bool = False
