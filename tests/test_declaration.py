"""A game is declared once (``GAME`` in ``parlour.envs.<game>``): the env registry, the JAX cores, the bots' specs,
the env classes, the rules' player counts and the golden traces all derive from it."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import pytest

from parlour import envs
from parlour.envs import ENVIRONMENTS, GAME_PACKAGES, GAMES, game_of, make
from parlour.envs.declaration import GameDeclaration, Version, env_id, env_ids, factory, version_of
from parlour.envs.golden import cases


def test_every_game_package_exports_the_declaration_the_registry_holds() -> None:
    assert list(GAMES) == list(GAME_PACKAGES)
    for name, game in GAMES.items():
        assert importlib.import_module(f"parlour.envs.{name}").GAME is game and game.name == name
    # the env registry is the declarations' versions, game by game, newest first
    assert list(ENVIRONMENTS) == [e for g in GAMES.values() for e in env_ids(g)]
    assert {env_id(g, v): v.module for g in GAMES.values() for v in g.versions} == ENVIRONMENTS


@pytest.mark.parametrize("env_name", sorted(ENVIRONMENTS))
def test_each_env_is_what_its_declaration_says(env_name: str) -> None:
    game = game_of(env_name)
    version = version_of(game, env_name)
    env = make(env_name)
    assert env.metadata["name"] == env_name and env.env_version == version.number
    assert env.unwrapped.declaration is game
    assert (env.min_players, env.max_players, env.num_players) == (
        game.min_players,
        game.max_players,
        game.default_players,
    )
    assert env.title.startswith(game.title)
    rules = importlib.import_module(f"parlour.envs.{game.name}.rules")
    assert (
        game.min_players,
        game.max_players,
        game.default_players,
    ) == (rules.MIN_PLAYERS, rules.MAX_PLAYERS, rules.DEFAULT_PLAYERS)
    for bad in (game.min_players - 1, game.max_players + 1):
        with pytest.raises(ValueError, match=rf"{game.name}: num_players={bad} is out of range"):
            make(env_name, num_players=bad)
    assert factory(game, env_name)().metadata["name"] == env_name
    # the golden traces: every player count, then the declared variants
    players = [{"num_players": n} for n in range(game.min_players, game.max_players + 1)]
    assert cases(env_name) == players + [dict(v) for v in game.variants]
    assert [dict(v) for v in game.variants] == importlib.import_module(version.module).VARIANTS


def test_the_cores_and_the_bots_specs_derive_from_the_declarations() -> None:
    pytest.importorskip("jax")
    from parlour.baselines import GAME_SPECS
    from parlour.envs.jax_core import CORES

    assert {env_id(g, v): v.core for g in GAMES.values() for v in g.versions if v.core is not None} == CORES
    assert set(GAME_SPECS) == set(GAMES)
    for name, spec in GAME_SPECS.items():
        assert spec.game is GAMES[name] and spec.env_ids == env_ids(GAMES[name])


def test_an_unknown_env_id_is_refused_naming_the_registered_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown environment 'chess_v0'; available: \['elevenses_v0'"):
        game_of("chess_v0")
    with pytest.raises(ValueError, match=r"'lady_alice_v9' is not an env of lady_alice: expected one of"):
        version_of(GAMES["lady_alice"], "lady_alice_v9")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "lady_alice_v3"}, "a game's name is a package name without '_v'"),
        ({"name": "two words"}, "a game's name is a package name"),
        ({"min_players": 5, "default_players": 4}, r"players must satisfy 1 <= min \(5\) <= default \(4\)"),
        ({"default_players": 9}, r"<= default \(9\) <= max \(5\)"),
        ({"versions": ()}, r"versions must be given newest first, each once, not \[\]"),
        (
            {"versions": (Version(0, "m"), Version(1, "m"))},
            r"versions must be given newest first, each once, not \[0, 1\]",
        ),
        ({"versions": (Version(1, "m"), Version(1, "m"))}, r"each once, not \[1, 1\]"),
    ],
)
def test_a_malformed_declaration_is_refused_naming_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(GAMES["lady_alice"], **change)


def test_a_declaration_cannot_be_changed_through_a_registry() -> None:
    game = GAMES["six_suspects"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.max_players = 9  # type: ignore[misc]
    with pytest.raises(TypeError):
        game.variants[0]["num_games"] = 5  # type: ignore[index]


def test_a_users_game_registers_with_its_declaration_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    for registry in ("GAMES", "ENVIRONMENTS", "_GAME_OF"):
        monkeypatch.setattr(envs, registry, dict(getattr(envs, registry)))
    # a "game" of one's own, here played by an existing env module (a user's names their own)
    mine = GameDeclaration(
        name="my_suspects",
        title="My Suspects",
        min_players=2,
        max_players=8,
        default_players=4,
        versions=(Version(0, "parlour.envs.six_suspects_v0"),),
    )
    envs.register(mine)
    assert (
        envs.game_of("my_suspects_v0") is mine and envs.ENVIRONMENTS["my_suspects_v0"] == "parlour.envs.six_suspects_v0"
    )
    assert envs.make("my_suspects_v0").num_players == 4
    with pytest.raises(ValueError, match="a game named 'my_suspects' is registered already"):
        envs.register(mine)
