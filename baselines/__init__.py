"""Scripted opponents: a registry of policies that see only what a player sees (and oracles, named so).

>>> from parlour.baselines import make
>>> bot = make("six_suspects_expert")
>>> action = bot.act(observation, action_mask, rng)
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from parlour.baselines.base import CHAT_PREFIX, MIXED_PREFIX, TEXT_PREFIX, MixedTable, Policy, RandomPolicy, Table
from parlour.baselines.registry import GAME_SPECS, game_name, game_spec
from parlour.baselines.search import DeterminizedSearch
from parlour.baselines.spec import GameSpec
from parlour.baselines.tracks import SHIPPED_TRACKS, parse_shipped_name
from parlour.envs import ENVIRONMENTS, game_of
from parlour.envs.declaration import version_of

#: name -> policy class: the bots any game can seat, then each game's own.
_BOT_CLASSES: list[type[Policy]] = [RandomPolicy, *(c for g in GAME_SPECS.values() for c in g.bots), DeterminizedSearch]
BOTS: dict[str, type[Policy]] = {cls.name: cls for cls in _BOT_CLASSES}

#: Folder of the shipped trained policies (``<env>_<track>.json`` beside its weights, written by
#: ``parlour baselines``; see :mod:`parlour.baselines.policy_file`).
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
#: Shipped names of an earlier release, kept one release: old suffix -> the track it named. Resolving an old name
#: prints a one-line notice and plays the renamed policy.
RENAMED = {"ppo": "distilled"}


def _shipped(folder: Path) -> dict[str, tuple[str, Path]]:
    """The trained policies present in ``folder`` (``<env>_<track>.json``), by name -> (env id, spec file):
    ``<game>_<track>`` for the game's newest env version, ``<env>_<track>`` for an older one."""
    found = [parsed for p in folder.glob("*.json") if (parsed := parse_shipped_name(p.name)) is not None]
    registered = [(env_name, track) for env_name, track in found if env_name in ENVIRONMENTS]
    # per game and track, the newest version first: it takes the short name
    registered.sort(key=lambda et: (game_name(et[0]), et[1], version_of(game_of(et[0]), et[0]).number), reverse=True)
    out: dict[str, tuple[str, Path]] = {}
    for env_name, track in registered:
        name = f"{game_name(env_name)}_{track}"
        out[name if name not in out else f"{env_name}_{track}"] = (env_name, folder / f"{env_name}_{track}.json")
    return dict(sorted(out.items(), key=lambda kv: (list(ENVIRONMENTS).index(kv[1][0]), kv[0])))


_SHIPPED_FILES = _shipped(CHECKPOINT_DIR)
#: Shipped trained policy name -> env id, from the files present. They play with NumPy alone: no PyTorch needed.
SHIPPED: dict[str, str] = {name: env for name, (env, _) in _SHIPPED_FILES.items()}
#: Old shipped names -> their new names (see :data:`RENAMED`).
ALIASES: dict[str, str] = {
    name.removesuffix(f"_{track}") + f"_{old}": name
    for name in SHIPPED
    for old, track in RENAMED.items()
    if name.endswith(f"_{track}")
}
_NOTICED: set[str] = set()


def renamed(spec: str) -> str:
    """``spec``, or the new name of an old shipped name (with a one-line notice on stderr, once per process)."""
    if spec not in ALIASES:
        return spec
    new = ALIASES[spec]
    if spec not in _NOTICED:
        _NOTICED.add(spec)
        print(
            f"parlour: {spec!r} is now {new!r} (the shipped policies are named for their track: "
            f"{', '.join(SHIPPED_TRACKS)}); the old name goes in the next release",
            file=sys.stderr,
        )
    return new


#: What a policy spec may be besides a name, for the messages that list what is accepted.
OTHER_SPECS = (
    "a policy file (NAME.json beside NAME.safetensors), or module:NAME or path/to/file.py:NAME naming a class or "
    "instance with act(observation, action_mask, rng), or a function act(observation, action_mask, rng); as an "
    "opponent, mixed:A+B+C (a table of several policies, seat-rotated); a language agent: chat:MODEL@BASE_URL (an "
    "OpenAI-compatible endpoint) or text:module:NAME / text:path/to/file.py:NAME (a function prompt -> answer)"
)
#: What ``module:NAME`` and ``file.py:NAME`` may name, for the messages that refuse anything else.
ACCEPTED_OBJECTS = (
    "a policy is a class (made with no arguments) or instance with act(observation, action_mask, rng), "
    "or a function act(observation, action_mask, rng)"
)


