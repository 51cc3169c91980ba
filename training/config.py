"""Training configs: typed YAML through OmegaConf structured configs.

A config is a YAML file checked against :class:`TrainConfig`: values are typed (``3e-4`` is a float), unknown keys
are refused with the allowed ones listed, and ``key.sub=value`` overrides from the command line are merged in the
same way. ``load_config`` returns a validated, resolved :class:`TrainConfig`; every error is a
:class:`ConfigError` with one clear message.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import typing
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from parlour.baselines import field_net
from parlour.baselines.policy_file import MAX_PARAMETERS, RL_REWARDS, TRACKS, rl_track_problems
from parlour.training.config_base import SELF_PLAY, SNAPSHOTS, ConfigError

if TYPE_CHECKING:
    from parlour.envs.layout import Layout

#: ``train.vec_env`` values (see :class:`TrainBudget`).
VEC_ENVS = ("dummy", "subproc", "jax")
#: ``train.eval_backend`` values (see :class:`TrainBudget`).
EVAL_BACKENDS = ("scalar", "jax")
#: ``opponent_draw`` values (see :class:`TrainConfig`).
OPPONENT_DRAWS = ("seat", "table")
#: ``opponent_sampling`` values (see :class:`TrainConfig` and :class:`SamplingConfig`).
OPPONENT_SAMPLINGS = ("uniform", "prioritised")
#: ``ppo.activation`` values (names of ``torch.nn`` modules).
ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh"}
#: ``ppo.network`` values: ``mlp`` (the policy and value MLPs of ``ppo.net_arch``) or ``field_encoder`` (a token per row
#: of each observation field, attention and DeepSets pooling before them: :mod:`parlour.baselines.field_net`).
NETWORKS = ("mlp", "field_encoder")
#: The trainers that can train ``ppo.network: field_encoder``.
FIELD_ENCODER_TRAINERS = ("jax",)


@dataclass
class GameConfig:
    #: Env id, e.g. ``six_suspects_v0``.
    name: str = MISSING
    num_players: int = 4
    #: The env's rule keywords (validated by the env itself).
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class LearnerConfig:
    #: The learning seat: an integer, or ``random`` to draw it per episode.
    seat: str = "random"
    #: Play the trained policy greedily in evaluation (``False``: sample from it with the evaluation seed).
    deterministic: bool = True


@dataclass
class EncoderConfig:
    """The field encoder's size (``ppo.network: field_encoder``; see :mod:`parlour.baselines.field_net`)."""

    #: Width of every token.
    d_model: int = 64
    #: Transformer blocks over the tokens (0: none, the pooling sees each token on its own).
    attention_layers: int = 1
    #: Attention heads; must divide ``d_model``.
    heads: int = 4


@dataclass
class PPOConfig:
    """MaskablePPO hyper-parameters (see sb3-contrib's documentation)."""

    learning_rate: float = 3e-4
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 10
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    #: Hidden-layer activation: ``relu`` or ``tanh`` (SB3's default).
    activation: str = "relu"
    #: Observation feature sets appended to the network's input (``parlour.baselines.features``): functions of
    #: the observation alone, so the policy still sees only what its seat knows.
    features: list[str] = field(default_factory=list)
    #: Feed the feature sets to the action and value heads directly too, beside the last hidden layer
    #: (``parlour.training.networks.SkipFeaturesPolicy``); needs ``features``.
    skip_features: bool = False
    #: The observation fields the network reads (names from the env's observation layout, e.g. ``phase``); empty:
    #: the whole observation. The feature sets are computed from the whole observation either way.
    observation_fields: list[str] = field(default_factory=list)
    #: The network: ``mlp`` or ``field_encoder`` (``trainer: jax`` only; ``net_arch`` and ``activation`` are then the
    #: policy and value trunks after the pooled tokens).
    network: str = "mlp"
    #: The field encoder's size (read with ``network: field_encoder`` only).
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    #: The weight of the belief heads' loss (``trainer: jax`` only; 0: no heads). Heads on the policy trunk predict,
    #: at every step, what the end-of-game reveal shows (the JAX core's ``hindsight``: training-time targets from the
    #: outcome every seat receives at the end; the policy acts on its observation alone and its file has no head).
    hindsight_coef: float = 0.0


@dataclass
class SelfPlayConfig:
    #: Steps between snapshots of the learner added to the opponent pool (where the pool lists ``self``; under
    #: ``trainer: jax``, ``snapshots``).
    snapshot_every: int = 50_000
    #: Snapshots kept in the pool (oldest dropped first).
    max_snapshots: int = 5


@dataclass
class SamplingConfig:
    """``opponent_sampling: prioritised`` (``trainer: jax`` only): each episode draws its pool entry with probability
    ``floor / K + (1 - floor) * softmax(loss_ema / temperature)`` over the ``K`` entries, ``loss_ema`` being each
    entry's moving average of the learner's loss rate at its tables (:mod:`parlour.training.jax_ppo`)."""

    #: The softmax's temperature (> 0): small leans hard on the hardest entry, large is near uniform.
    temperature: float = 1.0
    #: The moving average's step per update, in (0, 1]: an entry whose tables ended games moves this far toward
    #: their loss rate.
    smoothing: float = 0.05
    #: The share of probability spread evenly over the pool, in [0, 1]: no entry is drawn less than ``floor / K``.
    floor: float = 0.05


