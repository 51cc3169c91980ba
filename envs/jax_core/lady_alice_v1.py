"""Lady Alice, version 1 (``lady_alice_v1``) as a batched, jittable core: :mod:`parlour.envs.jax_core.lady_alice`
with the round cap, which scores the game, signalled as a truncation, as :mod:`parlour.envs.lady_alice_v1` signals it
(``lady_alice_v2``: a termination). Everything else -- the state, the observations, the deal, the rewards, what is
refused (nothing) -- is v2's core; see its docstring.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.jax_core import Core
from parlour.envs.jax_core.lady_alice import (
    DEAL_FIELDS,
    MAX_ACCUSATIONS,
    REFUSED,
    VARIANTS,
    State,
    build,
    deal_number,
    from_rules,
)
from parlour.envs.lady_alice import rules

ENV_ID = "lady_alice_v1"


def make_core(num_players: int = rules.DEFAULT_PLAYERS, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``lady_alice_v1``: v2's)."""
    return build(ENV_ID, num_players, max_turns, options)


__all__ = [
    "DEAL_FIELDS",
    "ENV_ID",
    "MAX_ACCUSATIONS",
    "REFUSED",
    "VARIANTS",
    "State",
    "deal_number",
    "from_rules",
    "make_core",
]
