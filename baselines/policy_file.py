"""Safe policy files: weights as safetensors beside a JSON spec; loading reads tensors and JSON, never a pickle.

A policy file is a pair of files with one stem: ``NAME.json``, the spec, and ``NAME.safetensors``, the weights.
The spec says what table the policy was trained for and how to rebuild its network:

========================  ====================================================================================
key                       meaning
========================  ====================================================================================
``format``                ``"parlour-policy"``; ``format_version`` its version (this module reads 1)
``env``, ``env_version``  the env id and its behaviour version
``num_players``           the player count it was trained at
``options``               every keyword of the env it was trained on (rule keywords and the reward alike)
``observation_size``      length of the observation vector; ``num_actions`` the size of the action space
``network``               ``kind``: ``mlp_actor_critic`` (SB3's MLP actor-critic) with ``pi`` and ``vf`` layer
                          widths, ``activation``; ``features``: names of observation feature sets appended to
                          the observation before the network (:mod:`parlour.baselines.features`; looked up in
                          the package by name). Or ``field_encoder`` (:mod:`parlour.baselines.field_net`: a
                          token per row of each observation field, attention, DeepSets pooling): ``d_model``,
                          ``attention_layers``, ``heads``, ``pi``, ``vf``, ``activation`` and ``tokens``, the
                          token plan of the env's layout (which must equal the env's own; no feature sets)
``training``              algorithm, seed, timesteps, the resolved training config, periodic evaluations
``package_version``       the Parlour version that wrote it
``weights``               the weights file's name, its SHA-256 and every tensor's shape
========================  ====================================================================================

Loading validates the spec against :data:`SPEC_SCHEMA` (a JSON Schema, checked with ``jsonschema``: every field's
type, the network's activation, layer widths up to :data:`MAX_LAYER_WIDTH` and at most :data:`MAX_PARAMETERS`
parameters in all, counted before anything is allocated, the weights file a plain name beside the spec; a field
encoder's ``heads`` dividing its ``d_model`` and its tokens lying end to end over the observation) and refuses a
malformed spec in one line naming the file and the field (``runs/x/policy.json: network.activation: 'gelu' is not
one of ['relu', 'tanh']``); it then checks the weights' hash, every tensor's name and shape against the network the
spec describes and every value (NaN or infinity is refused, naming the tensor), then plays with a NumPy forward pass: no PyTorch is needed to play a shipped policy, and nothing in the
file can run code. Before a policy sits at a table, :func:`check_compatible` compares the table with the spec and
refuses, in one line naming each difference, a policy trained for another env, version, player count, observation
or action size, or any rule keyword. Keywords in :data:`SIGNAL_KEYWORDS` change the learning signal or the handling
of bad input, not the game being played, so they may differ.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from abc import abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from parlour.baselines import field_net
from parlour.baselines.base import Policy, Table
from parlour.baselines.features import Features, field_index, size, with_features
from parlour.baselines.registry import lookup
from parlour.envs.fileio import atomic_write

FORMAT = "parlour-policy"
FORMAT_VERSION = 1
SPEC_SUFFIX = ".json"
WEIGHTS_SUFFIX = ".safetensors"
#: SB3's ``MlpPolicy`` actor-critic (flatten, separate policy and value MLPs).
MLP_ACTOR_CRITIC = "mlp_actor_critic"
#: A token per row of each observation field, attention and DeepSets pooling (:mod:`parlour.baselines.field_net`).
FIELD_ENCODER = field_net.KIND
#: The network kinds a policy file may hold.
NETWORK_KINDS = (MLP_ACTOR_CRITIC, FIELD_ENCODER)
#: Hidden-layer activations the NumPy forward pass knows.
ACTIVATIONS = ("relu", "tanh")
#: Env keywords that may differ between a policy's training table and the table it sits at: the reward signal and
#: the handling of illegal actions change what a learner is told, not the game it plays or what it observes.
SIGNAL_KEYWORDS = frozenset({"reward", "illegal_action", "illegal_reward"})
#: The keys of a spec that describe a table (see :func:`table_of`).
TABLE_KEYS = tuple(f.name for f in dataclasses.fields(Table))
#: Bounds a spec must keep, checked before anything is allocated: a hidden layer's width, the number of hidden
#: layers per head, the network's parameters in all (``1 << 26``: 256 MiB of float32), and how deeply the spec's JSON
#: may nest (the shipped specs nest 5 deep).
MAX_LAYER_WIDTH = 65536
MAX_LAYERS = 64
MAX_PARAMETERS = 1 << 26
MAX_DEPTH = 64


class PolicyFileError(ValueError):
    """A policy file that cannot be read or used; the message says what is wrong and what is allowed."""


class IncompatiblePolicyError(PolicyFileError):
    """A policy trained for a different table (env, version, players, rule keywords or sizes)."""


def paths(path: str | Path) -> tuple[Path, Path]:
    """``(spec, weights)`` for a policy file named by its ``.json``, its ``.safetensors`` or its stem."""
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (SPEC_SUFFIX, WEIGHTS_SUFFIX) else p
    return stem.with_name(stem.name + SPEC_SUFFIX), stem.with_name(stem.name + WEIGHTS_SUFFIX)


def is_policy_path(name: str) -> bool:
    """Whether ``name`` names a policy file (by suffix): ``*.json`` or ``*.safetensors``."""
    return name.endswith((SPEC_SUFFIX, WEIGHTS_SUFFIX))


def table_of(env: Any) -> Table:
    """What a policy must match to sit at ``env``'s table (a ParlourEnv)."""
    return Table.of(env)


