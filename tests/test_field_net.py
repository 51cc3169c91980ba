"""``ppo.network: field_encoder``: the token plan covers each env's observation layout, the one forward pass computes
the same in NumPy and JAX, a row's embedding is what tells rows apart (without it and attention the pooling is
order-free), the jitted trainer writes a policy file the scalar env plays as the trainer does, and what the network
cannot be is refused in one line."""

from __future__ import annotations

import json
from math import prod
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.baselines import field_net
from parlour.baselines.policy_file import (
    MAX_PARAMETERS,
    PolicyFile,
    PolicyFileError,
    read_spec,
    read_weights,
    save_policy,
    table_for,
)
from parlour.envs import make

ROOT = Path(__file__).resolve().parents[1]
RL = ROOT / "configs" / "six_suspects" / "rl.yaml"
#: The current env ids (one per game).
ENVS = ["six_suspects_v0", "goes_to_eleven_v0", "lady_alice_v2", "elevenses_v0"]
#: A tiny encoder: tokens of width 8, one attention block of two heads.
TINY = {"d_model": 8, "attention_layers": 1, "heads": 2, "pi": [16], "vf": [16], "activation": "relu"}
#: A tiny jitted run with the field encoder (see tests/test_jax_training.py's JAX_TINY): 8 games × 16 steps per
#: update, two minibatches, no periodic evaluation; self-play, so the encoder plays the other seats too.
JAX_TINY_ENCODER = (
    "trainer=jax",
    "ppo.network=field_encoder",
    "ppo.encoder.d_model=8",
    "ppo.encoder.attention_layers=1",
    "ppo.encoder.heads=2",
    "ppo.net_arch=[16]",
    "train.total_timesteps=128",
    "train.n_envs=8",
    "ppo.n_steps=16",
    "ppo.batch_size=64",
    "ppo.n_epochs=2",
    "train.checkpoint_every=128",
    "train.eval_every=0",
    "eval.games=1",
    "eval.opponents=[random]",
    "eval.reference=[]",
    "opponents=[self]",
)


def layout_of(env_id: str) -> Any:
    return make(env_id).unwrapped.observation_layout


def network_for(env_id: str, **changes: Any) -> dict[str, Any]:
    settings = {**TINY, **changes}
    return field_net.network(field_net.token_plan(layout_of(env_id)), **settings)


