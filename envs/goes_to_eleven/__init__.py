"""This Game Goes to Eleven: pure rules (:mod:`.rules`), the AEC environment (:mod:`.env`) and the game's declaration."""

from parlour.envs.declaration import GameDeclaration, Version

#: The game, declared once: every registry (envs, JAX cores, bots, golden traces) derives from it.
GAME = GameDeclaration(
    name="goes_to_eleven",
    title="This Game Goes to Eleven",
    min_players=2,
    max_players=6,
    default_players=4,
    versions=(Version(0, "parlour.envs.goes_to_eleven_v0", core="parlour.envs.jax_core.goes_to_eleven"),),
    variants=({"pick_on_me": True}, {"reward": "margin", "max_piles": 4, "start_seat": 1}),
)

__all__ = ["GAME"]