class UnknownPolicyError(ValueError):
    """A policy spec that names nothing: not a bot, a shipped policy, a policy file or a module attribute."""


def shipped_checkpoint(env_name: str) -> str | None:
    """The name of the shipped trained policy for ``env_name``, if there is one."""
    return next((n for n, e in SHIPPED.items() if e == env_name), None)


def shipped_path(name: str) -> Path:
    """The spec file of the shipped trained policy ``name`` (an old name is accepted, see :data:`ALIASES`)."""
    return _SHIPPED_FILES[ALIASES.get(name, name)][1]


#: File stems too generic to name a policy alone: a table labels those with their folder too.
GENERIC_STEMS = frozenset({"policy", "model", "latest"})


def short_label(path: str) -> str:
    """A table's name for a policy given by path: the file's stem (``runs/x/quick-seed0/policy.json`` ->
    ``quick-seed0/policy``, since ``policy`` alone says nothing), not the whole path; ``module:NAME`` as it is, and
    ``path/to/my_agent.py:act`` as ``my_agent.py:act``."""
    if ":" in path and not Path(path).exists():
        left, _, name = path.rpartition(":")
        if not left.endswith(".py"):
            return path  # module:NAME
        p = Path(left)
        return f"{p.parent.name}/{p.name}:{name}" if p.stem in GENERIC_STEMS and p.parent.name else f"{p.name}:{name}"
    p = Path(path)
    return f"{p.parent.name}/{p.stem}" if p.stem in GENERIC_STEMS and p.parent.name else p.stem


