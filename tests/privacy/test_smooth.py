"""Smooth sensitivity and the GNSS release (PATE 2018, Appendix B), checked by brute force."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.stats import norm

from skpate import ConfidentGNMax, GNMax, LNMax, analyze
from skpate.privacy import bounds
from skpate.privacy.smooth import gnss_rdp, local_sensitivity_bounds, sanitize, smooth_sensitivity


def all_histograms(n_teachers, n_classes):
    return np.array([h for h in itertools.product(range(n_teachers + 1), repeat=n_classes) if sum(h) == n_teachers])


def teacher_distance(histograms):
    """Teachers to change to go from one histogram to another: half the L1 distance."""
    return np.abs(histograms[:, None, :] - histograms[None, :, :]).sum(axis=2) // 2


def exact_local_sensitivity_at_distance(costs, distance):
    """A(k) = max over histograms within k of the largest change to a neighbour, by enumeration."""
    local = np.array([np.abs(costs[distance[i] == 1] - costs[i]).max() for i in range(len(costs))])
    return lambda i, k: local[distance[i] <= k].max()


GNMAX_CASES = [(20, 3, 1.0, 3.0), (20, 3, 2.0, 4.0), (30, 2, 3.0, 5.0), (16, 4, 1.5, 2.0), (24, 3, 1.0, 12.0)]


@pytest.mark.parametrize("n_teachers, n_classes, sigma, order", GNMAX_CASES)
def test_gnmax_bound_dominates_the_exact_local_sensitivity_at_every_distance(n_teachers, n_classes, sigma, order):
    histograms = all_histograms(n_teachers, n_classes)
    costs = GNMax(sigma).privacy_cost(histograms, orders=[order])[:, 0]
    exact = exact_local_sensitivity_at_distance(costs, teacher_distance(histograms))
    assert np.ptp(costs) > 0  # the data-dependent bound is active: the test can fail
    ratios = []
    for i, histogram in enumerate(histograms):
        bound = local_sensitivity_bounds(np.vstack([histogram]), GNMax(sigma), order, np.arange(n_teachers + 1))
        for k in range(n_teachers + 1):
            assert bound[k] >= exact(i, k) - 1e-12
            if exact(i, k) > 0:
                ratios.append(bound[k] / exact(i, k))
    assert np.median(ratios) < 10  # and is not vacuous


@pytest.mark.parametrize("n_teachers, threshold, sigma_threshold, order", [(20, 14, 2.0, 3.0), (30, 20, 3.0, 6.0)])
def test_confident_bound_dominates_the_exact_local_sensitivity(n_teachers, threshold, sigma_threshold, order):
    aggregator = ConfidentGNMax(threshold=threshold, sigma_threshold=sigma_threshold, sigma=1.5)
    histograms = all_histograms(n_teachers, 3)
    answered = np.ones(len(histograms), dtype=bool)
    costs = aggregator.privacy_cost(histograms, answered=answered, orders=[order])[:, 0]
    exact = exact_local_sensitivity_at_distance(costs, teacher_distance(histograms))
    for i, histogram in enumerate(histograms):
        distances = np.arange(n_teachers + 1)
        bound = local_sensitivity_bounds(np.vstack([histogram]), aggregator, order, distances, answered=[True])
        assert all(bound[k] >= exact(i, k) - 1e-12 for k in distances)


@pytest.mark.parametrize("beta", [0.05, 0.3])
def test_smooth_sensitivity_is_beta_smooth(beta):
    """S(D) <= exp(beta) S(D') for neighbouring histograms (the condition GNSS relies on)."""
    histograms = all_histograms(16, 3)
    distance = teacher_distance(histograms)
    sensitivity = np.array([smooth_sensitivity(np.vstack([h]), GNMax(1.5), 4.0, beta) for h in histograms])
    i, j = np.nonzero(distance == 1)
    assert np.all(sensitivity[i] <= np.exp(beta) * sensitivity[j] * (1 + 1e-9))
    assert np.all(sensitivity >= 0)


def test_smooth_sensitivity_of_a_sum_is_between_the_max_and_the_sum_of_its_parts():
    rng = np.random.default_rng(0)
    votes = rng.multinomial(250, [0.7, 0.1, 0.1, 0.05, 0.05], size=40)
    parts = [smooth_sensitivity(votes[i : i + 1], GNMax(20.0), 10.0, 0.03) for i in range(40)]
    whole = smooth_sensitivity(votes, GNMax(20.0), 10.0, 0.03)
    assert max(parts) <= whole <= sum(parts) * (1 + 1e-9)


def test_unanimous_votes_have_tiny_smooth_sensitivity():
    unanimous = np.tile([[250, 0, 0]], (100, 1))
    split = np.tile([[200, 50, 0]], (100, 1))
    near = local_sensitivity_bounds(unanimous, GNMax(40.0), 20.0, [0, 10])
    assert np.all(near < 0.02 * local_sensitivity_bounds(split, GNMax(40.0), 20.0, [0, 10]))
    assert smooth_sensitivity(unanimous, GNMax(40.0), 20.0, 0.1) < 0.02 * smooth_sensitivity(
        split, GNMax(40.0), 20.0, 0.1
    )


def renyi_normal(mu1, s1, mu2, s2, lam):
    """D_lam(N(mu1, s1^2) || N(mu2, s2^2)), closed form (van Erven and Harremoes 2014)."""
    var = lam * s2**2 + (1 - lam) * s1**2
    return np.log(s2 / s1) + np.log(s2**2 / var) / (2 * (lam - 1)) + lam * (mu1 - mu2) ** 2 / (2 * var)


def test_closed_form_renyi_divergence_matches_quadrature():
    p, q, lam = norm(0.3, 1.0), norm(-0.2, 1.1), 3.0
    integrand = lambda x: np.exp(lam * p.logpdf(x) + (1 - lam) * q.logpdf(x))  # noqa: E731
    numeric = np.log(quad(integrand, -40, 40, points=[0.0])[0]) / (lam - 1)
    assert renyi_normal(0.3, 1.0, -0.2, 1.1, lam) == pytest.approx(numeric, rel=1e-8)


@pytest.mark.parametrize("beta, sigma, order", [(0.0329, 6.23, 14.0), (0.01, 20.0, 30.0), (0.1, 2.0, 4.0)])
def test_gnss_rdp_bounds_every_allowed_pair_of_output_distributions(beta, sigma, order):
    """Over S(D') / S(D) in [e^-beta, e^beta] and |F(D) - F(D')| <= min(S(D), S(D')), both directions."""
    bound = gnss_rdp(beta, sigma, order)
    worst = 0.0
    for ratio in np.exp(np.linspace(-beta, beta, 201)):
        s1, s2 = 1.0, ratio
        for shift in np.linspace(0, min(s1, s2), 21):
            worst = max(worst, renyi_normal(0.0, s1 * sigma, shift, s2 * sigma, order))
    assert worst <= bound * (1 + 1e-12)
    assert bound <= 1.2 * worst  # the bound is nearly attained


def _gnss_rdp_exact(beta, sigma, lam):
    """gnss_rdp's formula in 80-digit arithmetic: the reference for orders where float64 cancels."""
    import mpmath as mp

    with mp.workdps(80):
        beta, sigma, lam = mp.mpf(beta), mp.mpf(sigma), mp.mpf(lam)
        low, high = mp.exp(-2 * beta), mp.exp(2 * beta)
        if lam * (1 - low) >= 1:
            return np.inf

        def shape(x):
            return (lam * mp.log(x) - mp.log(lam * x + 1 - lam)) / (2 * (lam - 1))

        return float(lam * low / (2 * sigma**2 * (lam * low + 1 - lam)) + max(shape(low), shape(high)))


@pytest.mark.parametrize(
    "beta, sigma, order",
    [(0.0329, 6.23, 14.0), (0.4 / 1e8, 5e7, 1e8), (4e-21, 5e19, 1e20), (1e-20, 1.0, 4e19), (1e-20, 1.0, 6e19)],
)
def test_gnss_rdp_is_exact_where_one_minus_exp_cancels(beta, sigma, order):
    """1 - exp(-2 beta) was 0 in float64 for beta = 1e-20: the order 6e19, past the valid range, was taken for
    valid, and the terms at the ends were differences of huge numbers (order 1e20 gave no finite value)."""
    expected = _gnss_rdp_exact(beta, sigma, order)
    if np.isinf(expected):
        assert np.isinf(gnss_rdp(beta, sigma, order))
    else:
        assert gnss_rdp(beta, sigma, order) == pytest.approx(expected, rel=1e-9)


def test_a_sanitization_order_past_the_largest_is_refused():
    with pytest.raises(ValueError, match=r"order must be a number in \(1, 1e\+06\]"):
        sanitize(np.tile([[240, 5, 5]], (3, 1)), GNMax(40.0), 1e-5, order=1e300)


def test_gnss_rdp_is_infinite_outside_its_orders_and_grows_with_the_order():
    orders = np.array([2.0, 5.0, 10.0, 20.0, 40.0])
    rdp = gnss_rdp(0.02, 10.0, orders)
    assert np.all(np.diff(rdp[np.isfinite(rdp)]) > 0)
    assert np.isinf(gnss_rdp(0.02, 10.0, 1000.0))


def test_sanitize_is_an_unbiased_noisy_release():
    rng = np.random.default_rng(1)
    votes = rng.multinomial(250, [0.85, 0.05, 0.05, 0.05], size=60)
    aggregator = GNMax(sigma=40.0)
    releases = [sanitize(votes, aggregator, 1e-5, order=20.0, random_state=seed) for seed in range(200)]
    rdp = aggregator.privacy_cost(votes, orders=[20.0]).sum()
    sensitivity = smooth_sensitivity(votes, aggregator, 20.0, releases[0].beta)
    estimates = np.array([release.rdp_estimate for release in releases])
    assert estimates.mean() == pytest.approx(rdp, abs=4 * sensitivity * releases[0].sigma / np.sqrt(200))
    assert estimates.std() == pytest.approx(sensitivity * releases[0].sigma, rel=0.15)
    release = releases[0]
    expected = max(release.rdp_estimate, 0) + release.gnss_rdp + np.log(1e5) / 19.0
    assert release.epsilon == pytest.approx(expected)
    assert sanitize(votes, aggregator, 1e-5, order=20.0, random_state=3) == releases[3]


def test_report_holds_three_epsilons_and_the_release_is_charged():
    rng = np.random.default_rng(2)
    votes = rng.multinomial(250, [0.9, 0.04, 0.03, 0.03], size=500)
    aggregator = ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40)
    answered = aggregator.aggregate(votes, random_state=0, return_answered=True)[1]
    plain = analyze(votes, aggregator, 1e-5, answered=answered)
    report = analyze(votes, aggregator, 1e-5, answered=answered, sanitize_order=20.0, random_state=0)
    assert plain.sanitized_epsilon is None
    assert report.sanitization.order == 20.0
    assert report.data_dependent_epsilon == plain.data_dependent_epsilon
    assert report.epsilon > plain.epsilon  # the release is a mechanism on the votes: the bound includes it
    assert report.data_dependent_epsilon < report.sanitized_epsilon < report.epsilon
    assert "sanitized data-dependent epsilon" in str(report)
    # The order is fixed in advance: one chosen from the votes ("auto") is refused.
    with pytest.raises(ValueError, match="fixed before seeing the votes"):
        analyze(votes, aggregator, 1e-5, answered=answered, sanitize_order="auto")


