"""Lady Alice, version 1 (``lady_alice_v1``): the previous version of :mod:`parlour.envs.lady_alice_v2`.

It differs in one thing only: the round cap (``max_rounds``), which scores the game, ends the episode as a
PettingZoo **truncation** here, where v2 ends it as a termination (the project's ruling: a cap that scores the game
is part of it). Trainers that honour the flag bootstrapped a value on top of the final score at such an end. The
rules, observations, actions, rewards and deals are v2's. It stays registered so that the policies trained on it
keep a table that matches them, and its records keep replaying. New work should use ``lady_alice_v2``. Everything
below is v2's documentation, which holds for v1 but for that signal.

"""

from __future__ import annotations

from typing import Any

from parlour.envs import lady_alice_v2
from parlour.envs.core import env_factory
from parlour.envs.lady_alice.env import LadyAliceV1Env

raw_env = LadyAliceV1Env
env = env_factory(raw_env)
__doc__ = (__doc__ or "") + (lady_alice_v2.__doc__ or "")  # v2's, filled in already: the same layout

#: Rule variants that the conformance tests and golden traces play beside the defaults (as in v2).
VARIANTS: list[dict[str, Any]] = lady_alice_v2.VARIANTS


__all__ = ["VARIANTS", "env", "raw_env"]