def table_for(env_name: str, num_players: int | None = None, options: dict[str, Any] | None = None) -> Table:
    """The table of ``env_name`` with ``num_players`` (default: the env's own) and the given keywords."""
    from parlour.envs import make

    kwargs = dict(options or {})
    if num_players is not None:
        kwargs["num_players"] = num_players
    return table_of(make(env_name, **kwargs))


def differences(spec: dict[str, Any], table: Table) -> list[str]:
    """Each way ``table`` differs from the table ``spec`` was trained for, as ``what: trained X, table Y``."""
    out = []
    for key in ("env", "env_version", "num_players", "observation_size", "num_actions"):
        if spec.get(key) != getattr(table, key):
            out.append(f"{key}: trained {spec.get(key)!r}, table {getattr(table, key)!r}")
    if spec.get("env") == table.env:  # another game's keywords are not comparable
        trained, here = spec.get("options", {}), table.options
        defaults: dict[str, Any] | None = None
        for key in sorted((set(trained) | set(here)) - SIGNAL_KEYWORDS):
            if key not in trained and spec.get("env_version") == table.env_version:
                # A keyword added to this env version after the file was written: it was trained at its default
                # (a new keyword's default keeps the version's behaviour; otherwise the version would change).
                if defaults is None:
                    from parlour.envs import make

                    defaults = make(table.env).make_kwargs
                trained = {**trained, key: defaults.get(key, "<absent>")}
            a, b = trained.get(key, "<absent>"), here.get(key, "<absent>")
            if a != b:
                out.append(f"{key}: trained {a!r}, table {b!r}")
    return out


def check_compatible(spec: dict[str, Any], table: Table | dict[str, Any], label: str) -> None:
    """Refuse, before the first step, a policy whose training table differs from ``table`` (a :class:`Table`, or a
    checkpoint's metadata that records one)."""
    if not isinstance(table, Table):
        table = Table.from_record(table)
    diff = differences(spec, table)
    if diff:
        raise IncompatiblePolicyError(
            f"policy {label} cannot play {table.env} with {table.num_players} players and these rules; "
            f"it differs in {'; '.join(diff)}"
        )


# ----------------------------------------------------------------------------------------- the network
def mlp_network(
    pi: list[int],
    vf: list[int],
    activation: str,
    features: Sequence[str] = (),
    skip_features: bool = False,
    observation_fields: Sequence[str] = (),
) -> dict[str, Any]:
    """A ``network`` entry. ``skip_features``: the feature sets also feed both heads directly, beside the last
    hidden layer (:class:`parlour.training.networks.SkipFeaturesPolicy`); ``observation_fields``: the network reads
    only these fields of the observation (all of them when empty), then the feature sets."""
    if activation not in ACTIVATIONS:
        raise PolicyFileError(f"activation {activation!r} is not supported: expected one of {list(ACTIVATIONS)}")
    if skip_features and not (features and pi and vf):
        raise PolicyFileError("skip_features needs feature sets to feed the heads and hidden layers beside them")
    out: dict[str, Any] = {"kind": MLP_ACTOR_CRITIC, "pi": list(pi), "vf": list(vf), "activation": activation}
    if features:
        out["features"] = list(features)
    if skip_features:
        out["skip_features"] = True
    if observation_fields:
        out["observation_fields"] = list(observation_fields)
    return out


