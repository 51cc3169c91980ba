"""Training: the single-agent view (reward attribution, SB3 checks, vector envs), configs, the run folder."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402

from parlour.baselines import (
    make,  # noqa: E402
    resolve,  # noqa: E402
)
from parlour.baselines.base import Policy, Table  # noqa: E402
from parlour.baselines.policy_file import IncompatiblePolicyError, PolicyFile  # noqa: E402
from parlour.envs import ENVIRONMENTS  # noqa: E402
from parlour.envs.six_suspects import rules  # noqa: E402
from parlour.training.cli import main  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.evaluation.matchups import run_evaluation  # noqa: E402
from parlour.training.policies import CheckpointError, save_checkpoint  # noqa: E402
from parlour.training.single_agent import SingleAgentEnv  # noqa: E402

CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"


class Announcer(Policy):
    """Peeks at Albert's top card, announces as soon as it may, votes for ``vote``."""

    name = "announcer"

    def __init__(self, vote: int) -> None:
        self.vote = vote

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        if action_mask[rules.VOTE_BASE]:
            return rules.VOTE_BASE + self.vote
        return rules.ANNOUNCE if action_mask[rules.ANNOUNCE] else 0


def play_learner(env: SingleAgentEnv, vote: int) -> tuple[list[float], dict[str, Any]]:
    """The learner peeks at position 1 until the vote, then votes ``vote``; returns its rewards and final info."""
    obs, info = env.reset(seed=3)
    rewards, done = [], False
    while not done:
        mask = env.action_masks()
        action = rules.VOTE_BASE + vote if mask[rules.VOTE_BASE] else 1
        obs, reward, term, trunc, info = env.step(action)
        rewards.append(reward)
        done = term or trunc
    return rewards, info


@pytest.mark.parametrize("vote", range(6))
def test_terminal_reward_reaches_the_learner_when_an_opponent_ends_the_game(vote: int) -> None:
    # Seat 1 announces, so the vote runs seat 0 (the learner) then seat 1: the opponent's vote ends the game.
    env = SingleAgentEnv("six_suspects_v0", [Announcer(vote=2)], env_kwargs={"num_players": 2}, learner_seat=0)
    rewards, info = play_learner(env, vote)
    game = info["outcome"]["games"][0]
    assert game["announcer"] == 1
    expected = 1.0 if rules.SUSPECTS[vote] in game["culprits"] else -1.0
    assert rewards[-1] == expected and all(r == 0 for r in rewards[:-1])


def test_rewards_of_every_game_in_a_match_reach_the_learner() -> None:
    env = SingleAgentEnv(
        "six_suspects_v0",
        [Announcer(vote=0)],
        env_kwargs={"num_players": 3, "num_games": 3, "max_tiebreak_games": 0, "reward": "vote"},
        learner_seat=1,
    )
    rewards, info = play_learner(env, vote=4)
    games = info["outcome"]["games"]
    assert len(games) == 3
    # every game's ±1 for the learner's vote, whoever cast the deciding vote, summed over the episode
    assert sum(rewards) == sum(1.0 if g["right"][1] else -1.0 for g in games)
    assert sum(1 for r in rewards if r != 0) == sum(1 for g in games if True)


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_sb3_and_gymnasium_check_env(name: str) -> None:
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env

    # The checkers step unmasked random actions: the penalty mode turns an illegal one into a lost game.
    env_kwargs = {"num_players": 3, "illegal_action": "penalize"}
    check_env(SingleAgentEnv(name, [make("random")], env_kwargs=env_kwargs, seed=0))
    gymnasium_check_env(SingleAgentEnv(name, [make("random")], env_kwargs=env_kwargs, seed=0), skip_render_check=True)


def test_an_illegal_action_in_the_default_mode_says_how_to_run_checkers() -> None:
    env = SingleAgentEnv("six_suspects_v0", [make("random")], seed=0)
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"illegal action .*need env_kwargs=\{'illegal_action': 'penalize'\}"):
        env.step(rules.VOTE_BASE)
    with pytest.raises(ValueError, match=r"takes no options \(got \['seat'\]\)"):
        env.reset(options={"seat": 1})


def test_illegal_learner_action_in_penalty_mode_ends_the_episode_with_the_penalty() -> None:
    env_kwargs = {"num_players": 3, "illegal_action": "penalize", "illegal_reward": -2.0}
    env = SingleAgentEnv("six_suspects_v0", [make("random")], env_kwargs=env_kwargs, seed=0)
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(rules.VOTE_BASE)
    assert terminated and reward == -2.0 and info["outcome"]["illegal_action"]["agent"] == env.learner