@dataclass
class PretrainConfig:
    """Behaviour cloning before PPO (a new run only): the learner first imitates ``teacher`` on its own tables."""

    #: The policy imitated (any policy spec, e.g. a bot name); empty: no pretraining.
    teacher: str = ""
    #: Games the teacher plays in the learner's seat (opponents drawn from the pool as in training).
    games: int = 2000
    epochs: int = 10
    batch_size: int = 1024
    learning_rate: float = 1e-3


@dataclass
class TrainBudget:
    total_timesteps: int = 200_000
    n_envs: int = 8
    #: ``dummy`` (one process), ``subproc`` (one process per env) or ``jax`` (every game in one jitted call on the
    #: game's JAX core, with batched bots: :mod:`parlour.training.jax_vec_env`).
    vec_env: str = "dummy"
    checkpoint_every: int = 50_000
    #: Steps between periodic evaluations (0: none).
    eval_every: int = 50_000
    #: Where the periodic evaluations play: ``scalar`` (the scalar env, on ``eval.seed_set``'s deals) or ``jax``
    #: (``trainer: jax`` only: the greedy network against batched bots on the game's JAX core, on deals of JAX's
    #: generator: :mod:`parlour.training.jax_eval`). The final evaluation is the scalar one either way.
    eval_backend: str = "scalar"
    #: Torch threads for the learner.
    torch_threads: int = 1
    device: str = "cpu"


@dataclass
class EvalConfig:
    #: Opponents the policy is evaluated against (bot names or checkpoint paths); each fills the other seats.
    opponents: list[str] = field(default_factory=lambda: ["random"])
    #: Policies evaluated beside the trained one, for comparison (bot names or checkpoint paths).
    reference: list[str] = field(default_factory=list)
    #: Deals per opponent in the final evaluation (each deal is played once per seat).
    games: int = 200
    #: Deals per opponent in each periodic evaluation.
    periodic_games: int = 50
    #: The versioned evaluation deal set (see ``parlour.training.evaluation.games.EVAL_SEED_SETS``).
    seed_set: str = "v1"


@dataclass
class RLlibConfig:
    """The RLlib trainer (``trainer: rllib``): where it runs and how it samples."""

    #: Ray cluster to join (``auto``, ``ray://host:10001``…); empty: a local Ray started in this process.
    ray_address: str = ""
    #: Remote env runners sampling in parallel (0: sample in the driver); ``train.n_envs`` envs are split over them.
    num_env_runners: int = 0


