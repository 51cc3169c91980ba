"""Policy files, the policy resolver and strict table checks: safe by default, refused where they do not belong."""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.baselines import (
    BOTS,
    SHIPPED,
    UnknownPolicyError,
    available,
    make,
    resolve,
    shipped_path,
)
from parlour.baselines.policy_file import (
    SPEC_SCHEMA,
    IncompatiblePolicyError,
    MLPActorCritic,
    PolicyFile,
    PolicyFileError,
    read_spec,
    read_weights,
    save_policy,
    table_for,
    validate_spec,
)
from parlour.envs import ENVIRONMENTS
from parlour.training.cli import main

DATA = Path(__file__).resolve().parent / "data"
CONFIG = Path(__file__).resolve().parent / "data" / "six_suspects_base.yaml"


# ------------------------------------------------------------------------------------------ the shipped policies
def reference_points(env_name: str) -> tuple[int, list[dict[str, Any]]]:
    ref = json.loads((DATA / "shipped_reference.json").read_text())[env_name]
    return ref["size"], ref["points"]


@pytest.mark.parametrize("name", sorted(n for n in SHIPPED if n.endswith("_distilled")))
def test_shipped_policy_files_act_as_the_zips_they_were_converted_from(name: str) -> None:
    # tests/data/shipped_reference.json holds what the distilled track's SB3 zips (loaded with SB3 before they left
    # the tree, or the shipped seed's run folder's model.zip) chose at 48 decision points of each game
    # (tests/data/make_shipped_reference.py). The rl track's files were exported by the training itself (its export
    # is checked against the live model in the training tests); they are checked below.
    policy = make(name)
    assert isinstance(policy, PolicyFile) and policy.name == name
    size, points = reference_points(SHIPPED[name])
    rng = np.random.default_rng(0)
    for pt in points:
        obs = np.zeros(size, np.float32)
        obs[pt["index"]] = pt["value"]
        mask = np.array(pt["mask"], np.int8)
        assert np.allclose(policy.probabilities(obs, mask), pt["probs"], atol=1e-5)
        assert policy.act(obs, mask, rng) == pt["greedy"]


@pytest.mark.parametrize("name", sorted(n for n in SHIPPED if n.endswith("_rl")))
def test_a_shipped_rl_policy_is_the_seed_its_spec_names_and_plays_as_it(name: str) -> None:
    """``<game>_rl`` is the family and seed fixed before training: it ships its own copy of that seed's weights (the
    same tensors, the same digest, the same bytes as the seed's file in the repository's archive), it was trained on
    the rl track, and it chooses as that seed's own policy file does."""
    env_name = SHIPPED[name]
    root = Path(__file__).resolve().parents[1]
    folder, seeds = root / "baselines" / "checkpoints", root / "docs" / "archive" / "seeds"
    spec = read_spec(folder / f"{env_name}_rl.json")
    chosen = spec["training"]["shipped"]
    seed_file = seeds / f"{env_name}_rl_{chosen['family']}_seed{chosen['seed']}.json"
    seed = read_spec(seed_file)
    assert {k: v for k, v in spec["weights"].items() if k != "file"} == {
        k: v for k, v in seed["weights"].items() if k != "file"
    }
    assert (folder / spec["weights"]["file"]).read_bytes() == (seeds / seed["weights"]["file"]).read_bytes()
    assert spec["training"]["config"]["track"] == "rl"
    policy, own = make(name), PolicyFile(seed_file)
    size, points = reference_points(env_name)
    for pt in points:
        obs = np.zeros(size, np.float32)
        obs[pt["index"]] = pt["value"]
        mask = np.array(pt["mask"], np.int8)
        assert np.array_equal(policy.probabilities(obs, mask), own.probabilities(obs, mask))


def test_a_policy_plays_with_numpy_alone_and_samples_legally() -> None:
    policy = resolve("goes_to_eleven_distilled", "goes_to_eleven_v0", deterministic=False)
    size, points = reference_points("goes_to_eleven_v0")
    rng = np.random.default_rng(1)
    for pt in points[:10]:
        obs = np.zeros(size, np.float32)
        obs[pt["index"]] = pt["value"]
        mask = np.array(pt["mask"], np.int8)
        assert mask[policy.act(obs, mask, rng)] == 1


