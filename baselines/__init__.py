"""Scripted opponents: a registry of policies that see only what a player sees (and oracles, named so).

>>> from parlour.baselines import make
>>> bot = make("six_suspects_expert")
>>> action = bot.act(observation, action_mask, rng)
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from typing import Any

from parlour.baselines import search
from parlour.baselines.base import Policy, RandomPolicy
from parlour.baselines.search import DeterminizedSearch
from parlour.envs import ENVIRONMENTS


def game_name(env_name: str) -> str:
    """``lady_alice_v0`` -> ``lady_alice``: the name of a game's packages (``parlour.envs.<game>``) and bots module
    (``parlour.baselines.<game>``)."""
    return env_name.rsplit("_v", 1)[0]


def _declarations() -> dict[str, Any]:
    """Every registered game's bots module (``parlour.baselines.<game>``, if it has one), by game name: each
    declares ``GAMES`` (env ids), ``BOTS``, ``ROLLOUT_POLICY`` and ``ROLLOUT_HORIZON``."""
    out = {}
    for env_name in ENVIRONMENTS:
        game = game_name(env_name)
        if game not in out and importlib.util.find_spec(f"parlour.baselines.{game}") is not None:
            out[game] = importlib.import_module(f"parlour.baselines.{game}")
    return out


GAME_MODULES = _declarations()

#: name -> policy class: the bots any game can seat, then each game's own.
BOTS: dict[str, type[Policy]] = {
    cls.name: cls for cls in (RandomPolicy, *(c for m in GAME_MODULES.values() for c in m.BOTS), DeterminizedSearch)
}
for _module in GAME_MODULES.values():
    for _env_name in _module.GAMES:
        if _module.ROLLOUT_POLICY is not None:
            search.ROLLOUT_POLICIES[_env_name] = _module.ROLLOUT_POLICY
        if _module.ROLLOUT_HORIZON is not None:
            search.ROLLOUT_HORIZONS[_env_name] = _module.ROLLOUT_HORIZON

#: Folder of the shipped trained policies (``<env>_ppo.json`` beside ``<env>_ppo.safetensors``, written by
#: ``parlour baselines``; see :mod:`parlour.baselines.policy_file`).
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"


def _shipped(folder: Path) -> dict[str, str]:
    """The trained policies present in ``folder`` (``<env>_ppo.json``), by name: ``<game>_ppo`` for the game's
    newest env version, ``<env>_ppo`` for an older one."""
    found = sorted(
        (m.group(1) for p in folder.glob("*_ppo.json") if (m := re.fullmatch(r"(.+_v\d+)_ppo\.json", p.name))),
        key=lambda e: (game_name(e), int(e.rsplit("_v", 1)[1])),
        reverse=True,
    )
    out: dict[str, str] = {}
    for env_name in found:
        if env_name in ENVIRONMENTS:
            name = f"{game_name(env_name)}_ppo"
            out[name if name not in out else f"{env_name}_ppo"] = env_name
    return dict(sorted(out.items(), key=lambda kv: list(ENVIRONMENTS).index(kv[1])))


#: Shipped trained policy name -> env id, from the files present. They play with NumPy alone: no PyTorch needed.
SHIPPED: dict[str, str] = _shipped(CHECKPOINT_DIR)
#: What a policy spec may be besides a name, for the messages that list what is accepted.
OTHER_SPECS = "a policy file (NAME.json beside NAME.safetensors), or module:attribute of your own Policy"


class UnknownPolicyError(ValueError):
    """A policy spec that names nothing: not a bot, a shipped policy, a policy file or a module attribute."""


def shipped_checkpoint(env_name: str) -> str | None:
    """The name of the shipped trained policy for ``env_name``, if there is one."""
    return next((n for n, e in SHIPPED.items() if e == env_name), None)


def shipped_path(name: str) -> Path:
    """The spec file of the shipped trained policy ``name``."""
    return CHECKPOINT_DIR / f"{SHIPPED[name]}_ppo.json"


#: File stems too generic to name a policy alone: a table labels those with their folder too.
GENERIC_STEMS = frozenset({"policy", "model", "latest"})


def short_label(path: str) -> str:
    """A table's name for a policy given by path: the file's stem (``runs/x/quick-seed0/policy.json`` ->
    ``quick-seed0/policy``, since ``policy`` alone says nothing), not the whole path."""
    if ":" in path and not Path(path).exists():
        return path  # module:attribute
    p = Path(path)
    return f"{p.parent.name}/{p.stem}" if p.stem in GENERIC_STEMS and p.parent.name else p.stem


def available(env_name: str | None = None) -> list[str]:
    """Every policy *name* :func:`resolve` accepts (for ``env_name`` when given): the bots that can play it and
    the shipped trained policies whose files are present. Paths and ``module:attribute`` come on top."""
    bots = [n for n, c in BOTS.items() if env_name is None or c.games is None or env_name in c.games]
    return bots + [n for n, e in SHIPPED.items() if env_name in (None, e) and shipped_path(n).is_file()]


def seatable(env_name: str, num_players: int | None = None, options: dict[str, Any] | None = None) -> list[str]:
    """The names of :func:`available` that can sit at this table: shipped policies trained for another player
    count or other rules are left out (a default line-up takes these)."""
    from parlour.baselines import policy_file

    table = policy_file.table_for(env_name, num_players, options)
    return [
        n
        for n in available(env_name)
        if n not in SHIPPED or not policy_file.differences(policy_file.read_spec(shipped_path(n)), table)
    ]


def resolve(
    spec: str,
    env_name: str,
    num_players: int | None = None,
    options: dict[str, Any] | None = None,
    *,
    deterministic: bool = True,
    trust_pickle: bool = False,
    label: str | None = None,
) -> Policy:
    """The one way from a policy spec to a policy that can sit at ``env_name``'s table with ``num_players`` and
    the rule keywords ``options``: a bot name, a shipped policy name, a policy file, an SB3 ``*.zip`` (only with
    ``trust_pickle``: loading one can run code stored in it), or ``module:attribute`` naming a
    :class:`~parlour.baselines.base.Policy` (class, instance or factory). A policy trained for another table is
    refused here, before the first step, with a message naming each difference."""
    from parlour.baselines import policy_file

    names = available(env_name)
    if spec in BOTS or spec in SHIPPED:
        if spec not in names:
            if spec not in SHIPPED:
                why = "it cannot play it"
            elif SHIPPED[spec] != env_name:
                why = f"it plays {SHIPPED[spec]}"
            else:
                why = f"its file {shipped_path(spec)} is missing"
            raise UnknownPolicyError(f"policy {spec!r} is not available for {env_name} ({why}); available: {names}")
        if spec in BOTS:
            return BOTS[spec]()
        spec_path: str = str(shipped_path(spec))
        label = label or spec
    else:
        spec_path = spec
    table = policy_file.table_for(env_name, num_players, options)
    label = label or short_label(spec_path)
    if policy_file.is_policy_path(spec_path):
        return policy_file.PolicyFile(spec_path, table, deterministic=deterministic, label=label)
    if spec_path.endswith(".zip"):
        if not trust_pickle:
            raise policy_file.PolicyFileError(
                f"{spec_path} is a pickle-based SB3 zip: loading it can run code stored in the file, so it is refused. "
                f"Use a policy file (NAME.json + NAME.safetensors: `parlour export {spec_path} NAME --trust-pickle` "
                "converts one you trust), or pass --trust-pickle (trust_pickle: true in a config) if you know where "
                "the file comes from"
            )
        from parlour.training.policies import PickledCheckpointPolicy

        return PickledCheckpointPolicy(spec_path, table, deterministic=deterministic, label=label)
    if ":" in spec_path and not Path(spec_path).exists():
        return _import_policy(spec_path, env_name)
    raise UnknownPolicyError(f"unknown policy {spec!r} for {env_name}: expected one of {names}, or {OTHER_SPECS}")


class _External(Policy):
    """A user's object with ``act(observation, action_mask, rng)`` that does not subclass Policy."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = name  # type: ignore[misc]

    def act(self, observation: Any, action_mask: Any, rng: Any) -> int:
        return int(self.inner.act(observation, action_mask, rng))


