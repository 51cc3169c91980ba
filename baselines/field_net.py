"""The field encoder: an actor-critic that reads an observation as tokens, one per row of each observation field.

An env's observation is a :class:`~parlour.envs.layout.Layout`: named fields laid end to end in one flat vector, many
of them tables -- a row per seat of suspicion, a row per card seen, a row per claim. A plain MLP learns a separate
weight for every entry of every row, so what it learns about seat 2's row it must learn again for seat 3's. This
network instead cuts the vector into *tokens*: a field of shape ``(r, c, ...)`` gives ``r`` tokens of width
``c × ...`` (each row one token) and a 1-axis field of shape ``(n,)`` one token of width ``n``
(:func:`token_plan`). One linear per field maps its rows into ``d_model`` -- shared by the field's rows -- and learned
embeddings say which field and which row a token is. Then:

1. ``attention_layers`` pre-LayerNorm transformer blocks (multi-head self-attention, then a ReLU MLP of width
   ``2 × d_model``, each with a residual connection; 0 blocks allowed);
2. DeepSets pooling: per token ``relu(linear)``, then the mean and the max over tokens, concatenated (``2 × d_model``);
3. separate policy and value MLP trunks (``pi`` and ``vf`` widths, ``relu`` or ``tanh``), then the action head
   (``num_actions`` logits) and the value head (1).

There is one forward pass, :func:`forward`, written against an array module ``xp`` (NumPy or ``jax.numpy``): the
jitted trainer learns with it in JAX and a policy file plays it in NumPy, so both compute the same thing. This
module imports no array library itself (the caller passes ``xp``); :func:`init_params` imports JAX when called.

Tensors are stored as ``(out, in)`` like torch's, under these names (``k`` a field's position in the plan, ``i`` a
block, ``j`` a trunk layer):

=====================================================  ============================================================
name                                                   shape
=====================================================  ============================================================
``encoder.field.<k>.weight`` / ``.bias``               ``(d_model, width_k)`` / ``(d_model,)``: field k's linear
``encoder.field_embedding``                            ``(fields, d_model)``: which field a token comes from
``encoder.row.<k>``                                    ``(rows_k, d_model)``: which row of field k a token is
``encoder.block.<i>.ln1.weight`` / ``.bias``           ``(d_model,)``: the LayerNorm before attention
``encoder.block.<i>.attn.{query,key,value,out}.*``     ``(d_model, d_model)`` / ``(d_model,)``
``encoder.block.<i>.ln2.weight`` / ``.bias``           ``(d_model,)``: the LayerNorm before the MLP
``encoder.block.<i>.mlp.hidden.weight`` / ``.bias``    ``(2 d_model, d_model)`` / ``(2 d_model,)``
``encoder.block.<i>.mlp.out.weight`` / ``.bias``       ``(d_model, 2 d_model)`` / ``(d_model,)``
``encoder.pool.weight`` / ``.bias``                    ``(d_model, d_model)`` / ``(d_model,)``: DeepSets' per token
``trunk.policy_net.<j>.weight`` / ``.bias``            ``(pi[j], in)``; ``trunk.value_net.<j>.*`` likewise with ``vf``
``action_net.weight`` / ``.bias``                      ``(num_actions, in)`` / ``(num_actions,)``
``value_net.weight`` / ``.bias``                       ``(1, in)`` / ``(1,)``
=====================================================  ============================================================
"""

from __future__ import annotations

import math
from math import prod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jax

    from parlour.envs.layout import Layout

#: The ``network.kind`` of a field encoder in a policy file.
KIND = "field_encoder"
#: Bounds of the encoder's settings (the training config and the policy file's schema keep the same).
MAX_D_MODEL = 1024
MAX_ATTENTION_LAYERS = 8
MAX_HEADS = 16
#: LayerNorm's epsilon (torch's default).
LN_EPS = 1e-5
#: The keys of a token-plan entry, in order.
TOKEN_KEYS = ("field", "start", "rows", "width")

#: One entry of a token plan: ``{"field": name, "start": flat offset, "rows": R, "width": W}``.
Token = dict[str, Any]


def token_plan(layout: Layout) -> list[Token]:
    """How an observation of ``layout`` is cut into tokens: per field, in order, ``rows`` tokens of ``width`` entries
    starting at ``start`` in the flat vector (a field of 2 or more axes gives a token per row of its first axis; a
    1-axis field one token)."""
    plan = []
    for f in layout.fields:
        rows, width = (f.shape[0], prod(f.shape[1:])) if len(f.shape) >= 2 else (1, f.size)
        plan.append({"field": f.name, "start": layout[f.name].start, "rows": rows, "width": width})
    return plan


