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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With ``PARLOUR_TEST_EXTRAS=require`` (CI sets it), a test skipped because an optional dependency could not be
    imported fails the run: an extra that did not install must not pass as a skip."""
    import os

    if os.environ.get("PARLOUR_TEST_EXTRAS") != "require":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    missing = [
        str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else str(r.longrepr)
        for r in (reporter.stats.get("skipped", []) if reporter is not None else [])
        if "could not import" in str(r.longrepr)
    ]
    if missing:
        print(f"\nPARLOUR_TEST_EXTRAS=require: {len(missing)} skipped for a missing optional dependency: {missing[0]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
