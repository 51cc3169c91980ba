"""Scale-out with Ray (``pip install parlour[ray]``): shards of independent games, and runs, on Ray workers.

Evaluation (``parlour evaluate``, ``benchmark``, ``baselines``) and ``parlour match`` play games whose every random
draw is seeded by the game's own index, so splitting the games into contiguous shards, playing each shard on a
worker and joining the results in order gives exactly the tables of a single process (a test checks it).
``workers=1`` never imports Ray. A local Ray is started in this process unless ``address`` names a cluster to join
(``auto``, ``ray://head:10001``…); on a cluster, the policies are shipped to the workers with the task, and game
records (``--records``) are written on the machine that played them.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: JAX's warning at every os.fork() of a process that has used it (a regular expression: ``warnings`` matches it).
FORK_WARNING = (
    r"os\.fork\(\) was called\. os\.fork\(\) is incompatible with multithreaded code, and JAX is multithreaded"
)


def start_ray(address: str = "") -> None:
    """Join the Ray cluster at ``address``, or start a local Ray in this process (once)."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"Ray is not installed ({exc}): pip install 'parlour[ray]'") from None
    if ray.is_initialized():
        return
    here = os.getcwd()
    # Ray puts the folder it is started from on the workers' sys.path: start it from an empty one of our own
    os.chdir(tempfile.mkdtemp(prefix="parlour-ray-"))
    try:
        with warnings.catch_warnings():
            # Ray starts its daemons with a ``preexec_fn`` (block SIGINT, die with the parent), so each start is an
            # os.fork() of this process, and JAX, once used here (the jitted trainer, the JAX evaluation), warns that
            # a fork of its threads may deadlock. The child runs only those two calls (modules already loaded, no
            # JAX code, no lock a JAX thread holds) and then execs the daemon: the warning does not apply.
            warnings.filterwarnings("ignore", message=FORK_WARNING, category=RuntimeWarning)
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    finally:
        os.chdir(here)


def _in_folder(folder: str, fn: Callable[..., R], *args: Any) -> R:
    """Run ``fn(*args)`` in ``folder`` (the driver's current folder, where it exists on this machine): the task's code
    is loaded by then, so the folder is never searched for modules, and relative paths mean what they meant to the
    user."""
    if os.path.isdir(folder):
        os.chdir(folder)
    return fn(*args)


def _run_shard(folder: str, fn: Callable[[Sequence[Any]], list[Any]], shard: Sequence[Any]) -> list[Any]:
    return _in_folder(folder, fn, shard)


def shards(items: Sequence[T], workers: int) -> list[list[T]]:
    """``items`` in at most ``workers`` contiguous, near-equal shards (in order; none empty)."""
    n = len(items)
    k = max(1, min(workers, n))
    bounds = [n * i // k for i in range(k + 1)]
    return [list(items[bounds[i] : bounds[i + 1]]) for i in range(k)]


def map_shards(
    fn: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    workers: int = 1,
    *,
    address: str = "",
    progress: Any = None,
    per_item: int = 1,
) -> list[R]:
    """``fn`` over ``items`` in shards on ``workers`` Ray workers (one process: ``fn(items)``); the results are
    joined in the order of ``items``. ``progress`` (a tqdm bar) advances ``per_item`` per item as shards finish."""
    if workers < 1:
        raise ValueError(f"workers={workers} is out of range: expected an integer >= 1")
    if workers == 1 or len(items) <= 1:
        return fn(items)
    start_ray(address)
    import ray

    remote = ray.remote(num_cpus=1)(_run_shard)
    parts = shards(items, workers)
    futures = [remote.remote(os.getcwd(), fn, part) for part in parts]
    sizes = dict(zip(futures, (len(p) for p in parts), strict=True))
    pending = list(futures)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        if progress is not None:
            progress.update(sizes[done[0]] * per_item)
    out: list[R] = []
    for result in ray.get(futures):
        out.extend(result)
    return out


def run_remote(fn: Callable[..., R], jobs: Sequence[tuple[Any, ...]], *, address: str = "", cpus: float = 1) -> list[R]:
    """``fn(*job)`` for every job, in parallel as Ray tasks of ``cpus`` CPUs each; results in the jobs' order."""
    start_ray(address)
    import ray

    remote = ray.remote(num_cpus=cpus)(_in_folder)
    return list(ray.get([remote.remote(os.getcwd(), fn, *job) for job in jobs]))