def _import_policy(spec: str, env_name: str) -> Policy:
    import importlib

    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise UnknownPolicyError(f"policy {spec!r}: cannot import it as module:attribute ({exc})") from None
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "act")):
        obj = obj()  # a class or a factory
    if not callable(getattr(obj, "act", None)):
        raise UnknownPolicyError(f"policy {spec!r} has no act(observation, action_mask, rng) method")
    games = getattr(obj, "games", None)
    if games is not None and env_name not in games:
        raise UnknownPolicyError(f"policy {spec!r} plays {list(games)}, not {env_name}")
    if isinstance(obj, Policy):
        return obj
    return _External(obj, spec)


def make(name: str, env_name: str | None = None) -> Policy:
    """The bot or shipped trained policy registered as ``name`` (checked against ``env_name`` when given)."""
    if name not in BOTS and name not in SHIPPED:
        raise UnknownPolicyError(f"unknown bot {name!r}; available: {available(env_name)}")
    if env_name is None and name in BOTS:
        return BOTS[name]()
    return resolve(name, env_name or SHIPPED[name])


__all__ = [
    "BOTS",
    "SHIPPED",
    "Policy",
    "RandomPolicy",
    "UnknownPolicyError",
    "available",
    "make",
    "seatable",
    "resolve",
    "shipped_checkpoint",
]