def network_fields(spec: dict[str, Any]) -> np.ndarray | None:
    """The positions of the observation a spec's network reads (``None``: all of it)."""
    fields = spec.get("network", {}).get("observation_fields", [])
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise PolicyFileError(f"network.observation_fields must be a list of field names, got {fields!r}")
    try:
        return field_index(spec["env"], spec["num_players"], spec["options"], fields)
    except ValueError as exc:
        raise PolicyFileError(f"network.observation_fields: {exc}") from None


def _skip(network: dict[str, Any], input_extra: int) -> int:
    """How many trailing inputs (the feature sets) feed the heads directly: all of them, or none."""
    flag = network.get("skip_features", False)
    if not isinstance(flag, bool):
        raise PolicyFileError(f"network.skip_features must be true or false, got {flag!r}")
    if flag and not (input_extra and network.get("pi") and network.get("vf")):
        raise PolicyFileError(
            "network.skip_features is true but the network takes no feature sets or has no hidden layers"
        )
    return input_extra if flag else 0


def network_features(spec: dict[str, Any]) -> tuple[Features, ...]:
    """The feature sets a spec's network takes beside the observation (none for a plain MLP)."""
    names = spec.get("network", {}).get("features", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PolicyFileError(f"network.features must be a list of feature set names, got {names!r}")
    try:
        return lookup(names, spec["env"])
    except ValueError as exc:
        raise PolicyFileError(f"{exc} (this policy file needs a Parlour that provides it)") from None


def expected_shapes(
    network: dict[str, Any], observation_size: int, num_actions: int, input_extra: int = 0
) -> dict[str, tuple[int, ...]]:
    """Every tensor of the network the spec describes (an MLP's by SB3's ``state_dict`` names, a field encoder's by
    :mod:`parlour.baselines.field_net`'s); ``input_extra`` is the size of the feature sets appended to the
    observation."""
    if network.get("kind") == FIELD_ENCODER:
        return field_net.shapes(network["tokens"], network, num_actions)
    if network.get("kind") != MLP_ACTOR_CRITIC:
        raise PolicyFileError(
            f"network kind {_short(network.get('kind'))} is not supported: expected one of {list(NETWORK_KINDS)}"
        )
    shapes: dict[str, tuple[int, ...]] = {}
    skip = _skip(network, input_extra)
    for part, head, out in (("policy_net", "action_net", num_actions), ("value_net", "value_net", 1)):
        width = observation_size + input_extra
        for i, w in enumerate(network["pi" if part == "policy_net" else "vf"]):
            shapes[f"mlp_extractor.{part}.{2 * i}.weight"] = (w, width)
            shapes[f"mlp_extractor.{part}.{2 * i}.bias"] = (w,)
            width = w
        shapes[f"{head}.weight"] = (out, width + skip)
        shapes[f"{head}.bias"] = (out,)
    return shapes


class MLPActorCritic:
    """The forward pass of SB3's MLP actor-critic in NumPy (float32), from its tensors; with
    ``network.skip_features``, the heads also take the trailing inputs their extra columns stand for."""

    #: The hidden-layer activations by name: nothing else is played.
    ACTIVATION_FUNCTIONS: ClassVar[dict[str, Callable[[np.ndarray], np.ndarray]]] = {
        "relu": lambda x: np.maximum(x, 0.0),
        "tanh": np.tanh,
    }

    def __init__(self, network: dict[str, Any], tensors: dict[str, np.ndarray]) -> None:
        self.activation = network.get("activation")
        if self.activation not in self.ACTIVATION_FUNCTIONS:
            raise PolicyFileError(
                f"network.activation {_short(self.activation)} is not supported: expected one of {list(ACTIVATIONS)}"
            )
        self._activate = self.ACTIVATION_FUNCTIONS[self.activation]
        # the heads' extra input columns (their shapes were checked against the spec when read)
        self.skip = tensors["action_net.weight"].shape[1] - network["pi"][-1] if network.get("skip_features") else 0
        self.pi = [
            (
                tensors[f"mlp_extractor.policy_net.{2 * i}.weight"].T.copy(),
                tensors[f"mlp_extractor.policy_net.{2 * i}.bias"],
            )
            for i in range(len(network["pi"]))
        ]
        self.vf = [
            (
                tensors[f"mlp_extractor.value_net.{2 * i}.weight"].T.copy(),
                tensors[f"mlp_extractor.value_net.{2 * i}.bias"],
            )
            for i in range(len(network["vf"]))
        ]
        self.action = (tensors["action_net.weight"].T.copy(), tensors["action_net.bias"])
        self.value_head = (tensors["value_net.weight"].T.copy(), tensors["value_net.bias"])

    def _mlp(self, x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        skipped = x[..., x.shape[-1] - self.skip :]
        for w, b in layers:
            x = x @ w + b
            x = self._activate(x)
        return np.concatenate([x, skipped], axis=-1) if self.skip else x

    def logits(self, observation: np.ndarray) -> np.ndarray:
        x = np.asarray(observation, np.float32)
        w, b = self.action
        out: np.ndarray = self._mlp(x, self.pi) @ w + b
        return out

    def value(self, observation: np.ndarray) -> np.ndarray:
        w, b = self.value_head
        out: np.ndarray = self._mlp(np.asarray(observation, np.float32), self.vf) @ w + b
        return out


class FieldEncoderActorCritic:
    """The field encoder's forward pass in NumPy (float32), from its tensors:
    :func:`parlour.baselines.field_net.forward`, the same function the jitted trainer learns with."""

    def __init__(self, network: dict[str, Any], tensors: dict[str, np.ndarray]) -> None:
        if network.get("activation") not in ACTIVATIONS:
            raise PolicyFileError(
                f"network.activation {_short(network.get('activation'))} is not supported: expected one of "
                f"{list(ACTIVATIONS)}"
            )
        self.network = network
        self.activation = network["activation"]
        self.plan: list[field_net.Token] = network["tokens"]
        self.tensors = {k: np.asarray(v, np.float32) for k, v in tensors.items()}

    def forward(self, observation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits and value (without the value head's axis of one) of one observation or a batch."""
        logits, value = field_net.forward(np, self.tensors, observation, self.plan, self.network)
        return np.asarray(logits), np.asarray(value)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        return self.forward(observation)[0]

    def value(self, observation: np.ndarray) -> np.ndarray:
        # the value head's output, with its axis of one as MLPActorCritic's
        return self.forward(observation)[1][..., None]


#: ``network.kind`` -> the NumPy forward pass that plays it.
NETWORK_CLASSES: dict[str, Callable[[dict[str, Any], dict[str, np.ndarray]], Any]] = {
    MLP_ACTOR_CRITIC: MLPActorCritic,
    FIELD_ENCODER: FieldEncoderActorCritic,
}


def check_tokens(spec: dict[str, Any], where: str | Path | None = None) -> None:
    """Refuse, in one line naming the first difference, a field encoder whose token plan is not the token plan of
    its env's observation layout (the env, player count and keywords of the spec): its tensors would read the
    observation's fields at the wrong places."""
    from parlour.envs import make

    prefix = f"{where}: " if where is not None else ""
    env = spec["env"]
    try:
        layout = make(env, num_players=spec["num_players"], **spec["options"]).unwrapped.observation_layout
    except (ValueError, KeyError, TypeError) as exc:
        raise PolicyFileError(f"{prefix}network.tokens: cannot build {env}'s observation layout: {exc}") from None
    want, got = field_net.token_plan(layout), spec["network"]["tokens"]
    for k, (a, b) in enumerate(zip(got, want, strict=False)):
        if a != b:
            key = next(key for key in field_net.TOKEN_KEYS if a.get(key) != b[key])
            raise PolicyFileError(
                f"{prefix}network.tokens[{k}].{key}: {_short(a.get(key))} in the file, {b[key]!r} in {env}'s "
                "observation layout: the network was built for another layout"
            )
    if len(got) != len(want):
        raise PolicyFileError(
            f"{prefix}network.tokens: {len(got)} fields in the file, {len(want)} in {env}'s observation layout: the "
            "network was built for another layout"
        )


def spec_shapes(spec: dict[str, Any], where: str | Path | None = None) -> dict[str, tuple[int, ...]]:
    """Every tensor of the network a spec describes (its feature sets widen the input, a choice of observation
    fields narrows it; a field encoder's token plan is checked against its env's layout first, see
    :func:`check_tokens`, ``where`` naming the spec in the message)."""
    if spec["network"].get("kind") == FIELD_ENCODER:
        check_tokens(spec, where)
    extra = size(network_features(spec))
    keep = network_fields(spec)
    width = spec["observation_size"] if keep is None else len(keep)
    return expected_shapes(spec["network"], width, spec["num_actions"], extra)


# ----------------------------------------------------------------------------------------- the spec's schema
_LAYERS = {
    "type": "array",
    "maxItems": MAX_LAYERS,
    "items": {"type": "integer", "minimum": 1, "maximum": MAX_LAYER_WIDTH},
}
_NAMES = {"type": "array", "items": {"type": "string"}}
#: The most fields a field encoder's token plan may list (the largest layout has a few dozen).
MAX_TOKEN_FIELDS = 4096

#: ``network`` of kind ``mlp_actor_critic`` (the kinds are checked by the ``network`` schema itself).
_MLP_NETWORK = {
    "type": "object",
    "required": ["kind", "pi", "vf", "activation"],
    "additionalProperties": False,
    "properties": {
        "kind": {},
        "pi": _LAYERS,
        "vf": _LAYERS,
        "activation": {"enum": list(ACTIVATIONS)},
        "features": _NAMES,
        "skip_features": {"type": "boolean"},
        "observation_fields": _NAMES,
    },
}

#: ``network`` of kind ``field_encoder`` (:mod:`parlour.baselines.field_net`); ``heads`` dividing ``d_model`` and the
#: tokens lying end to end are checked beside the schema (:func:`validate_spec`).
_FIELD_NETWORK = {
    "type": "object",
    "required": ["kind", "d_model", "attention_layers", "heads", "pi", "vf", "activation", "tokens"],
    "additionalProperties": False,
    "properties": {
        "kind": {},
        "d_model": {"type": "integer", "minimum": 1, "maximum": field_net.MAX_D_MODEL},
        "attention_layers": {"type": "integer", "minimum": 0, "maximum": field_net.MAX_ATTENTION_LAYERS},
        "heads": {"type": "integer", "minimum": 1, "maximum": field_net.MAX_HEADS},
        "pi": _LAYERS,
        "vf": _LAYERS,
        "activation": {"enum": list(ACTIVATIONS)},
        "tokens": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_TOKEN_FIELDS,
            "items": {
                "type": "object",
                "required": list(field_net.TOKEN_KEYS),
                "additionalProperties": False,
                "properties": {
                    "field": {"type": "string"},
                    "start": {"type": "integer", "minimum": 0},
                    "rows": {"type": "integer", "minimum": 1, "maximum": MAX_LAYER_WIDTH},
                    "width": {"type": "integer", "minimum": 1, "maximum": MAX_LAYER_WIDTH},
                },
            },
        },
    },
}

#: The JSON Schema (draft 2020-12) of a policy spec. ``integer`` means a JSON integer (``4``, not ``4.0``).
SPEC_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Parlour policy spec",
    "type": "object",
    "required": ["format", "format_version", *TABLE_KEYS, "network", "weights"],
    "properties": {
        "format": {"const": FORMAT},
        "format_version": {"const": FORMAT_VERSION},
        "env": {"type": "string"},
        "env_version": {"type": "integer", "minimum": 0},
        "num_players": {"type": "integer", "minimum": 1},
        "options": {"type": "object"},
        "observation_size": {"type": "integer", "minimum": 1},
        "num_actions": {"type": "integer", "minimum": 1},
        "network": {
            "type": "object",
            "required": ["kind"],
            "properties": {"kind": {"enum": list(NETWORK_KINDS)}},
            # each kind has its own keys
            "allOf": [
                {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": schema}
                for kind, schema in ((MLP_ACTOR_CRITIC, _MLP_NETWORK), (FIELD_ENCODER, _FIELD_NETWORK))
            ],
        },
        "weights": {
            "type": "object",
            "required": ["file", "sha256", "tensors"],
            "properties": {
                "file": {
                    "type": "string",
                    "pattern": r"^(?!.*\.\.)[^/\\\x00]+$",
                    "description": "a plain file name (no '/' or '..'), beside the spec",
                },
                "sha256": {
                    "type": "string",
                    "pattern": "^[0-9a-f]{64}$",
                    "description": "a SHA-256 digest (64 lowercase hex digits)",
                },
                "tensors": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                },
            },
        },
        "training": {"type": "object"},
        "package_version": {"type": "string"},
    },
}


@functools.cache
def _validator() -> Any:
    """A draft 2020-12 validator of :data:`SPEC_SCHEMA` in which ``integer`` is a JSON integer only."""
    from jsonschema import Draft202012Validator, validators

    types = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, x: isinstance(x, int) and not isinstance(x, bool)
    )
    return validators.extend(Draft202012Validator, type_checker=types)(SPEC_SCHEMA)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a message stays one short line)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}...{text[-1]}"