def test_publishable_epsilon_does_not_depend_on_the_votes_with_a_release():
    """Finding 2 of the review: with sanitize_order="auto", two vote matrices of the same shape
    published 3.1495 and 3.6457; with a fixed order the publishable epsilon is a function of the
    parameters and the number of queries only."""
    rng = np.random.default_rng(0)
    a = rng.multinomial(250, [0.95, 0.03, 0.02], size=300)
    b = rng.multinomial(250, [0.34, 0.33, 0.33], size=300)
    ra, rb = (analyze(v, GNMax(40.0), 1e-5, sanitize_order=20.0, random_state=0) for v in (a, b))
    assert ra.data_dependent_epsilon != rb.data_dependent_epsilon
    assert ra.epsilon == rb.epsilon


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda v: sanitize(v, GNMax(40.0), 1e-5, order=1.0), "order"),
        (lambda v: sanitize(v, GNMax(40.0), 1e-5, order="x"), "order"),
        (lambda v: sanitize(v, GNMax(40.0), 1e-5, order=20.0, beta=0.5), "beta"),
        (lambda v: sanitize(v, GNMax(40.0), 1e-5, order=20.0, sigma=0.0), "sigma"),
        (lambda v: sanitize(v, GNMax(40.0), 0.0, order=20.0), "delta"),
        (lambda v: sanitize(v, LNMax(20.0), 1e-5, order=20.0), "GNMax and ConfidentGNMax"),
        (lambda v: sanitize(v, ConfidentGNMax(), 1e-5, order=20.0), "answered"),
    ],
)
def test_bad_sanitize_requests(call, match):
    with pytest.raises(ValueError, match=match):
        call(np.tile([[240, 5, 5]], (3, 1)))