def network(
    plan: list[Token], d_model: int, attention_layers: int, heads: int, pi: list[int], vf: list[int], activation: str
) -> dict[str, Any]:
    """A policy file's ``network`` entry for a field encoder over ``plan``."""
    if d_model % heads:
        raise ValueError(f"heads={heads} must divide d_model={d_model}")
    return {
        "kind": KIND,
        "d_model": d_model,
        "attention_layers": attention_layers,
        "heads": heads,
        "pi": list(pi),
        "vf": list(vf),
        "activation": activation,
        "tokens": [dict(t) for t in plan],
    }


# ------------------------------------------------------------------------------------------------- shapes and init
def shapes(plan: list[Token], network: dict[str, Any], num_actions: int) -> dict[str, tuple[int, ...]]:
    """Every tensor of the network, by name (see the module's doc); nothing is allocated."""
    d = network["d_model"]
    out: dict[str, tuple[int, ...]] = {}
    for k, t in enumerate(plan):
        out[f"encoder.field.{k}.weight"] = (d, t["width"])
        out[f"encoder.field.{k}.bias"] = (d,)
        out[f"encoder.row.{k}"] = (t["rows"], d)
    out["encoder.field_embedding"] = (len(plan), d)
    for i in range(network["attention_layers"]):
        block = f"encoder.block.{i}"
        for norm in ("ln1", "ln2"):
            out[f"{block}.{norm}.weight"] = out[f"{block}.{norm}.bias"] = (d,)
        for proj in ("query", "key", "value", "out"):
            out[f"{block}.attn.{proj}.weight"] = (d, d)
            out[f"{block}.attn.{proj}.bias"] = (d,)
        out[f"{block}.mlp.hidden.weight"] = (2 * d, d)
        out[f"{block}.mlp.hidden.bias"] = (2 * d,)
        out[f"{block}.mlp.out.weight"] = (d, 2 * d)
        out[f"{block}.mlp.out.bias"] = (d,)
    out["encoder.pool.weight"] = (d, d)
    out["encoder.pool.bias"] = (d,)
    for part, head, layers, size in (
        ("policy_net", "action_net", network["pi"], num_actions),
        ("value_net", "value_net", network["vf"], 1),
    ):
        width = 2 * d  # the pooled mean and max
        for j, w in enumerate(layers):
            out[f"trunk.{part}.{j}.weight"] = (w, width)
            out[f"trunk.{part}.{j}.bias"] = (w,)
            width = w
        out[f"{head}.weight"] = (size, width)
        out[f"{head}.bias"] = (size,)
    return out


def parameter_count(plan: list[Token], network: dict[str, Any], num_actions: int) -> int:
    """How many parameters the network has (counted from the shapes alone)."""
    return sum(prod(s) for s in shapes(plan, network, num_actions).values())


def init_params(key: jax.Array, plan: list[Token], network: dict[str, Any], num_actions: int) -> dict[str, jax.Array]:
    """Fresh parameters, initialised as SB3 initialises its actor-critic where it has one: orthogonal linears (gain
    sqrt(2) hidden, 0.01 the action head, 1 the value head; torch's ``orthogonal_``) with zero biases; embeddings
    normal(0, 0.02) (small, so that a token starts as its field's linear of its row); LayerNorm weight 1, bias 0.

    Every random number comes from one draw of ``key``, cut up in the order of :func:`shapes`: a draw per tensor
    would compile JAX's generator once per distinct shape, seconds per network of a few dozen fields."""
    import jax
    import jax.numpy as jnp

    table = shapes(plan, network, num_actions)
    draws = jax.random.normal(key, (sum(prod(s) for s in table.values()),), jnp.float32)
    out: dict[str, jax.Array] = {}
    at = 0
    for name, shape in table.items():
        z = draws[at : at + prod(shape)]
        at += prod(shape)
        if ".ln" in name:
            out[name] = (jnp.ones if name.endswith(".weight") else jnp.zeros)(shape, jnp.float32)
        elif name.endswith(".bias"):
            out[name] = jnp.zeros(shape, jnp.float32)
        elif name == "encoder.field_embedding" or name.startswith("encoder.row."):
            out[name] = 0.02 * z.reshape(shape)
        else:
            gain = {"action_net.weight": 0.01, "value_net.weight": 1.0}.get(name, math.sqrt(2))
            out[name] = _orthogonal(jnp, z, shape, gain)
    return out


