"""Shared fixtures. Tests import only ``parlour.*`` (pytest runs in importlib mode; see pyproject.toml)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import pytest

# The JAX tests compile a program per core, rule variant and trainer, and run it for a few steps: XLA's optimisation
# passes cost more than they save there (the JAX test files: 238 s -> 156 s on 2 cores). What is computed is the same;
# `JAX_DISABLE_MOST_OPTIMIZATIONS=0 pytest` tests the optimised programs. Set before any test module imports JAX
# (and in the subprocesses the CLI tests start, which inherit the environment).
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
if "jax" in sys.modules:  # a plugin imported it first: the variable is read at import
    sys.modules["jax"].config.update(
        "jax_disable_most_optimizations", os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] != "0"
    )

from parlour.envs import make
from parlour.training.cli.common import one_blas_thread

# pytest's workers share the cores: one BLAS thread each, as the command line runs (one_blas_thread says why)
one_blas_thread()


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


#: The longest test files (seconds of one worker, measured with `pytest --junitxml`), handed out first: the workers take
#: whole files (`--dist loadfile`), and a long file handed out last keeps one worker busy while the others wait.
LONGEST_FIRST = (
    "test_jax_cores.py",
    "test_jax_training.py",
    "test_run_control.py",
    "test_rl_track.py",
    "test_conformance.py",
    "test_baselines_table.py",
    "test_interop_rllib.py",
    "test_jax_eval.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
