"""Golden traces: a fixed-seed game of every env, player count and chosen variant, stored step by step.

A trace records, at every turn of one seeded random game, who acts and what, and short hashes of everything the env
hands out -- every seat's observation and mask, the full state, the rewards -- plus, every few turns, a hash of a
``resample_hidden`` copy; and at the end the outcome and the umpire's text. Committed traces pin the behaviour of the
envs, so a refactor that changes any observation entry, mask, reward or random draw fails at the first step that
differs.

Regenerate after a deliberate change of behaviour (and bump the env's version)::

    python -m parlour.envs.golden --write tests/golden             # every env
    python -m parlour.envs.golden --write tests/golden lady_alice_v0

and ``python -m parlour.envs.golden --check tests/golden`` compares without writing (what the test does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "parlour-golden/1"
#: A ``resample_hidden`` copy is hashed at every this-many-th decision.
RESAMPLE_EVERY = 7


def _hash(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"|")
    return h.hexdigest()[:10]


def cases(env_name: str) -> list[dict[str, Any]]:
    """The traced games of an env: every player count with default rules, then the rule variants its game declares."""
    from parlour.envs import game_of

    game = game_of(env_name)
    out: list[dict[str, Any]] = [{"num_players": n} for n in range(game.min_players, game.max_players + 1)]
    return out + [dict(v) for v in game.variants]


def trace(env_name: str, kwargs: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """One seeded random game of ``env_name(**kwargs)``, step by step (see the module docstring)."""
    from parlour.envs import make

    env = make(env_name, **kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng([seed, 1])
    steps: list[list[Any]] = []
    for i, agent in enumerate(env.agent_iter()):
        views = [env.observe(a) for a in env.agents]
        obs = _hash(*(v["observation"].tobytes() for v in views))
        masks = _hash(*(v["action_mask"].tobytes() for v in views))
        state = _hash(env.state().tobytes(), repr(sorted(env.infos.items())))
        rewards = [env._cumulative_rewards[a] for a in env.agents]
        done = env.terminations[agent] or env.truncations[agent]
        if done:
            action = None
        else:
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        row: list[Any] = [agent, action, obs, masks, state, rewards if any(rewards) else 0]
        if not done and i % RESAMPLE_EVERY == 0:
            copy = env.resample_hidden(agent, np.random.default_rng([seed, 2, i]))
            row.append(_hash(copy.state().tobytes(), copy.observe(agent)["observation"].tobytes()))
        steps.append(row)
        env.step(action)
    return {
        "kwargs": kwargs,
        "seed": seed,
        "steps": steps,
        "outcome": json.loads(json.dumps(env.final_outcome)),
        "text": _hash(env.render_text(None)),
    }


def traces(env_name: str) -> dict[str, Any]:
    from parlour.envs import make

    return {
        "format": FORMAT,
        "env": env_name,
        "env_version": make(env_name).env_version,
        "columns": ["agent", "action", "observations", "masks", "state+infos", "cumulative rewards", "resampled"],
        "games": [trace(env_name, kw) for kw in cases(env_name)],
    }


def dumps(data: dict[str, Any]) -> str:
    """JSON with one line per step: small diffs, readable in review."""
    games = []
    for g in data["games"]:
        steps = ",\n".join("      " + json.dumps(s) for s in g["steps"])
        body = json.dumps({k: v for k, v in g.items() if k != "steps"})[1:-1]
        games.append(f'    {{{body},\n     "steps": [\n{steps}\n     ]}}')
    top = json.dumps({k: v for k, v in data.items() if k != "games"})[1:-1]
    return f'{{{top},\n  "games": [\n' + ",\n".join(games) + "\n  ]\n}\n"


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Where ``actual`` departs from ``expected``: per game, the first step that differs and in what."""
    out: list[str] = []
    if expected.get("env_version") != actual["env_version"]:
        out.append(f"env_version {expected.get('env_version')} != {actual['env_version']}")
    if len(expected["games"]) != len(actual["games"]):
        out.append(f"{len(expected['games'])} traced games stored, {len(actual['games'])} now")
    for old, new in zip(expected["games"], actual["games"], strict=False):
        where = f"{actual['env']} {new['kwargs']}"
        if old["kwargs"] != new["kwargs"]:
            out.append(f"{where}: stored for {old['kwargs']}")
            continue
        for i, (a, b) in enumerate(zip(old["steps"], new["steps"], strict=False)):
            if a != b:
                what = [
                    name
                    for name, x, y in zip(actual["columns"], a + [None] * 7, b + [None] * 7, strict=False)
                    if x != y
                ]
                out.append(f"{where}: step {i} ({b[0]} plays {b[1]}) differs in {', '.join(what)}")
                break
        else:
            if len(old["steps"]) != len(new["steps"]):
                out.append(f"{where}: {len(old['steps'])} steps stored, {len(new['steps'])} now")
            elif old["outcome"] != new["outcome"]:
                out.append(f"{where}: the outcome differs")
            elif old["text"] != new["text"]:
                out.append(f"{where}: the final text differs")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from parlour.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(prog="python -m parlour.envs.golden", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="DIR", help="write <env>.json into DIR")
    mode.add_argument("--check", metavar="DIR", help="compare with the traces in DIR")
    parser.add_argument("envs", nargs="*", help=f"env ids (default: all of {sorted(ENVIRONMENTS)})")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.envs) - set(ENVIRONMENTS))
    if unknown:
        parser.error(f"unknown env(s) {unknown}; available: {sorted(ENVIRONMENTS)}")
    folder = Path(args.write or args.check)
    failed = False
    for name in args.envs or sorted(ENVIRONMENTS):
        data = traces(name)
        path = folder / f"{name}.json"
        if args.write:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(dumps(data))
            print(f"wrote {path}: {len(data['games'])} games, {sum(len(g['steps']) for g in data['games'])} steps")
            continue
        diffs = differences(json.loads(path.read_text()), data) if path.is_file() else [f"{path} is missing"]
        failed |= bool(diffs)
        print(f"{name}: " + ("matches" if not diffs else "\n  ".join(["DIFFERS", *diffs])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
