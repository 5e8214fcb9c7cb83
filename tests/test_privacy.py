"""The accounting engine against independent high-precision values, edge cases and properties.

The reference implementations below are scalar, written from the papers'
statements with mpmath at 50 digits, independently of the vectorized numpy
code in ``skpate.privacy.bounds``.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpate import NZC, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, Plurality
from skpate.privacy import DEFAULT_ORDERS, analyze, bounds, compose, rdp_to_dp

mp.mp.dps = 50
ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 40.0, 80.0, 200.0])


# --------------------------------------------------------- references


def ref_logq_gaussian(votes, sigma):
    """PATE 2018 Prop. 7: sum_{j != j*} P[N(0, 2 sigma^2) >= d_j], capped at 1 - 1/m."""
    top = int(np.argmax(votes))
    q = mp.mpf(0)
    for j, v in enumerate(votes):
        if j != top:
            q += mp.ncdf(-mp.mpf(int(votes[top] - v)) / (mp.sqrt(2) * sigma))
    return min(mp.log(q), mp.log(1 - mp.mpf(1) / len(votes)))


def ref_logq_laplace(votes, scale):
    """PATE 2017 Lemma 4: sum_{j != j*} (2 + d_j/b) / (4 exp(d_j/b)), capped at 1 - 1/m."""
    top = int(np.argmax(votes))
    q = mp.mpf(0)
    for j, v in enumerate(votes):
        if j != top:
            z = mp.mpf(int(votes[top] - v)) / scale
            q += (2 + z) / (4 * mp.exp(z))
    return min(mp.log(q), mp.log(1 - mp.mpf(1) / len(votes)))


def _digits(logq):
    """Enough digits that log(1 + q * ...) keeps q (values below 1e-300 are 0 in floats anyway)."""
    return int(60 + min(-float(logq), 800) / 2.3)


def ref_rdp_gaussian(logq, sigma, lam):
    """PATE 2018 Thm. 6 with Prop. 10's mu1, mu2, min'ed with lam / sigma^2."""
    with mp.workdps(_digits(logq)):
        return _ref_rdp_gaussian(logq, sigma, lam)


def _ref_rdp_gaussian(logq, sigma, lam):
    logq, sigma, lam = mp.mpf(logq), mp.mpf(sigma), mp.mpf(lam)
    independent = lam / sigma**2
    mu2 = sigma * mp.sqrt(-logq)
    mu1 = mu2 + 1
    eps1, eps2 = mu1 / sigma**2, mu2 / sigma**2
    ok = (
        mu2 > 1
        and -logq > eps2
        and logq <= (mu2 - 1) * eps2 - mu2 * (mp.log(1 + 1 / (mu1 - 1)) + mp.log(1 + 1 / (mu2 - 1)))
        and lam < mu1
    )
    if not ok:
        return independent
    q = mp.exp(logq)
    a = (1 - q) / (1 - (q * mp.exp(eps2)) ** ((mu2 - 1) / mu2))
    b = mp.exp(eps1) / q ** (1 / (mu1 - 1))
    dependent = mp.log((1 - q) * a ** (lam - 1) + q * b ** (lam - 1)) / (lam - 1)
    return min(dependent, independent)


def ref_rdp_pure(logq, eps, lam):
    """PATE 2017 Thm. 3 (in RDP form), min'ed with min(eps, lam eps^2 / 2)."""
    with mp.workdps(_digits(logq)):
        return _ref_rdp_pure(logq, eps, lam)


def _ref_rdp_pure(logq, eps, lam):
    eps, lam = mp.mpf(eps), mp.mpf(lam)
    independent = min(eps, lam * eps**2 / 2)
    q = mp.exp(mp.mpf(logq))
    if not q < 1 / (mp.exp(eps) + 1):
        return independent
    dependent = mp.log((1 - q) * ((1 - q) / (1 - mp.exp(eps) * q)) ** (lam - 1) + q * mp.exp(eps * (lam - 1))) / (
        lam - 1
    )
    return min(dependent, independent)