@dataclass
class TrainConfig:
    #: ``sb3`` (MaskablePPO, one process) or ``rllib`` (Ray RLlib PPO with the masked module; scales with a cluster).
    trainer: str = "sb3"
    game: GameConfig = field(default_factory=GameConfig)
    learner: LearnerConfig = field(default_factory=LearnerConfig)
    #: The opponent pool: bot names, checkpoint paths (``*.zip``), ``self`` for snapshots of the learner (``trainer: jax``:
    #: its current policy) or ``snapshots`` (``trainer: jax``: a ring of its past parameters).
    opponents: list[str] = field(default_factory=lambda: ["random"])
    #: How the pool fills a table each episode: ``seat`` (every other seat drawn on its own, mixed tables) or
    #: ``table`` (one draw fills every other seat, as the benchmark's tables are).
    opponent_draw: str = "seat"
    #: How each episode draws from the pool: ``uniform`` (every entry alike) or ``prioritised`` (``trainer: jax``
    #: only: the entries the learner loses to most are drawn more; see :class:`SamplingConfig`).
    opponent_sampling: str = "uniform"
    #: The settings of ``opponent_sampling: prioritised``.
    sampling: SamplingConfig = field(default_factory=SamplingConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    self_play: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    train: TrainBudget = field(default_factory=TrainBudget)
    eval: EvalConfig = field(default_factory=EvalConfig)
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    seed: int = 0
    #: Allow SB3 ``*.zip`` checkpoints as opponents or evaluation entries. Loading one unpickles it, which can run
    #: code stored in the file: only for files you trust. Policy files (``*.json``) need no such permission.
    trust_pickle: bool = False
    #: The track the trained policy stands on: ``rl`` (learns from the environment only: its observation, mask and
    #: game-outcome reward; no teacher, no feature sets, a reward of :data:`RL_REWARDS`) or ``distilled`` (imitates
    #: a bot and/or reads bot-derived feature sets); empty: not on a published track. Recorded in the policy file.
    track: str = ""


#: Section type name (as dataclass fields spell it under postponed annotations) -> section class.
_SECTIONS: dict[str, Any] = {
    c.__name__: c
    for c in (
        GameConfig,
        LearnerConfig,
        PPOConfig,
        EncoderConfig,
        SelfPlayConfig,
        SamplingConfig,
        PretrainConfig,
        TrainBudget,
        EvalConfig,
        RLlibConfig,
    )
}


def _allowed_keys(node: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(node)] if dataclasses.is_dataclass(node) else []


def _explain(exc: OmegaConfBaseException, source: str) -> ConfigError:
    """Turn an OmegaConf error into one message that names the key and what is allowed."""
    key = getattr(exc, "full_key", None) or ""
    # OmegaConf appends full_key/reference_type/object_type lines: the key is named already, keep the first line
    msg = (getattr(exc, "msg", None) or str(exc)).strip().splitlines()[0]
    if "not in" in msg:
        node: Any = TrainConfig
        for part in key.split(".")[:-1]:  # walk the schema down to the section that holds the unknown key
            fields = {f.name: f.type for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
            node = _SECTIONS.get(str(fields.get(part)))
        return ConfigError(f"{source}: unknown key '{key}'; allowed keys here: {_allowed_keys(node)}")
    expected = _EXPECTED.get(_field_type(key))
    return ConfigError(
        f"{source}: bad value for '{key}': {msg.rstrip('.')}" + (f"; expected {expected}" if expected else "")
    )


#: What a value of each field type looks like, for the messages.
_EXPECTED: dict[Any, str] = {
    int: "an integer (1e6 and 1_000_000 are read as integers)",
    float: "a number",
    bool: "true or false",
    str: "a string",
    list[int]: "a list of integers, e.g. [256, 256]",
    list[str]: "a list of names, e.g. [random, six_suspects_heuristic]",
    dict[str, Any]: "a mapping of keywords to values",
}


def _field_type(key: str) -> Any:
    """The schema's type for a dotted key (``None`` if the key is not in the schema)."""
    node: Any = TrainConfig
    for part in key.split("."):
        if not dataclasses.is_dataclass(node):
            return None
        node = typing.get_type_hints(node).get(part)
    return node


#: The largest step count a config may give: 2**53, the largest integer a float holds exactly (SB3's schedules and
#: logs compute with step counts as floats; a YAML ``1e30`` would otherwise be read lossily).
MAX_COUNT = 2**53


def _as_int(value: Any, key: str) -> Any:
    """``1e6``, ``1.0e6`` or ``1000000.0`` as the integer they name; anything else unchanged (the schema judges). A
    number too large to be read exactly is refused with ``key`` named."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value = float(value.replace("_", ""))
        except ValueError:
            return value
    if isinstance(value, float) and value.is_integer():
        if abs(value) > MAX_COUNT:
            raise ConfigError(f"{key}={value:g} is out of range: expected an integer of at most 2**53 ({MAX_COUNT:,})")
        return int(value)
    return value


def _integral_numbers_as_ints(node: DictConfig, cls: Any, prefix: str = "") -> None:
    """Write integral numbers given to integer fields as ints: YAML reads ``1e6`` as a string and ``1.0e6`` as a
    float, which OmegaConf would refuse for an ``int``; ``1000.5`` stays and is refused with the key named."""
    hints = typing.get_type_hints(cls)
    for key in list(node.keys()):
        kind = hints.get(str(key))
        if kind is None or OmegaConf.is_interpolation(node, str(key)):
            continue
        value = node[key]
        where = f"{prefix}{key!s}"
        if kind is int:
            node[key] = _as_int(value, where)
        elif kind == list[int] and isinstance(value, ListConfig):
            node[key] = [_as_int(v, f"{where}[{i}]") for i, v in enumerate(value)]
        elif dataclasses.is_dataclass(kind) and isinstance(value, DictConfig):
            _integral_numbers_as_ints(value, kind, f"{where}.")


def _memory_bytes() -> int | None:
    """This machine's physical memory (``None`` where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_memory(cfg: TrainConfig, layout: Layout, num_actions: int) -> None:
    """Refuse a network or rollout that this machine's memory cannot hold, before anything is allocated."""
    from parlour.baselines.features import field_index, size
    from parlour.baselines.registry import lookup

    keep = field_index(cfg.game.name, cfg.game.num_players, cfg.game.options, cfg.ppo.observation_fields)
    width = (layout.size if keep is None else len(keep)) + size(lookup(cfg.ppo.features, cfg.game.name))
    params = activations = 0
    if cfg.ppo.network == "field_encoder":
        plan, enc = field_net.token_plan(layout), cfg.ppo.encoder
        params = field_net.parameter_count(plan, encoder_network(cfg, layout), num_actions)
        if params > MAX_PARAMETERS:  # the policy file could not hold the trained network
            raise ConfigError(
                f"ppo.encoder (d_model={enc.d_model}, attention_layers={enc.attention_layers}) with ppo.net_arch="
                f"{list(cfg.ppo.net_arch)} has {params:,} parameters on {cfg.game.name}, more than the "
                f"{MAX_PARAMETERS:,} a policy file may hold: choose a smaller d_model, fewer layers or smaller layers"
            )
        # what a minibatch's gradient keeps, roughly: a dozen d_model-wide values per token and block (and the
        # tokens, the pooling), and the attention weights of every head (T × T per head and block)
        tokens = sum(t["rows"] for t in plan)
        per_sample = (
            tokens * enc.d_model * (12 * enc.attention_layers + 4) + 2 * enc.heads * tokens**2 * enc.attention_layers
        )
        activations = 4 * cfg.ppo.batch_size * per_sample
    else:
        for out in (num_actions, 1):  # the policy and the value network, each with its head
            w_in = width
            for w in cfg.ppo.net_arch:
                params += (w_in + 1) * w
                w_in = w
            params += (w_in + 1) * out
    # weights, gradients and Adam's two moments in float32; the rollout: inputs, masks and a few floats per step
    need = 16 * params + cfg.ppo.n_steps * cfg.train.n_envs * (4 * width + num_actions + 32) + activations
    have = _memory_bytes()
    if have is not None and need > have:
        enc = cfg.ppo.encoder
        encoder = (
            f"ppo.network=field_encoder (d_model={enc.d_model}, attention_layers={enc.attention_layers}, heads="
            f"{enc.heads}, ppo.batch_size={cfg.ppo.batch_size}), "
            if cfg.ppo.network == "field_encoder"
            else ""
        )
        raise ConfigError(
            f"{encoder}ppo.net_arch={list(cfg.ppo.net_arch)} with ppo.n_steps={cfg.ppo.n_steps} and train.n_envs="
            f"{cfg.train.n_envs} needs about {need / 2**30:,.1f} GiB ({params:,} parameters), more than this "
            f"machine's {have / 2**30:,.1f} GiB of memory: choose smaller layers or fewer steps per rollout"
        )


def read_config(path: str | Path | None, overrides: Sequence[str] = ()) -> TrainConfig:
    """A YAML config with ``key=value`` overrides merged in, typed and resolved but not yet validated: nothing it
    names is looked up, imported or reached (see :func:`validate`). Every error is one :class:`ConfigError` line."""
    schema = OmegaConf.structured(TrainConfig)
    try:
        if path is not None:
            p = Path(path)
            if not p.is_file():
                raise ConfigError(f"config file not found: {p}")
            try:
                from_file = OmegaConf.load(p)
            except Exception as exc:  # noqa: BLE001 - any YAML error is reported as such
                raise ConfigError(f"{p}: not a valid YAML config: {exc}") from exc
            if not isinstance(from_file, DictConfig):
                raise ConfigError(f"{p}: a config must be a mapping of keys to values")
            _refuse_resolvers(from_file, str(p))
            _integral_numbers_as_ints(from_file, TrainConfig)
            schema = OmegaConf.merge(schema, from_file)
        for item in overrides:
            if "=" not in item:
                raise ConfigError(f"override {item!r} is not of the form key=value (e.g. train.total_timesteps=20000)")
        if overrides:
            dotlist = OmegaConf.from_dotlist(list(overrides))
            _refuse_resolvers(dotlist, "the command line")
            _integral_numbers_as_ints(dotlist, TrainConfig)
            schema = OmegaConf.merge(schema, dotlist)
        OmegaConf.resolve(schema)
        if OmegaConf.is_missing(schema.game, "name"):
            raise ConfigError(f"{path}: game.name is required (e.g. six_suspects_v0)")
        cfg: TrainConfig = OmegaConf.to_object(schema)  # type: ignore[assignment]
    except OmegaConfBaseException as exc:
        raise _explain(exc, str(path) if path is not None else "config") from None
    return cfg


def load_config(
    path: str | Path | None, overrides: Sequence[str] = (), *, trusted: bool = True, confirmed: Collection[str] = ()
) -> TrainConfig:
    """Read a YAML config, merge ``key=value`` overrides, validate, and return a typed ``TrainConfig``.

    ``trusted=False`` reads a config that came with a run folder (``--resume``): it may not grant itself
    ``trust_pickle``, and every value of :data:`UNTRUSTED_KEYS` that reaches beyond the run folder (an address, an
    importable name, a process count) is refused in one line unless its key is in ``confirmed`` (the keys the
    command line gave). The refusal comes before anything is imported or reached."""
    cfg = read_config(path, overrides)
    if not trusted:
        check_untrusted(cfg, str(path) if path is not None else "config", confirmed)
    validate(cfg)
    return cfg


def _policy_specs(cfg: TrainConfig) -> list[tuple[str, list[str]]]:
    """Every policy spec a config names, by the key that names it."""
    return [
        ("opponents", list(cfg.opponents)),
        ("eval.opponents", list(cfg.eval.opponents)),
        ("eval.reference", list(cfg.eval.reference)),
        ("pretrain.teacher", [cfg.pretrain.teacher] if cfg.pretrain.teacher else []),
    ]


#: The keys of a config whose values reach beyond the run folder when it runs -- a network address, code to import,
#: processes to start -- and what each does. A run folder's own config (``parlour train --resume``) may set them only
#: where the command line gives the same value (``key=value``, or ``--ray-address``) or ``--trust`` is passed: a
#: folder someone handed over must not connect, import or fork on its own say. (No key of the config names an output
#: path: where a run writes is always the command line's ``--out``.)
UNTRUSTED_KEYS: dict[str, str] = {
    "rllib.ray_address": "a network address: the run would join that Ray cluster, which then receives the run's data "
    "and sends it pickled objects",
    "opponents": "a policy spec that imports code (module:NAME or file.py:NAME)",
    "eval.opponents": "a policy spec that imports code (module:NAME or file.py:NAME)",
    "eval.reference": "a policy spec that imports code (module:NAME or file.py:NAME)",
    "pretrain.teacher": "a policy spec that imports code (module:NAME or file.py:NAME)",
    "train.n_envs": "a process count (train.vec_env: subproc starts one process per env)",
    "rllib.num_env_runners": "a process count (one Ray worker process each)",
}


def imports_code(spec: str) -> bool:
    """Whether a policy spec names code to import (``module:NAME``, ``file.py:NAME``), not a bot, a shipped policy
    or a policy file (see :func:`parlour.baselines.resolve`)."""
    from parlour.baselines import BOTS, SHIPPED, renamed
    from parlour.baselines.base import MIXED_PREFIX
    from parlour.baselines.policy_file import is_policy_path

    spec = renamed(spec)
    if spec.startswith(MIXED_PREFIX):  # a mixed table imports what its members import
        return any(imports_code(m) for m in spec[len(MIXED_PREFIX) :].split("+"))
    if (
        spec in (SELF_PLAY, SNAPSHOTS)
        or spec in BOTS
        or spec in SHIPPED
        or is_policy_path(spec)
        or spec.endswith(".zip")
    ):
        return False
    return ":" in spec


def reaching_values(cfg: TrainConfig) -> dict[str, Any]:
    """The values of :data:`UNTRUSTED_KEYS` in ``cfg`` that reach beyond the run folder (a key whose value reaches
    nowhere -- an empty address, bot names, one process -- is not listed)."""
    out: dict[str, Any] = {}
    if cfg.rllib.ray_address:
        out["rllib.ray_address"] = cfg.rllib.ray_address
    for where, names in _policy_specs(cfg):
        if any(imports_code(n) for n in names):
            out[where] = cfg.pretrain.teacher if where == "pretrain.teacher" else names
    if cfg.train.vec_env == "subproc":
        out["train.n_envs"] = cfg.train.n_envs
    if cfg.trainer == "rllib" and cfg.rllib.num_env_runners > 0:
        out["rllib.num_env_runners"] = cfg.rllib.num_env_runners
    return out


def check_untrusted(
    cfg: TrainConfig, source: str, confirmed: Collection[str] = (), *, trust_keys: bool = False
) -> None:
    """A run folder's config is a file someone may have handed over: it cannot allow what runs code, nor connect,
    import or start processes unless the command line says the same (``confirmed``: the keys it gave) or trusts the
    run (``trust_keys``: ``--trust``)."""
    if cfg.trust_pickle:
        raise ConfigError(
            f"{source} sets trust_pickle: true, which a run folder cannot grant itself (loading an SB3 zip can run "
            "code stored in it); pass --trust-pickle if you trust every file this run names"
        )
    for key, value in reaching_values(cfg).items():
        if trust_keys or key in confirmed:
            continue
        shown = override(key, value)
        raise ConfigError(
            f"{source}: {shown} is {UNTRUSTED_KEYS[key]}; a run folder's config cannot set it on its own: give the "
            f"same value on the command line ({shown}) or pass --trust if you trust this run"
        )


def override(key: str, value: Any) -> str:
    """``key=value`` as a command-line override writes it (a list as ``[a,b]``)."""
    if isinstance(value, list | tuple):
        return f"{key}=[{','.join(str(v) for v in value)}]"
    return f"{key}={value}"


#: ``${name:...}`` in a config: an OmegaConf resolver call (``oc.env``, ``oc.decode``...), not a reference to a key.
_RESOLVER = re.compile(r"\$\{\s*[A-Za-z_][\w.]*\s*:")


def _refuse_resolvers(node: DictConfig, source: str) -> None:
    """Refuse resolver calls such as ``${oc.env:TOKEN}``: their values would be copied into the run's config.yaml
    and every policy file it exports (an environment's secrets among them). ``${other.key}`` references stay."""

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")
        elif isinstance(value, str) and _RESOLVER.search(value):
            raise ConfigError(
                f"{source}: {where}={value!r} calls a resolver; configs may not read the environment or run "
                "resolvers (the value would be copied into config.yaml and every policy file): write the value itself"
            )

    walk(OmegaConf.to_container(node, resolve=False), "")


def _check_track(cfg: TrainConfig) -> None:
    """A run says what it is made of: an ``rl`` run may not imitate, read bot-derived features or a shaped reward."""
    if cfg.track not in ("", *TRACKS):
        raise ConfigError(f"track={cfg.track!r} is not valid: expected one of {list(TRACKS)} (or empty)")
    if cfg.track == "rl":
        bad = rl_track_problems({"pretrain": {"teacher": cfg.pretrain.teacher}, "game": {"options": cfg.game.options}},
                                cfg.ppo.features)  # fmt: skip
        if bad:
            raise ConfigError(
                f"track: rl learns from the environment alone (its observation, mask and a game-outcome reward of "
                f"{list(RL_REWARDS)}), but this config has {', '.join(bad)}: use track: distilled, or drop them"
            )
    if cfg.track == "distilled" and not (cfg.pretrain.teacher or cfg.ppo.features):
        raise ConfigError(
            "track: distilled names a policy that imitates a bot or reads its features, but this config has neither "
            "pretrain.teacher nor ppo.features: use track: rl"
        )


def validate(cfg: TrainConfig) -> None:
    """Checks that need more than types: names that must exist, ranges, the game's own keywords, and budgets this
    machine can hold. Policy specs are resolved as every command resolves them (never called: see
    :func:`parlour.baselines.resolve`)."""
    from parlour.envs import ENVIRONMENTS, make

    if cfg.game.name not in ENVIRONMENTS:
        raise ConfigError(f"game.name={cfg.game.name!r} is not a Parlour env; available: {sorted(ENVIRONMENTS)}")
    try:
        probe = make(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    except ValueError as exc:
        raise ConfigError(f"game: {exc}") from None
    if cfg.learner.seat != "random" and not (
        cfg.learner.seat.isdigit() and int(cfg.learner.seat) < cfg.game.num_players
    ):
        raise ConfigError(
            f"learner.seat={cfg.learner.seat!r} is not valid: expected 'random' or a seat in [0, {cfg.game.num_players - 1}]"
        )
    _check_policies(cfg)
    if not 0 <= cfg.seed < 2**63:
        raise ConfigError(f"seed={cfg.seed} is out of range: expected an integer in [0, 2**63)")
    _check_track(cfg)
    _check_inputs(cfg)
    _check_network(cfg)
    if cfg.opponent_draw not in OPPONENT_DRAWS:
        raise ConfigError(f"opponent_draw={cfg.opponent_draw!r} is not valid: expected one of {list(OPPONENT_DRAWS)}")
    _check_sampling(cfg)
    _check_hindsight(cfg)
    from parlour.training.trainers import trainer_for

    trainer_for(cfg.trainer).check(cfg)  # what only some trainers can do is refused by the others
    _check_eval_backend(cfg)
    if cfg.rllib.num_env_runners < 0:
        raise ConfigError(
            f"rllib.num_env_runners={cfg.rllib.num_env_runners} is out of range: expected an integer >= 0"
        )
    _check_numbers(cfg)
    _check_memory(cfg, probe.observation_layout, probe.num_actions)
    from parlour.training.evaluation.games import EVAL_SEED_SETS

    if cfg.eval.seed_set not in EVAL_SEED_SETS:
        raise ConfigError(f"eval.seed_set={cfg.eval.seed_set!r} is not valid: expected one of {sorted(EVAL_SEED_SETS)}")


def _check_sampling(cfg: TrainConfig) -> None:
    """``opponent_sampling`` and the numbers of its ``sampling`` section."""
    if cfg.opponent_sampling not in OPPONENT_SAMPLINGS:
        raise ConfigError(
            f"opponent_sampling={cfg.opponent_sampling!r} is not valid: expected one of {list(OPPONENT_SAMPLINGS)}"
        )
    if cfg.opponent_sampling == "prioritised" and cfg.trainer != "jax":
        raise ConfigError(
            f"opponent_sampling=prioritised is supported with trainer: jax only (this config has trainer: "
            f"{cfg.trainer}); opponent_sampling=uniform trains with every trainer"
        )
    sampling = cfg.sampling
    for key, number, ok, allowed in (
        ("sampling.temperature", sampling.temperature, sampling.temperature > 0, "> 0"),
        ("sampling.smoothing", sampling.smoothing, 0 < sampling.smoothing <= 1, "in (0, 1]"),
        ("sampling.floor", sampling.floor, 0 <= sampling.floor <= 1, "in [0, 1]"),
    ):
        if not math.isfinite(number) or not ok:
            raise ConfigError(f"{key}={number} is out of range: expected a finite number {allowed}")


def _check_hindsight(cfg: TrainConfig) -> None:
    """``ppo.hindsight_coef``: a finite weight >= 0; heads need the jitted trainer and one game per episode."""
    coef = cfg.ppo.hindsight_coef
    if not math.isfinite(coef) or coef < 0:
        raise ConfigError(f"ppo.hindsight_coef={coef} is out of range: expected a finite number >= 0 (0: no heads)")
    if coef > 0 and cfg.trainer != "jax":
        raise ConfigError(
            f"ppo.hindsight_coef={coef}: belief heads are supported with trainer: jax only (this config has trainer: "
            f"{cfg.trainer}); set ppo.hindsight_coef=0"
        )
    if coef > 0 and int(cfg.game.options.get("num_games", 1)) > 1:
        raise ConfigError(
            f"ppo.hindsight_coef={coef} with game.options.num_games={cfg.game.options['num_games']}: the heads' "
            "targets are the reveal at the episode's end, which shows the last game of a match only; use num_games=1"
        )


def _check_eval_backend(cfg: TrainConfig) -> None:
    """``train.eval_backend: jax`` plays the periodic evaluations inside the jitted trainer, against batched bots."""
    backend = cfg.train.eval_backend
    if backend not in EVAL_BACKENDS:
        raise ConfigError(f"train.eval_backend={backend!r} is not valid: expected one of {list(EVAL_BACKENDS)}")
    if backend != "jax":
        return
    if cfg.trainer != "jax":
        raise ConfigError(
            f"train.eval_backend=jax plays the periodic evaluations inside trainer: jax, not trainer: {cfg.trainer}: "
            f"expected train.eval_backend=scalar with it (allowed: {list(EVAL_BACKENDS)})"
        )
    from parlour.baselines.jax_bots import bots
    from parlour.training.jax_eval import win_problem

    batched = sorted(bots(cfg.game.name))
    missing = [o for o in cfg.eval.opponents if o not in batched]
    if missing:
        have = [o for o in cfg.eval.opponents if o in batched]
        raise ConfigError(
            f"train.eval_backend=jax plays eval.opponents as batched bots, and {missing} have none (of eval.opponents, "
            f"{have} have one; batched bots for {cfg.game.name}: {batched}): use train.eval_backend=scalar"
        )
    problem = win_problem(cfg.game.name, cfg.game.options)
    if problem:
        raise ConfigError(f"train.eval_backend=jax: {problem}: use train.eval_backend=scalar")


def _check_policies(cfg: TrainConfig) -> None:
    """Every policy the config names resolves at its table (as every command resolves it; never called)."""
    from parlour.baselines import available, resolve
    from parlour.baselines.base import MIXED_PREFIX

    bots = available(cfg.game.name)
    for where, names in _policy_specs(cfg):
        allow_self = where == "opponents"
        if not names and where in ("opponents", "eval.opponents"):  # no reference bots / no teacher are fine
            raise ConfigError(f"{where} is empty: name at least one of {bots}")
        for name in names:
            if name == SELF_PLAY and allow_self:
                continue
            if name == SNAPSHOTS and allow_self:
                if cfg.trainer != "jax":
                    raise ConfigError(
                        f"opponents: {SNAPSHOTS!r} (a ring of the learner's past parameters) is trainer: jax's; with "
                        f"trainer: {cfg.trainer}, {SELF_PLAY!r} adds snapshots of the learner to the pool"
                    )
                continue
            if name.startswith(MIXED_PREFIX) and where != "eval.opponents":
                raise ConfigError(
                    f"{where}: {name!r} is a mixed table (several players); it can fill the other seats of an "
                    "evaluation (eval.opponents) only, not one seat"
                )
            try:  # the same resolver every command uses: what passes here plays there
                resolve(name, cfg.game.name, cfg.game.num_players, cfg.game.options, trust_pickle=cfg.trust_pickle)
            except (ValueError, ImportError) as exc:
                extra = f" ('{SELF_PLAY}' adds snapshots of the learner)" if allow_self else ""
                raise ConfigError(f"{where}: {exc}{extra}") from None


def _check_inputs(cfg: TrainConfig) -> None:
    """The network's inputs: known feature sets and observation fields of this game."""
    from parlour.baselines.features import field_index
    from parlour.baselines.registry import lookup

    try:
        lookup(cfg.ppo.features, cfg.game.name)
    except ValueError as exc:
        raise ConfigError(f"ppo.features: {exc}") from None
    try:
        field_index(cfg.game.name, cfg.game.num_players, cfg.game.options, cfg.ppo.observation_fields)
    except ValueError as exc:
        raise ConfigError(f"ppo.observation_fields: {exc}") from None
    if cfg.ppo.skip_features and not cfg.ppo.features:
        raise ConfigError("ppo.skip_features: true needs ppo.features (the feature sets it feeds to the heads)")


def encoder_network(cfg: TrainConfig, layout: Layout) -> dict[str, Any]:
    """The policy file's ``network`` entry of a ``ppo.network: field_encoder`` config over the env's ``layout``."""
    enc, ppo = cfg.ppo.encoder, cfg.ppo
    plan = field_net.token_plan(layout)
    return field_net.network(
        plan, enc.d_model, enc.attention_layers, enc.heads, list(ppo.net_arch), list(ppo.net_arch), ppo.activation
    )


def _check_network(cfg: TrainConfig) -> None:
    """``ppo.network`` and, for a field encoder, the trainer, the inputs and the encoder's size it needs."""
    ppo = cfg.ppo
    if ppo.network not in NETWORKS:
        raise ConfigError(f"ppo.network={ppo.network!r} is not valid: expected one of {list(NETWORKS)}")
    if ppo.network != "field_encoder":
        return
    if cfg.trainer not in FIELD_ENCODER_TRAINERS:
        raise ConfigError(
            f"ppo.network=field_encoder is supported with trainer: {', '.join(FIELD_ENCODER_TRAINERS)} only (this "
            f"config has trainer: {cfg.trainer}); ppo.network=mlp trains with every trainer"
        )
    for what, used in (("ppo.features", bool(ppo.features)), ("ppo.observation_fields", bool(ppo.observation_fields))):
        if used:
            raise ConfigError(
                f"{what} is not supported with ppo.network: field_encoder (it reads every observation field as "
                "tokens); use ppo.network: mlp"
            )
    enc = ppo.encoder
    for key, value, low, high in (
        ("ppo.encoder.d_model", enc.d_model, 1, field_net.MAX_D_MODEL),
        ("ppo.encoder.attention_layers", enc.attention_layers, 0, field_net.MAX_ATTENTION_LAYERS),
        ("ppo.encoder.heads", enc.heads, 1, field_net.MAX_HEADS),
    ):
        if not low <= value <= high:
            raise ConfigError(f"{key}={value} is out of range: expected an integer in [{low}, {high}]")
    if enc.d_model % enc.heads:
        raise ConfigError(
            f"ppo.encoder.heads={enc.heads} must divide ppo.encoder.d_model={enc.d_model} (each attention head reads "
            "d_model / heads of a token)"
        )


def _check_numbers(cfg: TrainConfig) -> None:
    """Counts, rates and the network's shape in their ranges."""
    budget = cfg.train
    for name, value, low in (
        ("train.total_timesteps", budget.total_timesteps, 1),
        ("train.n_envs", budget.n_envs, 1),
        ("train.checkpoint_every", budget.checkpoint_every, 1),
        ("train.eval_every", budget.eval_every, 0),
        ("train.torch_threads", budget.torch_threads, 1),
        ("ppo.n_steps", cfg.ppo.n_steps, 2),
        ("ppo.batch_size", cfg.ppo.batch_size, 2),
        ("ppo.n_epochs", cfg.ppo.n_epochs, 1),
        ("eval.games", cfg.eval.games, 1),
        ("eval.periodic_games", cfg.eval.periodic_games, 1),
        ("self_play.snapshot_every", cfg.self_play.snapshot_every, 1),
        ("self_play.max_snapshots", cfg.self_play.max_snapshots, 1),
        ("pretrain.games", cfg.pretrain.games, 1),
        ("pretrain.epochs", cfg.pretrain.epochs, 1),
        ("pretrain.batch_size", cfg.pretrain.batch_size, 1),
    ):
        if not low <= value <= MAX_COUNT:
            raise ConfigError(f"{name}={value} is out of range: expected an integer in [{low}, 2**53 = {MAX_COUNT:,}]")
    if budget.vec_env not in VEC_ENVS:
        raise ConfigError(f"train.vec_env={budget.vec_env!r} is not valid: expected one of {list(VEC_ENVS)}")
    if not 0 < cfg.ppo.learning_rate < 1:
        raise ConfigError(f"ppo.learning_rate={cfg.ppo.learning_rate} is out of range: expected a number in (0, 1)")
    if not 0 < cfg.pretrain.learning_rate < 1:
        raise ConfigError(
            f"pretrain.learning_rate={cfg.pretrain.learning_rate} is out of range: expected a number in (0, 1)"
        )
    if not 0 < cfg.ppo.gamma <= 1 or not 0 < cfg.ppo.gae_lambda <= 1:
        raise ConfigError("ppo.gamma and ppo.gae_lambda must be in (0, 1]")
    for key, number, low_open, high, allowed in (
        ("ppo.clip_range", cfg.ppo.clip_range, True, 1.0, "in (0, 1]"),
        ("ppo.ent_coef", cfg.ppo.ent_coef, False, 1.0, "in [0, 1]"),
        ("ppo.vf_coef", cfg.ppo.vf_coef, False, math.inf, ">= 0"),
        ("ppo.max_grad_norm", cfg.ppo.max_grad_norm, True, math.inf, "> 0"),
    ):
        # NaN and inf are refused too (a NaN run could never be resumed either: nan != nan)
        if not math.isfinite(number) or number < 0 or (low_open and number == 0) or number > high:
            raise ConfigError(f"{key}={number} is out of range: expected a finite number {allowed}")
    if cfg.ppo.activation not in ACTIVATIONS:
        raise ConfigError(f"ppo.activation={cfg.ppo.activation!r} is not valid: expected one of {list(ACTIVATIONS)}")
    if not cfg.ppo.net_arch or any(not 1 <= w <= MAX_COUNT for w in cfg.ppo.net_arch):
        raise ConfigError(f"ppo.net_arch={cfg.ppo.net_arch} is not valid: expected a list of positive layer widths")


def to_yaml(cfg: TrainConfig) -> str:
    return OmegaConf.to_yaml(OmegaConf.structured(cfg))


def config_record(cfg: Any) -> dict[str, Any]:
    """A config as the plain, JSON-ready dict its stored copies hold (a run's checkpoints, a policy file's record)."""
    record: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(cfg)))
    return record


def with_defaults(config: dict[str, Any]) -> dict[str, Any] | None:
    """A stored resolved config with the schema's defaults for keys it lacks (a key added to the schema after the
    file was written, e.g. ``trainer``, held its default then); ``None`` if it no longer fits the schema."""
    try:
        merged = OmegaConf.merge(OmegaConf.structured(TrainConfig), config)
        return config_record(OmegaConf.to_object(merged))
    except OmegaConfBaseException:
        return None