@pytest.mark.parametrize("vec_cls", [DummyVecEnv, SubprocVecEnv])
def test_vector_envs(vec_cls: Any) -> None:
    fns = [(lambda i=i: SingleAgentEnv("six_suspects_v0", [make("six_suspects_heuristic")], seed=i)) for i in range(2)]
    venv = vec_cls(fns)
    try:
        venv.reset()
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            _, rewards, dones, infos = venv.step(actions)
            for d, info in zip(dones, infos, strict=True):
                if d:
                    assert "outcome" in info
    finally:
        venv.close()


def test_learner_seat_is_validated() -> None:
    with pytest.raises(ValueError, match=r"learner_seat=5 is not valid: expected an integer in \[0, 3\] or 'random'"):
        SingleAgentEnv("six_suspects_v0", [make("random")], learner_seat=5)


@pytest.mark.parametrize(("draw", "mixed"), [("seat", True), ("table", False)])
def test_opponent_draw_fills_a_table_by_seat_or_whole(draw: str, mixed: bool) -> None:
    a, b = make("random"), make("six_suspects_heuristic")
    env = SingleAgentEnv("six_suspects_v0", [a, b], seed=0, opponent_draw=draw)
    tables = []
    for _ in range(40):
        env.reset()
        tables.append({p.name for p in env.seats if p is not None})
    assert any(len(t) == 2 for t in tables) is mixed  # 40 resets: a mixed table is all but certain by seat
    assert {a.name} in tables and {b.name} in tables  # both pure tables occur either way


# ------------------------------------------------------------------------------------------ configs
def test_config_types_and_overrides() -> None:
    cfg = load_config(CONFIG, ["train.total_timesteps=2000", "seed=3", "ppo.learning_rate=1e-3"])
    assert isinstance(cfg.ppo.learning_rate, float) and cfg.ppo.learning_rate == 1e-3
    assert cfg.train.total_timesteps == 2000 and cfg.seed == 3
    assert load_config(CONFIG).ppo.learning_rate == 5e-4  # written 5e-4 in YAML: a float, not a string


CONFIG_ERRORS = [
    (["train.total_steps=5"], r"unknown key 'train.total_steps'; allowed keys here: \['total_timesteps', 'n_envs'"),
    (["colour=red"], r"unknown key 'colour'; allowed keys here: \['trainer', 'game', 'learner', 'opponents'"),
    (["trainer=tensorflow"], r"trainer='tensorflow' is not valid: expected one of \['sb3', 'rllib', 'jax'\]"),
    (["rllib.num_env_runners=-1"], r"rllib.num_env_runners=-1 is out of range"),
    (["rllib.workers=2"], r"unknown key 'rllib.workers'; allowed keys here: \['ray_address', 'num_env_runners'\]"),
    (["opponents=[self]"], r"opponents: 'self' needs at least one other opponent .*with trainer: rllib"),
    (["ppo.learning_rate=fast"], r"bad value for 'ppo.learning_rate'"),
    (
        ["opponents=[six_suspects_genius]"],
        r"opponents: unknown policy 'six_suspects_genius' for six_suspects_v0: expected one of \['random'",
    ),
    (["game.num_players=9"], r"game: six_suspects: num_players=9 is out of range"),
    (
        ["game.name=chess_v0"],
        re.escape(f"game.name='chess_v0' is not a Parlour env; available: {sorted(ENVIRONMENTS)}"),
    ),
    (["train.vec_env=threads"], r"train.vec_env='threads' is not valid"),
    (["learner.seat=7"], r"learner.seat='7' is not valid"),
    (["eval.seed_set=v9"], r"eval.seed_set='v9' is not valid: expected one of \['report-v1', 'v1'\]"),
    (["nonsense"], r"override 'nonsense' is not of the form key=value"),
    (
        ["train.total_timesteps=1000.5"],
        r"^\S+: bad value for 'train.total_timesteps': Value '1000.5' of type 'float' could not be converted to "
        r"Integer; expected an integer \(1e6 and 1_000_000 are read as integers\)$",
    ),
    (["ppo.net_arch=wide"], r"bad value for 'ppo.net_arch': .*; expected a list of integers, e.g. \[256, 256\]$"),
    (["learner.deterministic=maybe"], r"bad value for 'learner.deterministic': .*; expected true or false$"),
    (["opponent_draw=deal"], r"opponent_draw='deal' is not valid: expected one of \['seat', 'table'\]"),
    (["opponent_draw=table", "trainer=rllib"], r"opponent_draw: table is supported with trainer: sb3 only"),
]


