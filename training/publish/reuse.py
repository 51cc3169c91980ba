"""Whether a run folder or a seed's policy file already holds what a config asks for: reused as it is, resumed
to its budget, or refused (another config's run) in one line naming the keys that differ."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parlour.baselines.policy_file import read_spec
from parlour.envs.fileio import FolderLock, read_json
from parlour.training.publish.schema import NOT_TRAINING


def training_part(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a resolved config (as a dict) that determines the trained weights."""
    out = {k: v for k, v in config.items() if k not in NOT_TRAINING or NOT_TRAINING[k] is not None}
    for section, keys in NOT_TRAINING.items():
        if keys is not None and section in out:
            out[section] = {k: v for k, v in out[section].items() if k not in keys}
    return out


def is_current(path: Path, cfg: Any) -> bool:
    """Whether the policy file at ``path`` was trained from ``cfg`` (up to :data:`NOT_TRAINING`; keys the file's
    config lacks count as their defaults)."""
    if not path.is_file():
        return False
    from parlour.training.config import config_record, with_defaults

    trained = with_defaults(read_spec(path).get("training", {}).get("config", {}))
    return trained is not None and training_part(trained) == training_part(config_record(cfg))


#: Config keys a run may differ in from the config asked for and still be that config's run: how often it
#: checkpoints and how many threads it uses change nothing it produces. (``train.total_timesteps`` is compared on
#: its own: a larger budget continues a run that matches in everything else.)
UNCHANGING = ("train.checkpoint_every", "train.torch_threads")


@dataclass(frozen=True)
class Reuse:
    """What a command that reuses runs may do with a run folder for the config it is asked for (:func:`reuse`)."""

    #: ``new`` (no run there), ``finished`` (it finished this config: its result stands), ``resume`` (stopped, or
    #: finished a smaller budget, and matches in everything else: continue it), ``mismatch`` (another config's run:
    #: neither reused nor resumed under this config's name).
    state: str
    #: Dotted key -> (the run's value, the value asked for): why it is a ``mismatch``.
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def describe(self) -> str:
        """The differing keys in one line."""
        return "; ".join(f"{k}: {old!r} in the run, {new!r} asked" for k, (old, new) in self.changes.items())


def reuse(run: Path, cfg: Any) -> Reuse:
    """Whether the run folder ``run`` holds ``cfg``'s run (issue 37, "reuse only what matches"): its saved config
    (``RUN/config.yaml``) is compared with ``cfg``, key by key, up to :data:`UNCHANGING`.

    A budget larger than the run's continues it (``resume``) if everything else matches; a budget smaller than what
    the run trained, or any other difference, is a ``mismatch``. The saved config is read, not validated: comparing
    it must neither import what it names nor refuse a run's own ``file.py:NAME`` opponents."""
    from parlour.training.config import read_config
    from parlour.training.run import RunError, checkpoint_step, config_changes, is_finished, is_run

    if not is_run(run):
        return Reuse("new")
    saved_path = run / "config.yaml"
    if saved_path.is_symlink():
        raise RunError(f"{saved_path} is a symbolic link; refusing to read it (a run folder holds none)")
    saved = read_config(saved_path)
    changes = {k: v for k, v in config_changes(saved, cfg).items() if k not in UNCHANGING}
    budget = changes.pop("train.total_timesteps", None)
    if changes:
        return Reuse("mismatch", changes if budget is None else {**changes, "train.total_timesteps": budget})
    if budget is None and is_finished(run, cfg):
        return Reuse("finished")
    if budget is not None and (budget[0] > budget[1] or is_finished(run, cfg)):
        # it trained toward another budget, past the one asked (a rollout can overshoot): its result is not this
        # budget's, and it cannot be continued to it
        return Reuse("mismatch", {"train.total_timesteps": budget})
    if is_finished(run, saved):
        return Reuse("resume")  # a larger budget: continue it
    step = checkpoint_step(run) or 0
    if step > cfg.train.total_timesteps:
        return Reuse("mismatch", {"train.total_timesteps": (saved.train.total_timesteps, cfg.train.total_timesteps)})
    return Reuse("resume")


def refuse_mismatch(run: Path, state: Reuse, what: str, remedy: str) -> None:
    """Raise ``RunError`` in one line if ``run`` holds another config's run (``state`` from :func:`reuse`)."""
    from parlour.training.run import RunError

    if state.state == "mismatch":
        raise RunError(
            f"{run} holds {what} trained from another config ({state.describe()}); it is neither reused nor "
            f"resumed: {remedy}"
        )


def train_or_reuse(cfg: Any, run: Path, state: Reuse, command: str) -> dict[str, Any]:
    """A reused run's metrics (``state``: what :func:`run_reuse` found), training it first unless it is finished:
    afresh, or resumed toward the config's budget. No final evaluation: the track evaluates every seed itself."""
    from parlour.training.train import train

    if state.state == "finished":
        return run_metrics(run)
    return train(cfg, run, resume=state.state == "resume", command=command, progress=False, final_eval=False)


def run_metrics(run: Path) -> dict[str, Any]:
    """A finished run's ``metrics.json``, refused in one line naming it unless it is a mapping."""
    metrics = read_json(run / "metrics.json", "metrics file")
    if not isinstance(metrics, dict):
        raise ValueError(f"{run / 'metrics.json'} is not a valid metrics file (not a JSON object)")
    return metrics


def fresh_or_reused(run: Path, cfg: Any, what: str) -> Reuse:
    """The distilled track's run folder for ``cfg``: another config's run there is deleted (through
    :func:`parlour.training.train.delete_run`: only a run folder Parlour made, and only while no process holds it)
    and trained afresh. The distilled track retrains rather than refuses: its run folders are the command's working
    copies, never published (what it publishes is the exported policy file, already found stale from its config)."""
    from parlour.training.run import delete_run

    state = reuse(run, cfg)
    if state.state == "mismatch":
        print(f"{run}: {what} was started from another config ({state.describe()}); training it afresh")
    leftover = state.state == "new" and run.is_dir() and any(p.name != FolderLock.NAME for p in run.iterdir())
    if state.state == "mismatch" or leftover:  # leftover: a run stopped before it wrote its config
        delete_run(run, "parlour baselines")
        return Reuse("new")
    return state