def random_params(network: dict[str, Any], num_actions: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Every tensor drawn at random (row embeddings, biases and LayerNorms not at their initial values)."""
    rng = np.random.default_rng(seed)
    shapes = field_net.shapes(network["tokens"], network, num_actions)
    return {k: rng.normal(0.0, 0.3, s).astype(np.float32) for k, s in shapes.items()}


def observations(env_id: str, count: int = 6, seed: int = 0) -> np.ndarray:
    """Real observations: the seat to act's, along a game of random legal actions."""
    env = make(env_id)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count and env.agents:
        o = env.observe(env.agent_selection)
        out.append(o["observation"])
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.stack(out).astype(np.float32)


# ------------------------------------------------------------------------------------------ the token plan
@pytest.mark.parametrize("env_id", ENVS)
def test_the_token_plan_covers_the_layout_exactly_a_token_per_row(env_id: str) -> None:
    layout = layout_of(env_id)
    plan = field_net.token_plan(layout)
    assert [t["field"] for t in plan] == [f.name for f in layout.fields]  # every field, in order, none skipped
    assert sum(t["rows"] * t["width"] for t in plan) == layout.size
    start = 0
    for t, f in zip(plan, layout.fields, strict=True):
        assert t["start"] == start == layout[f.name].start  # end to end
        start += t["rows"] * t["width"]
        if len(f.shape) >= 2:
            assert (t["rows"], t["width"]) == (f.shape[0], prod(f.shape[1:]))  # one token per row
        else:
            assert (t["rows"], t["width"]) == (1, f.size)
    assert any(t["rows"] > 1 for t in plan)  # every game has a table of rows to share weights over


# ------------------------------------------------------------------------------------------ the forward pass
@pytest.mark.parametrize("env_id", ENVS)
def test_the_numpy_forward_equals_the_jax_forward(env_id: str) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    net = network_for(env_id, activation="tanh" if env_id == "goes_to_eleven_v0" else "relu")
    num_actions = make(env_id).unwrapped.num_actions
    params = random_params(net, num_actions)
    obs = observations(env_id)
    logits, value = field_net.forward(np, params, obs, net["tokens"], net)
    assert logits.shape == (len(obs), num_actions) and value.shape == (len(obs),) and logits.dtype == np.float32
    # compiled, as the trainer runs it
    in_jax = jax.jit(lambda p, o: field_net.forward(jnp, p, o, net["tokens"], net))
    j_params = {k: jnp.asarray(v) for k, v in params.items()}
    j_logits, j_value = in_jax(j_params, jnp.asarray(obs))
    np.testing.assert_allclose(np.asarray(j_logits), logits, atol=1e-5)
    np.testing.assert_allclose(np.asarray(j_value), value, atol=1e-5)
    for k in (0, len(obs) - 1):  # unbatched: one observation, no batch axis, the batch's row
        one_logits, one_value = field_net.forward(np, params, obs[k], net["tokens"], net)
        j_one_logits, j_one_value = in_jax(j_params, jnp.asarray(obs[k]))
        assert one_logits.shape == (num_actions,) and np.shape(one_value) == () == np.shape(j_one_value)
        np.testing.assert_allclose(one_logits, logits[k], atol=1e-5)
        np.testing.assert_allclose(np.asarray(j_one_logits), one_logits, atol=1e-5)
        np.testing.assert_allclose(np.asarray(j_one_value), one_value, atol=1e-5)


def test_row_embeddings_tell_rows_apart_and_without_them_the_pooling_is_order_free() -> None:
    env_id = "six_suspects_v0"
    layout = layout_of(env_id)
    rng = np.random.default_rng(1)
    obs = rng.random(layout.size).astype(np.float32)
    swapped = obs.copy()
    seen = layout.view(swapped, "seen_cards")  # 12 × 12: a token per card position
    seen[[0, 3]] = seen[[3, 0]]
    assert not np.array_equal(obs, swapped)
    num_actions = make(env_id).unwrapped.num_actions

    def outputs(net: dict[str, Any], params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
        logits, value = field_net.forward(np, params, x, net["tokens"], net)
        return np.concatenate([logits, [value]])

    for layers in (0, 1):  # the row embeddings say which row a token is, with or without attention
        net = network_for(env_id, attention_layers=layers)
        params = random_params(net, num_actions)
        assert np.abs(outputs(net, params, obs) - outputs(net, params, swapped)).max() > 1e-4

    net = network_for(env_id, attention_layers=0)
    params = random_params(net, num_actions)
    k = [t["field"] for t in net["tokens"]].index("seen_cards")
    params[f"encoder.row.{k}"] = np.zeros_like(params[f"encoder.row.{k}"])
    # no row embedding and no attention: each token is mapped on its own, then mean and max pooled (DeepSets)
    np.testing.assert_allclose(outputs(net, params, obs), outputs(net, params, swapped), atol=1e-5)


# ------------------------------------------------------------------------------------------ the trainer's file
@pytest.mark.slow  # about a minute, most of it compiling the game's JAX core (the default tier plays a written file)
def test_the_jitted_trainer_writes_a_field_encoder_the_scalar_env_plays_as_the_trainer_does(tmp_path: Path) -> None:
    jax = pytest.importorskip("jax")
    pytest.importorskip("optax")
    import jax.numpy as jnp

    from parlour.training.config import load_config
    from parlour.training.jax_eval import masked_logits
    from parlour.training.jax_ppo import PPO
    from parlour.training.train import train

    run = tmp_path / "run"
    metrics = train(load_config(RL, list(JAX_TINY_ENCODER)), run, progress=False, final_eval=False)
    assert metrics["timesteps"] == 128
    # the checkpoint holds the encoder's parameters: a resume continues from them
    more = load_config(RL, [*JAX_TINY_ENCODER, "train.total_timesteps=256"])
    metrics = train(more, run, resume=True, progress=False, final_eval=False)
    assert metrics["timesteps"] == 256 and metrics["session_steps"] == 128

    spec = read_spec(run / "policy.json")
    assert spec["network"]["kind"] == "field_encoder" and spec["network"]["d_model"] == 8
    assert spec["network"]["tokens"] == field_net.token_plan(layout_of("six_suspects_v0"))
    assert "encoder.block.0.attn.query.weight" in spec["weights"]["tensors"]
    params = {k: jnp.asarray(v) for k, v in read_weights(run / "policy.json", spec).items()}
    ppo = PPO(more)
    table = table_for("six_suspects_v0", 4, {"reward": "win"})
    player = PolicyFile(run / "policy.json", table)
    env = make("six_suspects_v0", num_players=4, reward="win")
    env.reset(seed=3)
    decisions, rng = 0, np.random.default_rng(0)
    for _agent in env.agent_iter():  # a whole game with the policy in every seat
        o, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        logits, _ = ppo.apply(params, jnp.asarray(o["observation"]))  # the trainer's JAX network
        np.testing.assert_allclose(player.network.logits(o["observation"]), np.asarray(logits), atol=1e-5)
        probs = np.asarray(jax.nn.softmax(masked_logits(logits, jnp.asarray(o["action_mask"].astype(bool)))))
        np.testing.assert_allclose(player.probabilities(o["observation"], o["action_mask"]), probs, atol=1e-5)
        env.step(player.act(o["observation"], o["action_mask"], rng))
        decisions += 1
    assert decisions > 4 and not env.agents


# ------------------------------------------------------------------------------------------ refusals
def write_policy(tmp_path: Path, env_id: str = "six_suspects_v0") -> Path:
    """A tiny field-encoder policy file for ``env_id`` at its default table, its weights drawn at random."""
    table = table_for(env_id)
    net = network_for(env_id)
    spec = {**table.as_dict(), "network": net, "training": {}}
    return save_policy(tmp_path / "encoder", random_params(net, table.num_actions), spec)


def _set(field: str, value: Any) -> Any:
    def edit(spec: dict[str, Any]) -> None:
        *parents, last = field.split(".")
        for part in parents:
            spec = spec[int(part)] if part.isdigit() else spec[part]
        spec[last] = value

    return edit


def _swap_rows_and_width(spec: dict[str, Any]) -> None:
    """peek_counts' 8 rows of 12 read as 12 rows of 8: the tokens still lie end to end, but not as the env's."""
    token = next(t for t in spec["network"]["tokens"] if t["field"] == "peek_counts")
    token["rows"], token["width"] = token["width"], token["rows"]


@pytest.mark.parametrize("env_id", ENVS)
def test_a_field_encoder_file_plays_whole_games_in_the_scalar_env(tmp_path: Path, env_id: str) -> None:
    """A policy file of the new kind loads without pickle and plays every seat of a game to its end, legally."""
    table = table_for(env_id)
    player = PolicyFile(write_policy(tmp_path, env_id), table)
    env = make(env_id, num_players=table.num_players)
    env.reset(seed=5)
    rng, decisions = np.random.default_rng(0), 0
    for _agent in env.agent_iter():
        o, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        probs = player.probabilities(o["observation"], o["action_mask"])
        assert np.isclose(probs.sum(), 1.0) and not (probs[o["action_mask"] == 0] > 0).any()
        env.step(player.act(o["observation"], o["action_mask"], rng))
        decisions += 1
    assert decisions > 0 and not env.agents


MALFORMED = [
    # (what, edit, the one line after the file's name)
    ("heads not dividing d_model", _set("network.heads", 3),
     "network.heads: 3 does not divide network.d_model 8"),
    ("an unknown network key", _set("network.dropout", 0.1), "network: Additional properties are not allowed ('dropout'"),
    ("d_model a string", _set("network.d_model", "8"), "network.d_model: '8' is not of type 'integer'"),
    ("too many layers", _set("network.attention_layers", 9), "network.attention_layers: 9 is greater than the maximum of 8"),
    ("a token key unknown", _set("network.tokens.0.name", "x"), "network.tokens[0]: Additional properties are not allowed"),
    ("tokens not end to end", _set("network.tokens.1.start", 6), "network.tokens[1].start: 6, expected 7"),
    ("feature sets", _set("network.features", ["six_suspects_belief"]),
     "network.features: a field_encoder network reads every field of the observation as tokens"),
    ("a plan for another layout", _swap_rows_and_width,
     "network.tokens[3].rows: 12 in the file, 8 in six_suspects_v0's observation layout"),
    ("a field renamed", _set("network.tokens.2.field", "cards"),
     "network.tokens[2].field: 'cards' in the file, 'seen_cards' in six_suspects_v0's observation layout"),
    ("too many parameters", lambda s: s["network"].update(d_model=1024, attention_layers=8),
     f"parameters (pi [16], vf [16], d_model 1024, 8 attention layers, 13 token fields, 19 actions) is more than the "
     f"{MAX_PARAMETERS:,}"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "edit", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_field_encoder_the_table_cannot_play_is_refused_in_one_line(
    tmp_path: Path, what: str, edit: Any, message: str
) -> None:
    path = write_policy(tmp_path)
    assert PolicyFile(path).network.logits(np.zeros(436, np.float32)).shape == (19,)  # the file as written plays
    spec = json.loads(path.read_text())
    edit(spec)
    path.write_text(json.dumps(spec))
    with pytest.raises(PolicyFileError) as err:
        PolicyFile(path, table_for("six_suspects_v0"))
    text = str(err.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text, text


CONFIG_REFUSALS = [
    (["trainer=sb3"], r"^ppo.network=field_encoder is supported with trainer: jax only \(this config has trainer: sb3\)"),
    (["trainer=rllib"], r"^ppo.network=field_encoder is supported with trainer: jax only"),
    (["ppo.network=transformer"], r"^ppo.network='transformer' is not valid: expected one of \['mlp', 'field_encoder'\]"),
    (["ppo.encoder.heads=3"], r"^ppo.encoder.heads=3 must divide ppo.encoder.d_model=8"),
    (["ppo.encoder.d_model=2048", "ppo.encoder.heads=1"], r"^ppo.encoder.d_model=2048 is out of range"),
    (["track=distilled", "ppo.features=[six_suspects_belief]"],
     r"^ppo.features is not supported with ppo.network: field_encoder"),
    (["ppo.observation_fields=[phase]"], r"^ppo.observation_fields is not supported with ppo.network: field_encoder"),
    (["ppo.encoder.d_model=1024", "ppo.encoder.attention_layers=8"],
     r"^ppo.encoder \(d_model=1024, attention_layers=8\) with ppo.net_arch=\[16\] has [\d,]+ parameters on "
     r"six_suspects_v0, more than the 67,108,864 a policy file may hold"),
    (["ppo.encoder.depth=2"], r"unknown key 'ppo.encoder.depth'; allowed keys here: \['d_model', 'attention_layers'"),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "message"), CONFIG_REFUSALS)
def test_a_config_the_field_encoder_cannot_train_is_refused_in_one_line(overrides: list[str], message: str) -> None:
    from parlour.training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message) as err:
        load_config(RL, [*JAX_TINY_ENCODER, *overrides])
    assert "\n" not in str(err.value)