@pytest.mark.parametrize(("overrides", "message"), CONFIG_ERRORS)
def test_config_errors_are_clear(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_config(CONFIG, overrides)
    assert "\n" not in str(info.value)  # one line: no OmegaConf full_key/object_type trailer


@pytest.mark.parametrize(
    ("written", "value"),
    [("1e6", 1_000_000), ("1.5e6", 1_500_000), ("1_000_000", 1_000_000), ("2000.0", 2000), ("4096", 4096)],
)
def test_integral_numbers_are_accepted_for_integer_keys(tmp_path: Path, written: str, value: int) -> None:
    assert load_config(CONFIG, [f"train.total_timesteps={written}"]).train.total_timesteps == value
    config = tmp_path / "c.yaml"  # the same from a YAML file, where 1e6 is read as a string
    config.write_text(CONFIG.read_text().replace("total_timesteps: 1000000", f"total_timesteps: {written}"))
    assert load_config(config).train.total_timesteps == value


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: [unclosed\n")
    with pytest.raises(ConfigError, match="not a valid YAML config"):
        load_config(bad)


# ------------------------------------------------------------------------------------------ end to end
TINY = [
    "train.total_timesteps=512",
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "ppo.net_arch=[16]",
    "train.checkpoint_every=128",
    "train.eval_every=256",
    "eval.games=2",
    "eval.periodic_games=1",
    "eval.opponents=[random]",
    "eval.reference=[six_suspects_heuristic]",
    "opponents=[random,self]",
    "self_play.snapshot_every=256",
]


@pytest.mark.slow  # about 100 s; the run-control tests train, stop and resume tiny runs in the default tier
def test_train_resume_and_evaluate_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["train", str(CONFIG), *TINY, "--out", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| ppo | random |" in out and "| six_suspects_heuristic | random |" in out
    for name in (
        "config.yaml",
        "command.txt",
        "versions.json",
        "model.zip",
        "policy.json",
        "policy.safetensors",
        "checkpoints/latest/parlour.json",
        "checkpoints/latest/tensors.safetensors",
        "final_eval.json",
        "final_eval.md",
        "learning_curve.png",
        "metrics.json",
        "evaluations.jsonl",
        "logs/session_0/progress.csv",
    ):
        assert (run / name).is_file(), name
    assert list((run / "logs" / "session_0").glob("events.out.tfevents.*"))
    assert list((run / "snapshots").glob("snap_*.json")) and not list((run / "snapshots").glob("*.zip"))
    assert json.loads((run / "metrics.json").read_text())["timesteps"] >= 512

    # A second start into the same folder is refused; --resume continues from the latest checkpoint.
    assert main(["train", str(CONFIG), *TINY, "--out", str(run), "--no-progress"]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    more = [t for t in TINY if not t.startswith("train.total_timesteps")] + ["train.total_timesteps=1024"]
    assert main(["train", str(CONFIG), *more, "--out", str(run), "--resume", "--no-progress"]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["timesteps"] >= 1024 and 0 < metrics["session_steps"] <= 512 + 128
    assert (run / "logs" / "session_1" / "progress.csv").is_file()
    commands = (run / "command.txt").read_text().splitlines()
    assert len(commands) == 2 and commands[0].startswith("parlour train ")
    assert commands[1].endswith("--no-progress  # resumed with train.total_timesteps 512 -> 1024")  # recorded

    # The policy file plays as the SB3 model it was exported from.
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(run / "model.zip", device="cpu")  # our own run's file
    policy = resolve(str(run / "policy.json"), "six_suspects_v0", 4)
    env = SingleAgentEnv("six_suspects_v0", [make("random")], seed=0)
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert policy.act(obs, mask.astype(np.int8), np.random.default_rng(0)) == int(action)
        obs, _, term, trunc, _ = env.step(int(action))
        if term or trunc:
            obs, _ = env.reset()

    # `parlour export` converts a zip only when told the file is trusted; the result is the same policy.
    exported = tmp_path / "exported"
    assert main(["export", str(run / "model.zip"), str(exported)]) == 2
    assert "--trust-pickle" in capsys.readouterr().err
    assert main(["export", str(run / "model.zip"), str(exported), "--trust-pickle"]) == 0
    again = resolve(f"{exported}.json", "six_suspects_v0", 4)
    mask = env.action_masks().astype(np.int8)
    assert np.allclose(again.probabilities(obs, mask), policy.probabilities(obs, mask), atol=1e-6)

    # Evaluate the result beside a bot; the SB3 zip only when the user trusts it.
    capsys.readouterr()
    code = main(
        ["evaluate", "six_suspects_v0", "--policies", f"{run / 'policy.json'},random", "--games", "2", "--no-progress"]
    )
    assert code == 0
    assert "Cross-play" in capsys.readouterr().out
    zip_cmd = ["evaluate", "six_suspects_v0", "--policies", str(run / "model.zip"), "--games", "1", "--no-progress"]
    assert main(zip_cmd) == 2
    assert "pickle-based SB3 zip" in capsys.readouterr().err
    assert main([*zip_cmd, "--trust-pickle"]) == 0

    # The policy knows its table: another player count is refused with a clear message.
    with pytest.raises(IncompatiblePolicyError, match="differs in num_players: trained 4, table 3"):
        resolve(str(run / "policy.json"), "six_suspects_v0", 3)
    with pytest.raises(IncompatiblePolicyError, match="differs in num_players: trained 4, table 3"):
        resolve(str(run / "model.zip"), "six_suspects_v0", 3, trust_pickle=True)
    assert main(["evaluate", "six_suspects_v0", "--policies", str(run / "policy.json"), "--players", "3"]) == 2
    assert "cannot play six_suspects_v0 with 3 players" in capsys.readouterr().err
    # ... and so is a config whose opponent pool names it for another player count, before any run folder exists.
    with pytest.raises(ConfigError, match="opponents: policy .* differs in num_players: trained 4, table 3"):
        load_config(CONFIG, [f"opponents=[{run / 'policy.json'}]", "game.num_players=3"])
    with pytest.raises(ConfigError, match="policy file not found"):
        load_config(CONFIG, [f"opponents=[{tmp_path / 'missing.json'}]"])
    # A snapshot of the league is a policy file too, checked against the table.
    snap = sorted((run / "snapshots").glob("snap_*.json"))[0]
    with pytest.raises(IncompatiblePolicyError, match="num_players"):
        PolicyFile(snap, table_for_players(3))


def test_resume_without_a_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", str(CONFIG), *TINY, "--out", str(tmp_path / "none"), "--resume", "--no-progress"]) == 2
    assert "holds no run" in capsys.readouterr().err


def test_checkpoints_are_written_atomically(tmp_path: Path) -> None:
    target = tmp_path / "latest.zip"
    target.write_bytes(b"previous checkpoint")

    class Failing:
        def save(self, path: Any) -> None:
            Path(path).write_bytes(b"half a file")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(Failing(), target, {"env": "six_suspects_v0"})
    assert target.read_bytes() == b"previous checkpoint"


def table_for_players(n: int) -> Table:
    from parlour.baselines.policy_file import table_for

    return table_for("six_suspects_v0", n, {"reward": "expected"})


def test_unknown_policy_and_bad_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown policy 'genius' for six_suspects_v0: expected one of \['random'"):
        resolve("genius", "six_suspects_v0", 4)
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="is not a Parlour checkpoint"):
        resolve(str(fake), "six_suspects_v0", 4, trust_pickle=True)


def test_evaluation_is_deterministic() -> None:
    def run() -> dict[str, Any]:
        bots = [make("random"), make("six_suspects_heuristic")]
        return run_evaluation("six_suspects_v0", bots, num_players=3, games=4)

    a, b = run(), run()
    assert a["matchups"] == b["matchups"] and a["ratings"] == b["ratings"]
    assert a["matchups"][0]["games"] == 4 * 3


def test_ratings_order_follows_head_to_head_results() -> None:
    from parlour.training.evaluation.matchups import Matchup, rate

    strong_vs_weak = Matchup("strong", "weak", seats=[0, 1, 2] * 20, table=[[True, False, False]] * 60)
    # the strong policy wins alone in seat 0 every game; in seats 1 and 2 nobody wins (draws)
    strong_vs_weak.table = [[s == seat for s in range(3)] for seat in strong_vs_weak.seats]
    ratings = rate([strong_vs_weak])
    assert list(ratings) == ["strong", "weak"] and ratings["strong"]["mu"] > ratings["weak"]["mu"]


def test_shipped_baseline_plays_legally() -> None:
    from parlour.baselines import CHECKPOINT_DIR

    if not (CHECKPOINT_DIR / "six_suspects_v0_distilled.json").is_file():
        pytest.skip("no shipped checkpoint in this tree")
    from parlour.envs import make as make_env
    from parlour.training.evaluation.games import play_game

    bot = make("six_suspects_distilled", "six_suspects_v0")
    env = make_env("six_suspects_v0", num_players=4)
    for seed in range(3):
        out = play_game(
            env, [bot, make("random"), bot, make("six_suspects_heuristic")], seed, np.random.default_rng(seed)
        )
        assert out["outcome"]["games"]


# ----------------------------------------------------------------------------------------------- tracks
@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (["pretrain.teacher=six_suspects_expert"], "pretrain.teacher='six_suspects_expert'"),
        (["ppo.features=[six_suspects_belief]"], "ppo.features=['six_suspects_belief']"),
        (["game.options.reward=expected"], "game.options.reward='expected'"),
    ],
)
def test_an_rl_track_run_may_not_imitate_read_a_bots_features_or_a_shaped_reward(
    overrides: list[str], named: str
) -> None:
    from parlour.training.config import ConfigError, load_config

    load_config("configs/six_suspects/rl.yaml", [])  # the config itself is on the track
    with pytest.raises(ConfigError, match="track: rl learns from the environment alone") as info:
        load_config("configs/six_suspects/rl.yaml", overrides)
    assert named in str(info.value)


def test_every_published_config_says_its_track_and_keeps_to_it() -> None:
    from parlour.training.config import load_config

    for game in ("six_suspects", "goes_to_eleven", "lady_alice", "elevenses"):
        rl = load_config(f"configs/{game}/rl.yaml", [])
        assert rl.track == "rl" and not rl.pretrain.teacher and not rl.ppo.features
        assert rl.train.total_timesteps == 1_000_000  # the rl track's stated budget
        assert f"{game}_expert" in rl.eval.opponents and f"{game}_expert" not in rl.opponents  # held out
        league = load_config(f"configs/{game}/rl_selfplay.yaml", [])
        assert league.track == "rl" and "self" in league.opponents and f"{game}_expert" not in league.opponents
        full = load_config(f"configs/{game}/full.yaml", [])
        assert full.track == "distilled" and full.pretrain.teacher == f"{game}_expert"
    with pytest.raises(ValueError, match="has neither pretrain.teacher nor ppo.features: use track: rl"):
        load_config("configs/six_suspects/rl.yaml", ["track=distilled"])


def test_exploit_trains_best_responses_and_reports_them_beside_the_policy_and_chance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "br"
    argv = ["exploit", "six_suspects_v0", "random", "--steps", "256", "--seeds", "0,1", "--games", "2"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    report = json.loads((out / "exploit.json").read_text())
    assert report["chance"] == 0.25 and report["seeds"] == [0, 1] and len(report["best_response_win_rates"]) == 2
    for seed in (0, 1):  # each best response is an rl-track run against a table of the policy alone
        cfg = json.loads((out / f"seed{seed}" / "policy.json").read_text())["training"]["config"]
        assert cfg["opponents"] == ["random"] and cfg["track"] == "rl" and cfg["seed"] == seed
    assert "approximate exploitability of random (a lower bound; best responses trained 256 steps" in text
    assert f"| {report['policy_own_win_rate']:.3f} | 0.250 |" in text
    # the same command again continues its runs instead of starting them afresh (here: they are finished)
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    assert capsys.readouterr().out == text


def test_every_trainer_registers_behind_one_protocol_and_refuses_what_it_cannot_train() -> None:
    from parlour.training.trainers import TRAINERS, session_function, trainer_for

    assert list(TRAINERS) == ["sb3", "rllib", "jax"]
    sessions = {"sb3": "train_sb3", "rllib": "train_rllib", "jax": "train_jax"}
    for name, trainer in TRAINERS.items():
        assert trainer.name == name and callable(trainer.check)
        needs = {"rllib": "ray", "jax": "jax"}.get(name)  # what its session's module imports
        if needs is None or importlib.util.find_spec(needs) is not None:
            assert session_function(trainer).__name__ == sessions[name]  # each trainer's own session, found by path
    with pytest.raises(ConfigError, match=r"trainer='tf' is not valid: expected one of \['sb3', 'rllib', 'jax'\]"):
        trainer_for("tf")
    with pytest.raises(ConfigError, match=r"trainer='nope' is not valid"):
        load_config(CONFIG, ["trainer=nope"])
