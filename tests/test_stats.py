"""The statistics behind BASELINES.md: deal-clustered intervals and aggregates over training seeds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, trim_mean

from parlour.training.stats import (
    clustered_interval,
    per_cluster_means,
    probability_of_improvement,
    seed_aggregate,
    wilson_interval,
)


def width(ci: tuple[float, float]) -> float:
    return ci[1] - ci[0]


def test_perfectly_correlated_deals_count_as_one_trial_each() -> None:
    # Textbook case: every game of a deal has the same result, so 100 deals × 4 seats carry the information of 100
    # trials, not 400: the interval must be about twice as wide as one that takes the 400 games as independent, and
    # about as wide as a Wilson interval over the 100 deals.
    deals = np.repeat(np.arange(100), 4)
    wins = np.repeat(np.arange(100) % 2 == 0, 4).astype(float)
    ci = clustered_interval(per_cluster_means(wins, deals), proportion=True)
    assert 1.8 < width(ci) / width(wilson_interval(200, 400)) < 2.2
    by_deal = wilson_interval(50, 100)
    assert abs(ci[0] - by_deal[0]) < 0.02 and abs(ci[1] - by_deal[1]) < 0.02
    assert ci[0] < 0.5 < ci[1]


def test_independent_games_give_the_usual_width() -> None:
    rng = np.random.default_rng(3)
    wins = (rng.random((400, 4)) < 0.3).astype(float)
    ci = clustered_interval(wins.mean(axis=1), proportion=True)
    assert 0.85 < width(ci) / width(wilson_interval(wins.sum(), wins.size)) < 1.15


def test_width_follows_kishs_design_effect() -> None:
    # Var(clustered mean) / Var(simple random sample) = 1 + (m - 1) * rho for clusters of m with intra-class
    # correlation rho (Kish, Survey Sampling, 1965): the interval's width grows by its square root.
    rng = np.random.default_rng(7)
    m, n = 4, 600
    p = rng.beta(1.2, 2.0, n)  # deal difficulty: correlated games within a deal
    wins = (rng.random((n, m)) < p[:, None]).astype(float)
    # ANOVA estimator of the intra-class correlation
    msb = m * wins.mean(1).var(ddof=1)
    msw = wins.var(axis=1, ddof=1).mean()
    rho = (msb - msw) / (msb + (m - 1) * msw)
    assert rho > 0.1
    ratio = width(clustered_interval(wins.mean(1), proportion=True)) / width(wilson_interval(wins.sum(), wins.size))
    assert ratio**2 == pytest.approx(1 + (m - 1) * rho, rel=0.15)


def test_degenerate_samples() -> None:
    # every deal won: no bootstrap spread, so the Wilson interval over deals (not a zero-width one)
    assert clustered_interval(np.ones(50), proportion=True) == wilson_interval(50, 50)
    assert clustered_interval(np.full(30, 0.25), proportion=False) == (0.25, 0.25)
    assert clustered_interval([], proportion=True) == (0.0, 1.0)


def test_per_cluster_means_keep_the_order_of_first_appearance() -> None:
    assert per_cluster_means([1, 0, 1, 1, 0, 0], [5, 5, 2, 2, 9, 9]).tolist() == [0.5, 1.0, 0.0]


def test_intervals_are_reproducible() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(80)
    assert clustered_interval(x, proportion=False) == clustered_interval(x.copy(), proportion=False)


def test_probability_of_improvement_is_mann_whitney_over_runs() -> None:
    rng = np.random.default_rng(11)
    x, y = rng.random((5, 3)), rng.random((4, 3)) - 0.1
    expected = np.mean([mannwhitneyu(x[:, t], y[:, t]).statistic / 20 for t in range(3)])
    out = probability_of_improvement(x, y)
    assert out["value"] == pytest.approx(expected)
    assert out["ci"][0] <= out["value"] <= out["ci"][1]
    assert probability_of_improvement(y, x)["value"] == pytest.approx(1 - expected)
    same = probability_of_improvement(x, x)
    assert same["value"] == pytest.approx(0.5)
    # a bot is one run: held fixed, the interval comes from the seeds alone
    bot = np.array([[0.5, 0.5, 0.5]])
    assert probability_of_improvement(np.full((3, 3), 0.6), bot) == {"value": 1.0, "ci": [1.0, 1.0]}


def test_seed_aggregate_is_the_iqm_and_mean_with_stratified_intervals() -> None:
    scores = np.array([[0.50, 0.40, 0.30], [0.55, 0.45, 0.28], [0.52, 0.41, 0.35], [0.60, 0.20, 0.31]])
    out = seed_aggregate(scores)
    assert out["iqm"]["value"] == pytest.approx(trim_mean(scores.ravel(), 0.25))
    assert out["mean"]["value"] == pytest.approx(scores.mean())
    for key in ("iqm", "mean"):
        lo, hi = out[key]["ci"]
        assert lo < out[key]["value"] < hi
    # the stratified bootstrap never mixes tables: a table's scores resampled keep the between-table spread out
    assert width(out["mean"]["ci"]) < 0.1
    same = seed_aggregate(np.full((3, 2), 0.4))
    assert same["iqm"] == {"value": pytest.approx(0.4), "ci": [pytest.approx(0.4), pytest.approx(0.4)]}
    with pytest.raises(ValueError, match="runs × tasks"):
        seed_aggregate(np.array([0.1, 0.2]))


@pytest.mark.parametrize("p", [0.1, 0.3])
def test_the_deal_clustered_interval_covers_at_the_fewest_deals_it_is_printed_for(p: float) -> None:
    """The paired per-deal difference of two policies as good as each other (true difference 0), each deal's win
    chances drawn per deal (the deal effect) and 4 seated games a deal: at ``MIN_DEALS_FOR_INTERVAL`` deals the
    printed 95% interval covers close to what it says (300 samples give about ±0.013 of noise)."""
    from parlour.training.stats import MIN_DEALS_FOR_INTERVAL, clustered_interval

    rng = np.random.default_rng(2)
    reps, kappa, hits = 300, 2.0, 0
    for _ in range(reps):
        qa, qb = rng.beta(p * kappa, (1 - p) * kappa, size=(2, MIN_DEALS_FOR_INTERVAL))
        x = rng.binomial(4, qa) / 4 - rng.binomial(4, qb) / 4
        lo, hi = clustered_interval(x, proportion=False)
        hits += lo <= 0 <= hi
    assert hits / reps >= 0.87
