"""The stored results of the published tracks (``<env>_<track results>.json``, named by
:mod:`parlour.baselines.tracks`): reading and checking them, the BASELINES.md file itself, and the helpers every
track's section formats its figures with."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines.policy_file import read_spec
from parlour.baselines.tracks import TRACKS, parse_results_name
from parlour.envs.fileio import FileSafetyError, atomic_write, read_json
from parlour.training.scenarios import games_per_deal
from parlour.training.stats import (
    format_ci,
)


def check_baselines_md(out: Path) -> None:
    """Refuse, in one line, a symbolic link at ``BASELINES.md``: writing through it would overwrite what it points to,
    and replacing it would delete a link someone made on purpose (the committed file is a regular one). Anything else
    there is Parlour's own page, rewritten."""
    if out.is_symlink():
        raise FileSafetyError(
            f"{out} is a symbolic link (to {os.readlink(out)}); refusing to write through it or replace it: remove the "
            "link (or put a regular file in its place) and run the command again"
        )


def write_baselines_md(out: Path, text: str) -> Path:
    """Write ``BASELINES.md`` atomically (:func:`check_baselines_md` first); returns ``out``."""
    check_baselines_md(out)
    return atomic_write(out, text)


def seed_stats(r: dict[str, Any], labels: list[str], opponents: list[str]) -> dict[str, Any]:
    """What a table says about the training seeds ``labels`` of a stored result ``r``, derived from its matchups
    alone (each cell's win rate and per-deal wins), so a rendering never reads a stale stored aggregate:

    - ``per_table``: the mean over seeds at each table with its Student-t interval (:func:`stats.seed_interval`);
    - ``normalised``: each seed's normalised score averaged over the tables, then over seeds (none without the
      random and expert bots' rows);
    - ``standing[bot][table]``: the paired per-deal comparison with the heuristic and the expert bots
      (:func:`stats.paired_comparison`; none without them)."""
    from parlour.training.stats import normalised, paired_comparison, seed_interval

    cells = {(m["policy"], m["opponent"]): m for m in r["matchups"]}
    rates = np.array([[cells[(p, o)]["win_rate"] for o in opponents] for p in labels], float)
    out: dict[str, Any] = {
        "seeds": len(labels),
        "per_table": {o: seed_interval(rates[:, i], (0.0, 1.0)) for i, o in enumerate(opponents)},
        "normalised": None,
        "standing": {},
    }
    refs = reference_bots(list(dict.fromkeys(m["policy"] for m in r["matchups"])))
    if refs is None:
        return out
    random_bot = "random" if all(("random", o) in cells for o in opponents) else None
    if random_bot is not None:
        low = np.array([cells[(random_bot, o)]["win_rate"] for o in opponents])
        high = np.array([cells[(refs[1], o)]["win_rate"] for o in opponents])
        try:
            out["normalised"] = seed_interval(normalised(rates, low, high).mean(axis=1))
        except ValueError:
            out["normalised"] = None  # a table where random and the expert tie: nothing to normalise by
    for bot in refs:
        out["standing"][bot] = {}
        for o in opponents:
            wins = [cells[(p, o)]["deal_wins"] for p in labels]
            out["standing"][bot][o] = paired_comparison(
                wins, cells[(bot, o)]["deal_wins"], games_per_deal(cells[(bot, o)])
            )
    return out


def aggregate_rows(name: str, stats: dict[str, Any], opponents: list[str]) -> list[str]:
    """A table's seed-aggregate row (``stats`` from :func:`seed_stats`): the mean over seeds with its Student-t
    interval; none for one seed."""
    n = stats["seeds"]
    if n < 2:
        return []
    values = [stats["per_table"][o] for o in opponents]
    return [
        f"| **{name}**, mean over {n} seeds | "
        + " | ".join(f"{a['value']:.3f} ({format_ci(a['ci'])})" for a in values)
        + " |"
    ]


def standing_text(comparison: dict[str, Any], bot: str) -> str:
    """``above X`` / ``below X`` / ``level with X`` with the paired difference and its interval."""
    lo, hi = comparison["ci"]
    word = {"above": "above", "below": "below", "level": "level with"}[comparison["standing"]]
    return f"{word} {bot} ({comparison['difference']:+.3f}, {lo:+.3f} to {hi:+.3f})"


def standing_lines(name: str, stats: dict[str, Any], opponents: list[str]) -> list[str]:
    """Where a family stands at each table against the heuristic and the expert (paired), and its normalised
    cross-table score."""
    parts = []
    for o in opponents:
        agg = stats["per_table"][o]
        against = ", ".join(standing_text(stats["standing"][b][o], b) for b in stats["standing"])
        parts.append(
            f"at the {o} table {agg['value']:.3f} ({format_ci(agg['ci'])})" + (f", {against}" if against else "")
        )
    tail = normalised_text(stats)
    return [f"- `{name}`: " + "; ".join(parts) + (f"; {tail}" if tail else "") + "."]


def normalised_text(stats: dict[str, Any]) -> str:
    """The normalised cross-table aggregate, or an empty string without one."""
    agg = stats.get("normalised")
    if not agg or stats["seeds"] < 2:
        return ""
    return f"normalised over the tables {agg['value']:.3f} ({format_ci(agg['ci'])})"


def minutes(seconds: float | None) -> str:
    """A wall time as printed in BASELINES.md: whole minutes, or seconds under one (never "0 min")."""
    if seconds is None:
        return "?"
    return f"{seconds:.0f} s" if seconds < 59.5 else f"{seconds / 60:.0f} min"