# ------------------------------------------------------------------------------------------ the resolver
@pytest.mark.parametrize("env_name", sorted(ENVIRONMENTS))
def test_the_resolver_accepts_exactly_the_names_it_lists(env_name: str) -> None:
    listed = available(env_name)
    for name in [*BOTS, *SHIPPED]:
        if name in listed:
            assert resolve(name, env_name, 4).name == name
        else:
            with pytest.raises(UnknownPolicyError, match=f"not available for {env_name}"):
                resolve(name, env_name, 4)
    with pytest.raises(UnknownPolicyError) as err:
        resolve("genius", env_name, 4)
    assert str(listed) in str(err.value)
    shipped = [n for n, e in SHIPPED.items() if e == env_name]
    assert all(shipped_path(n).is_file() for n in shipped)
    assert [n for n in listed if n in SHIPPED] == shipped  # its shipped policy (if any) is listed, and accepted (above)


def test_a_shipped_name_is_accepted_by_evaluate_and_by_a_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["evaluate", "six_suspects_v0", "--policies", "six_suspects_distilled", "--opponents", "random", "--games", "2",
         "--no-progress"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert "| six_suspects_distilled | random |" in capsys.readouterr().out
    pytest.importorskip("omegaconf")
    from parlour.training.config import load_config

    cfg = load_config(CONFIG, ["opponents=[six_suspects_distilled]", "eval.reference=[six_suspects_distilled]"])
    assert cfg.opponents == ["six_suspects_distilled"]


USER_MODULE = """
import numpy as np

class MyBot:
    # a user's policy that does not subclass Policy: the first legal action
    def act(self, observation, action_mask, rng):
        return int(np.flatnonzero(action_mask)[0])
"""


def test_module_attribute_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_parlour_bot.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    policy = resolve("my_parlour_bot:MyBot", "six_suspects_v0", 4)
    mask = np.array([0, 1, 1], np.int8)
    assert policy.act(np.zeros(3, np.float32), mask, np.random.default_rng(0)) == 1
    assert resolve("parlour.baselines.base:RandomPolicy", "lady_alice_v0", 4).name == "random"
    with pytest.raises(UnknownPolicyError, match="cannot import it as module:NAME"):
        resolve("no_such_module:Bot", "six_suspects_v0", 4)
    with pytest.raises(UnknownPolicyError, match=r"plays \['six_suspects_v0'\], not lady_alice_v0"):
        resolve("parlour.baselines.six_suspects:SixSuspectsExpert", "lady_alice_v0", 4)


# ------------------------------------------------------------------------------------------ strict tables
def copied_policy(tmp_path: Path, name: str, **changes: Any) -> Path:
    """A copy of a shipped policy's files whose spec has ``changes`` applied (options merged)."""
    src = shipped_path(name)
    spec = read_spec(src)
    shutil.copy(src.with_name(spec["weights"]["file"]), tmp_path / spec["weights"]["file"])
    options = changes.pop("options", {})
    spec.update(changes)
    spec["options"].update(options)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path


MISMATCHES = [
    # (what differs, how to make the policy's spec differ from the default 4-player table, text in the message)
    ("env", {"env": "six_suspects_v0"}, "env: trained 'six_suspects_v0', table 'goes_to_eleven_v0'"),
    ("version", {"env_version": 7}, "env_version: trained 7, table 0"),
    ("players", {"num_players": 3}, "num_players: trained 3, table 4"),
    ("rule keyword", {"options": {"pick_on_me": True}}, "pick_on_me: trained True, table False"),
    ("missing keyword", {"options": {"new_rule": 1}}, "new_rule: trained 1, table '<absent>'"),
    ("observation size", {"observation_size": 388}, "observation_size: trained 388, table 387"),
    ("action count", {"num_actions": 151}, "num_actions: trained 151, table 150"),
]


@pytest.mark.parametrize(("kind", "changes", "message"), MISMATCHES, ids=[m[0] for m in MISMATCHES])
def test_every_kind_of_mismatch_is_refused_before_the_first_step(
    tmp_path: Path, kind: str, changes: dict[str, Any], message: str
) -> None:
    path = copied_policy(tmp_path, "goes_to_eleven_distilled", **changes)
    with pytest.raises(IncompatiblePolicyError) as err:
        resolve(str(path), "goes_to_eleven_v0", 4)
    text = str(err.value)
    assert message in text and "\n" not in text
    assert text.startswith("policy ") and "cannot play goes_to_eleven_v0 with 4 players" in text


def test_the_reward_keyword_may_differ() -> None:
    # trained with the 'win' reward; a table scored by the dense 'margin' reward is the same game
    assert read_spec(shipped_path("goes_to_eleven_distilled"))["options"]["reward"] == "win"
    assert (
        resolve("goes_to_eleven_distilled", "goes_to_eleven_v0", 4, {"reward": "margin"}).name
        == "goes_to_eleven_distilled"
    )


COMMAND_MISMATCHES = [
    (
        ["evaluate", "goes_to_eleven_v0", "--policies", "goes_to_eleven_distilled", "--opponents", "random",
         "--option", "max_piles=4"],
        "max_piles: trained 12, table 4",
    ),
    (
        ["evaluate", "goes_to_eleven_v0", "--policies", "goes_to_eleven_distilled", "--opponents", "random",
         "--option", "pick_on_me=true"],
        "pick_on_me: trained False, table True",
    ),
    (
        ["match", "goes_to_eleven_v0", "--players", "3", "--bots", "goes_to_eleven_distilled,random"],
        "num_players: trained 4, table 3",
    ),
    (
        ["evaluate", "six_suspects_v0", "--policies", "random", "--opponents", "lady_alice_distilled"],
        "'lady_alice_distilled' is not available for six_suspects_v0 (it plays lady_alice_v2)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "message"), COMMAND_MISMATCHES)
def test_commands_refuse_a_policy_at_the_wrong_table(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


# ------------------------------------------------------------------------------------------ nothing unpickled
class WritesAFile:
    """Unpickling this writes a file: a stand-in for any code a malicious checkpoint could run."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.target, "pwned"))


def crafted_checkpoint(path: Path, target: Path, meta: dict[str, Any]) -> Path:
    """An SB3-shaped zip whose ``data`` member holds a pickled payload, and a valid ``parlour.json``."""
    payload = base64.b64encode(pickle.dumps(WritesAFile(target))).decode()
    data = {"policy_class": {":type:": "<class 'x'>", ":serialized:": payload}, "observation_space": {}}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps(data))
        zf.writestr("parlour.json", json.dumps(meta))
        zf.writestr("policy.pth", pickle.dumps(WritesAFile(target)))
    return path


@pytest.fixture
def crafted(tmp_path: Path) -> tuple[Path, Path]:
    meta = {**read_spec(shipped_path("six_suspects_distilled"))}
    target = tmp_path / "written_by_the_pickle.txt"
    return crafted_checkpoint(tmp_path / "evil.zip", target, meta), target


@pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")
def test_the_crafted_checkpoint_really_runs_code_when_trusted(crafted: tuple[Path, Path]) -> None:
    pytest.importorskip("sb3_contrib")
    evil, target = crafted
    with pytest.raises(Exception):  # noqa: B017 - SB3 fails after the payload has run; the point is the file
        resolve(str(evil), "six_suspects_v0", 4, trust_pickle=True)
    assert target.read_text() == "pwned"


def load_paths(evil: Path) -> list[tuple[str, Any]]:
    p = str(evil)
    return [
        ("resolve", lambda: resolve(p, "six_suspects_v0", 4)),
        ("evaluate --policies", lambda: main(["evaluate", "six_suspects_v0", "--policies", p, "--games", "1"])),
        ("evaluate --opponents", lambda: main(["evaluate", "six_suspects_v0", "--policies", "random",
                                               "--opponents", p, "--games", "1"])),
        ("match --bots", lambda: main(["match", "six_suspects_v0", "--bots", f"{p},random", "--games", "1"])),
        ("benchmark", lambda: main(["benchmark", "six_suspects_v0", p])),
    ]  # fmt: skip


def test_no_load_path_unpickles_a_checkpoint(crafted: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    evil, target = crafted
    for where, load in load_paths(evil):
        try:
            assert load() == 2, where
        except PolicyFileError as exc:
            assert "pickle-based SB3 zip" in str(exc) and "--trust-pickle" in str(exc), where
        assert not target.exists(), f"{where} ran the pickle"
    assert "parlour export" in capsys.readouterr().err


def test_no_config_path_unpickles_a_checkpoint(crafted: tuple[Path, Path]) -> None:
    pytest.importorskip("omegaconf")
    from parlour.training.config import ConfigError, load_config

    evil, target = crafted
    for key in ("opponents", "eval.opponents", "eval.reference"):
        with pytest.raises(ConfigError, match=f"{key}: .*pickle-based SB3 zip"):
            load_config(CONFIG, [f"{key}=[{evil}]"])
        assert not target.exists(), key


def test_a_policy_file_cannot_carry_a_pickle(crafted: tuple[Path, Path], tmp_path: Path) -> None:
    # A swapped shipped file: a spec whose "weights" are the pickle, or safetensors bytes replaced by a pickle.
    evil, target = crafted
    spec = read_spec(shipped_path("six_suspects_distilled"))
    for weights in (evil.name, "policy.pth"):
        bad = tmp_path / "bad.json"
        if weights == "policy.pth":
            (tmp_path / weights).write_bytes(pickle.dumps(WritesAFile(target)))
        import hashlib

        spec["weights"] = {
            **spec["weights"],
            "file": weights,
            "sha256": hashlib.sha256((tmp_path / weights).read_bytes()).hexdigest(),
        }
        bad.write_text(json.dumps(spec))
        with pytest.raises(PolicyFileError, match="is not a safetensors file|does not hold"):
            PolicyFile(bad)
        assert not target.exists()


def test_a_torn_or_altered_pair_is_refused(tmp_path: Path) -> None:
    path = copied_policy(tmp_path, "six_suspects_distilled")
    weights = tmp_path / read_spec(path)["weights"]["file"]
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(PolicyFileError, match="does not match the SHA-256"):
        PolicyFile(path)
    with pytest.raises(PolicyFileError, match="policy file not found"):
        PolicyFile(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text('{"format": "something else"}')
    with pytest.raises(PolicyFileError, match="is not a policy spec"):
        PolicyFile(tmp_path / "junk.json")


# ------------------------------------------------------------------------------------------ malformed policy files
#: The repository's policy files, every seed's too (the installed package carries only the shipped ones).
REPO_CHECKPOINTS = Path(__file__).resolve().parents[1] / "baselines" / "checkpoints"
SHIPPED_FILES = sorted(p.name for p in REPO_CHECKPOINTS.glob("*_distilled*.json"))


@pytest.mark.parametrize("name", SHIPPED_FILES)
def test_every_shipped_policy_file_passes_the_schema(name: str) -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(SPEC_SCHEMA)
    validate_spec(json.loads((REPO_CHECKPOINTS / name).read_text()), name)
    assert PolicyFile(REPO_CHECKPOINTS / name).spec["format"] == "parlour-policy"


def edited(tmp_path: Path, edit: Any, name: str = "goes_to_eleven_distilled") -> Path:
    """A copy of a shipped policy whose spec (as parsed JSON) ``edit`` changes in place."""
    path = copied_policy(tmp_path, name)
    spec = json.loads(path.read_text())
    edit(spec)
    path.write_text(json.dumps(spec))
    return path


def _set(field: str, value: Any) -> Any:
    def edit(spec: dict[str, Any]) -> None:
        *parents, last = field.split(".")
        for part in parents:
            spec = spec[part]
        spec[last] = value

    return edit


def _rl_with(**config: Any) -> Any:
    """Say track: rl in the spec's training config, with ``config`` (dotted keys) changed too."""

    def edit(spec: dict[str, Any]) -> None:
        _set("training.config.track", "rl")(spec)
        for key, value in config.items():
            _set(f"training.config.{key.replace('__', '.')}", value)(spec)

    return edit


MALFORMED = [
    # (what, edit, the one line after the file's name)
    ("an imitating policy called rl", _rl_with(), "training.config says track: rl (learned from the environment alone) "
     "but has pretrain.teacher='goes_to_eleven_expert'"),
    ("a shaped reward called rl", _rl_with(pretrain__teacher="", game__options__reward="margin"),
     "but has game.options.reward='margin': a policy that imitates a bot, reads its features or a shaped reward is "
     "distilled"),
    ("players a string", _set("num_players", "4"), "num_players: '4' is not of type 'integer'"),
    ("players a float", _set("num_players", 4.0), "num_players: 4.0 is not of type 'integer'"),
    ("pi a string", _set("network.pi", "64"), "network.pi: '64' is not of type 'array'"),
    ("weights a list", _set("weights", ["a.safetensors"]), "weights: ['a.safetensors'] is not of type 'object'"),
    ("options a list", _set("options", []), "options: [] is not of type 'object'"),
    ("huge layers", _set("network.pi", [100000, 100000]), "is greater than the maximum of 65536"),
    ("too many parameters", _set("network.pi", [65536, 65536]), "network: 4,330,456,727 parameters (pi [65536, 65536]"),
    ("unknown activation", _set("network.activation", "gelu"), "network.activation: 'gelu' is not one of ['relu', 'tanh']"),
    ("unknown network key", _set("network.dropout", 0.1), "network: Additional properties are not allowed ('dropout'"),
    ("skip_features a string", _set("network.skip_features", "yes"), "network.skip_features: 'yes' is not of type 'boolean'"),
    ("features not names", _set("network.features", [1]), "network.features[0]: 1 is not of type 'string'"),
    ("weights with a path", _set("weights.file", "../x.safetensors"), "weights.file: '../x.safetensors' is not a plain file name"),
    ("weights absolute", _set("weights.file", "/etc/passwd"), "weights.file: '/etc/passwd' is not a plain file name"),
    ("bad digest", _set("weights.sha256", "abc"), "weights.sha256: 'abc' is not a SHA-256 digest"),
    ("no network", lambda s: s.pop("network"), "'network' is a required property"),
    ("deep options", _set("options", json.loads("[" * 500 + "]" * 500)), "nests deeper than 64 levels"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "edit", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_spec_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, what: str, edit: Any, message: str
) -> None:
    # probe: before, these raised TypeError/KeyError tracebacks, loaded silently (gelu played as tanh), or read a
    # weights file outside the spec's folder
    path = edited(tmp_path, edit)
    for load in (lambda: read_spec(path), lambda: PolicyFile(path), lambda: resolve(str(path), "goes_to_eleven_v0", 4)):
        with pytest.raises(PolicyFileError) as err:
            load()
        text = str(err.value)
        assert text.startswith(str(path)) and message in text and "\n" not in text, text


def test_deeply_nested_json_is_one_line(tmp_path: Path) -> None:
    # probe: before, '[' * 100000 raised RecursionError
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000)
    with pytest.raises(PolicyFileError, match=r"deep\.json is not a policy spec \(its JSON nests too deeply"):
        read_spec(path)


def test_read_weights_checks_a_spec_it_did_not_read(tmp_path: Path) -> None:
    # read_weights is public: a spec built in code may not name a file outside the spec's folder either
    path = copied_policy(tmp_path, "goes_to_eleven_distilled")
    spec = read_spec(path)
    spec["weights"] = {**spec["weights"], "file": "../" + spec["weights"]["file"]}
    with pytest.raises(PolicyFileError, match="weights.file: .* is not a plain file name"):
        read_weights(path, spec)


def test_the_forward_pass_plays_only_the_activations_it_knows(tmp_path: Path) -> None:
    # probe: before, MLPActorCritic played any activation but 'relu' as tanh
    policy = PolicyFile(shipped_path("goes_to_eleven_distilled"))
    tensors = read_weights(policy.path, policy.spec)
    with pytest.raises(PolicyFileError, match="network.activation 'gelu' is not supported"):
        MLPActorCritic({**policy.spec["network"], "activation": "gelu"}, tensors)
    assert MLPActorCritic(policy.spec["network"], tensors).activation == policy.spec["network"]["activation"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e300])
def test_weights_that_are_not_finite_are_refused_naming_the_tensor(tmp_path: Path, bad: float) -> None:
    # probe: before, NaN weights loaded and greedy play always chose the first legal action
    from safetensors.numpy import load_file, save_file

    path = copied_policy(tmp_path, "goes_to_eleven_distilled")
    spec = json.loads(path.read_text())
    weights = tmp_path / spec["weights"]["file"]
    tensors = {k: v.astype(np.float64) for k, v in load_file(str(weights)).items()}
    tensors["action_net.bias"][3] = bad  # 1e300 is finite as float64, infinite as the float32 the policy plays
    save_file(tensors, str(weights))
    spec["weights"]["sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    path.write_text(json.dumps(spec))
    with pytest.raises(PolicyFileError) as err:
        PolicyFile(path)
    text = str(err.value)
    assert text.startswith(str(weights)) and "tensor 'action_net.bias' holds NaN or infinite values" in text


def test_save_policy_refuses_tensors_that_do_not_fit_the_spec(tmp_path: Path) -> None:
    spec = read_spec(shipped_path("six_suspects_distilled"))
    with pytest.raises(PolicyFileError, match="do not match the network"):
        save_policy(tmp_path / "p", {"action_net.weight": np.zeros((2, 2))}, spec)


def test_table_for_names_the_default_player_count() -> None:
    assert table_for("lady_alice_v0").num_players == 4
    assert table_for("lady_alice_v0", 3).num_players == 3


def test_the_library_checks_a_policy_where_it_meets_a_table() -> None:
    # Built without a table (as a user of the API might), the policy is still checked where it sits down.
    policy = PolicyFile(shipped_path("goes_to_eleven_distilled"))
    from parlour.training.evaluation.match import run_match
    from parlour.training.evaluation.matchups import play_matchup

    with pytest.raises(IncompatiblePolicyError, match="num_players: trained 4, table 3"):
        play_matchup("goes_to_eleven_v0", policy, make("random"), num_players=3, games=1)
    with pytest.raises(IncompatiblePolicyError, match="pick_on_me: trained False, table True"):
        play_matchup(
            "goes_to_eleven_v0", make("random"), policy, num_players=4, games=1, env_kwargs={"pick_on_me": True}
        )
    with pytest.raises(IncompatiblePolicyError, match="num_players"):
        run_match(
            "goes_to_eleven_v0", [str(shipped_path("goes_to_eleven_distilled")), "random"], num_players=5, games=1
        )
    with pytest.raises(
        ValueError, match=r"plays \['lady_alice_v2', 'lady_alice_v1', 'lady_alice_v0'\], not goes_to_eleven_v0"
    ):
        play_matchup("goes_to_eleven_v0", make("lady_alice_expert"), make("random"), num_players=4, games=1)
    pytest.importorskip("gymnasium")
    from parlour.training.single_agent import SingleAgentEnv

    with pytest.raises(IncompatiblePolicyError, match="num_players"):
        SingleAgentEnv("goes_to_eleven_v0", [policy], env_kwargs={"num_players": 2})
    env = SingleAgentEnv("goes_to_eleven_v0", [make("random")], env_kwargs={"num_players": 2})
    with pytest.raises(IncompatiblePolicyError, match="num_players"):
        env.add_opponent(policy)


def test_a_keyword_newer_than_the_policy_file_counts_at_its_default() -> None:
    """Policy files written before a keyword existed were trained at its default for their env version."""
    from parlour.baselines.policy_file import differences, read_spec

    # A lady_alice_v0 file from before accusation_covers existed: its table without that keyword.
    spec = read_spec(shipped_path("lady_alice_distilled"))
    old = table_for("lady_alice_v0")
    spec = {**spec, **old.as_dict(), "options": {k: v for k, v in old.options.items() if k != "accusation_covers"}}
    assert "accusation_covers" in old.options
    assert differences(spec, table_for("lady_alice_v0")) == []
    assert differences(spec, table_for("lady_alice_v0", options={"accusation_covers": True})) == [
        "accusation_covers: trained False, table True"
    ]
    assert "env: trained 'lady_alice_v0', table 'lady_alice_v1'" in differences(spec, table_for("lady_alice_v1"))


def test_a_table_is_frozen_and_is_what_a_shipped_file_records() -> None:
    """The table a policy is trained for: one frozen value, the same whether made from an env or read from a file."""
    import dataclasses

    from parlour.baselines.base import Table
    from parlour.baselines.policy_file import read_spec

    spec = read_spec(shipped_path("six_suspects_distilled"))
    table = table_for("six_suspects_v0", spec["num_players"], spec["options"])
    assert Table.from_record(spec) == table
    assert table.as_dict() == {k: spec[k] for k in table.as_dict()}
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.num_players = 5  # type: ignore[misc]
    assert table != dataclasses.replace(table, num_players=5)