def _orthogonal(jnp: Any, z: Any, shape: tuple[int, ...], gain: float) -> Any:
    """``gain`` times a matrix of ``shape`` with orthonormal rows or columns (whichever are fewer), from normal
    draws ``z``: torch's ``orthogonal_``, the QR of the draws with the signs of R's diagonal taken out."""
    rows, cols = shape
    q, r = jnp.linalg.qr(z.reshape(max(rows, cols), min(rows, cols)))
    q = q * jnp.sign(jnp.diag(r))
    return gain * (q.T if rows < cols else q)


# ------------------------------------------------------------------------------------------------- the forward pass
def _linear(x: Any, params: dict[str, Any], name: str) -> Any:
    return x @ params[f"{name}.weight"].T + params[f"{name}.bias"]


def _layer_norm(xp: Any, x: Any, params: dict[str, Any], name: str) -> Any:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + LN_EPS) * params[f"{name}.weight"] + params[f"{name}.bias"]


def _attention(xp: Any, x: Any, params: dict[str, Any], name: str, heads: int) -> Any:
    """Multi-head self-attention over the tokens of ``x`` (batch, tokens, d_model); every token sees every token."""
    batch, tokens, d = x.shape
    per = d // heads

    def split(h: Any) -> Any:  # (batch, tokens, d) -> (batch, heads, tokens, d / heads)
        return xp.transpose(h.reshape(batch, tokens, heads, per), (0, 2, 1, 3))

    q, k, v = (split(_linear(x, params, f"{name}.{p}")) for p in ("query", "key", "value"))
    scores = q @ xp.swapaxes(k, -1, -2) / math.sqrt(per)
    weights = xp.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    mixed = xp.transpose(weights @ v, (0, 2, 1, 3)).reshape(batch, tokens, d)
    return _linear(mixed, params, f"{name}.out")


def forward(xp: Any, params: dict[str, Any], obs: Any, plan: list[Token], network: dict[str, Any]) -> tuple[Any, Any]:
    """Action logits and value of ``obs`` (``(batch, obs_size)`` or ``(obs_size,)``), with ``xp`` NumPy or
    ``jax.numpy`` and ``params`` arrays of that module: ``(batch, num_actions)`` and ``(batch,)``, or unbatched."""
    logits, value, _ = forward_hidden(xp, params, obs, plan, network)
    return logits, value


def forward_hidden(
    xp: Any, params: dict[str, Any], obs: Any, plan: list[Token], network: dict[str, Any]
) -> tuple[Any, Any, Any]:
    """:func:`forward`, and the policy trunk's last hidden layer (the pooled tokens where the trunk has no layer):
    what the jitted trainer's belief heads read."""
    x = xp.asarray(obs, dtype=xp.float32)
    single = x.ndim == 1
    if single:
        x = x[None]
    batch = x.shape[0]
    # tokens: each field's rows through that field's linear (shared by its rows), plus where the token comes from
    parts = []
    for k, t in enumerate(plan):
        rows = x[:, t["start"] : t["start"] + t["rows"] * t["width"]].reshape(batch, t["rows"], t["width"])
        parts.append(
            _linear(rows, params, f"encoder.field.{k}")
            + params["encoder.field_embedding"][k]
            + params[f"encoder.row.{k}"]
        )
    h = xp.concatenate(parts, axis=1)  # (batch, tokens, d_model)
    for i in range(network["attention_layers"]):
        block = f"encoder.block.{i}"
        h = h + _attention(xp, _layer_norm(xp, h, params, f"{block}.ln1"), params, f"{block}.attn", network["heads"])
        hidden = xp.maximum(_linear(_layer_norm(xp, h, params, f"{block}.ln2"), params, f"{block}.mlp.hidden"), 0.0)
        h = h + _linear(hidden, params, f"{block}.mlp.out")
    # DeepSets: a per-token map, then summaries that do not depend on the tokens' order
    pooled = xp.maximum(_linear(h, params, "encoder.pool"), 0.0)
    z = xp.concatenate([pooled.mean(axis=1), pooled.max(axis=1)], axis=-1)
    act = xp.tanh if network["activation"] == "tanh" else (lambda a: xp.maximum(a, 0.0))
    out, hidden = [], z
    for part, head, layers in (("policy_net", "action_net", network["pi"]), ("value_net", "value_net", network["vf"])):
        y = z
        for j in range(len(layers)):
            y = act(_linear(y, params, f"trunk.{part}.{j}"))
        if part == "policy_net":
            hidden = y
        out.append(_linear(y, params, head))
    logits, value = out[0], out[1][..., 0]
    return (logits[0], value[0], hidden[0]) if single else (logits, value, hidden)
