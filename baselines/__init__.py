"""Scripted opponents: a registry of policies that see only what a player sees (and oracles, named so).

>>> from parlour.baselines import make
>>> bot = make("six_suspects_expert")
>>> action = bot.act(observation, action_mask, rng)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parlour.baselines import search
from parlour.baselines.base import Policy, RandomPolicy
from parlour.baselines.elevenses import ElevensesExpert, ElevensesHeuristic
from parlour.baselines.elevenses import rollout_action as elevenses_rollout
from parlour.baselines.goes_to_eleven import GoesToElevenExpert, GoesToElevenHeuristic
from parlour.baselines.goes_to_eleven import rollout_action as goes_to_eleven_rollout
from parlour.baselines.lady_alice import LadyAliceExpert, LadyAliceHeuristic
from parlour.baselines.lady_alice import finish as lady_alice_finish
from parlour.baselines.lady_alice import rollout_action as lady_alice_rollout
from parlour.baselines.search import DeterminizedSearch
from parlour.baselines.six_suspects import SixSuspectsExpert, SixSuspectsHeuristic, SixSuspectsOracle

#: name -> policy class.
BOTS: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (
        RandomPolicy,
        SixSuspectsHeuristic,
        SixSuspectsExpert,
        SixSuspectsOracle,
        GoesToElevenHeuristic,
        GoesToElevenExpert,
        LadyAliceHeuristic,
        LadyAliceExpert,
        ElevensesHeuristic,
        ElevensesExpert,
        DeterminizedSearch,
    )
}

search.ROLLOUT_POLICIES["goes_to_eleven_v0"] = goes_to_eleven_rollout
search.ROLLOUT_POLICIES["lady_alice_v0"] = lady_alice_rollout
search.ROLLOUT_POLICIES["elevenses_v0"] = elevenses_rollout
#: Lady Alice playouts stop about a round later and are scored as at the turn cap.
search.ROLLOUT_HORIZONS["lady_alice_v0"] = search.Horizon(steps=12, finish=lady_alice_finish)

#: Folder of the shipped trained policies (``<env>_ppo.json`` beside ``<env>_ppo.safetensors``, written by
#: ``parlour baselines``; see :mod:`parlour.baselines.policy_file`).
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
#: Shipped trained policy name -> env id. They play with NumPy alone: no PyTorch needed.
SHIPPED: dict[str, str] = {
    "six_suspects_ppo": "six_suspects_v0",
    "goes_to_eleven_ppo": "goes_to_eleven_v0",
    "lady_alice_ppo": "lady_alice_v0",
    "elevenses_ppo": "elevenses_v0",
}
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
