"""Lady Alice, version 0 (``lady_alice_v0``) as a batched, jittable core: :mod:`parlour.envs.jax_core.lady_alice`
with ``accusation_covers=False`` by default, as :mod:`parlour.envs.lady_alice_v0` is the v1 env with that default
(a zero-smile accusation covers nothing), and the round cap a truncation, as in v1. Everything else -- the state, the observations, the deal, what is
refused (nothing) -- is v2's core; see its docstring.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.jax_core import Core
from parlour.envs.jax_core.lady_alice import (
    DEAL_FIELDS,
    MAX_ACCUSATIONS,
    REFUSED,
    State,
    build,
    deal_number,
    from_rules,
)
from parlour.envs.lady_alice import rules

ENV_ID = "lady_alice_v0"
#: As v1's variants, with ``accusation_covers`` moved away from v0's default (``False``) instead.
VARIANTS: tuple[dict[str, Any], ...] = (
    {"no_notes": True, "accusation_covers": True, "start_seat": 2},
    {"reward": "score", "max_rounds": 3, "start_seat": 1},
    {"max_turns": 4, "max_rounds": 6, "accusation_covers": True, "reward": "score"},
)


def make_core(num_players: int = rules.DEFAULT_PLAYERS, *, max_turns: int | None = None, **options: Any) -> Core:
    """The core for ``num_players`` seats and the rule keywords ``options`` (those of ``lady_alice_v0``: as v1's, but
    ``accusation_covers`` defaults to ``False``)."""
    return build(ENV_ID, num_players, max_turns, {"accusation_covers": False, **options})


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
