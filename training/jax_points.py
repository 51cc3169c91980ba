"""A jitted run's policy played on the game's JAX core at as many deals as asked:
``python -m parlour.training.jax_points RUN_OR_POLICY_FILE --tables A,B --deals N``.

A learning curve's point (:mod:`parlour.training.jax_eval`, ``train.eval_backend: jax``) is one draw at
``eval.periodic_games`` deals; this plays the exported policy of a finished run -- its run folder, or a published
seed's policy file alone -- greedily against batched bots at any number of deals, to set beside the scalar
evaluation on the benchmark's deals. (Its own module: it reads configs and builds the trainer's network, which
:mod:`~parlour.training.jax_eval`, imported by both, must not.)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parlour.training.jax_eval import jax_evaluation, win_problem


def _trained_config(path: Path) -> Any:
    """The training config a policy file records, read as a handed-over run's config is (nothing it names that
    reaches beyond it is honoured: ``trusted=False``)."""
    import tempfile

    import yaml

    from parlour.baselines.policy_file import read_spec
    from parlour.training.config import load_config, with_defaults
    from parlour.training.run import RunError

    record = with_defaults(read_spec(path).get("training", {}).get("config", {}))
    if not record:
        raise RunError(f"{path} records no training config to rebuild its network from")
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "config.yaml"
        saved.write_text(yaml.safe_dump(record))
        return load_config(saved, [], trusted=False)


def evaluate_run(source: Path, tables: Sequence[str], deals: int, seed: int = 0) -> dict[str, Any]:
    """A jitted run's exported policy -- a finished run folder's ``policy.json``, or a policy file such as a
    published seed's -- read through the checked loader and played greedily on the game's JAX core against each
    batched bot in ``tables``, ``deals`` deals × every seat, from a key of ``seed``
    (:func:`~parlour.training.jax_eval.jax_evaluation`): how a curve point at that many deals would read, to set
    beside the scalar evaluation on the benchmark's deals.
    Refused in one line where it is no such policy."""
    import jax
    import jax.numpy as jnp

    from parlour.baselines.jax_bots import bots
    from parlour.baselines.policy_file import read_spec, read_weights
    from parlour.training.config import load_config
    from parlour.training.jax_ppo import PPO
    from parlour.training.run import RunError

    if source.is_dir():
        path = source / "policy.json"
        if not (source / "config.yaml").is_file() or not path.is_file():
            raise RunError(f"{source} is not a finished run folder (it needs config.yaml and the exported policy.json)")
        cfg = load_config(source / "config.yaml", [], trusted=False)
    elif source.is_file():
        path = source
        cfg = _trained_config(source)
    else:
        raise RunError(f"{source} is neither a run folder nor a policy file")
    if cfg.trainer != "jax":
        raise RunError(
            f"{source} was trained with trainer: {cfg.trainer}; this plays the jitted trainer's networks only"
        )
    known = bots(cfg.game.name)
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise RunError(f"no batched bot {unknown[0]!r} for {cfg.game.name}: choose from {sorted(known)}")
    if deals < 1:
        raise RunError(f"--deals must be at least 1, got {deals}")
    problem = win_problem(cfg.game.name, dict(cfg.game.options))
    if problem is not None:
        raise RunError(problem)
    ppo = PPO(cfg)
    params = {k: jnp.asarray(v) for k, v in read_weights(path, read_spec(path)).items()}
    return jax_evaluation(ppo, params, tables, deals * ppo.core.num_players, jax.random.PRNGKey(seed))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m parlour.training.jax_points RUN``: a jitted run's policy against batched bots on the JAX core."""
    import argparse
    import sys

    from parlour.training.run import RunError
    from parlour.training.stats import format_ci

    parser = argparse.ArgumentParser(
        prog="python -m parlour.training.jax_points",
        description="Play a finished jitted run's policy against batched bots on the game's JAX core (greedy, every "
        "deal once per seat) and print its win rates: a curve point at as many deals as asked.",
    )
    parser.add_argument("run", type=Path, help="a run folder (config.yaml and policy.json), or a policy file")
    parser.add_argument("--tables", default="random", help="batched bots, comma-separated (default random)")
    parser.add_argument("--deals", type=int, default=500, help="deals a table, each once per seat (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="the JAX key's seed (default 0)")
    args = parser.parse_args(argv)
    try:
        out = evaluate_run(args.run, [t for t in args.tables.split(",") if t], args.deals, args.seed)
    except (RunError, ValueError) as exc:
        print(f"python -m parlour.training.jax_points: {exc}", file=sys.stderr)
        return 2
    print(f"{args.run}: greedy, {args.deals} deals × every seat a table, JAX key seed {args.seed}")
    print("| table | games | win rate (95% CI) | mean reward |")
    print("|---|---:|---|---:|")
    for table, r in out.items():
        print(f"| {table} | {r['games']} | {r['win_rate']:.3f} ({format_ci(r['win_ci'])}) | {r['mean_reward']:+.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