def available(env_name: str | None = None) -> list[str]:
    """Every policy *name* :func:`resolve` accepts (for ``env_name`` when given): the bots that can play it and
    the shipped trained policies whose files are present. Paths and ``module:NAME`` or ``path/to/file.py:NAME`` come on top."""
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
    ``trust_pickle``: loading one can run code stored in it), or your own code named as ``module:NAME`` (an
    importable module; ``NAME`` may be a dotted attribute path) or ``path/to/file.py:NAME`` (a Python file
    anywhere, loaded by path: no ``PYTHONPATH`` needed; a relative path is taken from the current folder; the
    split is at the last ``:``). A policy trained for another table is refused here, before the first step, with
    a message naming each difference.

    A spec *names* a policy; it never calls arbitrary code. ``NAME`` must be one of:

    * a class with an ``act`` method, made with no arguments (its constructor's signature is checked first);
    * an instance with ``act(observation, action_mask, rng)``;
    * a function (or other callable) whose signature takes exactly ``(observation, action_mask, rng)``: it is
      wrapped as a policy whose ``act`` calls it. It is never called at resolve time.

    Anything else (``os:abort``, ``sys:exit``, ``builtins:print``, a zero-argument factory) is refused in one line
    before it is called. What cannot be avoided: a module is imported, and a file is run, when named, as Python's
    ``import`` does (a missing module or file is refused before that); Parlour never runs code from a config's
    *content* beyond importing what it names. The policy's name in tables is its own ``name`` for a
    :class:`~parlour.baselines.base.Policy`, else ``label`` (default :func:`short_label` of the spec).

    ``chat:MODEL@BASE_URL[?temperature=…&max_tokens=…&timeout=…&retries=…]`` and ``text:module:NAME`` /
    ``text:path/to/file.py:NAME`` name language agents (:mod:`parlour.baselines.language`), which read the seat's
    prompt and answer it.

    ``mixed:A+B+C`` names a table of several policies (:class:`~parlour.baselines.base.MixedTable`): an opponent
    whose members fill the other seats in turn, rotated by deal; it does not act itself. ``mixed:`` is reserved: a
    module named ``mixed`` cannot be named as ``mixed:NAME``."""
    from parlour.baselines import policy_file

    if spec.startswith(MIXED_PREFIX):  # a table of several players, rotated by deal (an opponent, not one player)
        members = [m for m in spec[len(MIXED_PREFIX) :].split("+")]
        if len(members) < 2 or not all(members):
            raise UnknownPolicyError(
                f"mixed table {spec!r}: expected mixed:A+B[+C...], two or more policy specs joined by '+'"
            )
        return MixedTable(
            [
                resolve(m, env_name, num_players, options, deterministic=deterministic, trust_pickle=trust_pickle)
                for m in members
            ]
        )
    if spec.startswith((CHAT_PREFIX, TEXT_PREFIX)):  # a language agent: it reads the seat's prompt
        return _language_policy(spec, label)
    names = available(env_name)
    spec = renamed(spec)
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
        from parlour.baselines.sb3_zip import PickledCheckpointPolicy

        return PickledCheckpointPolicy(spec_path, table, deterministic=deterministic, label=label)
    if ":" in spec_path and not Path(spec_path).exists():
        return _import_policy(spec_path, env_name, label)
    hint = f" (name what to play in it: {spec}:NAME)" if spec.endswith(".py") else ""
    raise UnknownPolicyError(f"unknown policy {spec!r} for {env_name}{hint}: expected one of {names}, or {OTHER_SPECS}")


_MISSING = object()


def _dotted(text: str) -> bool:
    """Whether ``text`` is a dotted path of Python identifiers (``a``, ``a.b.c``)."""
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def _call_problem(fn: Any, *lead: Any) -> str | None:
    """Why ``fn(*lead, observation, action_mask, rng)`` is not the policy call, from ``fn``'s signature alone
    (``None``: it is); nothing is called."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "has no signature Python can inspect"
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
        return f"takes {sig}"  # *args takes any call: not the policy call
    try:
        sig.bind(*lead, 1, 2, 3)
    except TypeError:
        return f"takes {sig}"
    return None


def _method_problem(cls: Any, where: str) -> str | None:
    """Why ``cls`` (a class with an ``act``) is not a policy class, from signatures alone (``None``: it is)."""
    if inspect.isabstract(cls):
        return f"{where} is abstract"
    static = inspect.getattr_static(cls, "act", None)
    lead = () if isinstance(static, staticmethod | classmethod) else (None,)  # None stands for self
    why = _call_problem(cls.act, *lead)
    if why is not None and why != "has no signature Python can inspect":  # an act we cannot inspect is trusted
        return f"{where}.act {why}"
    try:
        made = inspect.signature(cls)
    except (TypeError, ValueError):
        return f"{where}'s constructor has no signature Python can inspect, so it is not made"
    try:
        made.bind()
    except TypeError:
        return f"{where} is made with {made}"
    return None


def _load_file(path: Path, spec: str) -> Any:
    """The module of the Python file ``path`` (which exists), loaded by path under a private module name (the same
    one for the same file, reused while the file is unchanged)."""
    resolved = path.resolve()
    stat = resolved.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    name = f"_parlour_policy_{hashlib.sha256(str(resolved).encode()).hexdigest()[:16]}"
    cached = sys.modules.get(name)
    if cached is not None and getattr(cached, "__parlour_stamp__", None) == stamp:
        return cached
    file_spec = importlib.util.spec_from_file_location(name, resolved)
    if file_spec is None or file_spec.loader is None:
        raise UnknownPolicyError(f"policy {spec!r}: Python cannot load {path} as a module")
    module = importlib.util.module_from_spec(file_spec)
    sys.modules[name] = module  # as import does: the file's classes can be pickled and dataclasses work
    try:
        file_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    module.__parlour_stamp__ = stamp  # type: ignore[attr-defined]
    return module


def _reload(spec: str, env_name: str, label: str | None) -> Policy:
    """A policy named by ``spec`` again (how a wrapped policy travels to another process: by its spec)."""
    return _import_policy(spec, env_name, label)


class _External(Policy):
    """A policy named by ``module:NAME`` or ``file.py:NAME`` that is not a :class:`Policy` found in an importable
    module: a user's object with ``act``, a policy function (``call``: the object is called as ``act``), or any
    policy from a file. It plays as the object does (a wrapped ``Policy``'s ``games``, ``check_table`` and
    ``act_with_env`` included) and is pickled as its spec, so it is named again, not copied, in another process."""

    def __init__(self, inner: Any, name: str, source: tuple[str, str, str | None], *, call: bool = False) -> None:
        self.inner = inner
        self.name = name  # type: ignore[misc]
        self.source = source
        self._act = inner if call else inner.act
        games = getattr(inner, "games", None)
        self.games = None if games is None else tuple(games)  # type: ignore[misc]
        self.needs_env = isinstance(inner, Policy) and inner.needs_env  # type: ignore[misc]

    def act(self, observation: Any, action_mask: Any, rng: Any) -> int:
        return int(self._act(observation, action_mask, rng))

    def check_table(self, table: Table) -> None:
        if isinstance(self.inner, Policy):
            self.inner.check_table(table)
        else:
            super().check_table(table)

    def act_with_env(self, env: Any, agent: str, rng: Any) -> int:
        if isinstance(self.inner, Policy):
            return int(self.inner.act_with_env(env, agent, rng))
        return super().act_with_env(env, agent, rng)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reload, self.source)


