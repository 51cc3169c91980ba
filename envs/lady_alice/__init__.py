"""Lady Alice: pure rules (:mod:`.rules`), the AEC environment (:mod:`.env`) and the game's declaration."""

from parlour.envs.declaration import GameDeclaration, Version

#: The game, declared once: every registry (envs, JAX cores, bots, golden traces) derives from it.
GAME = GameDeclaration(
    name="lady_alice",
    title="Lady Alice",
    min_players=3,
    max_players=5,
    default_players=4,
    versions=(
        Version(2, "parlour.envs.lady_alice_v2", core="parlour.envs.jax_core.lady_alice"),
        Version(1, "parlour.envs.lady_alice_v1", core="parlour.envs.jax_core.lady_alice_v1"),
        Version(0, "parlour.envs.lady_alice_v0", core="parlour.envs.jax_core.lady_alice_v0"),
    ),
    variants=({"no_notes": True}, {"reward": "score", "max_rounds": 3, "start_seat": 1}),
)

__all__ = ["GAME"]
