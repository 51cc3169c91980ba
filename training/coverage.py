"""Simulated coverage of the interval methods BASELINES.md prints (issue 38: "statistics that cover").

``python -m parlour.training.coverage`` prints, at the sizes the tables are published at, how often each method's
95% interval holds the truth it estimates, over populations that stress it (win rates near 0 and 1, deals whose
games are strongly alike, skewed and flat seed-to-seed spreads). Every draw comes from a seeded
``numpy.random.Generator``, so the same command prints the same table. ``tests/test_stats.py`` asserts floors on the
same simulations, and docs/baselines.md shows the table this command prints.

- **Cells** (:func:`~parlour.training.stats.cell_interval`, Wilson's at the effective number of games): 50 deals ×
  4 seats, a deal's games sharing a win chance drawn per deal (beta-binomial, intra-deal correlation ``icc``).
- **Seeds** (:func:`~parlour.training.stats.seed_interval`, Student-t over seeds) at 3 and 5 seeds, beside the
  stratified bootstrap over seeds it replaced (:func:`~parlour.training.stats.seed_aggregate`).
- **Paired comparisons** (:func:`~parlour.training.stats.paired_comparison`): a family and a bot on the same 50 deals
  × 4 seats, deal difficulty shared (a probit model), the family's seeds spread by ``seed_sd``; the truth is the
  population difference over deals and training seeds.
- **Per-deal differences** (:func:`~parlour.training.stats.clustered_interval`): two equal policies at the fewest
  deals an interval is printed for (:data:`~parlour.training.stats.MIN_DEALS_FOR_INTERVAL`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import numpy as np

#: Seed-to-seed spreads the seed interval is checked over: a draw of ``k`` seeds' scores, and its true mean.
SEED_SPREADS: dict[str, tuple[Callable[[np.random.Generator, int], np.ndarray], float]] = {
    "normal (mean 0.4, sd 0.1)": (lambda rng, k: rng.normal(0.4, 0.1, k), 0.4),
    "skewed (beta 2, 5)": (lambda rng, k: rng.beta(2, 5, k), 2 / 7),
    "flat (uniform 0-1)": (lambda rng, k: rng.random(k), 0.5),
}
#: The published sizes: seeds of the distilled track and of the rl track; deals × seats of a benchmark cell.
SEED_COUNTS, DEALS, SEATS = (3, 5), 50, 4
CELL_RATES, CELL_ICCS = (0.02, 0.1, 0.3, 0.5, 0.9, 0.98), (0.0, 0.3, 0.8)
PAIRED_CASES = ((3, 0.0), (3, 0.8), (5, 0.3))


def beta_binomial_deals(rng: np.random.Generator, p: float, icc: float, deals: int, m: int) -> np.ndarray:
    """Per-deal wins of ``m`` games a deal whose win chance is drawn per deal with intra-deal correlation ``icc``."""
    if icc == 0:
        return rng.binomial(m, np.full(deals, p))
    a, b = p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc
    return rng.binomial(m, rng.beta(a, b, deals))


def cell_coverage(p: float, icc: float, reps: int, rng: np.random.Generator) -> float:
    """How often the cell interval of ``DEALS`` × ``SEATS`` games holds the true win rate ``p``."""
    from parlour.training.stats import cell_interval

    hits = 0
    for _ in range(reps):
        lo, hi = cell_interval(beta_binomial_deals(rng, p, icc, DEALS, SEATS), SEATS)
        hits += lo <= p <= hi
    return hits / reps


def seed_coverage(seeds: int, spread: str, reps: int, rng: np.random.Generator) -> float:
    """How often the t-interval over ``seeds`` seeds holds the true mean of the seed-to-seed ``spread``."""
    from parlour.training.stats import seed_interval

    draw, truth = SEED_SPREADS[spread]
    hits = 0
    for _ in range(reps):
        lo, hi = seed_interval(draw(rng, seeds))["ci"]
        hits += lo <= truth <= hi
    return hits / reps


def bootstrap_seed_coverage(seeds: int, reps: int, rng: np.random.Generator) -> float:
    """The same for the stratified bootstrap over seeds that the t-interval replaced (normal spread)."""
    from parlour.training.stats import seed_aggregate

    hits = 0
    for _ in range(reps):
        lo, hi = seed_aggregate(rng.normal(0.4, 0.1, (seeds, 1)))["mean"]["ci"]
        hits += lo <= 0.4 <= hi
    return hits / reps


def paired_coverage(seeds: int, seed_sd: float, reps: int, rng: np.random.Generator) -> float:
    """How often the paired comparison of a family of ``seeds`` seeds with a bot holds the population difference."""
    from scipy.stats import norm

    from parlour.training.stats import paired_comparison

    big_u, big_a = rng.normal(0, 1, 100_000), rng.normal(0, seed_sd, 400)
    truth = norm.cdf(0.2 + big_a[:, None] + big_u[None, :1000]).mean() - norm.cdf(big_u).mean()
    hits = 0
    for _ in range(reps):
        u, a = rng.normal(0, 1, DEALS), rng.normal(0, seed_sd, seeds)
        policy = rng.binomial(SEATS, norm.cdf(0.2 + a[:, None] + u[None, :]))
        bot = rng.binomial(SEATS, norm.cdf(u))
        lo, hi = paired_comparison(policy, bot, SEATS)["ci"]
        hits += lo <= truth <= hi
    return hits / reps


def difference_coverage(p: float, reps: int, rng: np.random.Generator) -> float:
    """How often the per-deal difference of two equal policies (each deal's win chances drawn per deal, ``SEATS``
    games a deal) at ``MIN_DEALS_FOR_INTERVAL`` deals holds 0."""
    from parlour.training.stats import MIN_DEALS_FOR_INTERVAL, clustered_interval

    kappa, hits = 2.0, 0
    for _ in range(reps):
        qa, qb = rng.beta(p * kappa, (1 - p) * kappa, size=(2, MIN_DEALS_FOR_INTERVAL))
        x = rng.binomial(SEATS, qa) / SEATS - rng.binomial(SEATS, qb) / SEATS
        lo, hi = clustered_interval(x, proportion=False)
        hits += lo <= 0 <= hi
    return hits / reps


def _table(head: Sequence[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def report(reps: int = 2000) -> str:
    """The coverage tables, ``reps`` simulated samples a point (the bootstrap's and the paired comparison's: a
    tenth and two fifths of that; they resample or integrate per sample)."""
    from parlour.training.stats import MIN_DEALS_FOR_INTERVAL

    out = [f"Simulated coverage of the nominal 95% intervals ({reps:,} samples a point; seeded, reproducible)", ""]
    rng = np.random.default_rng(0)
    rows = [[f"{icc:.1f}", *(f"{cell_coverage(p, icc, reps, rng):.3f}" for p in CELL_RATES)] for icc in CELL_ICCS]
    out += [f"Cells ({DEALS} deals × {SEATS} seats), by the true win rate:", ""]
    out += _table(["intra-deal correlation", *(f"p = {p}" for p in CELL_RATES)], rows) + [""]
    rows = [[spread, *(f"{seed_coverage(k, spread, reps, rng):.3f}" for k in SEED_COUNTS)] for spread in SEED_SPREADS]
    boot = reps // 10
    rows.append(
        [f"the stratified bootstrap it replaced ({boot:,} samples; normal spread)"]
        + [f"{bootstrap_seed_coverage(k, boot, rng):.3f}" for k in SEED_COUNTS]
    )
    out += ["Means over training seeds (Student-t), by the seed-to-seed spread:", ""]
    out += _table(["spread", *(f"{k} seeds" for k in SEED_COUNTS)], rows) + [""]
    paired = reps * 2 // 5
    rows = [[str(k), f"{sd:.1f}", f"{paired_coverage(k, sd, paired, rng):.3f}"] for k, sd in PAIRED_CASES]
    out += [f"Paired comparisons with a bot ({DEALS} deals × {SEATS} seats, {paired:,} samples a point):", ""]
    out += _table(["seeds", "seed-to-seed sd (probit)", "coverage"], rows) + [""]
    rows = [[f"{p}", f"{difference_coverage(p, reps, rng):.3f}"] for p in (0.1, 0.3)]
    out += [f"Per-deal differences of two equal policies at {MIN_DEALS_FOR_INTERVAL} deals (BCa over deals):", ""]
    out += _table(["win rate", "coverage"], rows)
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m parlour.training.coverage",
        description="Print the simulated coverage of the interval methods BASELINES.md uses.",
    )
    parser.add_argument("--reps", type=int, default=2000, help="simulated samples a point (default 2000)")
    args = parser.parse_args(argv)
    if args.reps < 10:
        parser.error(f"--reps must be at least 10, got {args.reps}")
    print(report(args.reps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