def _language_policy(spec: str, label: str | None) -> Policy:
    """``chat:MODEL@BASE_URL[?…]`` or ``text:module:NAME`` / ``text:path/to/file.py:NAME`` as a
    :class:`~parlour.baselines.language.LanguagePolicy` (one line for a malformed spec)."""
    from parlour.baselines.language import LanguagePolicy, chat_policy

    if spec.startswith(CHAT_PREFIX):
        try:
            return chat_policy(spec, label)
        except ValueError as exc:
            raise UnknownPolicyError(str(exc)) from None
    obj, _, owner, _ = _named_object(spec[len(TEXT_PREFIX) :], "text:", "a function prompt -> answer")
    problem = "is not callable" if not callable(obj) else _text_call_problem(obj)
    if problem:
        raise UnknownPolicyError(f"policy {spec!r}: {owner} {problem}; a text agent is a function prompt -> answer")
    return LanguagePolicy(obj, name=label or short_label(spec))


def _text_call_problem(fn: Any) -> str | None:
    """Why ``fn(prompt)`` is not a text agent's call, from its signature alone (``None``: it is)."""
    try:
        inspect.signature(fn).bind("prompt")
    except (TypeError, ValueError) as exc:
        return f"cannot be called with one prompt ({exc})"
    return None


def _import_policy(spec: str, env_name: str, label: str | None = None) -> Policy:
    """The policy ``module:NAME`` or ``path/to/file.py:NAME`` names (see :func:`resolve` for what ``NAME`` may be).
    The spec's form, the module's existence (``importlib.util.find_spec``) or the file's are checked before anything
    is imported or run; the object is then checked by its kind and signature alone, and only a class is called (with
    no arguments, once its constructor's signature allows it). Every refusal is one line."""
    obj, source, owner, from_file = _named_object(
        spec, "", "a Python name, dotted for an attribute's attribute; split at the last ':'"
    )
    _check_games(obj, spec, env_name)
    obj, call = _as_policy_object(obj, spec, owner)
    _check_games(obj, spec, env_name)
    if isinstance(obj, Policy) and not from_file:
        return obj  # pickled by reference: its module is importable
    label = label or short_label(spec)
    named = obj.name if isinstance(obj, Policy) and obj.name != Policy.name else label
    return _External(obj, named, (source, env_name, label), call=call)