def test_cost_is_non_decreasing_in_q():
    """The assumption behind the bounds ([PATE18] B.4.2 checks its conditions C5/C6 numerically too)."""
    logq = np.linspace(-700, 0, 70001)
    orders = [1.1, 1.5, 2, 3, 5, 8, 14, 20, 50, 100, 300, 1000]
    for sigma in [0.5, 1, 2, 5, 10, 40, 100, 300]:
        for sensitivity in [1.0, bounds.THRESHOLD_SENSITIVITY]:
            rdp = bounds.rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=sensitivity)
            assert np.all(np.diff(rdp, axis=0) >= -1e-12 * rdp[1:])


# The smooth-sensitivity grid must not depend on the votes: with n_teachers / sigma above about 21 a
# vote-dependent lower edge misaligned the grids of neighbours and broke beta-smoothness.
NEIGHBOURS = [
    ([[1, 11]], [[2, 10]], 0.3, 5.0, 0.5),
    ([[457, 543]], [[456, 544]], 20.0, 20.0, 0.02),
]


@pytest.mark.parametrize("votes, neighbour, sigma, order, beta", NEIGHBOURS)
def test_smooth_sensitivity_is_beta_smooth_when_n_teachers_over_sigma_is_large(votes, neighbour, sigma, order, beta):
    here = smooth_sensitivity(votes, GNMax(sigma), order, beta)
    there = smooth_sensitivity(neighbour, GNMax(sigma), order, beta)
    assert here > 0 and there > 0
    assert here <= np.exp(beta) * there * (1 + 1e-12)
    assert there <= np.exp(beta) * here * (1 + 1e-12)


