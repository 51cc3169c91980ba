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


#: A training run of a few seconds: 256 steps in rollouts of 128 (2 envs × 64), a network of 8 units, a checkpoint and
#: a periodic evaluation (on one deal) every 128 steps.
TINY_RUN = (
    "train.total_timesteps=256",
    "train.n_envs=2",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "ppo.net_arch=[8]",
    "train.checkpoint_every=128",
    "train.eval_every=128",
    "eval.periodic_games=1",
)


@pytest.fixture
def tiny_run() -> tuple[str, ...]:
    """The overrides of :data:`TINY_RUN` (tests import only ``parlour.*``, so a shared constant comes as a fixture)."""
    return TINY_RUN


#: A tiny jitted run (``trainer: jax``) on ``configs/six_suspects/rl.yaml``: 8 games × 16 steps per update, two
#: minibatches, two periodic evaluations.
JAX_TINY = (
    "trainer=jax",
    "train.total_timesteps=512",
    "train.n_envs=8",
    "ppo.n_steps=16",
    "ppo.batch_size=64",
    "ppo.n_epochs=2",
    "ppo.net_arch=[16]",
    "train.checkpoint_every=128",
    "train.eval_every=256",
    "eval.periodic_games=1",
    "eval.games=2",
    "eval.opponents=[random]",
    "eval.reference=[]",
    "opponents=[random,six_suspects_heuristic]",
)


@pytest.fixture(scope="session")
def jax_tiny() -> tuple[str, ...]:
    """The overrides of :data:`JAX_TINY`."""
    return JAX_TINY


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
