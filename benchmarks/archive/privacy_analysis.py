"""Speed of the data-dependent privacy analysis, vectorized vs a per-query loop.

Synthetic votes: for each query, a Dirichlet class preference and a multinomial
draw of the teachers' votes (seeded). For GNMax and Confident-GNMax the full
data-dependent analysis (``skpate.analyze``: per-query bounds at every order of
the default grid, composition, conversion, plus the data-independent curve) is
timed against a plain Python loop that applies the same bound functions to one
query at a time. Both must give the same epsilon. Best of 5 runs of the
analysis and of 3 of the loop (the machine may be shared); the last line of the
output sums up the speed-ups.

Second table: the sanitized release of the data-dependent epsilon (PATE 2018
App. B): smooth sensitivity at the data-dependent order with the default
``beta = 0.4 / order``, and the GNSS release, for 250 x 10 x 1,000 and
5,000 x 150 x 4,000.

Run: ``python benchmarks/privacy_analysis.py``
"""

import time

import numpy as np

from skpate import ConfidentGNMax, GNMax
from skpate.privacy import DEFAULT_ORDERS, analyze, bounds, rdp_to_dp
from skpate.privacy.smooth import default_parameters, sanitize, smooth_sensitivity

CASES = [  # teachers, classes, queries, sigma
    (5000, 150, 4000, 100.0),
    (250, 10, 10000, 40.0),
]
SANITIZE_CASES = [(250, 10, 1000, 40.0), (5000, 150, 4000, 100.0)]
DELTA = 1e-6


def synthetic_votes(n_teachers, n_classes, n_queries, seed=0):
    rng = np.random.default_rng(seed)
    preference = rng.dirichlet(np.full(n_classes, 0.1), size=n_queries)
    return np.stack([rng.multinomial(n_teachers, p) for p in preference])


def loop_epsilon(votes, aggregator, answered):
    """The same formulas, one query at a time (what a naive port would do)."""
    total = np.zeros(DEFAULT_ORDERS.size)
    for i in range(votes.shape[0]):
        row = votes[i : i + 1]
        if isinstance(aggregator, ConfidentGNMax):
            logq = bounds.logq_threshold(row.max(axis=1), aggregator.threshold, aggregator.sigma_threshold)
            total += bounds.rdp_threshold_data_dependent(logq, aggregator.sigma_threshold, DEFAULT_ORDERS)[0]
            if not answered[i]:
                continue
        logq = bounds.logq_gaussian(row, aggregator.sigma)
        total += bounds.rdp_gaussian_data_dependent(logq, aggregator.sigma, DEFAULT_ORDERS)[0]
    return rdp_to_dp(DEFAULT_ORDERS, total, DELTA)[0]


def best_of(n, function):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    header = (
        f"{'teachers x classes x queries':>30s} {'aggregator':>15s} {'answered':>8s} {'vectorized ms':>13s} "
        f"{'loop s':>8s} {'speed-up':>8s} {'eps (dd)':>9s} {'eps pub':>9s}"
    )
    print(f"full data-dependent analysis, {DEFAULT_ORDERS.size} orders, delta={DELTA:g}, best of 5 (loop: of 3)")
    print(header)
    print("-" * len(header))
    speedups = []
    for n_teachers, n_classes, n_queries, sigma in CASES:
        votes = synthetic_votes(n_teachers, n_classes, n_queries)
        aggregators = [
            GNMax(sigma=sigma),
            ConfidentGNMax(threshold=0.7 * n_teachers, sigma_threshold=0.3 * n_teachers, sigma=sigma),
        ]
        for aggregator in aggregators:
            answered = aggregator.aggregate(votes, random_state=0, return_answered=True)[1]
            mask = answered if isinstance(aggregator, ConfidentGNMax) else None
            seconds, report = best_of(5, lambda: analyze(votes, aggregator, DELTA, answered=mask))
            loop_seconds, loop_eps = best_of(3, lambda: loop_epsilon(votes, aggregator, answered))
            assert np.isclose(loop_eps, report.data_dependent_epsilon, rtol=1e-9), (loop_eps, report)
            speedups.append(loop_seconds / seconds)
            print(
                f"{f'{n_teachers} x {n_classes} x {n_queries}':>30s} {type(aggregator).__name__:>15s} "
                f"{report.n_answered:8d} {seconds * 1e3:13.1f} {loop_seconds:8.2f} {speedups[-1]:7.0f}x "
                f"{report.data_dependent_epsilon:9.3f} {report.epsilon:9.3f}"
            )

    print("\nsanitized release (smooth sensitivity + GNSS), order = the data-dependent one, best of 3")
    header = (
        f"{'teachers x classes x queries':>30s} {'aggregator':>15s} {'order':>6s} {'beta':>7s} {'smooth sens':>11s} "
        f"{'rdp (dd)':>9s} {'noise sd':>9s} {'seconds':>8s} {'eps (dd)':>9s} {'eps (san)':>9s}"
    )
    print(header)
    print("-" * len(header))
    for n_teachers, n_classes, n_queries, sigma in SANITIZE_CASES:
        votes = synthetic_votes(n_teachers, n_classes, n_queries)
        for aggregator in [
            GNMax(sigma=sigma),
            ConfidentGNMax(threshold=0.7 * n_teachers, sigma_threshold=0.3 * n_teachers, sigma=sigma),
        ]:
            answered = aggregator.aggregate(votes, random_state=0, return_answered=True)[1]
            mask = answered if isinstance(aggregator, ConfidentGNMax) else None
            report = analyze(votes, aggregator, DELTA, answered=mask)
            order = report.data_dependent_order  # a timing benchmark: the order a user would fix
            beta, noise = default_parameters(order)
            seconds, release = best_of(
                3, lambda: sanitize(votes, aggregator, DELTA, order, answered=mask, random_state=0)
            )
            sensitivity = smooth_sensitivity(votes, aggregator, order, beta, answered=mask)
            rdp = aggregator.privacy_cost(votes, answered=mask, orders=[order]).sum()
            print(
                f"{f'{n_teachers} x {n_classes} x {n_queries}':>30s} {type(aggregator).__name__:>15s} {order:6.1f} "
                f"{beta:7.4f} {sensitivity:11.4f} {rdp:9.3f} {sensitivity * noise:9.3f} {seconds:8.3f} "
                f"{report.data_dependent_epsilon:9.3f} {release.epsilon:9.3f}"
            )

    print(
        f"\nspeed-up of the full data-dependent analysis over the per-query loop (first table, {len(speedups)} cases): "
        f"{min(speedups):.0f}x to {max(speedups):.0f}x"
    )


if __name__ == "__main__":
    main()
