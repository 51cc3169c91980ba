"""Scale-out with Ray: sharded evaluation and matches give the single-process tables; seed sweeps run in parallel."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from parlour.baselines import resolve
from parlour.training.distributed import map_shards, shards

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("n", "workers"), [(10, 3), (2, 5), (7, 1), (0, 2), (9, 9)])
def test_shards_are_contiguous_near_equal_and_cover_every_item_once(n: int, workers: int) -> None:
    parts = shards(list(range(n)), workers)
    assert [x for p in parts for x in p] == list(range(n))
    assert all(parts) or n == 0
    assert len(parts) == max(1, min(workers, n)) and max(map(len, parts)) - min(map(len, parts)) <= 1


def test_one_worker_never_needs_ray() -> None:
    assert map_shards(lambda xs: [x * 2 for x in xs], [1, 2, 3], 1) == [2, 4, 6]
    with pytest.raises(ValueError, match="workers=0"):
        map_shards(lambda xs: list(xs), [1], 0)


@pytest.fixture(scope="module")
def ray_start() -> Any:
    """A local Ray started in this process after JAX has run here (where JAX is installed), as after the jitted
    trainer; yields Ray and the warnings the start raised."""
    import importlib.util
    import warnings

    ray = pytest.importorskip("ray")
    from parlour.training.distributed import start_ray

    if ray.is_initialized():  # another module's Ray in this worker: start this one ourselves
        ray.shutdown()
    if importlib.util.find_spec("jax") is not None:
        import jax.numpy as jnp

        jnp.zeros(3).block_until_ready()  # JAX's backend and its threads are up: a fork now is what JAX warns of
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start_ray()
    yield ray, [str(w.message) for w in caught]
    ray.shutdown()


@pytest.fixture(scope="module")
def ray_local(ray_start: Any) -> Any:
    return ray_start[0]


def test_starting_ray_after_jax_prints_no_fork_warning(ray_start: Any) -> None:
    """Ray's daemons start with a preexec_fn (an os.fork() of this process); JAX's deadlock warning about it does not
    apply (see ``start_ray``) and is not shown, and nothing else is silenced."""
    from parlour.training.distributed import FORK_WARNING

    assert not [m for m in ray_start[1] if re.search(FORK_WARNING, m)]
    with pytest.warns(RuntimeWarning, match=FORK_WARNING):  # the filter is what keeps it out: the text still matches
        warnings.warn(
            "os.fork() was called. os.fork() is incompatible with multithreaded code, and JAX is multithreaded, so "
            "this will likely lead to a deadlock.",
            RuntimeWarning,
            stacklevel=1,
        )


def test_sharded_evaluation_equals_the_single_process_one(ray_local: Any) -> None:
    from parlour.training.evaluation.matchups import run_evaluation

    name = "goes_to_eleven_v0"
    policies = [resolve(p, name, 4) for p in ("goes_to_eleven_heuristic", "goes_to_eleven_distilled")]
    opponents = [resolve(p, name, 4) for p in ("random", "goes_to_eleven_expert")]
    kwargs: dict[str, Any] = {"num_players": 4, "games": 7, "seed_set": "v1"}
    one = run_evaluation(name, policies, opponents, **kwargs)
    three = run_evaluation(name, policies, opponents, workers=3, **kwargs)
    assert json.dumps(one, sort_keys=True) == json.dumps(three, sort_keys=True)  # every number, interval and rating
    assert one["matchups"][0]["games"] == 28


def test_no_worker_has_the_current_folder_on_sys_path(ray_local: Any) -> None:
    """Ray adds the folder it is started from to every worker's sys.path: a stray module there would be imported in
    place of the real one. Workers run in the driver's folder (relative paths keep their meaning) but never search it."""
    import os
    import sys

    from parlour.training.distributed import run_remote

    seen = map_shards(lambda xs: [(os.getcwd(), list(sys.path)) for _ in xs], [1, 2], 2)
    seen += run_remote(lambda: (os.getcwd(), list(sys.path)), [()])
    for cwd, path in seen:
        assert cwd == os.getcwd()
        assert os.getcwd() not in path and "" not in path and "." not in path, path


def test_sharded_match_equals_the_single_process_one(ray_local: Any) -> None:
    from parlour.training.evaluation.match import run_match

    bots = ["elevenses_heuristic", "random", "elevenses_expert"]
    one = run_match("elevenses_v0", bots, num_players=4, games=9, seed=5)
    two = run_match("elevenses_v0", bots, num_players=4, games=9, seed=5, workers=2)
    assert one == two and sum(r["games"] for r in one) == 36


TINY = ["train.total_timesteps=400", "train.n_envs=2", "ppo.n_steps=100", "ppo.batch_size=100", "ppo.n_epochs=1",
        "train.checkpoint_every=200", "train.eval_every=0", "eval.games=1", "ppo.net_arch=[8]"]  # fmt: skip


def _check_seed_sweep(tmp_path: Path) -> None:
    from parlour.training.cli import main

    code = main(
        ["train", str(ROOT / "tests/data/six_suspects_base.yaml"), *TINY, "--seeds", "3,4", "--out", str(tmp_path)]
    )
    assert code == 0
    for k in (3, 4):
        spec = json.loads((tmp_path / f"seed{k}" / "policy.json").read_text())
        assert spec["training"]["seed"] == k and spec["training"]["timesteps"] >= 400
    assert main(["train", str(ROOT / "tests/data/six_suspects_base.yaml"), "--seeds", "1,1"]) == 2


def test_a_seed_sweep_trains_each_seed_in_its_own_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep's jobs, run one after another in this process (the Ray tasks themselves: the slow tier below)."""
    from parlour.training import distributed

    calls: list[int] = []

    def in_process(fn: Any, jobs: Any, *, address: str = "", cpus: float = 1) -> list[Any]:
        calls.append(len(jobs))
        return [fn(*job) for job in jobs]

    monkeypatch.setattr(distributed, "run_remote", in_process)
    _check_seed_sweep(tmp_path)
    assert calls == [2]  # one batch of tasks, a task a seed


@pytest.mark.slow
def test_a_seed_sweep_trains_each_seed_as_a_ray_task(ray_local: Any, tmp_path: Path) -> None:
    _check_seed_sweep(tmp_path)