@st.composite
def neighbouring_votes(draw):
    """Votes of 1-5 queries and 2-4 classes, and a neighbour: one teacher changes its vote on every query."""
    n_teachers = draw(st.integers(1, 120))
    n_classes = draw(st.integers(2, 4))
    n_queries = draw(st.integers(1, 5))
    votes, neighbour = [], []
    for _ in range(n_queries):
        cuts = draw(st.lists(st.integers(0, n_teachers), min_size=n_classes - 1, max_size=n_classes - 1))
        row = np.diff([0, *sorted(cuts), n_teachers])
        source = draw(st.sampled_from(np.flatnonzero(row).tolist()))
        target = draw(st.sampled_from([c for c in range(n_classes) if c != source]))
        moved = row.copy()
        moved[source] -= 1
        moved[target] += 1
        votes.append(row)
        neighbour.append(moved)
    return np.array(votes), np.array(neighbour)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    pair=neighbouring_votes(),
    teachers_per_sigma=st.floats(0.5, 400.0),
    order=st.floats(1.5, 40.0),
    beta=st.floats(0.005, 1.0),
    confident=st.booleans(),
    data=st.data(),
)
def test_smooth_sensitivity_is_beta_smooth_for_random_neighbours(
    pair, teachers_per_sigma, order, beta, confident, data
):
    """S(D) <= exp(beta) S(D') both ways, for GNMax and ConfidentGNMax, n_teachers / sigma far above and below 21."""
    votes, neighbour = pair
    n_teachers = int(votes[0].sum())
    sigma = n_teachers / teachers_per_sigma
    extra = {}
    if confident:
        threshold = data.draw(st.floats(0.0, 1.0)) * n_teachers
        sigma_threshold = n_teachers / data.draw(st.floats(0.5, 400.0))
        aggregator = ConfidentGNMax(threshold=threshold, sigma_threshold=sigma_threshold, sigma=sigma)
        mask = data.draw(st.lists(st.booleans(), min_size=len(votes), max_size=len(votes)))
        extra["answered"] = np.array(mask, dtype=bool)
    else:
        aggregator = GNMax(sigma)
    here = smooth_sensitivity(votes, aggregator, order, beta, **extra)
    there = smooth_sensitivity(neighbour, aggregator, order, beta, **extra)
    assert here <= np.exp(beta) * there * (1 + 1e-12)
    assert there <= np.exp(beta) * here * (1 + 1e-12)
