"""Observation feature sets: what they compute, how a policy file names them, and what is refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parlour.baselines import make as make_bot
from parlour.baselines.base import Policy
from parlour.baselines.features import with_features
from parlour.baselines.lady_alice import BELIEF_SIZE, belief_features, decode, inquiry_features
from parlour.baselines.policy_file import PolicyFile, PolicyFileError, table_for
from parlour.baselines.registry import feature_sets, lookup
from parlour.envs import make
from parlour.envs.lady_alice import rules
from parlour.training.config import ConfigError, load_config

LA = "lady_alice_v1"


def play_and_collect(
    num_players: int, seed: int, bot: str = "lady_alice_expert"
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(belief features of the seat to act, that seat's clue membership over the env's own consistent solutions)
    at every decision of one game."""
    env = make(LA, num_players=num_players)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    policy = make_bot(bot, LA)
    out = []
    while not env.game_over:
        agent = env.agent_selection
        obs = env.observe(agent)
        solutions = env.consistent_solutions(agent)  # computed from the state: what the seat may know, exactly
        member = np.zeros((len(solutions), rules.NUM_CLUES), bool)
        member[np.arange(len(solutions))[:, None], solutions] = True
        out.append((belief_features(obs["observation"]), member))
        env.step(policy.act(obs["observation"], obs["action_mask"], rng))
    return out


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_belief_features_are_the_posterior_the_env_computes_from_the_state(num_players: int) -> None:
    for features, member in play_and_collect(num_players, seed=num_players):
        assert features.shape == (BELIEF_SIZE,)
        np.testing.assert_allclose(features[: rules.NUM_CLUES], member.mean(axis=0), atol=1e-6)
        share = np.log(len(member)) / np.log(len(rules.membership(num_players)))
        assert features[-1] == pytest.approx(share, abs=1e-6)
        absent = features[rules.NUM_CLUES : rules.NUM_CLUES + rules.NUM_CATEGORIES]
        if num_players != 3:
            assert not absent.any()  # every category is in every solution
        else:
            assert absent.sum() == pytest.approx(1.0, abs=1e-6)  # exactly one category is hidden


def test_inquiry_features_are_the_verdict_entropy_of_each_next_clue() -> None:
    """Checked against a direct count where the suspicion's last clue is chosen (the verdict is then fixed by the
    clue: its entropy over the env's own consistent solutions), and against the expert's choice everywhere."""
    env = make(LA, num_players=4)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    expert = make_bot("lady_alice_expert", LA)
    checked = {"last": 0, "other": 0, "outside": 0}
    while not env.game_over:
        agent = env.agent_selection
        obs = env.observe(agent)
        x = obs["observation"]
        f = inquiry_features(x)
        view = decode(x)
        action = expert.act(x, obs["action_mask"], rng)
        if view.phase != rules.SUSPECT:
            assert not f.any()
            checked["outside"] += 1
        else:
            k0, p = len(view.partial), rules.PER_CATEGORY
            assert not np.delete(f, np.arange(k0 * p, (k0 + 1) * p)).any() and (f >= 0).all() and (f <= 1).all()
            solutions = env.consistent_solutions(agent)
            member = np.zeros((len(solutions), rules.NUM_CLUES), bool)
            member[np.arange(len(solutions))[:, None], solutions] = True
            if len(member) <= 1500:  # the expert sampled no worlds: it picks a best-scoring clue
                assert f[action] == pytest.approx(f[k0 * p : (k0 + 1) * p].max(), abs=1e-6)
            if k0 == rules.NUM_CATEGORIES - 1:
                for clue in range(k0 * p, (k0 + 1) * p):
                    smiles = member[:, list(view.partial)].sum(axis=1) + member[:, clue]
                    q = np.bincount(smiles) / len(smiles)
                    q = q[q > 0]
                    assert f[clue] == pytest.approx(-(q * np.log(q)).sum() / np.log(rules.MAX_PLAYERS + 1), abs=1e-5)
                checked["last"] += 1
            else:
                checked["other"] += 1
        env.step(action)
    assert min(checked.values()) > 0, checked