HISTOGRAMS = [
    [130, 120],  # close two-class vote
    [200, 50],
    [249, 1],
    [100, 80, 70],
    [240, 5, 5],
    [30, 25, 25, 20, 20, 20, 30, 40, 20, 20],
    [250, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # unanimity, 10 classes
]


# ------------------------------------------------- hand-derived values


@pytest.mark.parametrize("votes", HISTOGRAMS)
@pytest.mark.parametrize("sigma", [5.0, 20.0, 40.0, 100.0])
def test_gaussian_bound_matches_reference(votes, sigma):
    votes = np.array([votes])
    logq = bounds.logq_gaussian(votes, sigma)[0]
    assert logq == pytest.approx(float(ref_logq_gaussian(votes[0], sigma)), rel=1e-10, abs=1e-12)
    rdp = bounds.rdp_gaussian_data_dependent([logq], sigma, ORDERS)[0]
    expected = [float(ref_rdp_gaussian(logq, sigma, lam)) for lam in ORDERS]
    np.testing.assert_allclose(rdp, expected, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("votes", HISTOGRAMS)
@pytest.mark.parametrize("scale", [2.0, 10.0, 20.0])
def test_laplace_bound_matches_reference(votes, scale):
    votes = np.array([votes])
    logq = bounds.logq_laplace(votes, scale)[0]
    assert logq == pytest.approx(float(ref_logq_laplace(votes[0], scale)), rel=1e-10, abs=1e-12)
    rdp = bounds.rdp_pure_dp_data_dependent([logq], 2.0 / scale, ORDERS)[0]
    expected = [float(ref_rdp_pure(logq, 2.0 / scale, lam)) for lam in ORDERS]
    np.testing.assert_allclose(rdp, expected, rtol=1e-9, atol=1e-300)


def test_data_independent_gnmax_hand_computed():
    # One GNMax query, sigma = 40: RDP(lam) = lam / 1600. Classic conversion at
    # delta = 1e-5: eps = min_lam lam/1600 + log(1e5)/(lam - 1). On the grid
    # {100, 137, 200}: 100/1600 + 11.5129/99 = 0.1788; 137/1600 + 11.5129/136
    # = 0.1703; 200/1600 + 11.5129/199 = 0.1829. The minimum is at 137.
    orders = np.array([100.0, 137.0, 200.0])
    eps, order = rdp_to_dp(orders, orders / 1600.0, 1e-5)
    assert order == 137.0
    assert eps == pytest.approx(137 / 1600 + math.log(1e5) / 136, rel=1e-12)
    assert eps == pytest.approx(0.17028, abs=1e-5)


def test_improved_conversion_hand_computed():
    # eps = rdp + log((lam-1)/lam) - (log delta + log lam)/(lam - 1), lam = 11, rdp = 0.5:
    # 0.5 + log(10/11) - (log 1e-5 + log 11)/10 = 0.5 - 0.09531 + 0.91151 = 1.31620
    eps, order = rdp_to_dp([11.0], [0.5], 1e-5, method="improved")
    assert eps == pytest.approx(0.5 + math.log(10 / 11) - (math.log(1e-5) + math.log(11)) / 10, rel=1e-12)
    assert eps == pytest.approx(1.31620, abs=1e-5)


def test_lnmax_pure_epsilon():
    # LNMax is 2/scale-DP per query: at scale 20, RDP <= min(0.1, lam * 0.005).
    cost = LNMax(scale=20).privacy_cost([[10, 10]], orders=ORDERS, data_dependent=False)[0]
    np.testing.assert_allclose(cost, np.minimum(0.1, ORDERS * 0.1**2 / 2))


# ---------------------------------------------------------- underflow


def test_gaussian_q_far_below_1e300_keeps_its_log():
    votes = np.array([[5000, 0]])
    logq = bounds.logq_gaussian(votes, 10.0)[0]
    expected = float(mp.log(mp.ncdf(-mp.mpf(5000) / (mp.sqrt(2) * 10))))
    assert np.isfinite(logq) and logq < -60000
    assert logq == pytest.approx(expected, rel=1e-10)
    rdp = bounds.rdp_gaussian_data_dependent([logq], 10.0, ORDERS)[0]
    assert np.all(rdp >= 0) and np.all(np.isfinite(rdp))
    # The bound is ~q^(1 - lam/mu2): below 1e-300 (0 in doubles) at low orders,
    # up to the data-independent lam / sigma^2 once lam >= mu1 = 10 sqrt(-log q) + 1.
    assert np.all(rdp <= ORDERS / 100.0)
    for lam in (3000.0, 3400.0):
        expected = float(ref_rdp_gaussian(logq, 10.0, lam))
        assert expected > 0
        assert bounds.rdp_gaussian_data_dependent([logq], 10.0, [lam])[0, 0] == pytest.approx(expected, rel=1e-9)


def test_threshold_q_near_certain_answer_does_not_underflow():
    # max count 5000, T = 100, sigma1 = 10: Pr[not answered] = Phi(-490), about 1e-52000.
    logq = bounds.logq_threshold(np.array([5000.0]), 100.0, 10.0)[0]
    assert logq == pytest.approx(float(mp.log(mp.ncdf(-490))), rel=1e-10)
    rdp = bounds.rdp_threshold_data_dependent([logq], 10.0, ORDERS)[0]
    assert np.all(rdp >= 0) and np.all(np.isfinite(rdp))


def test_laplace_huge_gap():
    logq = bounds.logq_laplace(np.array([[100000, 0]]), 1.0)[0]
    assert logq == pytest.approx(float(ref_logq_laplace([100000, 0], 1.0)), rel=1e-12)
    rdp = bounds.rdp_pure_dp_data_dependent([logq], 2.0, ORDERS)[0]
    assert np.all(rdp >= 0) and np.all(rdp < 1e-100)


def test_q_exactly_zero_costs_nothing():
    assert np.all(bounds.rdp_gaussian_data_dependent([-np.inf], 10.0, ORDERS) == 0)
    assert np.all(bounds.rdp_pure_dp_data_dependent([-np.inf], 1.0, ORDERS) == 0)


# ---------------------------------------------------------- edge cases


@pytest.mark.parametrize("n_classes", [2, 3, 10])
@pytest.mark.parametrize("sigma", [1.0, 5.0, 40.0, 100.0])
def test_ties_give_the_data_independent_bound(n_classes, sigma):
    votes = np.zeros((1, n_classes), dtype=int)
    votes[0, :2] = 60
    for aggregator in [GNMax(sigma=sigma), LNMax(scale=sigma)]:
        dependent = aggregator.privacy_cost(votes, orders=ORDERS)
        independent = aggregator.privacy_cost(votes, orders=ORDERS, data_dependent=False)
        np.testing.assert_array_equal(dependent, independent)


def test_unanimity_with_large_sigma_is_nearly_free():
    # 250 unanimous teachers, sigma 40: log q ~ -10, so Thm. 6 applies below mu1 ~ 127.
    votes = np.array([[250] + [0] * 9] * 1000)
    cost = GNMax(sigma=40.0).privacy_cost(votes[:1], orders=ORDERS)[0]
    low = ORDERS <= 21
    assert np.all(cost[low] < 0.02 * ORDERS[low] / 1600)
    # Composed over 1,000 queries, the optimal order is low and the data-dependent
    # epsilon a small fraction of the data-independent one.
    report = analyze(votes, GNMax(sigma=40.0), 1e-5)
    assert report.epsilon < 0.25 * report.data_independent_epsilon


def test_q_is_capped_at_one_minus_one_over_m():
    votes = np.array([[26, 25, 25, 25, 25, 25, 25, 25, 25, 24]])
    assert bounds.logq_gaussian(votes, 40.0)[0] == pytest.approx(math.log(0.9))
    assert bounds.logq_laplace(votes, 20.0)[0] == pytest.approx(math.log(0.9))


def test_plurality_is_not_private():
    report = analyze([[9, 1], [5, 5]], Plurality(), 1e-5)
    assert np.isinf(report.epsilon) and np.isinf(report.data_independent_epsilon)
    assert not report.is_private and "NOT differentially private" in str(report)
    assert rdp_to_dp(ORDERS, np.full(ORDERS.size, np.inf), 1e-5)[0] == np.inf
    assert np.isnan(rdp_to_dp(ORDERS, np.full(ORDERS.size, np.inf), 1e-5)[1])


# ------------------------------------------------------ threshold accounting


def test_confident_gnmax_pays_check_always_and_answer_when_answered():
    votes = np.array([[200, 40, 10], [120, 100, 30]])
    agg = ConfidentGNMax(threshold=150, sigma_threshold=50, sigma=20)
    answered = np.array([True, False])
    cost = agg.privacy_cost(votes, answered=answered, orders=ORDERS)
    check = bounds.rdp_threshold_data_dependent(bounds.logq_threshold(votes.max(axis=1), 150, 50), 50, ORDERS)
    answer = bounds.rdp_gaussian_data_dependent(bounds.logq_gaussian(votes, 20), 20, ORDERS)
    np.testing.assert_allclose(cost[0], check[0] + answer[0])
    np.testing.assert_allclose(cost[1], check[1])
    independent = agg.privacy_cost(votes, answered=answered, orders=ORDERS, data_dependent=False)
    np.testing.assert_allclose(independent[0], ORDERS / (2 * 50**2) + ORDERS / 20**2)
    np.testing.assert_allclose(independent[1], ORDERS / (2 * 50**2))


def test_threshold_check_reference():
    # Check on max count 180 vs T = 150, sigma1 = 20: q = Phi(-1.5), noise sqrt(2) * 20 in Thm. 6.
    logq = bounds.logq_threshold(np.array([180.0]), 150.0, 20.0)[0]
    assert logq == pytest.approx(float(mp.log(mp.ncdf(-1.5))), rel=1e-12)
    rdp = bounds.rdp_threshold_data_dependent([logq], 20.0, ORDERS)[0]
    np.testing.assert_allclose(rdp, [float(ref_rdp_gaussian(logq, math.sqrt(2) * 20, lam)) for lam in ORDERS])


def test_nzc_is_charged_its_real_sensitivity():
    votes = np.array([[30, 20]])
    gauss = NZC(constant=4.0, sigma=10.0).privacy_cost(votes, orders=ORDERS, data_dependent=False)[0]
    np.testing.assert_allclose(gauss, ORDERS * 25 / 100)
    lap = NZC(constant=4.0, scale=20.0).privacy_cost(votes, orders=ORDERS, data_dependent=False)[0]
    eps0 = 2 * 5 / 20
    np.testing.assert_allclose(lap, np.minimum(eps0, ORDERS * eps0**2 / 2))
    # With constant 0, NZC is GNMax / LNMax.
    np.testing.assert_allclose(
        NZC(constant=0.0, sigma=10.0).privacy_cost(votes, orders=ORDERS), GNMax(10.0).privacy_cost(votes, orders=ORDERS)
    )
    np.testing.assert_allclose(
        NZC(constant=0.0, scale=5.0).privacy_cost(votes, orders=ORDERS), LNMax(5.0).privacy_cost(votes, orders=ORDERS)
    )


# ---------------------------------------------------------- properties


@st.composite
def vote_matrices(draw):
    n_teachers = draw(st.integers(2, 300))
    n_classes = draw(st.integers(2, 6))
    n_queries = draw(st.integers(1, 6))
    rows = []
    for _ in range(n_queries):
        cuts = sorted(draw(st.lists(st.integers(0, n_teachers), min_size=n_classes - 1, max_size=n_classes - 1)))
        rows.append(np.diff([0, *cuts, n_teachers]))
    return np.array(rows)


def aggregators_for(votes, draw_float, answered, proba):
    n = votes[0].sum()
    sigma = draw_float
    return [
        (GNMax(sigma=sigma), {}),
        (LNMax(scale=sigma), {}),
        (ConfidentGNMax(threshold=max(1.0, 0.7 * n), sigma_threshold=sigma, sigma=sigma), {"answered": answered}),
        (
            InteractiveGNMax(threshold=max(1.0, 0.3 * n), sigma_threshold=sigma, sigma=sigma),
            {"answered": answered, "student_proba": proba},
        ),
        (NZC(constant=0.5 * sigma, sigma=sigma), {}),
        (NZC(constant=0.5 * sigma, scale=sigma), {}),
    ]


@settings(max_examples=60, deadline=None)
@given(votes=vote_matrices(), sigma=st.floats(0.5, 200.0), seed=st.integers(0, 2**16))
def test_curves_are_valid_rdp(votes, sigma, seed):
    rng = np.random.default_rng(seed)
    answered = rng.random(votes.shape[0]) < 0.5
    proba = rng.dirichlet(np.ones(votes.shape[1]), size=votes.shape[0])
    for aggregator, extra in aggregators_for(votes, sigma, answered, proba):
        dependent = aggregator.privacy_cost(votes, orders=DEFAULT_ORDERS, **extra)
        independent = aggregator.privacy_cost(votes, orders=DEFAULT_ORDERS, data_dependent=False, **extra)
        assert np.all(np.isfinite(dependent)) and np.all(dependent >= 0), aggregator
        assert np.all(np.diff(dependent, axis=1) >= -1e-12 * np.abs(dependent[:, 1:])), aggregator
        assert np.all(np.diff(independent, axis=1) >= 0), aggregator
        assert np.all(dependent <= independent * (1 + 1e-12)), aggregator


@settings(max_examples=40, deadline=None)
@given(votes=vote_matrices(), sigma=st.floats(1.0, 100.0), delta=st.floats(1e-9, 0.1))
def test_composition_adds_and_more_queries_cost_more(votes, sigma, delta):
    aggregator = GNMax(sigma=sigma)
    report = analyze(votes, aggregator, delta)
    np.testing.assert_allclose(report.rdp, report.rdp_per_query.sum(axis=0))
    np.testing.assert_allclose(compose(report.rdp_per_query[:1], report.rdp_per_query[1:]), report.rdp)
    more = analyze(np.vstack([votes, votes[:1]]), aggregator, delta)
    assert more.epsilon >= report.epsilon
    assert more.data_independent_epsilon >= report.data_independent_epsilon
    assert report.epsilon <= report.data_independent_epsilon
    improved = rdp_to_dp(report.orders, report.rdp, delta, method="improved")[0]
    assert improved <= report.epsilon
    assert analyze(votes, aggregator, delta / 10).epsilon >= report.epsilon


# ---------------------------------------------------------- report and errors


def test_report_fields():
    votes = np.array([[240, 5, 5], [200, 30, 20], [100, 90, 60]])
    agg = ConfidentGNMax(threshold=150, sigma_threshold=50, sigma=20)
    answered = np.array([True, True, False])
    report = analyze(votes, agg, 1e-6, answered=answered)
    assert (report.n_queries, report.n_answered, report.delta) == (3, 2, 1e-6)
    assert report.rdp_per_query.shape == (3, DEFAULT_ORDERS.size)
    assert report.rdp.shape == report.data_independent_rdp.shape == report.orders.shape
    assert report.epsilon <= report.data_independent_epsilon
    assert report.order in report.orders
    text = str(report)
    assert "safe to publish" in text and "do not publish" in text


def test_default_orders_cover_the_authors_grid():
    authors = np.concatenate([np.arange(2, 100.5, 0.5), np.logspace(np.log10(100), np.log10(500), 100)])
    assert np.all(np.isin(np.round(authors, 9), np.round(DEFAULT_ORDERS, 9)))
    assert DEFAULT_ORDERS.min() > 1 and DEFAULT_ORDERS.max() >= 500


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"orders": [1.0, 2.0]}, "orders"),
        ({"orders": [0.5]}, "orders"),
        ({"orders": []}, "orders"),
        ({"orders": [2.0, np.nan]}, "orders"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1.0}, "delta"),
        ({"delta": 2.0}, "delta"),
        ({"delta": "1e-5"}, "delta"),
        ({"rdp": [0.1]}, "rdp"),
        ({"rdp": [-0.1, 0.2]}, "rdp"),
        ({"method": "tight"}, "method"),
    ],
)
def test_rdp_to_dp_errors(kwargs, match):
    args = {"orders": [2.0, 3.0], "rdp": [0.1, 0.2], "delta": 1e-5, "method": "classic"}
    args.update(kwargs)
    if "orders" in kwargs and "rdp" not in kwargs:
        args["rdp"] = np.zeros(len(kwargs["orders"]))
    with pytest.raises(ValueError, match=match):
        rdp_to_dp(**args)


def test_analyze_validates_delta_and_orders():
    with pytest.raises(ValueError, match="delta"):
        analyze([[3, 1]], GNMax(1.0), delta=1.5)
    with pytest.raises(ValueError, match="orders"):
        analyze([[3, 1]], GNMax(1.0), delta=1e-5, orders=[1.0])
