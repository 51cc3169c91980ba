"""Lady Alice, version 0 (``lady_alice_v0``): the first version of :mod:`parlour.envs.lady_alice_v2`.

It differs in two things: a false accusation whose verdict shows zero smiles does **not** cover its clues
(keyword ``accusation_covers``, default ``False`` here, ``True`` in v1 and v2), and, as in v1, the round cap ends the
episode as a truncation (v2: a termination). It stays registered so that the policies trained on it keep a table
that matches them, and its records keep replaying. New work should use ``lady_alice_v2``. Everything below is v2's
documentation, which holds for v0 but for those two.

"""

from __future__ import annotations

from typing import Any

from parlour.envs import lady_alice_v2
from parlour.envs.core import env_factory
from parlour.envs.lady_alice.env import LadyAliceV0Env

raw_env = LadyAliceV0Env
env = env_factory(raw_env)
__doc__ = (__doc__ or "") + (lady_alice_v2.__doc__ or "")  # v2's, filled in already: the same layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (as in v2).
VARIANTS: list[dict[str, Any]] = lady_alice_v2.VARIANTS


__all__ = ["VARIANTS", "env", "raw_env"]