def test_the_certainty_flag_is_set_exactly_when_one_accusation_remains() -> None:
    seen = set()
    for features, member in play_and_collect(4, seed=11):
        sure = all(member[:, k * rules.PER_CATEGORY : (k + 1) * rules.PER_CATEGORY].all(axis=0).any() for k in range(4))
        assert features[rules.NUM_CLUES + rules.NUM_CATEGORIES] == float(sure)
        seen.add(sure)
    assert seen == {False, True}  # the expert's game reaches certainty: both cases are checked


def test_unknown_or_foreign_feature_sets_are_refused_with_the_allowed_names() -> None:
    assert "lady_alice_belief" in feature_sets()
    with pytest.raises(
        ValueError,
        match=r"unknown feature set 'nope' for lady_alice_v1: expected one of \['lady_alice_belief', 'lady_alice_inquiry'\]",
    ):
        lookup(["nope"], LA)
    with pytest.raises(ValueError, match=r"for six_suspects_v0: expected one of \['six_suspects_belief'\]"):
        lookup(["lady_alice_belief"], "six_suspects_v0")
    with pytest.raises(ValueError, match=r"for goes_to_eleven_v0: expected one of \[\]"):  # a game with none
        lookup(["lady_alice_belief"], "goes_to_eleven_v0")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["ppo.features=[nope]"], "ppo.features: unknown feature set 'nope'"),
        (["ppo.features=[lady_alice_belief]", "trainer=rllib"], "supported with trainer: sb3 only"),
        (["ppo.skip_features=true"], "ppo.skip_features: true needs ppo.features"),
        (["ppo.observation_fields=[phase,nope]"], r"unknown observation field\(s\) \['nope'\] for lady_alice_v1"),
        (["ppo.observation_fields=[phase,phase]"], "name a field twice"),
        (["ppo.observation_fields=[phase]", "trainer=rllib"], "observation_fields is supported with trainer: sb3"),
    ],
)
def test_config_refuses_bad_feature_sets(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config("configs/lady_alice/quick.yaml", ["game.name=lady_alice_v1", *overrides])


def test_a_config_with_a_feature_set_for_another_game_is_refused() -> None:
    with pytest.raises(ConfigError, match="for six_suspects_v0"):
        load_config("configs/six_suspects/quick.yaml", ["ppo.features=[lady_alice_belief]"])


#: A compact network input: the current table without the record of past suspicions (the belief sums it up).
FIELDS = ["phase", "own_evidence", "counters_left", "own_counters", "partial", "place_clue", "covered"]


@pytest.fixture(scope="module", params=[False, True], ids=["mlp", "skip_features_and_fields"])
def trained(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A tiny run with the belief features, self-play snapshots included (they reload through the policy file);
    with ``skip_features`` the features also feed the heads directly, the network reads only the fields ``FIELDS``
    of the observation, and the run is resumed once (SB3 reloads the custom policy class from its zip)."""
    from parlour.training.cli import main

    out = tmp_path_factory.mktemp("belief") / "run"
    assert (
        main(
            [
                "train",
                "configs/lady_alice/quick.yaml",
                "game.name=lady_alice_v1",
                "ppo.features=[lady_alice_belief]",
                "opponents=[random,self]",
                "train.total_timesteps=1024",
                "train.n_envs=2",
                "ppo.n_steps=256",
                "ppo.batch_size=256",
                "ppo.n_epochs=1",
                "self_play.snapshot_every=256",
                "train.eval_every=0",
                "eval.games=2",
                "eval.opponents=[random]",  # the run's final evaluation is not what this fixture is for
                "eval.reference=[]",
                f"ppo.skip_features={str(request.param).lower()}",
                f"ppo.observation_fields=[{','.join(FIELDS) if request.param else ''}]",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    if request.param:
        assert main(["train", "--resume", "--out", str(out), "train.total_timesteps=1536", "--no-progress"]) == 0
        assert json.loads((out / "metrics.json").read_text())["timesteps"] == 1536
    return out


def test_a_policy_file_with_features_acts_as_the_model_it_was_exported_from(trained: Path) -> None:
    import torch
    from sb3_contrib import MaskablePPO

    spec = json.loads((trained / "policy.json").read_text())
    assert spec["network"]["features"] == ["lady_alice_belief"]
    skip = spec["network"].get("skip_features", False)
    env = make(LA, num_players=4)
    layout = env.unwrapped.observation_layout
    width = sum(layout.field(f).size for f in FIELDS) if skip else spec["observation_size"]
    assert spec["network"].get("observation_fields", []) == (FIELDS if skip else [])
    assert spec["weights"]["tensors"]["mlp_extractor.policy_net.0.weight"][1] == width + BELIEF_SIZE
    hidden = spec["network"]["pi"][-1]
    for head in ("action_net", "value_net"):  # the features reach the heads directly only with skip_features
        assert spec["weights"]["tensors"][f"{head}.weight"][1] == hidden + (BELIEF_SIZE if skip else 0)
    policy = PolicyFile(trained / "policy.json", table_for(LA, 4))
    model = MaskablePPO.load(trained / "model.zip", device="cpu")  # our own run's file
    feats = lookup(["lady_alice_belief"], LA)
    keep = np.concatenate([np.arange(layout.size)[layout[f.name]] for f in layout.fields if f.name in FIELDS])
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    checked = 0
    while not env.game_over and checked < 40:
        obs = env.observe(env.agent_selection)
        x = torch.as_tensor(with_features(feats, obs["observation"], keep if skip else None)[None])
        dist = model.policy.get_distribution(x, action_masks=obs["action_mask"][None].astype(bool))
        expected = dist.distribution.probs[0].detach().numpy()
        np.testing.assert_allclose(policy.probabilities(obs["observation"], obs["action_mask"]), expected, atol=1e-5)
        env.step(policy.act(obs["observation"], obs["action_mask"], rng))
        checked += 1
    assert list((trained / "snapshots").glob("snap_*.json"))  # snapshots were written, reloaded and played


def test_a_policy_file_naming_an_unknown_feature_set_is_refused(trained: Path, tmp_path: Path) -> None:
    spec = json.loads((trained / "policy.json").read_text())
    spec["network"]["features"] = ["nope"]
    (tmp_path / "p.json").write_text(json.dumps(spec))
    (tmp_path / "policy.safetensors").write_bytes((trained / "policy.safetensors").read_bytes())
    with pytest.raises(PolicyFileError, match="unknown feature set 'nope'.*needs a Parlour that provides it"):
        PolicyFile(tmp_path / "p.json")


@pytest.mark.parametrize("num_players", [3, 4, 5])
def test_elevenses_belief_is_a_distribution_over_the_murderer_cards(num_players: int) -> None:
    from parlour.baselines.elevenses import POS, belief_features, decode
    from parlour.envs.elevenses import rules as ER

    env = make("elevenses_v0", num_players=num_players)
    env.reset(seed=num_players)
    rng = np.random.default_rng(num_players)
    expert = make_bot("elevenses_expert", "elevenses_v0")
    steps = 0
    while not env.game_over:
        agent = env.agent_selection
        obs = env.observe(agent)
        values = belief_features(obs["observation"])
        p, chance = values[:POS], values[POS]
        view = decode(obs["observation"])
        assert ((p >= 0) & (p <= 1 + 1e-6)).all() and 0 <= chance <= 1
        assert p.sum() == pytest.approx(ER.murderers(num_players), abs=1e-4)  # every Murderer card is somewhere
        assert not p[[x for x in range(POS) if x not in view.positions]].any()  # nowhere out of play
        known = view.guilt.any(axis=1)
        np.testing.assert_array_equal(p[known], view.guilt[known, 1].astype(float))  # what it has seen is certain
        env.step(expert.act(obs["observation"], obs["action_mask"], rng))
        steps += 1
    assert steps > 20


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_elevenses_action_scores_mark_the_experts_choice_among_the_legal_actions(num_players: int) -> None:
    from parlour.baselines.elevenses import action_score_features
    from parlour.envs.elevenses import rules as ER

    env = make("elevenses_v0", num_players=num_players)
    expert = make_bot("elevenses_expert", "elevenses_v0")
    decisions = 0
    for seed in range(3):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.game_over:
            obs = env.observe(env.agent_selection)
            mask = obs["action_mask"].astype(bool)
            rel, top = action_score_features(obs["observation"], obs["action_mask"]).reshape(2, ER.NUM_ACTIONS)
            np.testing.assert_array_equal(
                action_score_features(obs["observation"], obs["action_mask"]), np.r_[rel, top]
            )
            assert top.any() and not top[~mask].any() and not rel[~mask].any()  # only legal actions are marked
            np.testing.assert_array_equal(top > 0, rel == 1)  # the chosen ones are the best-scored
            action = expert.act(obs["observation"], obs["action_mask"], rng)
            # the expert takes a marked action, or (its random preference among cards, under 0.1) one just below
            assert top[action] or rel[action] > 0.9
            env.step(action)
            decisions += 1
    assert decisions > 60


def test_a_feature_set_that_reads_the_mask_gets_it_and_is_refused_without_it() -> None:
    from parlour.baselines.features import Features

    seen = Features("mask_echo", (LA,), 3, lambda obs, mask: mask[:3].astype(np.float32), uses_mask=True)
    obs = np.zeros(4, np.float32)
    np.testing.assert_array_equal(with_features([seen], obs, None, np.array([1, 0, 1, 1], bool)), [0, 0, 0, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="feature set 'mask_echo' reads the action mask: pass action_mask"):
        with_features([seen], obs)


class Reckless(Policy):
    """Accuses at its first Deductions turn, naming the first legal clues: never sure, seldom right."""

    name = "reckless"
    games = (LA,)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        if action_mask[rules.ACCUSE]:
            return rules.ACCUSE
        if action_mask[rules.PASS]:
            return rules.PASS
        return int(np.flatnonzero(action_mask)[0])


def test_accusation_report_tells_sure_and_right_accusations_from_reckless_ones() -> None:
    from parlour.training.analyses import analysis

    expert, heuristic = make_bot("lady_alice_expert", LA), make_bot("lady_alice_heuristic", LA)
    rows = analysis(LA, "accusations").table(LA, [expert, Reckless()], [heuristic], num_players=4, games=6)
    by = {r["policy"]: r for r in rows}
    assert by["lady_alice_expert"]["accusations"] > 0
    assert by["lady_alice_expert"]["right"] == 1.0 and by["lady_alice_expert"]["unsure"] == 0.0
    assert by["reckless"]["accusations"] == by["reckless"]["games"] == 24  # once a game, then excluded
    # At its first turn it knows one or two verdicts: sure only after a full verdict, right only by luck.
    assert by["reckless"]["unsure"] > 0.9 and by["reckless"]["right"] < 0.1


def test_six_suspects_belief_is_the_experts_inference_and_a_function_of_the_observation() -> None:
    from math import factorial

    from parlour.baselines.six_suspects import BELIEF_SIZE, belief_features, known_cards
    from parlour.envs.six_suspects import rules as SR

    expert = make_bot("six_suspects_expert", "six_suspects_v0")
    checked = exact = 0
    for seed in range(4):
        env = make("six_suspects_v0", num_players=4)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.game_over:
            obs = env.observe(env.agent_selection)
            values = belief_features(obs["observation"])
            assert values.shape == (BELIEF_SIZE,)
            np.testing.assert_array_equal(values, belief_features(obs["observation"].copy()))  # no hidden state
            p, peek, best, gain = values[:6], values[6:18], values[18], values[19]
            assert ((p >= 0) & (p <= 1)).all() and p.max() == pytest.approx(best, abs=1e-6) and p.sum() >= 1 - 1e-6
            assert gain == pytest.approx(peek.max() - best, abs=1e-6) and gain >= -1e-6  # a peek never hurts
            known = known_cards(obs["observation"])
            if factorial(SR.NUM_POSITIONS - len(known)) <= SR.MAX_WORLDS:  # every arrangement enumerated: exact
                layouts = SR.consistent_layouts(known, np.random.default_rng(seed))
                np.testing.assert_allclose(p, SR.culprits_many(layouts).mean(axis=0), atol=1e-6)
                exact += 1
            env.step(expert.act(obs["observation"], obs["action_mask"], rng))
            checked += 1
    assert checked > 16 and exact > 0