def _field(path: Sequence[Any]) -> str:
    """A JSON path as a field name: ``network.pi[0]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar 0, ``[]`` 1, ``[[1]]`` 2), without recursion; stops past
    :data:`MAX_DEPTH`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            stack.extend((x, depth + 1) for x in (item.values() if isinstance(item, dict) else item))
    return deepest


def parameter_count(network: dict[str, Any], input_size: int, num_actions: int) -> int:
    """How many parameters the network of a (schema-valid) ``network`` entry has with ``input_size`` inputs (the
    feature sets and ``skip_features`` add a few more: not counted). Counted from the shapes: nothing is allocated."""
    if network["kind"] == FIELD_ENCODER:
        return field_net.parameter_count(network["tokens"], network, num_actions)
    total = 0
    for layers, out in ((network["pi"], num_actions), (network["vf"], 1)):
        width = input_size
        for w in (*layers, out):
            total += (width + 1) * w
            width = w
    return total


#: ``track`` values: what a trained policy is made of; empty: not on a published track.
TRACKS = ("rl", "distilled")
#: The rewards an ``rl``-track policy may learn from: the game's own outcome (``win``; ``score``, the rulebook's
#: points; ``vote``, 6 Suspects' right or wrong vote). Not: rewards computed from hidden-state enumeration (6 Suspects'
#: ``expected``) or shaped along the game (Goes to Eleven's ``cards`` and ``margin``).
RL_REWARDS = ("win", "score", "vote")


def rl_track_problems(config: dict[str, Any], features: Sequence[str]) -> list[str]:
    """What keeps a training config (as a dict) off the rl track: a teacher, feature sets, a reward not in
    :data:`RL_REWARDS`. Empty when it learns from the environment alone."""
    teacher = (config.get("pretrain") or {}).get("teacher") or ""
    reward = ((config.get("game") or {}).get("options") or {}).get("reward")
    return [
        what
        for what, ok in (
            (f"pretrain.teacher={teacher!r}", not teacher),
            (f"ppo.features={list(features)}", not features),
            (f"game.options.reward={reward!r}", reward is None or reward in RL_REWARDS),
        )
        if not ok
    ]


def validate_spec(spec: Any, where: str | Path) -> None:
    """Refuse, in one line naming ``where`` (the spec's file) and the field, a spec that :data:`SPEC_SCHEMA` or the
    size bounds do not allow."""
    if _depth(spec) > MAX_DEPTH:
        raise PolicyFileError(f"{where} is not a policy spec (its JSON nests deeper than {MAX_DEPTH} levels)")
    network = spec.get("network") if isinstance(spec, dict) else None
    if isinstance(network, dict) and network.get("kind") == FIELD_ENCODER:
        for key in ("features", "skip_features", "observation_fields"):
            if key in network:
                raise PolicyFileError(
                    f"{where}: network.{key}: a {FIELD_ENCODER} network reads every field of the observation as "
                    f"tokens and takes no feature sets or choice of fields ({MLP_ACTOR_CRITIC} does)"
                )
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(spec))
    if error is not None:
        field = _field(error.absolute_path)
        if error.validator == "type":
            message = f"{_short(error.instance)} is not of type {error.validator_value!r}"
        elif error.validator == "pattern":
            message = f"{_short(error.instance)} is not {error.schema.get('description', 'allowed')}"
        else:
            message = error.message if len(error.message) <= 200 else f"{error.message[:195]}..."
        raise PolicyFileError(f"{where}: {field + ': ' if field else ''}{message}".replace("\n", "\\n"))
    config = (spec.get("training") or {}).get("config") or {}
    if isinstance(config, dict) and config.get("track") == "rl":
        bad = rl_track_problems(config, spec["network"].get("features", []))
        if bad:
            raise PolicyFileError(
                f"{where}: training.config says track: rl (learned from the environment alone) but has "
                f"{', '.join(bad)}: a policy that imitates a bot, reads its features or a shaped reward is distilled"
            )
    network = spec["network"]
    if network["kind"] == FIELD_ENCODER:
        _check_field_encoder(network, spec["observation_size"], where)
    count = parameter_count(network, spec["observation_size"], spec["num_actions"])
    if count > MAX_PARAMETERS:
        shape = (
            f"d_model {network['d_model']}, {network['attention_layers']} attention layers, "
            f"{len(network['tokens'])} token fields"
            if network["kind"] == FIELD_ENCODER
            else f"{spec['observation_size']} inputs"
        )
        raise PolicyFileError(
            f"{where}: network: {count:,} parameters (pi {network['pi']}, vf {network['vf']}, {shape}, "
            f"{spec['num_actions']} actions) is more than the {MAX_PARAMETERS:,} a policy file may hold"
        )


def _check_field_encoder(network: dict[str, Any], observation_size: int, where: str | Path) -> None:
    """What the schema cannot say of a (schema-valid) field encoder: its heads split ``d_model`` evenly, and its
    tokens lie end to end over the whole observation."""
    if network["d_model"] % network["heads"]:
        raise PolicyFileError(
            f"{where}: network.heads: {network['heads']} does not divide network.d_model {network['d_model']} "
            "(each attention head reads d_model / heads of it)"
        )
    start = 0
    for k, token in enumerate(network["tokens"]):
        if token["start"] != start:
            raise PolicyFileError(
                f"{where}: network.tokens[{k}].start: {token['start']}, expected {start} (the fields lie end to end)"
            )
        start += token["rows"] * token["width"]
    if start != observation_size:
        raise PolicyFileError(
            f"{where}: network.tokens cover {start} entries of the observation; observation_size is {observation_size}"
        )


# ----------------------------------------------------------------------------------------- files
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def save_policy(path: str | Path, tensors: dict[str, np.ndarray], spec: dict[str, Any]) -> Path:
    """Write ``tensors`` and ``spec`` (the table keys, ``network``, ``training``) as a policy file; returns the
    spec's path. Each file is written beside its target and renamed over it, weights first: the spec carries the
    weights' hash, so a pair torn by a crash is refused when loaded rather than played."""
    from safetensors.numpy import save_file

    from parlour.envs.core import package_version

    spec_path, weights_path = paths(path)
    spec_path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}
    shapes = spec_shapes(spec, spec_path)
    if {k: v.shape for k, v in arrays.items()} != shapes:
        raise PolicyFileError("save_policy: the tensors do not match the network the spec describes")
    full: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **{k: spec[k] for k in TABLE_KEYS},
        "network": spec["network"],
        "training": spec.get("training", {}),
        "package_version": spec.get("package_version", package_version()),
        "weights": {
            "file": weights_path.name,
            "sha256": "0" * 64,  # the hash of the weights, once written
            "tensors": {k: list(v) for k, v in shapes.items()},
        },
    }
    validate_spec(json.loads(json.dumps(full, default=str)), spec_path)  # never write a spec that reading refuses
    atomic_write(weights_path, lambda p: save_file(arrays, str(p)))
    full["weights"]["sha256"] = _sha256(weights_path)
    atomic_write(spec_path, json.dumps(full, indent=1, default=str) + "\n")
    return spec_path