#: The keys of a stored result that hold wall-clock measurements (durations, timestamps): everything else in a results
#: file is a function of the configs, the seeds and the code, so a regeneration on any machine reproduces it
#: byte for byte once these are set aside (:func:`without_timings`; ``tests/test_regeneration.py``).
TIMING_KEYS = frozenset(
    {"evaluation_seconds", "cross_play_seconds", "train_wall_seconds", "pretrain_seconds", "train_hours", "time"}
)


def without_timings(value: Any) -> Any:
    """``value`` (a stored result, or any part of one) with every :data:`TIMING_KEYS` entry removed, at any depth:
    what two regenerations of the same result must agree on exactly."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


#: Each kind of stored result (see :func:`_results`) -> the keys its file must hold and their types.
RESULT_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "distilled": {
        "env": str,
        "num_players": int,
        "matchups": list,
        "policies": dict,
        "seeds": list,
        "seed_aggregate": dict,
        "spec_seeds": list,
        "shipped": dict,
        "ratings": dict,
    },
    "rl": {
        "env": str,
        "num_players": int,
        "matchups": list,
        "policies": dict,
        "families": dict,
        "spec_seeds": list,
        "shipped": dict,
    },
    "sweep": {"env": str, "family": str, "seeds": list, "steps": int, "settings": list, "rows": list, "levels": dict},
    "ablation": {
        "env": str,
        "family": str,
        "seeds": list,
        "steps": int,
        "settings": list,
        "rows": list,
        "levels": dict,
    },
    "exploit": {"env": str, "steps": int, "seeds": list, "games": int, "targets": list},
    "heldout": {"env": str, "matchups": list, "families": dict, "bots": list, "table": str},
}
#: What a results file that holds the right keys but not the right things in them raises while it is read.
MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError)


def results_file(folder: Path, env_name: str, kind: str) -> Path:
    """Where the stored result of the track ``kind`` (:data:`parlour.baselines.tracks.TRACKS`) for ``env_name``
    lives."""
    return folder / TRACKS[kind].results_name(env_name)


def read_results(path: Path, kind: str, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A stored results file of ``kind``; a missing, unreadable or malformed one -- not JSON, not an object, a key
    missing or of the wrong type -- raises ``ValueError`` in one line naming the file and what is wrong. ``keys``:
    check only these of :data:`RESULT_KEYS` (what the reader uses)."""
    data = read_json(path, f"{kind} results file")
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a valid {kind} results file (not a JSON object)")
    for key, kind_of in RESULT_KEYS[kind].items():
        if keys is not None and key not in keys:
            continue
        if key not in data:
            raise ValueError(f"{path} is not a valid {kind} results file (no {key!r})")
        if not isinstance(data[key], kind_of):
            want = kind_of.__name__ if isinstance(kind_of, type) else " or ".join(t.__name__ for t in kind_of)
            raise ValueError(
                f"{path} is not a valid {kind} results file ({key!r} is a {type(data[key]).__name__}, not a {want})"
            )
    if any(not isinstance(t, dict) or not isinstance(t.get("policy"), str) for t in data.get("targets", [])):
        raise ValueError(f"{path} is not a valid {kind} results file (a target is not an object with a 'policy')")
    return data


def malformed(path: Path | str, kind: str, exc: BaseException) -> ValueError:
    """The one-line error for a results file whose contents do not hold what rendering it needs."""
    what = f"no {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ValueError(f"{path} is not a valid {kind} results file ({what})")


def stored_results(folder: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Every stored result in ``folder`` by env, then track (each file named as its track declares:
    :func:`parlour.baselines.tracks.parse_results_name`), each checked by :func:`read_results`."""
    from parlour.envs import ENVIRONMENTS

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in folder.glob("*_results.json"):
        parsed = parse_results_name(path.name)
        if parsed is not None:
            env_name, kind = parsed
            out.setdefault(env_name, {})[kind] = read_results(path, kind)
    order = list(ENVIRONMENTS)
    return dict(sorted(out.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


#: The issue-15 goal a published baseline is held to, per table: beat the heuristic bot's own result there with
#: deal-clustered intervals apart, and close at least this share of the heuristic-to-expert gap at the heuristic's
#: table.
GAP_TARGET = 0.5


def reference_bots(names: list[str]) -> tuple[str, str] | None:
    """The game's heuristic and expert bots among ``names`` (``<game>_heuristic``, ``<game>_expert``)."""
    heuristic = [p for p in names if p.endswith("_heuristic")]
    expert = [p for p in names if p.endswith("_expert")]
    return (heuristic[0], expert[0]) if len(heuristic) == 1 and len(expert) == 1 else None


def ship_seed(source: Path, target: Path, shipped: dict[str, Any]) -> Path:
    """Ship the seed whose policy file is ``source`` as ``target`` (``<env>_<track>.json`` in the package's
    checkpoints): its spec with ``shipped`` added to its training record, and a copy of its weights beside it
    (``<env>_<track>.safetensors``, named in the spec), so that what ships holds together without the archive."""
    data = read_spec(source)
    weights = target.with_suffix(".safetensors")
    atomic_write(weights, (source.parent / data["weights"]["file"]).read_bytes())
    data["weights"]["file"] = weights.name
    data["training"].update(shipped)
    return atomic_write(target, json.dumps(data, indent=1, default=str) + "\n")
