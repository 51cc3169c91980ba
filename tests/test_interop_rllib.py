"""Ray RLlib: the multi-agent adapter, the masked module, and ``parlour train`` with ``trainer: rllib``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, make

pytest.importorskip("ray.rllib")
rl = pytest.importorskip("parlour.envs.interop.rllib")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ray_local() -> Any:
    import ray

    from parlour.training.distributed import start_ray

    start_ray()
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_rllibs_own_env_precheck_passes(name: str) -> None:
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    # RLlib steps an unmasked action_space.sample(): the adapter's space samples a legal action of the acting seat
    check_multiagent_environments(rl.RLlibEnv({"env": name}))


@pytest.mark.parametrize(("name", "opponents"), [("goes_to_eleven_v0", ["self"]), ("lady_alice_v1", ["self", "random"]),
                                                 ("elevenses_v0", ["elevenses_heuristic"]),
                                                 ("six_suspects_v0", ["search", "self"])])  # fmt: skip
def test_learning_seats_get_every_reward_they_earn_and_only_they_observe(name: str, opponents: list[str]) -> None:
    from parlour.baselines.rllib_table import RLlibTableEnv

    env = RLlibTableEnv(
        {"env": name, "opponents": opponents, "options": {"reward": "margin"} if "eleven_v" in name else {}}
    )
    rng = np.random.default_rng(0)
    for game in range(3):
        obs, _ = env.reset(seed=game)
        learners = set(env.agents)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        done = False
        while not done:
            (agent,) = obs
            assert agent in learners
            mask = obs[agent][rl.MASK_KEY]
            assert mask.dtype == np.float32 and np.array_equal(mask, env.env.observe(agent)["action_mask"])
            obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(mask)))})
            assert set(rewards) <= learners
            for a, r in rewards.items():
                totals[a] += r
            done = terminated["__all__"] or truncated["__all__"]
        assert set(obs) == learners  # every learning seat gets its final observation
        returns = env.env.final_outcome
        assert returns is not None
        aec = _returns(env)
        for a in learners:
            assert totals[a] == pytest.approx(aec[a])
        if opponents == ["self"]:
            assert learners == set(env.possible_agents)
        elif "self" not in opponents:
            assert len(learners) == 1


def _returns(env: Any) -> dict[str, float]:
    """The AEC returns of the finished game, replayed from its record."""
    from parlour.envs import replay

    record = env.env.record()
    again = make(record["env"], **record["options"])
    again.reset(options={"game_seed": int(record["game_seed"])})
    totals = dict.fromkeys(again.possible_agents, 0.0)
    for step in record["actions"]:
        again.step(int(step["action"]))
        for a, r in again.rewards.items():
            totals[a] += r
    assert replay(record).final_outcome == env.env.final_outcome
    return totals


def test_the_env_takes_policy_objects_and_leaves_names_to_the_bots_side() -> None:
    from parlour.baselines import make as make_bot

    bot = make_bot("six_suspects_heuristic", "six_suspects_v0")
    env = rl.RLlibEnv({"env": "six_suspects_v0", "opponents": ["self", bot]})
    assert env.pool == [rl.SELF, bot]
    with pytest.raises(TypeError, match="RLlibTableEnv"):
        rl.RLlibEnv({"env": "six_suspects_v0", "opponents": ["six_suspects_heuristic"]})
    with pytest.raises(TypeError, match="act"):
        rl.RLlibEnv({"env": "six_suspects_v0", "opponents": [object()]})


def test_an_illegal_action_is_refused_with_the_legal_ones_named() -> None:
    env = rl.RLlibEnv({"env": "six_suspects_v0"})
    obs, _ = env.reset(seed=1)
    (agent,) = obs
    illegal = int(np.flatnonzero(obs[agent][rl.MASK_KEY] == 0)[0])
    with pytest.raises(ValueError, match="legal actions"):
        env.step({agent: illegal})


def test_the_exported_policy_file_acts_as_the_rllib_module_does(ray_local: Any, tmp_path: Path) -> None:
    import torch

    from parlour.baselines.policy_file import PolicyFile, table_for
    from parlour.training.config import load_config
    from parlour.training.policies import checkpoint_meta
    from parlour.training.rllib_train import algorithm_config, export

    cfg = load_config(ROOT / "configs/lady_alice/rllib.yaml", ["ppo.net_arch=[32,16]", "ppo.activation=tanh"])
    algo = algorithm_config(cfg).build_algo()
    try:
        module = algo.get_module(rl.SHARED)
        meta = checkpoint_meta(make(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options))
        path = export(algo, tmp_path / "p", cfg, meta, {})
        policy = PolicyFile(path, table_for(cfg.game.name, cfg.game.num_players, cfg.game.options))
        env = make(cfg.game.name)
        env.reset(seed=3)
        rng = np.random.default_rng(3)
        for _ in range(12):
            o = env.observe(env.agent_selection)
            batch = {"obs": {rl.OBS_KEY: torch.tensor(o["observation"][None]),
                             rl.MASK_KEY: torch.tensor(o["action_mask"][None].astype(np.float32))}}  # fmt: skip
            with torch.no_grad():
                logits = module.forward_inference(batch)["action_dist_inputs"][0].numpy()
            theirs = np.exp(logits - logits.max())
            theirs /= theirs.sum()
            assert np.allclose(policy.probabilities(o["observation"], o["action_mask"]), theirs, atol=1e-5)
            assert np.all(theirs[o["action_mask"] == 0] == 0)
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    finally:
        algo.stop()


def test_parlour_train_with_rllib_trains_checkpoints_resumes_and_evaluates(ray_local: Any, tmp_path: Path) -> None:
    from parlour.training.config import load_config
    from parlour.training.run import POLICY_STEM, checkpoint_step
    from parlour.training.train import train

    tiny = ["train.total_timesteps=1200", "train.n_envs=2", "ppo.n_steps=300", "ppo.batch_size=200", "ppo.n_epochs=1",
            "train.checkpoint_every=600", "train.eval_every=600", "eval.games=2", "eval.periodic_games=1",
            "ppo.net_arch=[16]"]  # fmt: skip
    cfg = load_config(ROOT / "configs/six_suspects/rllib.yaml", tiny)
    run = tmp_path / "run"
    first = train(cfg, run, command="test", progress=False)
    assert first["timesteps"] >= 1200 and checkpoint_step(run) == first["timesteps"]
    assert (run / "checkpoints" / "latest" / "parlour.json").is_file()
    assert len((run / "evaluations.jsonl").read_text().splitlines()) >= 2
    report = json.loads((run / "final_eval.json").read_text())
    assert "ppo" in report["policies"] and report["deals"] == 2
    spec = json.loads((run / f"{POLICY_STEM}.json").read_text())
    assert spec["training"]["algorithm"].startswith("PPO (Ray RLlib")
    # resume: the same run continues from its checkpoint to a larger budget
    more = load_config(run / "config.yaml", ["train.total_timesteps=1800"])
    second = train(more, run, resume=True, command="test --resume", progress=False)
    assert second["timesteps"] >= 1800 and second["session_steps"] == second["timesteps"] - first["timesteps"]
    assert sorted(p.name for p in (run / "logs").iterdir()) == ["session_0", "session_1"]


@pytest.mark.slow  # ~55 s of Ray start-up twice; the default run covers SIGTERM with the SB3 trainer (test_run_control)
def test_sigterm_stops_an_rllib_run_with_a_checkpoint_that_resume_continues(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from parlour.training.run import checkpoint_step

    run = tmp_path / "run"
    parlour = Path(sys.executable).parent / "parlour"
    tiny = ["train.total_timesteps=1000000", "train.n_envs=2", "ppo.n_steps=200", "ppo.batch_size=200",
            "ppo.n_epochs=1", "train.checkpoint_every=1000000", "train.eval_every=0", "eval.games=1",
            "ppo.net_arch=[8]"]  # fmt: skip
    cmd = [
        str(parlour),
        "train",
        str(ROOT / "configs/six_suspects/rllib.yaml"),
        *tiny,
        "--out",
        str(run),
        "--no-progress",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    progress = run / "logs" / "session_0" / "progress.csv"
    deadline = time.monotonic() + 300
    while not (progress.is_file() and len(progress.read_text().splitlines()) > 2) and proc.poll() is None:
        assert time.monotonic() < deadline, "the run never finished an iteration"
        time.sleep(0.2)
    # SIGTERM to the parlour process, as `kill PID` sends it: a signal to its whole process group would also reach
    # the Ray daemons that ray.init started there, and no RLlib driver survives its raylet (it exits 1, at random
    # before or after our handler has saved the checkpoint)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("parlour train: stopped by SIGTERM at step ") and last.endswith(f"--resume --out {run}")
    step = checkpoint_step(run)
    assert step is not None and step >= 400  # the checkpoint was written at the step the run reached
    done = subprocess.run(
        [str(parlour), "train", "--resume", "--out", str(run), f"train.total_timesteps={step + 400}", "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert checkpoint_step(run) >= step + 400 and (run / "policy.json").is_file()
