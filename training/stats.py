"""Statistics for results a paper can cite: deal-clustered intervals, and aggregates over training seeds.

**Games that share a deal are not independent.** An evaluation plays every deal once with the policy in each
seat, so the games of one deal share their cards; a policy's results on one deal are correlated. Intervals here
therefore resample whole deals: :func:`clustered_interval` is SciPy's bias-corrected and accelerated (BCa)
bootstrap of the mean over per-deal means (every deal holds the same number of games, so the mean of the deal
means is the win rate). When every deal gives the same value the bootstrap has no spread; a win rate then gets the
Wilson interval over deals (each deal one trial), the interval a single game per deal would give.

**Training seeds are aggregated, not picked.** :func:`seed_aggregate` gives the mean and the interquartile mean
(IQM, SciPy's ``trim_mean`` at 25%) of scores over runs (training seeds) × tasks (evaluation tables), with 95%
percentile intervals from a stratified bootstrap: SciPy's multi-sample ``bootstrap`` resamples the runs of each
task independently, as Agarwal et al. (2021, "Deep RL at the edge of the statistical precipice") and their
``rliable`` do. :func:`probability_of_improvement` is their P(X > Y): the Mann-Whitney U statistic over runs,
averaged over tasks, with the same stratified bootstrap interval.

Every bootstrap draws from a fixed seed (:data:`BOOTSTRAP_SEED`), so a table is reproduced to the digit.

**A cell's interval is Wilson's with a design effect** (:func:`cell_interval`, the method of every win-rate cell):
the games of a deal are clustered, so the effective number of games is ``n / deff`` with Kish's design effect
``deff = m * Var(deal means) / (p (1 - p))`` (``m`` games a deal), estimated with one pseudo-deal of half wins added
so that it exists at 0 and 1, and kept in ``[1, m]``; the Wilson score interval at that size is monotone in the wins
and sensible at 0 and 1, where a bootstrap over deals is not (0/200 wins gave an upper bound of 0.071, 1/200 0.025).
``tests/test_stats.py`` simulates its coverage over win rates and intra-deal correlations.

**Training seeds: a t-interval over seeds.** :func:`seed_interval` is the Student-t interval of the mean over
training seeds (``seeds - 1`` degrees of freedom), valid at 3 seeds under roughly normal seed-to-seed variation,
where a bootstrap over 3 seeds covers about 75%; simulated at the published seed counts in ``tests/test_stats.py``.
Cross-table aggregates are means of **normalised** scores, ``(x - random) / (expert - random)`` at each table
(:func:`normalised`), so that every table weighs the same whatever its range. :func:`paired_comparison` says whether
a family is level with, above or below a bot at a table: the per-deal difference (the same deals), its spread over
deals -- the bot's noise included -- and over seeds.

**Too few deals get no interval.** Below :data:`MIN_DEALS_FOR_INTERVAL` deals a bootstrap over deals under-covers
(a handful of deals with discrete win fractions): a quick partial run (``parlour benchmark --deals N``) then prints its
figures without intervals and says why. ``tests/test_stats.py`` simulates the coverage at that size.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: The fewest deals a deal-clustered interval is printed for: ``tests/test_stats.py`` simulates the paired
#: difference's coverage at this many deals and requires at least 0.87 of the nominal 0.95.
MIN_DEALS_FOR_INTERVAL = 30

#: z for a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson_interval(successes: float, trials: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (well-behaved at 0 and 1 and for small samples); ``trials`` may be an
    effective sample size (:func:`cell_interval`)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


#: The method sentence printed beside win-rate cells.
CELL_METHOD = (
    "95% Wilson intervals at the effective number of games (games / design effect, Kish's, estimated from the spread "
    "of the per-deal win rates with one pseudo-deal of half wins; the games of a deal are clustered)"
)
#: The method sentence printed beside aggregates over training seeds.
SEED_T_METHOD = "mean over training seeds with a 95% Student-t interval (seeds - 1 degrees of freedom)"
#: The method sentence printed beside normalised cross-table aggregates.
NORMALISED_METHOD = (
    "normalised score (x - random) / (expert - random) at each table (0: the random bot's win rate there, 1: the "
    "expert's), averaged over tables per seed, then over seeds with a 95% Student-t interval"
)
#: The method sentence printed beside level / above / below.
PAIRED_METHOD = (
    "paired per-deal difference from the bot on the same deals; 95% interval with the deal-to-deal spread (the "
    "bot's noise included) and the seed-to-seed spread added in quadrature, Welch-Satterthwaite degrees of freedom"
)


def cell_interval(deal_wins: Sequence[float] | np.ndarray, games_per_deal: int, z: float = Z95) -> tuple[float, float]:
    """95% interval of a win rate from its per-deal wins (``deal_wins[j]`` of ``games_per_deal`` games on deal
    ``j``): Wilson's score interval at the effective sample size ``n / deff`` (see the module docstring)."""
    x = np.asarray(deal_wins, float)
    m = int(games_per_deal)
    if x.size == 0 or m < 1:
        return (0.0, 1.0)
    if np.any(x < 0) or np.any(x > m):
        raise ValueError(f"cell_interval: per-deal wins must lie in [0, {m}]")
    n = x.size * m
    p = float(x.sum()) / n
    deff = 1.0
    if m > 1:
        # one pseudo-deal of half wins: the design effect exists at 0 and 1 (no deal-to-deal spread to read there)
        y = np.append(x / m, 0.5)
        q = float(y.mean())
        deff = min(max(m * float(np.var(y, ddof=1)) / (q * (1 - q)), 1.0), float(m))
    effective = n / deff
    return wilson_interval(p * effective, effective, z)