def track_of(spec: dict[str, Any]) -> str:
    """What a policy file's policy is made of, in words: its training config's ``track``, or -- for a file trained
    before tracks were recorded -- what its config shows (a teacher or feature sets make it distilled)."""
    config = spec.get("training", {}).get("config", {}) or {}
    teacher = (config.get("pretrain") or {}).get("teacher") or ""
    features = list((spec.get("network") or {}).get("features", []))
    track = config.get("track") or ("distilled" if teacher or features else "")
    if track == "distilled":
        made = [f"imitates {teacher}" if teacher else "", f"reads {', '.join(features)}" if features else ""]
        return "distilled: " + " and ".join(m for m in made if m)
    return "rl: learned from the environment alone" if track == "rl" else "no track recorded"


def read_spec(path: str | Path) -> dict[str, Any]:
    """The spec of a policy file (JSON only; the weights are not read), validated (see :func:`validate_spec`)."""
    spec_path, _ = paths(path)
    if not spec_path.is_file():
        raise PolicyFileError(f"policy file not found: {spec_path} (a policy is NAME.json beside NAME.safetensors)")
    try:
        spec: dict[str, Any] = json.loads(spec_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PolicyFileError(f"{spec_path} is not a policy spec (not JSON: {exc})") from None
    except RecursionError:
        raise PolicyFileError(f"{spec_path} is not a policy spec (its JSON nests too deeply to read)") from None
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise PolicyFileError(f"{spec_path} is not a policy spec (its 'format' is not {FORMAT!r})")
    if spec.get("format_version") != FORMAT_VERSION:
        raise PolicyFileError(
            f"{spec_path} has format_version {_short(spec.get('format_version'))}; this Parlour reads {FORMAT_VERSION}"
        )
    validate_spec(spec, spec_path)
    return spec


def read_weights(path: str | Path, spec: dict[str, Any]) -> dict[str, np.ndarray]:
    """The tensors of a policy file, after checking the spec (:func:`validate_spec`), the weights' hash, their names
    and shapes against the spec and their values (all finite)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    spec_path, weights_path = paths(path)
    validate_spec(spec, spec_path)  # the weights' file name is a plain name beside the spec, the network bounded
    weights_path = spec_path.with_name(spec["weights"]["file"])
    if not weights_path.is_file():
        raise PolicyFileError(f"policy weights not found: {weights_path} (named by {spec_path})")
    if _sha256(weights_path) != spec["weights"]["sha256"]:
        raise PolicyFileError(f"{weights_path} does not match the SHA-256 in {spec_path}: the pair is torn or altered")
    try:
        tensors = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise PolicyFileError(f"{weights_path} is not a safetensors file: {exc}") from None
    shapes = spec_shapes(spec, spec_path)
    got = {k: tuple(v.shape) for k, v in tensors.items()}
    if got != shapes:
        wrong = sorted(set(got) ^ set(shapes)) or sorted(k for k in shapes if got[k] != shapes[k])
        raise PolicyFileError(f"{weights_path} does not hold the network its spec describes (differs in {wrong})")
    out = {}
    for k, v in tensors.items():
        if not np.issubdtype(v.dtype, np.number) or np.issubdtype(v.dtype, np.complexfloating):
            raise PolicyFileError(f"{weights_path}: tensor {k!r} holds {v.dtype} values, not real numbers")
        with np.errstate(over="ignore"):  # a float64 beyond float32's range: refused just below
            out[k] = v.astype(np.float32, copy=False)
        if not np.isfinite(out[k]).all():
            raise PolicyFileError(
                f"{weights_path}: tensor {k!r} holds NaN or infinite values (as float32): a policy needs finite weights"
            )
    return out


class TrainedPolicy(Policy):
    """A policy with action probabilities, trained for one table (its ``spec``): greedy by default,
    ``deterministic=False`` samples with the caller's rng."""

    spec: dict[str, Any]
    deterministic: bool = True

    def check_table(self, table: Table) -> None:
        check_compatible(self.spec, table, self.name)

    @abstractmethod
    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's distribution over actions (zero outside the mask)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        legal = action_mask.astype(bool)
        probs = np.where(legal, self.probabilities(observation, action_mask), 0.0).astype(np.float64)
        if self.deterministic:
            return int(np.argmax(np.where(legal, probs, -1.0)))
        return int(rng.choice(len(probs), p=probs / probs.sum()))


class PolicyFile(TrainedPolicy):
    """A trained policy from a safe policy file. ``table`` (see :func:`table_for`) is checked before the weights
    are read."""

    def __init__(
        self,
        path: str | Path,
        table: Table | None = None,
        *,
        deterministic: bool = True,
        label: str | None = None,
    ) -> None:
        self.path = paths(path)[0]
        self.spec = read_spec(self.path)
        self.name = label or self.path.stem  # type: ignore[misc]
        if table is not None:
            self.check_table(table)
        self.games = (self.spec["env"],)  # type: ignore[misc]
        # the forward pass of the spec's kind (the schema allows no other)
        self.network = NETWORK_CLASSES[self.spec["network"]["kind"]](
            self.spec["network"], read_weights(self.path, self.spec)
        )
        self.features = network_features(self.spec)
        self.keep = network_fields(self.spec)
        self.deterministic = deterministic

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        x = with_features(self.features, observation, self.keep, action_mask)
        logits = np.where(action_mask.astype(bool), self.network.logits(x), -np.inf)
        z = np.exp(logits - logits.max())
        out: np.ndarray = z / z.sum()
        return out