def _named_object(spec: str, prefix: str, name: str) -> tuple[Any, str, str, bool]:
    """The object ``module:NAME`` or ``path/to/file.py:NAME`` names (after ``prefix``, as written in the policy spec):
    ``(object, source to reload it by, its name in messages, whether it came from a file)``. The spec's form and the
    module's or file's existence are checked before anything is imported; every refusal is one line."""
    left, _, attr = spec.rpartition(":")
    from_file = left.endswith(".py")
    if not _dotted(attr) or not (from_file or _dotted(left)):
        raise UnknownPolicyError(
            f"policy {prefix + spec!r} is neither {prefix}module:NAME nor {prefix}path/to/file.py:NAME (NAME: {name})"
        )
    obj, source, owner, sep = _import_owner(spec, left, from_file)
    for part in attr.split("."):
        value = getattr(obj, part, _MISSING)
        if value is _MISSING:
            raise UnknownPolicyError(f"policy {prefix + spec!r}: {owner} has no attribute {part!r}")
        obj, owner, sep = value, f"{owner}{sep}{part}", "."
    return obj, source, owner, from_file


def _import_owner(spec: str, left: str, from_file: bool) -> tuple[Any, str, str, str]:
    """The module (or the file's namespace) ``left`` of ``spec`` names, once it is found: ``(object, source to
    reload it by, its name in messages, the separator before an attribute)``."""
    try:
        if from_file:
            path = Path(left).expanduser()
            if not path.is_file():
                here = "" if path.is_absolute() else f" in {Path.cwd()}"
                raise UnknownPolicyError(f"policy {spec!r}: there is no Python file {str(path)!r}{here}")
            return _load_file(path, spec), f"{path.resolve()}:{spec.rpartition(':')[2]}", path.name, ":"
        try:
            found = importlib.util.find_spec(left)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise UnknownPolicyError(
                f"policy {spec!r}: cannot import it as module:NAME (no module named {left!r}; a file is "
                "path/to/file.py:NAME)"
            )
        return importlib.import_module(left), spec, left, "."
    except ImportError as exc:
        raise UnknownPolicyError(f"policy {spec!r}: importing it failed ({exc})") from None


def _check_games(obj: Any, spec: str, env_name: str) -> None:
    """Refuse an object whose ``games`` attribute leaves ``env_name`` out."""
    games = getattr(obj, "games", None)
    if games is not None and env_name not in games:
        raise UnknownPolicyError(f"policy {spec!r} plays {list(games)}, not {env_name}")


def _as_policy_object(obj: Any, spec: str, where: str) -> tuple[Any, bool]:
    """``(object, call)``: an instance of a policy class (constructed with no arguments once its signature allows
    it), an object with an ``act`` method, or a plain callable (``call``: it is called, not its ``act``); anything
    else is refused in one line."""

    def refused(why: str) -> UnknownPolicyError:
        why = why.replace("\n", "\\n")  # one line, whatever a signature's defaults print
        return UnknownPolicyError(f"policy {spec!r} is not a policy: {why} but {ACCEPTED_OBJECTS}")

    if isinstance(obj, type):
        if not callable(getattr(obj, "act", None)):
            raise refused(f"{where} is a class without an act method")
        why = _method_problem(obj, where)
        if why is not None:
            raise refused(why)
        return obj(), False
    if callable(getattr(obj, "act", None)):
        why = _call_problem(obj.act)
        if why is not None and why != "has no signature Python can inspect":
            raise refused(f"{where}.act {why}")
        return obj, False
    if callable(obj):
        why = _call_problem(obj)
        if why is None and inspect.isbuiltin(obj):
            why = "is a built-in function"
        if why is not None:
            raise refused(f"{where} {why}")
        return obj, True
    raise refused(f"{where} is of type {type(obj).__name__}")


def make(name: str, env_name: str | None = None) -> Policy:
    """The bot or shipped trained policy registered as ``name`` (checked against ``env_name`` when given)."""
    name = renamed(name)
    if name not in BOTS and name not in SHIPPED:
        raise UnknownPolicyError(f"unknown bot {name!r}; available: {available(env_name)}")
    if env_name is None and name in BOTS:
        return BOTS[name]()
    return resolve(name, env_name or SHIPPED[name])


__all__ = [
    "ALIASES",
    "BOTS",
    "GAME_SPECS",
    "GameSpec",
    "SHIPPED",
    "SHIPPED_TRACKS",
    "Policy",
    "RandomPolicy",
    "UnknownPolicyError",
    "available",
    "game_name",
    "game_spec",
    "make",
    "seatable",
    "resolve",
    "shipped_checkpoint",
]
