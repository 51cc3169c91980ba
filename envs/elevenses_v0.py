"""Elevenses: The Guilty Party (``elevenses_v0``).

TABLE

Version history
---------------
- v0: first release.
"""

from __future__ import annotations

from typing import Any

from parlour.envs.elevenses.env import ElevensesEnv

raw_env = ElevensesEnv


def env(**kwargs: Any) -> ElevensesEnv:
    """Create the Elevenses AEC environment (see the module docstring for keywords)."""
    return ElevensesEnv(**kwargs)


__all__ = ["env", "raw_env"]
