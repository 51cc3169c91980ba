"""Record what the shipped SB3 zips chose, so the policy files converted from them can be checked against it.

    python tests/data/make_shipped_reference.py OLD_ZIP_DIR > tests/data/shipped_reference.json
    python tests/data/make_shipped_reference.py --update tests/data/shipped_reference.json RUN/model.zip ...

The second form replaces the entries of the games whose zips are named (a seed's run folder keeps the SB3 zip its
policy file was exported from: ``runs/baselines/<env>/seed<K>/model.zip``) and keeps the others.

For each game: 48 decision points from seeded games of random play (4 players), each with the observation (its
non-zero entries), the action mask, and the zip's action probabilities and greedy action (loaded with SB3 from the
project's own files, before they were removed from the tree).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from parlour.baselines import RandomPolicy
from parlour.baselines.sb3_zip import PickledCheckpointPolicy
from parlour.envs import make

POINTS = 48


def main(zips: list[Path]) -> dict:
    out = {}
    for zip_path in zips:
        policy = PickledCheckpointPolicy(zip_path)
        env_name = policy.meta["env"]
        env = make(env_name, num_players=policy.meta["num_players"], **policy.meta["options"])
        rng = np.random.default_rng(0)
        points: list[dict] = []
        seed = 0
        while len(points) < POINTS:
            env.reset(seed=seed)
            seed += 1
            for i, _agent in enumerate(env.agent_iter()):
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                o, m = obs["observation"], obs["action_mask"]
                if i % 7 == 0 and len(points) < POINTS:
                    nz = np.flatnonzero(o)
                    probs = policy.probabilities(o, m)
                    points.append(
                        {
                            "index": nz.tolist(),
                            "value": [float(v) for v in o[nz]],
                            "mask": m.tolist(),
                            "probs": [float(p) for p in probs],
                            "greedy": policy.act(o, m, rng),
                        }
                    )
                env.step(RandomPolicy().act(o, m, rng))
        out[env_name] = {"size": int(env.observation_layout.size), "points": points}
    return out


if __name__ == "__main__":
    if sys.argv[1] == "--update":
        target = Path(sys.argv[2])
        reference = json.loads(target.read_text()) | main([Path(p) for p in sys.argv[3:]])
        target.write_text(json.dumps(dict(sorted(reference.items()))))
    else:
        json.dump(main(sorted(Path(sys.argv[1]).glob("*_ppo.zip"))), sys.stdout)
