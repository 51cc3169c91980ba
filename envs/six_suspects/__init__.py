"""6 Suspects: pure rules (:mod:`.rules`), the AEC environment (:mod:`.env`) and the game's declaration."""

from parlour.envs.declaration import GameDeclaration, Version

#: The game, declared once: every registry (envs, JAX cores, bots, golden traces) derives from it.
GAME = GameDeclaration(
    name="six_suspects",
    title="6 Suspects",
    min_players=2,
    max_players=8,
    default_players=4,
    versions=(Version(0, "parlour.envs.six_suspects_v0", core="parlour.envs.jax_core.six_suspects"),),
    variants=(
        {"num_games": 3},
        {"reward": "expected", "start_seat": 2},
        {"reward": "win", "num_games": 2},
    ),
)

__all__ = ["GAME"]