def _t(df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + CONFIDENCE / 2, df))


def seed_interval(values: Sequence[float] | np.ndarray, bounds: tuple[float, float] | None = None) -> dict[str, Any]:
    """Mean of ``values`` (one per training seed) with its 95% Student-t interval, and the lowest and highest seed.
    One seed: no interval (the point). ``bounds``: the range the mean cannot leave (``(0, 1)`` for win rates), to
    which the interval is clipped (a clipped interval covers whatever the original covered)."""
    x = np.asarray(values, float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("seed_interval: expected one value per training seed")
    m = float(x.mean())
    if x.size == 1:
        ci = [m, m]
    else:
        half = _t(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
        ci = [m - half, m + half]
    if bounds is not None:
        ci = [max(ci[0], bounds[0]), min(ci[1], bounds[1])]
    return {"seeds": int(x.size), "value": m, "ci": ci, "min": float(x.min()), "max": float(x.max())}


def normalised(x: np.ndarray, random: np.ndarray, expert: np.ndarray) -> np.ndarray:
    """``(x - random) / (expert - random)`` per table (the last axis): 0 is the random bot's win rate at that table,
    1 the expert's. A table where the two are within 0.05 cannot be normalised (``ValueError`` naming it)."""
    r, e = np.asarray(random, float), np.asarray(expert, float)
    span = e - r
    if np.any(np.abs(span) < 0.05):
        raise ValueError(f"normalised: the expert's and random's win rates are too close at a table ({e} vs {r})")
    return (np.asarray(x, float) - r) / span


def paired_comparison(
    policy_deal_wins: Sequence[Sequence[float]], bot_deal_wins: Sequence[float], games_per_deal: int
) -> dict[str, Any]:
    """How a family (``policy_deal_wins[seed][deal]``) stands against a bot (``bot_deal_wins[deal]``) at one table,
    on the same deals: the mean difference of win rates and its 95% interval (see :data:`PAIRED_METHOD`), and
    ``standing``: ``"above"``/``"below"`` when the interval excludes 0, else ``"level"``."""
    p = np.asarray(policy_deal_wins, float) / games_per_deal
    b = np.asarray(bot_deal_wins, float) / games_per_deal
    if p.ndim != 2 or p.shape[1] != b.shape[0] or b.shape[0] < 2:
        raise ValueError("paired_comparison: expected seeds × deals wins and the bot's wins on the same deals")
    d = p - b[None, :]
    diff = float(d.mean())
    seeds, deals = d.shape
    var_deal = float(np.var(d.mean(axis=0), ddof=1)) / deals  # deal-to-deal: the bot's games and the policy's
    var_seed = float(np.var(d.mean(axis=1), ddof=1)) / seeds if seeds > 1 else 0.0
    se2 = var_deal + var_seed
    if se2 == 0:
        ci = [diff, diff]
    else:
        terms = var_deal**2 / (deals - 1) + (var_seed**2 / (seeds - 1) if seeds > 1 else 0.0)
        half = _t(se2**2 / terms) * math.sqrt(se2)
        ci = [max(diff - half, -1.0), min(diff + half, 1.0)]  # a difference of win rates lies in [-1, 1]
    standing = "above" if ci[0] > 0 else "below" if ci[1] < 0 else "level"
    return {"difference": diff, "ci": ci, "standing": standing}


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal-approximation 95% interval ``(mean, low, high)`` (sample standard deviation)."""
    x = np.asarray(values, float)
    if len(x) == 0:
        return (0.0, 0.0, 0.0)
    m = float(x.mean())
    if len(x) == 1:
        return (m, m, m)
    half = z * float(x.std(ddof=1)) / math.sqrt(len(x))
    return (m, m - half, m + half)


#: Two-sided confidence level of every interval.
CONFIDENCE = 0.95
#: Bootstrap resamples for deal-clustered intervals and for seed aggregates.
RESAMPLES = 9999
#: Seed of every bootstrap's generator: the same data give the same interval.
BOOTSTRAP_SEED = 0
#: The method sentence printed beside clustered intervals.
CLUSTER_METHOD = "95% BCa bootstrap over deals (each deal's games resampled together), 9,999 resamples"
#: The method sentence printed beside seed aggregates.
SEED_METHOD = "95% percentile intervals from a stratified bootstrap over training seeds (per table), 9,999 resamples"


def _bootstrap(
    samples: Sequence[np.ndarray], statistic: Callable[..., Any], method: str, vectorized: bool = False
) -> tuple[float, float]:
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate resamples warn; the caller checks for NaN
        res = bootstrap(
            tuple(samples),
            statistic,
            confidence_level=CONFIDENCE,
            n_resamples=RESAMPLES,
            method=method,
            vectorized=vectorized,
            rng=np.random.default_rng(BOOTSTRAP_SEED),
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def format_ci(ci: Sequence[float]) -> str:
    """An interval as the tables print it: ``0.123–0.456``."""
    return f"{ci[0]:.3f}–{ci[1]:.3f}"


def clustered_interval(cluster_means: Sequence[float] | np.ndarray, *, proportion: bool) -> tuple[float, float]:
    """95% interval of the mean of ``cluster_means`` (one value per deal: the mean of its games), resampling deals.

    ``proportion``: the values are win fractions, so a sample in which every deal gives the same value gets the
    Wilson interval over deals rather than a zero-width one.
    """
    x = np.asarray(cluster_means, float)
    if len(x) == 0:
        return (0.0, 1.0) if proportion else (0.0, 0.0)
    if np.all(x == x[0]) or len(x) < 3:
        if proportion:
            return wilson_interval(float(x.sum()), len(x))
        return (float(x.mean()), float(x.mean()))
    lo, hi = _bootstrap([x], np.mean, "BCa", vectorized=True)
    if not (np.isfinite(lo) and np.isfinite(hi)):  # BCa's acceleration is undefined for some samples
        lo, hi = _bootstrap([x], np.mean, "percentile", vectorized=True)
    return lo, hi


def per_cluster_means(values: Sequence[float], clusters: Sequence[int]) -> np.ndarray:
    """The mean of ``values`` within each cluster id, in order of first appearance."""
    v, c = np.asarray(values, float), np.asarray(clusters)
    _, first, inverse = np.unique(c, return_index=True, return_inverse=True)
    sums = np.bincount(inverse, weights=v)
    counts = np.bincount(inverse)
    means: np.ndarray = (sums / counts)[np.argsort(first)]
    return means


def iqm(x: np.ndarray, axis: int | None = None) -> Any:
    """Interquartile mean: the mean of the middle 50% (SciPy's ``trim_mean`` cutting 25% at each end)."""
    from scipy.stats import trim_mean

    return trim_mean(x if axis is not None else np.ravel(x), 0.25, axis=axis if axis is not None else 0)


def seed_aggregate(scores: np.ndarray) -> dict[str, Any]:
    """Mean and IQM of ``scores`` (runs × tasks: training seeds × evaluation tables) with stratified bootstrap
    95% intervals (each task's runs resampled independently)."""
    s = np.asarray(scores, float)
    if s.ndim != 2 or s.size == 0:
        raise ValueError("seed_aggregate: scores must be a non-empty matrix of runs × tasks")
    tasks = [s[:, t] for t in range(s.shape[1])]
    out: dict[str, Any] = {"runs": s.shape[0], "tasks": s.shape[1]}
    for name, func in (("mean", np.mean), ("iqm", iqm)):
        point = float(func(np.ravel(s), axis=0))

        def statistic(*columns: np.ndarray, axis: int = -1, f: Callable[..., Any] = func) -> Any:
            return f(np.concatenate(columns, axis=axis), axis=axis)

        if s.shape[0] < 2 or np.all(s == s[0]):
            ci = (point, point)
        else:
            ci = _bootstrap(tasks, statistic, "percentile", vectorized=True)
        out[name] = {"value": point, "ci": list(ci)}
    return out


def _poi(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], axis: int = -1) -> Any:
    """Mean over tasks of P(a run of X beats a run of Y), ties half: the Mann-Whitney U statistic over
    ``len(x) * len(y)`` (equal to SciPy's ``mannwhitneyu(x, y).statistic / (nx * ny)``; tested), vectorized
    over leading batch axes for the bootstrap."""
    probs = []
    for x, y in zip(xs, ys, strict=True):
        a, b = np.asarray(x)[..., :, None], np.asarray(y)[..., None, :]
        probs.append(((a > b) + 0.5 * (a == b)).mean(axis=(-2, -1)))
    return np.mean(probs, axis=0)


def probability_of_improvement(scores_x: np.ndarray, scores_y: np.ndarray) -> dict[str, Any]:
    """P(X > Y): for each task, the chance that a run of X scores above a run of Y (ties count half), averaged
    over tasks; with a stratified bootstrap 95% interval. ``scores_x`` and ``scores_y`` are runs × tasks; a side
    with one run is held fixed (it shows no run-to-run spread to resample)."""
    x, y = np.asarray(scores_x, float), np.asarray(scores_y, float)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError("probability_of_improvement: both score matrices must be runs × the same tasks")
    k = x.shape[1]
    xs, ys = [x[:, t] for t in range(k)], [y[:, t] for t in range(k)]
    point = float(_poi(xs, ys))
    move_x, move_y = x.shape[0] > 1, y.shape[0] > 1
    if not (move_x or move_y):
        return {"value": point, "ci": [point, point]}

    def statistic(*columns: np.ndarray, axis: int = -1) -> Any:
        cx = list(columns[:k]) if move_x else xs
        cy = list(columns[-k:]) if move_y else ys
        return _poi(cx, cy)

    lo, hi = _bootstrap([*(xs if move_x else []), *(ys if move_y else [])], statistic, "percentile", vectorized=True)
    return {"value": point, "ci": [lo, hi]}
