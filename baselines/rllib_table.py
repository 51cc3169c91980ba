"""RLlib's multi-agent env with named opponents: :class:`RLlibTableEnv` is
:class:`parlour.envs.interop.rllib.RLlibEnv` whose ``opponents`` may be bot names, shipped policy names or policy files,
resolved as every command does (:func:`parlour.baselines.resolve`). It lives on the bots' side so that the env
package depends on no bot (``pip install parlour[ray]``).

>>> from parlour.baselines.rllib_table import RLlibTableEnv
>>> env = RLlibTableEnv({"env": "six_suspects_v0", "opponents": ["self", "six_suspects_heuristic"]})
"""

from __future__ import annotations

from typing import Any

from parlour.baselines import resolve
from parlour.envs.interop.rllib import RLlibEnv


class RLlibTableEnv(RLlibEnv):
    """:class:`RLlibEnv` that resolves opponent names (bots, shipped policies, policy files)."""

    def resolve_opponent(self, entry: Any, table: tuple[str, int, dict[str, Any]], trust_pickle: bool) -> Any:
        if isinstance(entry, str):
            return resolve(entry, *table, trust_pickle=trust_pickle)
        return super().resolve_opponent(entry, table, trust_pickle)
