"""``trainer: jax`` and ``train.vec_env: jax``: the jitted PPO and the JAX vector env train on a game's JAX core with
batched bots, refuse what they cannot do before a run starts, resume from pickle-free checkpoints, and export a
policy file that the scalar env plays exactly as the JAX network does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("sb3_contrib")

import jax.numpy as jnp  # noqa: E402

from parlour.baselines.policy_file import PolicyFile, read_spec, read_weights, table_for  # noqa: E402
from parlour.envs import make  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.run import RunError  # noqa: E402
from parlour.training.train import train  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RL = ROOT / "configs" / "six_suspects" / "rl.yaml"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["track=distilled", "ppo.features=[six_suspects_belief]"], r"ppo.features is not supported with trainer: jax"),
        (["opponents=[six_suspects_expert]"], r"\['six_suspects_expert'\] have none: expected opponents from"),
        (["ppo.batch_size=48"], r"ppo.batch_size=48 must divide ppo.n_steps × train.n_envs = 128"),
        (["trainer=sb3", "train.vec_env=jax", "opponents=[six_suspects_expert]"], r"train.vec_env=jax plays"),
        (["trainer=sb3", "train.vec_env=jax", "ppo.observation_fields=[phase]"], r"ppo.observation_fields must be"),
    ],
)  # fmt: skip
def test_what_the_jax_paths_cannot_do_is_refused_before_a_run(
    overrides: list[str], message: str, jax_tiny: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(RL, [*jax_tiny, *overrides])


def test_the_jitted_trainer_trains_resumes_and_exports_a_file_the_scalar_env_plays(
    tmp_path: Path, jax_tiny: tuple[str, ...]
) -> None:
    from parlour.training.jax_eval import masked_logits
    from parlour.training.jax_ppo import PPO, forward

    run = tmp_path / "run"
    cfg = load_config(RL, [*jax_tiny, "train.total_timesteps=256"])
    train(cfg, run, progress=False)
    more = load_config(RL, list(jax_tiny))
    metrics = train(more, run, resume=True, progress=False)
    assert metrics["finished"] and metrics["timesteps"] == 512 and metrics["session_steps"] == 256
    rows = [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines()]
    assert [r["timesteps"] for r in rows] == [0, 256, 512]  # the untrained network's point once, not on resume

    # The step-0 point rebuilt from the run's config and seed alone is the one the run wrote.
    from parlour.training.publish.initial_point import initial_point

    assert {k: v for k, v in initial_point(run).items() if k != "time"} == {
        k: v for k, v in rows[0].items() if k != "time"
    }

    # The policy file is the JAX network: the scalar env's player computes the same distribution.
    spec = read_spec(run / "policy.json")
    assert spec["training"]["config"]["trainer"] == "jax" and spec["training"]["timesteps"] == 512
    params = {k: jnp.asarray(v) for k, v in read_weights(run / "policy.json", spec).items()}
    player = PolicyFile(run / "policy.json", table_for("six_suspects_v0", 4, {"reward": "win"}))
    env = make("six_suspects_v0", num_players=4, reward="win")
    env.reset(seed=3)
    for _ in range(10):
        o = env.observe(env.agent_selection)
        logits, _ = forward(params, jnp.asarray(o["observation"]), "relu")
        probs = np.asarray(jax.nn.softmax(masked_logits(logits, jnp.asarray(o["action_mask"].astype(bool)))))
        np.testing.assert_allclose(player.probabilities(o["observation"], o["action_mask"]), probs, atol=1e-5)
        env.step(int(np.argmax(probs)))

    # A resume with another network is refused before a step, naming the setting that changed.
    assert PPO(more).steps_per_update == 128
    other = load_config(RL, [*jax_tiny, "ppo.net_arch=[32]", "train.total_timesteps=1024"])
    with pytest.raises(RunError, match=r"ppo.net_arch: started with \[16\], now \[32\]"):
        train(other, run, resume=True, progress=False)


def test_self_play_puts_the_learners_own_policy_in_the_other_seats(tmp_path: Path, jax_tiny: tuple[str, ...]) -> None:
    """Self-play against the current policy and a ring of two past snapshots (one after each update of 128 steps),
    here with belief heads too (one compilation for all three): the run stays on the rl track, the checkpoint's ring
    holds the parameters of update 1 (slot 0) and of update 2 (slot 1: the final ones), the heads are trained on
    targets every update and the policy file has no head. (The ring's schedule and the entries' play:
    tests/test_snapshots.py.)"""
    import csv

    from parlour.training.checkpoints import read_checkpoint
    from parlour.training.jax_ppo import HINDSIGHT_HEAD, HINDSIGHT_NOTE, PPO

    run = tmp_path / "run"
    overrides = ["opponents=[self,snapshots]", "self_play.max_snapshots=2", "self_play.snapshot_every=128"]
    cfg = load_config(
        RL, [*jax_tiny, *overrides, "train.total_timesteps=256", "train.eval_every=0", "ppo.hindsight_coef=0.5"]
    )
    assert cfg.track == "rl"  # the track's checks accept the heads (and refuse the rest: tests/test_belief_heads.py)
    metrics = train(cfg, run, progress=False, final_eval=False)
    assert metrics["finished"] and metrics["timesteps"] == 256
    state = read_checkpoint(run / "checkpoints" / "latest")[1]["state"]
    final, ring = state[".params['action_net.weight']"], state[".snapshots['action_net.weight']"]
    initial = np.asarray(PPO(cfg).init(jax.random.PRNGKey(cfg.seed)).params["action_net.weight"])
    assert state[".updates"] == 2 and ring.shape == (2, *final.shape)
    assert np.array_equal(ring[1], final) and not np.array_equal(ring[0], final)
    assert not np.array_equal(ring[0], initial)
    spec = read_spec(run / "policy.json")
    assert spec["training"]["algorithm"].endswith(HINDSIGHT_NOTE)
    assert not [k for k in read_weights(run / "policy.json", spec) if k.startswith(HINDSIGHT_HEAD)]
    with open(next(run.glob("logs/session_*/progress.csv"))) as f:
        losses = [float(r["train/hindsight_loss"]) for r in csv.DictReader(f)]
    # each update's heads were trained on a target (a loss of 0 would mean no step had one)
    assert len(losses) == 2 and all(np.isfinite(x) and x > 0 for x in losses)


def test_the_jax_vec_env_steps_a_batch_with_the_single_agent_envs_rewards(tmp_path: Path) -> None:
    from parlour.training.jax_vec_env import JaxVecEnv

    env = JaxVecEnv(
        "six_suspects_v0",
        16,
        num_players=4,
        options={"reward": "win"},
        opponents=["six_suspects_heuristic"],
        learner_seat=None,
        opponent_draw="table",
        seed=0,
    )
    obs, info = env.reset(seed=5)
    assert obs.shape == (16, env.single_observation_space.shape[0]) and info["action_mask"].any(axis=1).all()
    rng = np.random.default_rng(0)
    returns, ended, totals = np.zeros(16), 0, []
    for _ in range(400):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, terminated, truncated, _ = env.step(actions)
        returns += reward
        for k in np.flatnonzero(terminated | truncated):
            totals.append(returns[k])
            returns[k] = 0.0
            ended += 1
    assert ended > 16
    # reward: win pays +1 to the winners and -1 to the others once, at the end (nothing in between; 0 to all when
    # nobody voted right)
    assert set(np.round(totals, 6)) <= {-1.0, 0.0, 1.0} and 1.0 in totals and -1.0 in totals
    masks = env.action_masks()
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in masks])
    with pytest.raises(ValueError, match=r"game 0 of the batch: action \d+ is illegal; the legal actions are"):
        env.step(bad)


def test_a_batched_step_restarts_only_finished_episodes_and_equals_the_per_game_step() -> None:
    """``SingleSeat.step_batch`` (a new deal only where an episode ended, the opponents' turns out of lock step) is
    ``vmap(step)`` (a deal computed for every game, every game's opponents in one loop), step for step, through many
    episode ends, with the batch's turns taken both together and as stragglers, and a group of slots (the jitted
    trainer's ring of snapshots) computed together, each game with its own slot."""
    from parlour.baselines.jax_bots import bot
    from parlour.envs.jax_core import make_core
    from parlour.envs.jax_core.single_seat import SingleSeat, Slots

    def by_slot(obs: jax.Array, mask: jax.Array, key: jax.Array, slot: int) -> jax.Array:
        # each slot prefers other legal actions: a game played with another game's slot would move differently
        return jnp.argmax(jnp.where(mask, (jnp.arange(mask.shape[0]) * (slot + 2)) % 11, -1)).astype(jnp.int32)

    env_id = "six_suspects_v0"
    # four pool entries drawn per seat: a table mixes them, and each is computed only where a game waits on it
    core = make_core(env_id, 3)
    pool = [bot("random", env_id), bot("six_suspects_heuristic", env_id), Slots(by_slot, 2)]
    seat = SingleSeat(core, pool, opponent_draw="seat")
    per_game = jax.jit(jax.vmap(seat.step))
    states, obs, mask = jax.vmap(seat.reset)(jax.random.split(jax.random.PRNGKey(0), 16))
    # one opponent move together (and more while over three games wait), then the games still waiting finish as
    # stragglers, three at a time (two seats follow the learner's: most steps take both paths); each pool entry
    # computes the games waiting on it three at a time (a chunk size that does not divide the batch)
    seat = SingleSeat(core, pool, opponent_draw="seat", rotation=1, stragglers=3, chunk=3)
    batched = [jax.jit(seat.step_batch)]
    rng, ended = np.random.default_rng(0), []
    for _ in range(24):
        actions = jnp.asarray([rng.choice(np.flatnonzero(m)) for m in np.asarray(mask)], jnp.int32)
        a = per_game(states, actions)
        for step in batched:
            b = step(states, actions)
            for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
                assert np.array_equal(np.asarray(x), np.asarray(y))
        ended.append(int(np.asarray(b.terminated | b.truncated).sum()))
        states, mask = b.state, b.mask
    # both restart paths were taken: a step with a few ended episodes (gathered: at most 16 // 8 of them) and a step
    # with more (the whole batch dealt)
    assert any(0 < k <= 2 for k in ended) and any(k > 2 for k in ended)


@pytest.mark.slow  # SB3 on the JAX vector env; the env's own agreement with the scalar env stays in the default tier
def test_sb3_trains_on_the_jax_vec_env(tmp_path: Path, jax_tiny: tuple[str, ...]) -> None:
    overrides = [o for o in jax_tiny if o != "trainer=jax"]
    cfg = load_config(RL, [*overrides, "trainer=sb3", "train.vec_env=jax", "train.total_timesteps=256"])
    metrics = train(cfg, tmp_path / "run", progress=False, final_eval=False)
    assert metrics["finished"] and metrics["timesteps"] >= 256
    assert read_spec(tmp_path / "run" / "policy.json")["training"]["config"]["train"]["vec_env"] == "jax"


def _games_with_a_core() -> list[str]:
    """The game folder of each game that has a JAX core (its latest env id's config under ``configs/``)."""
    from parlour.envs import game_of
    from parlour.envs.jax_core import CORES

    return sorted({game_of(env_id).name for env_id in CORES})


@pytest.mark.slow
@pytest.mark.parametrize("game", _games_with_a_core())
def test_every_game_trains_with_the_jitted_trainer_and_steps_in_the_jax_vec_env(
    game: str, tmp_path: Path, jax_tiny: tuple[str, ...]
) -> None:
    from parlour.training.jax_vec_env import JaxVecEnv

    config = ROOT / "configs" / game / "rl.yaml"
    tiny = [o for o in jax_tiny if not o.startswith("opponents=")]
    cfg = load_config(config, [*tiny, f"opponents=[random,{game}_heuristic]", "train.eval_every=0"])
    metrics = train(cfg, tmp_path / "run", progress=False, final_eval=False)
    assert metrics["finished"] and metrics["timesteps"] == 512
    # the exported file plays whole games of the scalar env
    env_id, n, options = cfg.game.name, cfg.game.num_players, dict(cfg.game.options)
    player = PolicyFile(tmp_path / "run" / "policy.json", table_for(env_id, n, options))
    env = make(env_id, num_players=n, **options)
    rng = np.random.default_rng(0)
    for seed in range(2):
        env.reset(seed=seed)
        while not env.game_over:
            o = env.observe(env.agent_selection)
            env.step(player.act(o["observation"], o["action_mask"], rng))
    # the vector env: whole episodes with the heuristic in the other seats; the learner's return is the outcome
    venv = JaxVecEnv(
        env_id, 8, num_players=n, options=options, opponents=[f"{game}_heuristic"], learner_seat=None,
        opponent_draw="table", seed=0,
    )  # fmt: skip
    venv.reset(seed=1)
    returns, totals = np.zeros(8), []
    for _ in range(600):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        _, reward, terminated, truncated, _ = venv.step(actions)
        returns += reward
        for k in np.flatnonzero(terminated | truncated):
            totals.append(returns[k])
            returns[k] = 0.0
    assert len(totals) >= 8 and all(np.isfinite(totals))
    if options.get("reward", "win") == "win":
        assert set(np.round(totals, 6)) <= {-1.0, 0.0, 1.0} and -1.0 in totals


@pytest.mark.slow  # four compilations of Lady Alice's batched step
def test_a_settled_learner_ends_its_episode_with_the_reward_the_game_would_pay() -> None:
    """``SingleSeat(settle=True)``: a Lady Alice learner excluded by a false accusation ends its episode there, paid
    what the played-out game pays it, after exactly the moves it made when the game was played out (a policy that is
    a function of the observation, so both runs make the same moves); under both outcome rewards."""
    from parlour.baselines.jax_bots import bot
    from parlour.envs.jax_core import make_core
    from parlour.envs.jax_core.single_seat import SingleSeat

    def policy(obs: jax.Array, mask: jax.Array) -> jax.Array:  # the same legal action for the same observation
        pick = (jnp.sum(obs * jnp.arange(obs.shape[-1])) * 7919).astype(jnp.int32) % jnp.maximum(mask.sum(), 1)
        return jnp.argmax(jnp.cumsum(mask) > pick).astype(jnp.int32)

    own_excluded = make("lady_alice_v2").observation_layout["excluded"].start  # the observer's own entry first
    for reward in ("win", "score"):
        core = make_core("lady_alice_v2", 4, reward=reward)
        pool = [bot("lady_alice_heuristic", "lady_alice_v2")]
        firsts = []
        for settle in (False, True):
            seat = SingleSeat(core, pool, opponent_draw="table", settle=settle)
            step = jax.jit(seat.step_batch)
            states, obs, mask = jax.jit(jax.vmap(seat.reset))(jax.random.split(jax.random.PRNGKey(7), 16))
            total, moves, first = np.zeros(16), np.zeros(16, int), np.full((16, 2), np.nan)
            out = np.zeros(16, bool)  # the first episode ended with the learner excluded
            for _ in range(400):
                t = step(states, jax.vmap(policy)(obs, mask))
                live = np.isnan(first[:, 0])
                total, moves = total + live * np.asarray(t.reward), moves + live
                done = np.asarray(t.terminated | t.truncated) & live
                first[done] = np.stack([total[done], moves[done]], axis=1)
                out |= done & (np.asarray(t.final_observation)[:, own_excluded] > 0)
                states, obs, mask = t.state, t.observation, t.mask
                if not np.isnan(first[:, 0]).any():
                    break
            firsts.append(first)
            assert out.any() and not out.all()  # both kinds of episode end were compared
        np.testing.assert_array_equal(firsts[0], firsts[1])
    settled = make_core("lady_alice_v2", 4).settled
    assert settled is not None and make_core("lady_alice_v1", 4).settled is None  # v1's cap truncates
    assert make_core("lady_alice_v2", 4, max_turns=10).settled is None  # a user's cap leaves the game unscored
