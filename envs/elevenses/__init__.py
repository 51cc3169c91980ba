"""Elevenses: The Guilty Party: pure rules (:mod:`.rules`), the AEC environment (:mod:`.env`) and the game's
declaration."""

from parlour.envs.declaration import GameDeclaration, Version

#: The game, declared once: every registry (envs, JAX cores, bots, golden traces) derives from it.
GAME = GameDeclaration(
    name="elevenses",
    title="Elevenses: The Guilty Party",
    min_players=2,
    max_players=5,
    default_players=4,
    versions=(Version(0, "parlour.envs.elevenses_v0", core="parlour.envs.jax_core.elevenses"),),
    variants=({"start_seat": 3},),
)

__all__ = ["GAME"]
