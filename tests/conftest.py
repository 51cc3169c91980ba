"""Shared fixtures. Tests import only ``parlour.*`` (pytest runs in importlib mode; see pyproject.toml)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from parlour.envs import make


@pytest.fixture
def six() -> Callable[..., Any]:
    """Factory: a reset 6 Suspects env (``six(num_players=3, seed=1, **kwargs)``)."""

    def factory(num_players: int = 4, seed: int = 0, **kwargs: Any) -> Any:
        env = make("six_suspects_v0", num_players=num_players, **kwargs)
        env.reset(seed=seed)
        return env

    return factory
