"""A game's one declaration: its name, title, player range, versions (each with its env factory and JAX core) and
the rule variants its checks play.

Each game's package exports one (``GAME`` in ``parlour.envs.<game>``); every registry derives from them: the env
registry (:data:`parlour.envs.ENVIRONMENTS`, :func:`parlour.envs.make`), the JAX cores
(:data:`parlour.envs.jax_core.CORES`), the bots' side (:class:`parlour.baselines.spec.GameSpec` is keyed by it) and
the golden traces. A game of a user's own declares itself the same way (anything with the attributes of
:class:`Game`) and :func:`parlour.envs.register` adds it.

Nothing here imports a game's rules or env: a declaration names modules, imported on first use, so that
``import parlour.envs`` stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

#: A game's env ids are ``<name>_v<number>``.
VERSION_MARK = "_v"


@dataclass(frozen=True)
class Version:
    """One published version of a game's env."""

    #: The version number (``lady_alice_v2``: 2).
    number: int
    #: The versioned module, which exports ``env(**kwargs)`` and ``raw_env`` (PettingZoo's convention).
    module: str
    #: The module of its JAX core (``parlour.envs.jax_core.<game>``), or ``None``: the version has none.
    core: str | None = None


class Game(Protocol):
    """What Parlour reads of a game's declaration (:class:`GameDeclaration` is the one the four games use)."""

    @property
    def name(self) -> str: ...  # the package name: parlour.envs.<name>, parlour.baselines.<name>

    @property
    def title(self) -> str: ...

    @property
    def min_players(self) -> int: ...

    @property
    def max_players(self) -> int: ...

    @property
    def default_players(self) -> int: ...

    @property
    def versions(self) -> tuple[Version, ...]: ...  # newest first

    @property
    def variants(self) -> tuple[Mapping[str, Any], ...]: ...


@dataclass(frozen=True)
class GameDeclaration:
    """A game, declared once (see the module's docstring)."""

    #: The game's package name (``parlour.envs.<name>``; its bots are ``parlour.baselines.<name>``).
    name: str
    #: The game's title, as the box prints it.
    title: str
    #: The player counts the rulebook allows, and the env's default.
    min_players: int
    max_players: int
    default_players: int
    #: Every published version, newest first (older ones stay for the policies trained on them).
    versions: tuple[Version, ...]
    #: Rule-keyword sets that the conformance tests and golden traces play beside the defaults (at the default player
    #: count), the same for every version.
    variants: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or VERSION_MARK in self.name:
            raise ValueError(f"a game's name is a package name without {VERSION_MARK!r}, not {self.name!r}")
        if not 1 <= self.min_players <= self.default_players <= self.max_players:
            raise ValueError(
                f"{self.name}: players must satisfy 1 <= min ({self.min_players}) <= default "
                f"({self.default_players}) <= max ({self.max_players})"
            )
        numbers = [v.number for v in self.versions]
        if not numbers or numbers != sorted(set(numbers), reverse=True):
            raise ValueError(f"{self.name}: versions must be given newest first, each once, not {numbers}")
        # read-only, so that a declaration shared by every registry cannot be changed through one of them
        object.__setattr__(self, "variants", tuple(MappingProxyType(dict(v)) for v in self.variants))


def env_id(game: Game, version: Version) -> str:
    """``lady_alice`` and version 2 -> ``lady_alice_v2``."""
    return f"{game.name}{VERSION_MARK}{version.number}"


def env_ids(game: Game) -> tuple[str, ...]:
    """Every env id of ``game``, newest first."""
    return tuple(env_id(game, v) for v in game.versions)


def version_of(game: Game, env: str) -> Version:
    """The :class:`Version` of ``game`` whose env id is ``env`` (``ValueError`` naming the game's env ids)."""
    for v in game.versions:
        if env_id(game, v) == env:
            return v
    raise ValueError(f"{env!r} is not an env of {game.name}: expected one of {list(env_ids(game))}")


def factory(game: Game, env: str) -> Callable[..., Any]:
    """The ``env(**kwargs)`` factory of ``env`` (its versioned module, imported now)."""
    module = importlib.import_module(version_of(game, env).module)
    made: Callable[..., Any] = module.env
    return made


__all__ = ["VERSION_MARK", "Game", "GameDeclaration", "Version", "env_id", "env_ids", "factory", "version_of"]
