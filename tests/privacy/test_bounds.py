"""The privacy accounting engine against independent values, edge cases and properties.

The reference implementations below are *scalar* and written in mpmath at 50
significant digits (mpmath has an unbounded exponent, so ``q = exp(-62500)`` is
an ordinary number there), straight from the formulas of the papers:

* PATE 2018 (Papernot et al., "Scalable Private Learning with PATE", ICLR
  2018, arXiv:1802.08908) Prop. 7 (Gaussian ``q``), Theorem 6 with Prop. 10's
  ``mu1``, ``mu2`` (data-dependent RDP of GNMax);
* PATE 2017 (Papernot et al., "Semi-supervised Knowledge Transfer for Deep
  Learning from Private Training Data", ICLR 2017, arXiv:1610.05755) Lemma 4
  (Laplace ``q``) and Theorem 3 (data-dependent moments of a pure-DP
  mechanism, written for the RDP order ``lam = moment + 1``);
* the classic RDP to (eps, delta) conversion of Mironov, "Renyi Differential
  Privacy", CSF 2017, arXiv:1702.07476 (Prop. 3), and the improved one of
  Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
  Privacy", NeurIPS 2020, arXiv:2004.00010.

They deliberately take other routes than ``skpate.privacy.bounds``: the
Gaussian tail is ``erfc(d / (2 sigma)) / 2`` (not ``log_ndtr``), probabilities
are summed as numbers (not ``logsumexp``), and the final logarithm is
``log1p(expm1(x) + exp(y))`` (not ``logaddexp``).
"""

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skpate import NZC, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, Plurality, PrivacyLeakWarning
from skpate.privacy import (
    DEFAULT_ORDERS,
    PrivacyReport,
    analyze,
    bounds,
    check_delta,
    check_orders,
    compose,
    gdp_epsilon,
    rdp_to_dp,
)

mp.mp.dps = 50

TINY = np.finfo(float).tiny
#: Orders used against the (slow) scalar references: every 4th default order,
#: which spans 1.1 .. 5000, plus a few round ones.
REF_ORDERS = np.unique(np.concatenate([DEFAULT_ORDERS[::4], [2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 5000.0]]))
RTOL = 1e-9


# =====================================================================
# Independent scalar references (mpmath, 50 digits)
# =====================================================================


def _top(votes):
    """Index of the plurality (first one on ties, like numpy's argmax)."""
    votes = [int(v) for v in votes]
    best = max(votes)
    return votes.index(best), votes


def ref_logq_gaussian(votes, sigma):
    """(a) PATE 2018 Prop. 7: log sum_{j != j*} P[N(0, 2 sigma^2) >= d_j], capped at log(1 - 1/m).

    P[N(0, 2 sigma^2) >= d] = P[N(0, 1) >= d / (sqrt(2) sigma)] = erfc(d / (2 sigma)) / 2.
    """
    top, votes = _top(votes)
    sigma = mp.mpf(sigma)
    q = mp.mpf(0)
    for j, v in enumerate(votes):
        if j != top:
            q += mp.erfc(mp.mpf(votes[top] - v) / (2 * sigma)) / 2
    return min(mp.log(q), mp.log(1 - mp.mpf(1) / len(votes)))


def ref_logq_laplace(votes, scale):
    """(b) PATE 2017 Lemma 4: log sum_{j != j*} (2 + d_j / b) / (4 exp(d_j / b)), capped at log(1 - 1/m)."""
    top, votes = _top(votes)
    b = mp.mpf(scale)
    q = mp.mpf(0)
    for j, v in enumerate(votes):
        if j != top:
            z = mp.mpf(votes[top] - v) / b
            q += (2 + z) / (4 * mp.exp(z))
    return min(mp.log(q), mp.log(1 - mp.mpf(1) / len(votes)))


def ref_logq_threshold(count, threshold, sigma):
    """log min(p, 1 - p), p = P[count + N(0, sigma^2) >= T] = erfc((T - count) / (sqrt(2) sigma)) / 2."""
    z = (mp.mpf(float(threshold)) - mp.mpf(float(count))) / (mp.sqrt(2) * mp.mpf(float(sigma)))
    p_answer = mp.erfc(z) / 2
    p_decline = mp.erfc(-z) / 2
    return mp.log(min(p_answer, p_decline))


def _log_rdp_mixture(x, y, lam):
    """1/(lam-1) log(e^x + e^y) as log1p(expm1(x) + e^y) / (lam - 1): exact for tiny results."""
    return mp.log1p(mp.expm1(x) + mp.exp(y)) / (lam - 1)


def ref_rdp_gaussian(logq, sigma, lam):
    """(c) PATE 2018 Thm. 6 with Prop. 10's mu1, mu2 and its side conditions, min'ed with lam / sigma^2.

    mu2 = sigma sqrt(log 1/q), mu1 = mu2 + 1, eps_i = mu_i / sigma^2; valid for lam < mu1 if
    mu2 > 1, log(1/q) > eps2 and log q <= (mu2-1) eps2 - mu2 (log(mu1/(mu1-1)) + log(mu2/(mu2-1))).
    A = (1-q) / (1 - (q e^eps2)^((mu2-1)/mu2)), B = e^eps1 / q^(1/(mu1-1)),
    RDP <= 1/(lam-1) log((1-q) A^(lam-1) + q B^(lam-1)).
    """
    logq, sigma, lam = mp.mpf(logq), mp.mpf(sigma), mp.mpf(lam)
    independent = lam / sigma**2
    if mp.isinf(logq):
        return mp.mpf(0)
    mu2 = sigma * mp.sqrt(-logq)
    mu1 = mu2 + 1
    eps1, eps2 = mu1 / sigma**2, mu2 / sigma**2
    if not (mu2 > 1 and -logq > eps2 and lam < mu1):
        return independent
    if not logq <= (mu2 - 1) * eps2 - mu2 * (mp.log(mu1 / (mu1 - 1)) + mp.log(mu2 / (mu2 - 1))):
        return independent
    q = mp.exp(logq)
    log_1mq = mp.log1p(-q)
    log_a = log_1mq - mp.log1p(-mp.exp((logq + eps2) * (mu2 - 1) / mu2))
    log_b = eps1 - logq / (mu1 - 1)
    dependent = _log_rdp_mixture(log_1mq + (lam - 1) * log_a, logq + (lam - 1) * log_b, lam)
    return min(dependent, independent)


def ref_rdp_pure(logq, eps, lam):
    """(d) PATE 2017 Thm. 3 (moment l = lam - 1) min'ed with min(eps, lam eps^2 / 2).

    If q < 1 / (e^eps + 1): RDP <= 1/(lam-1) log((1-q) ((1-q)/(1-e^eps q))^(lam-1) + q e^(eps (lam-1))).
    """
    logq, eps, lam = mp.mpf(logq), mp.mpf(eps), mp.mpf(lam)
    independent = min(eps, lam * eps**2 / 2)
    if mp.isinf(logq):
        return mp.mpf(0)
    q = mp.exp(logq)
    if not q < 1 / (mp.exp(eps) + 1):
        return independent
    log_1mq = mp.log1p(-q)
    log_ratio = log_1mq - mp.log1p(-mp.exp(eps) * q)
    dependent = _log_rdp_mixture(log_1mq + (lam - 1) * log_ratio, logq + (lam - 1) * eps, lam)
    return min(dependent, independent)


def ref_rdp_to_dp(orders, rdp, delta, method):
    """(e) min over the orders of the classic / improved conversion (clamped at 0)."""
    delta = mp.mpf(delta)
    best = None
    for lam, r in zip(orders, rdp):
        lam, r = mp.mpf(lam), mp.mpf(r)
        if method == "classic":
            eps = r + mp.log(1 / delta) / (lam - 1)
        else:
            eps = r + mp.log((lam - 1) / lam) - (mp.log(delta) + mp.log(lam)) / (lam - 1)
        best = eps if best is None else min(best, eps)
    return max(best, mp.mpf(0))


def ref_curve(fn, logq, param, orders):
    return np.array([float(fn(logq, param, lam)) for lam in orders])


#: Relative floating-point slack (a few ulps) for two property checks: monotonicity in
#: the order (nearly flat curves wobble by an ulp), and "data-dependent <= data-independent"
#: for NZC-Gaussian, whose two curves go through different float paths (see
#: test_nzc_data_dependent_never_exceeds_data_independent, which checks it exactly).
ULPS = 1e-14


def apriori_rdp_epsilon(report):
    """The a-priori cost of a report's queries, converted in RDP like its data-dependent epsilon."""
    return rdp_to_dp(report.orders, report.data_independent_rdp_per_query.sum(axis=0), report.delta, report.method)[0]


def assert_matches_reference(got, expected, rtol=RTOL):
    """Relative agreement where the reference is a normal double; below that, the library may only round."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert np.all(np.isfinite(got)) and np.all(got >= 0)
    normal = expected >= TINY
    np.testing.assert_allclose(got[normal], expected[normal], rtol=rtol, atol=0)
    assert np.all(got[~normal] <= TINY)


HISTOGRAMS = [
    [130, 120],  # 2 classes, close vote
    [200, 50],  # 2 classes, clear majority
    [250, 0],  # 2 classes, unanimity
    [100, 80, 70],  # 3 classes, close
    [240, 5, 5],  # 3 classes, clear
    [0, 250, 0],  # 3 classes, unanimity (plurality not in column 0)
    [30, 25, 25, 20, 20, 20, 30, 40, 20, 20],  # 10 classes, close
    [10, 10, 10, 10, 180, 10, 5, 5, 5, 5],  # 10 classes, clear
    [250, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # 10 classes, unanimity
]
SIGMAS = [2.0, 10.0, 40.0, 100.0]
SCALES = [0.5, 5.0, 20.0]


# =====================================================================
# 1. Against the independent references
# =====================================================================


@pytest.mark.parametrize("votes", HISTOGRAMS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_gnmax_q_and_rdp_match_reference(votes, sigma):
    logq = bounds.logq_gaussian(np.array([votes]), sigma)
    assert logq.shape == (1,)
    expected_logq = ref_logq_gaussian(votes, sigma)
    assert logq[0] == pytest.approx(float(expected_logq), rel=RTOL)
    rdp = bounds.rdp_gaussian_data_dependent(logq, sigma, REF_ORDERS)
    assert rdp.shape == (1, REF_ORDERS.size)
    assert_matches_reference(rdp[0], ref_curve(ref_rdp_gaussian, expected_logq, sigma, REF_ORDERS))
    # Same numbers through the aggregator.
    cost = GNMax(sigma=sigma).privacy_cost([votes], orders=REF_ORDERS)
    np.testing.assert_array_equal(cost, rdp)


@pytest.mark.parametrize("votes", HISTOGRAMS)
@pytest.mark.parametrize("scale", SCALES)
def test_lnmax_q_and_rdp_match_reference(votes, scale):
    logq = bounds.logq_laplace(np.array([votes]), scale)
    expected_logq = ref_logq_laplace(votes, scale)
    assert logq[0] == pytest.approx(float(expected_logq), rel=RTOL)
    eps0 = 2.0 / scale
    rdp = bounds.rdp_pure_dp_data_dependent(logq, eps0, REF_ORDERS)
    assert_matches_reference(rdp[0], ref_curve(ref_rdp_pure, expected_logq, eps0, REF_ORDERS))
    np.testing.assert_array_equal(LNMax(scale=scale).privacy_cost([votes], orders=REF_ORDERS), rdp)


def test_reference_cases_exercise_both_branches():
    """The comparisons above are not all on the trivial lam / sigma^2 branch."""
    n_dependent = n_independent = 0
    for votes in HISTOGRAMS:
        for sigma in SIGMAS:
            logq = ref_logq_gaussian(votes, sigma)
            for lam in (2.0, 20.0, 100.0):
                value = ref_rdp_gaussian(logq, sigma, lam)
                if value < mp.mpf(lam) / sigma**2:
                    n_dependent += 1
                else:
                    n_independent += 1
    assert n_dependent >= 20 and n_independent >= 20
    # Laplace too.
    assert ref_rdp_pure(ref_logq_laplace([240, 5, 5], 20.0), 0.1, 10.0) < 0.05
    assert ref_rdp_pure(ref_logq_laplace([130, 120], 20.0), 0.1, 10.0) == 10 * mp.mpf(0.1) ** 2 / 2


@pytest.mark.parametrize(
    "count, threshold, sigma",
    [(180.0, 150.0, 20.0), (120.0, 150.0, 20.0), (250.0, 200.0, 150.0), (240.0, 100.0, 10.0), (60.0, 200.0, 30.0)],
)
def test_threshold_check_matches_reference(count, threshold, sigma):
    logq = bounds.logq_threshold(np.array([count]), threshold, sigma)
    expected_logq = ref_logq_threshold(count, threshold, sigma)
    assert logq[0] == pytest.approx(float(expected_logq), rel=RTOL)
    # The check has L2 sensitivity 1: Theorem 6 with noise sqrt(2) sigma.
    rdp = bounds.rdp_threshold_data_dependent(logq, sigma, REF_ORDERS)
    expected = ref_curve(ref_rdp_gaussian, expected_logq, mp.sqrt(2) * sigma, REF_ORDERS)
    assert_matches_reference(rdp[0], expected)


@pytest.mark.parametrize("method", ["classic", "improved"])
@pytest.mark.parametrize("delta", [1e-5, 1e-9, 0.3])
def test_rdp_to_dp_matches_reference(method, delta):
    curves = [
        analyze([[240, 5, 5], [200, 30, 20], [100, 80, 70]] * 30, GNMax(sigma=40.0), 1e-5).rdp,
        analyze([[240, 5, 5]] * 200, LNMax(scale=20.0), 1e-5).rdp,
        DEFAULT_ORDERS / 1600.0,
        np.zeros(DEFAULT_ORDERS.size),
        np.full(DEFAULT_ORDERS.size, 3.0),
    ]
    for rdp in curves:
        eps, order = rdp_to_dp(DEFAULT_ORDERS, rdp, delta, method=method)
        assert eps == pytest.approx(float(ref_rdp_to_dp(DEFAULT_ORDERS, rdp, delta, method)), rel=RTOL, abs=1e-15)
        # The returned order attains the minimum.
        assert order in DEFAULT_ORDERS
        if eps > 0:
            at_order = ref_rdp_to_dp([order], [rdp[DEFAULT_ORDERS == order][0]], delta, method)
            assert eps == pytest.approx(float(at_order), rel=RTOL)


def test_hand_computed_gnmax_data_independent():
    # One GNMax query, sigma = 40: RDP(lam) = lam / sigma^2 = lam / 1600. Classic
    # conversion at delta = 1e-5, log(1/delta) = 5 log 10 = 11.512925465:
    #   eps(lam) = lam / 1600 + 11.512925465 / (lam - 1).
    # On the grid {2, 10, 50, 100, 130, 137, 140, 200}:
    #   lam =   2: 0.00125 + 11.512925 = 11.514175
    #   lam =  10: 0.00625 + 1.279214  =  1.285464
    #   lam =  50: 0.03125 + 0.234958  =  0.266208
    #   lam = 100: 0.06250 + 0.116292  =  0.178792
    #   lam = 130: 0.08125 + 0.089247  =  0.170497
    #   lam = 137: 0.085625 + 0.084654 = 0.170279   <- minimum
    #   lam = 140: 0.08750 + 0.082827  =  0.170327
    #   lam = 200: 0.12500 + 0.057854  =  0.182854
    # (The continuous optimum is lam - 1 = sqrt(1600 * 11.5129) = 135.7.)
    orders = np.array([2.0, 10.0, 50.0, 100.0, 130.0, 137.0, 140.0, 200.0])
    rdp = GNMax(sigma=40.0).privacy_cost([[130, 120]], orders=orders, data_dependent=False)[0]
    np.testing.assert_allclose(rdp, [0.00125, 0.00625, 0.03125, 0.0625, 0.08125, 0.085625, 0.0875, 0.125], rtol=1e-15)
    eps, order = rdp_to_dp(orders, rdp, 1e-5)
    assert order == 137.0
    assert eps == pytest.approx(0.1702789, abs=1e-7)
    # The publishable epsilon is tighter: one sqrt(2)/40-GDP query, converted exactly.
    report = analyze([[130, 120]], GNMax(sigma=40.0), 1e-5, orders=orders)
    assert report.accounting == "gdp" and report.epsilon == gdp_epsilon(np.sqrt(2) / 40, 1e-5) < eps


def test_hand_computed_lnmax_pure_epsilon():
    # LNMax is eps0 = 2 / scale pure DP per query: scale 20 -> eps0 = 0.1. Its RDP is
    # min(eps0, lam eps0^2 / 2) = min(0.1, 0.005 lam): 0.01 at lam = 2, 0.05 at 10, and
    # eps0 = 0.1 itself from lam = 20 on (up to 5000).
    orders = np.array([2.0, 10.0, 20.0, 50.0, 5000.0])
    cost = LNMax(scale=20.0).privacy_cost([[200, 50]], orders=orders, data_dependent=False)[0]
    np.testing.assert_allclose(cost, [0.01, 0.05, 0.1, 0.1, 0.1], rtol=1e-15)
    # Scale 0.5 -> eps0 = 4: min(4, 8 lam) = 4 at every order > 1/2.
    cost = LNMax(scale=0.5).privacy_cost([[200, 50]], orders=orders, data_dependent=False)[0]
    np.testing.assert_allclose(cost, 4.0, rtol=1e-15)


def test_hand_computed_q_values():
    # Laplace, votes (30, 20), b = 10: d = 10, z = 1, q = (2 + 1) / (4 e) = 0.2759096,
    # log q = log 3 - log 4 - 1 = -1.2876821 (below the cap log(1/2)).
    assert bounds.logq_laplace([[30, 20]], 10.0)[0] == pytest.approx(-1.2876821, abs=1e-7)
    # Gaussian, votes (30, 20), sigma = 5: q = P[N(0, 50) >= 10] = erfc(10 / 10) / 2 = 0.0786496,
    # log q = -2.5427527.
    assert bounds.logq_gaussian([[30, 20]], 5.0)[0] == pytest.approx(-2.5427527, abs=1e-7)
    # Threshold: count 180, T = 150, sigma1 = 20: q = P[N(0,1) >= 1.5] = 0.0668072.
    assert math.exp(bounds.logq_threshold([180.0], 150.0, 20.0)[0]) == pytest.approx(0.0668072, abs=1e-7)


def test_improved_conversion_hand_computed():
    # eps = rdp + log((lam-1)/lam) - (log delta + log lam) / (lam - 1) at lam = 11, rdp = 0.5, delta = 1e-5:
    # 0.5 + log(10/11) - (-11.512925 + 2.397895) / 10 = 0.5 - 0.095310 + 0.911503 = 1.316193
    eps, order = rdp_to_dp([11.0], [0.5], 1e-5, method="improved")
    assert (eps, order) == (pytest.approx(1.316193, abs=1e-6), 11.0)
    # Classic: 0.5 + 11.512925 / 10 = 1.651293.
    assert rdp_to_dp([11.0], [0.5], 1e-5)[0] == pytest.approx(1.651293, abs=1e-6)


def renyi_bernoulli(p, p_neighbour, lam):
    """Exact D_lam(Bern(p) || Bern(p')) = 1/(lam-1) log(p^lam p'^(1-lam) + (1-p)^lam (1-p')^(1-lam))."""
    lam = mp.mpf(lam)
    # log1p / expm1: p may be far below 10^-50, where 1 - p == 1 at 50 digits.
    first = p**lam * p_neighbour ** (1 - lam)
    second_minus_1 = mp.expm1(lam * mp.log1p(-p) + (1 - lam) * mp.log1p(-p_neighbour))
    return mp.log1p(first + second_minus_1) / (lam - 1)


def _gaussian_rival_wins(gap, sigma):
    """Two classes: P[GNMax returns the minority] = P[N(0, 2 sigma^2) > gap] (any sign of gap)."""
    return mp.erfc(mp.mpf(gap) / (2 * mp.mpf(sigma))) / 2


def _laplace_rival_wins(gap, scale):
    """Two classes: P[Lap(b) - Lap(b) > gap] (Lemma 4 is exact here; symmetric for gap < 0)."""
    z = mp.mpf(abs(gap)) / mp.mpf(scale)
    tail = (2 + z) / (4 * mp.exp(z))
    return tail if gap >= 0 else 1 - tail


@settings(max_examples=30, deadline=None)
@given(
    n_teachers=st.integers(2, 300),
    share=st.floats(0.5, 1.0),
    sigma=st.floats(0.5, 100.0),
    scale=st.floats(0.5, 100.0),
    lam=st.sampled_from([1.5, 2.0, 5.0, 10.0, 30.0, 100.0, 300.0]),
)
def test_bounds_dominate_the_exact_divergence_on_two_classes(n_teachers, share, sigma, scale, lam):
    """Soundness: with two classes the output is a Bernoulli whose Renyi divergence is exact.

    One teacher moving its vote changes the gap d by 2; the data-dependent bound of D must dominate
    D_lam(M(D) || M(D')) for both neighbours D'.
    """
    top = max(int(round(share * n_teachers)), (n_teachers + 1) // 2)
    votes = np.array([[top, n_teachers - top]])
    gap = 2 * top - n_teachers
    neighbours = [g for g in (gap - 2, gap + 2) if -n_teachers <= g <= n_teachers]
    orders = np.array([lam])
    slack = mp.mpf("1e-9")
    gauss = GNMax(sigma=sigma).privacy_cost(votes, orders=orders)[0, 0]
    lap = LNMax(scale=scale).privacy_cost(votes, orders=orders)[0, 0]
    for g in neighbours:
        exact = renyi_bernoulli(_gaussian_rival_wins(gap, sigma), _gaussian_rival_wins(g, sigma), lam)
        assert exact <= gauss * (1 + slack) + mp.mpf("1e-300")
        exact = renyi_bernoulli(_laplace_rival_wins(gap, scale), _laplace_rival_wins(g, scale), lam)
        assert exact <= lap * (1 + slack) + mp.mpf("1e-300")
    # The threshold check: P[answer] = P[count + N(0, sigma^2) >= T], the count moves by 1.
    threshold = n_teachers * share
    check = ConfidentGNMax(threshold=threshold, sigma_threshold=sigma, sigma=1.0).privacy_cost(
        votes, answered=[False], orders=orders
    )[0, 0]
    p_answer = lambda c: mp.erfc((mp.mpf(threshold) - c) / (mp.sqrt(2) * mp.mpf(sigma))) / 2  # noqa: E731
    for c in (top - 1, top + 1):
        exact = renyi_bernoulli(p_answer(top), p_answer(c), lam)
        assert exact <= check * (1 + slack) + mp.mpf("1e-300")


# =====================================================================
# 2. Underflow: q far below 1e-300
# =====================================================================


def test_gaussian_q_far_below_1e300_keeps_its_log():
    # votes (5000, 0), sigma 10: q = erfc(250) / 2 ~ exp(-62506.8).
    votes = np.array([[5000, 0]])
    logq = bounds.logq_gaussian(votes, 10.0)
    expected_logq = ref_logq_gaussian([5000, 0], 10.0)
    assert np.isfinite(logq[0]) and logq[0] < -62000
    assert logq[0] == pytest.approx(float(expected_logq), rel=1e-12)
    rdp = bounds.rdp_gaussian_data_dependent(logq, 10.0, DEFAULT_ORDERS)[0]
    expected = ref_curve(ref_rdp_gaussian, expected_logq, 10.0, DEFAULT_ORDERS)
    assert_matches_reference(rdp, expected)
    # mu1 = 10 sqrt(62506.8) + 1 = 2501: below it the data-dependent bound holds, and between
    # ~1300 and 2501 it is a normal positive double strictly below lam / 100.
    window = (DEFAULT_ORDERS > 1300) & (DEFAULT_ORDERS < 2500)
    assert window.any()
    assert np.all(rdp[window] > 0) and np.all(rdp[window] < DEFAULT_ORDERS[window] / 100)
    np.testing.assert_array_equal(GNMax(sigma=10.0).privacy_cost(votes), rdp[None, :])
    report = analyze(votes, GNMax(sigma=10.0), 1e-5)
    assert np.isfinite(report.data_dependent_epsilon) and 0 < report.data_dependent_epsilon < report.epsilon


@pytest.mark.parametrize("count, threshold", [(5000.0, 100.0), (0.0, 5000.0)])
def test_threshold_q_far_below_1e300_keeps_its_log(count, threshold):
    # |count - T| = 4900, sigma1 = 10: the unlikely outcome has probability Phi(-490) ~ exp(-120057):
    # whether the check almost surely answers (1 - p tiny) or almost surely declines (p tiny).
    logq = bounds.logq_threshold(np.array([count]), threshold, 10.0)
    expected_logq = ref_logq_threshold(count, threshold, 10.0)
    assert np.isfinite(logq[0]) and logq[0] < -120000
    assert logq[0] == pytest.approx(float(expected_logq), rel=1e-12)
    rdp = bounds.rdp_threshold_data_dependent(logq, 10.0, DEFAULT_ORDERS)[0]
    assert_matches_reference(rdp, ref_curve(ref_rdp_gaussian, expected_logq, mp.sqrt(2) * 10, DEFAULT_ORDERS))
    # Never above the data-independent check cost lam / (2 sigma1^2) = lam / 200 (the library's own
    # curve, which rounds sqrt(0.5)**2 up by an ulp; it is the curve epsilon uses).
    independent = bounds.rdp_gaussian(10.0, DEFAULT_ORDERS, sensitivity=bounds.THRESHOLD_SENSITIVITY)
    np.testing.assert_allclose(independent, DEFAULT_ORDERS / 200.0, rtol=1e-15)
    assert np.all(rdp <= independent)


def test_laplace_huge_gap_keeps_its_log():
    # votes (100000, 0), b = 1: q = (2 + 1e5) / (4 e^1e5), log q = -99989.87.
    logq = bounds.logq_laplace(np.array([[100000, 0]]), 1.0)
    expected_logq = ref_logq_laplace([100000, 0], 1.0)
    assert np.isfinite(logq[0])
    assert logq[0] == pytest.approx(float(expected_logq), rel=1e-12)
    rdp = bounds.rdp_pure_dp_data_dependent(logq, 2.0, DEFAULT_ORDERS)[0]
    assert_matches_reference(rdp, ref_curve(ref_rdp_pure, expected_logq, 2.0, DEFAULT_ORDERS))


@pytest.mark.parametrize("logq", [-720.0, -730.0])
def test_subnormal_costs_are_rounded_up_to_the_smallest_normal(logq):
    # log q ~ -720: at low orders the bound is ~1e-311..1e-317, a subnormal double; the library
    # documents rounding it *up* to the smallest normal double (a larger bound stays valid).
    orders = np.array([1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0])
    for got, reference in [
        (bounds.rdp_gaussian_data_dependent([logq], 10.0, orders)[0], ref_curve(ref_rdp_gaussian, logq, 10.0, orders)),
        (bounds.rdp_pure_dp_data_dependent([logq], 1.0, orders)[0], ref_curve(ref_rdp_pure, logq, 1.0, orders)),
    ]:
        subnormal = (reference > 0) & (reference < TINY)
        assert subnormal.sum() >= 2
        np.testing.assert_array_equal(got[subnormal], TINY)
        np.testing.assert_allclose(got[~subnormal], reference[~subnormal], rtol=RTOL)
        assert np.all(np.diff(got) >= 0)


def _underflow_cases():
    return [
        # (name, function returning the per-order curve of a query whose q > 0)
        pytest.param(
            lambda: GNMax(sigma=5.0).privacy_cost([[250, 0]]),  # log q = -629: every order representable
            id="gnmax-q-1e-273",
        ),
        pytest.param(
            lambda: GNMax(sigma=10.0).privacy_cost([[5000, 0]]),  # log q = -62507
            id="gnmax-q-1e-27146",
        ),
        pytest.param(
            lambda: ConfidentGNMax(threshold=100.0, sigma_threshold=10.0, sigma=1e6).privacy_cost(
                [[5000, 0]], answered=[False]
            ),  # check with log q = -120057, not answered
            id="threshold-q-1e-52140",
        ),
        pytest.param(
            lambda: LNMax(scale=1.0).privacy_cost([[100000, 0]]),  # log q = -99990
            id="lnmax-q-1e-43425",
        ),
    ]


@pytest.mark.parametrize("curve", _underflow_cases())
def test_positive_q_is_never_charged_zero(curve):
    """q > 0 (finite log q): the bound is strictly positive at every order (A > 1, B > 1 in Thm. 6)."""
    rdp = curve()
    assert np.all(np.isfinite(rdp))
    assert np.all(rdp > 0), f"{np.count_nonzero(rdp == 0)} of {rdp.size} orders charged exactly 0"


def test_q_exactly_zero_costs_nothing():
    # log q = -inf (q == 0 exactly) is the one case documented to cost 0.
    assert np.all(bounds.rdp_gaussian_data_dependent([-np.inf], 10.0, REF_ORDERS) == 0)
    assert np.all(bounds.rdp_pure_dp_data_dependent([-np.inf], 1.0, REF_ORDERS) == 0)
    assert np.all(bounds.rdp_threshold_data_dependent([-np.inf], 10.0, REF_ORDERS) == 0)


# =====================================================================
# 3. Edge cases
# =====================================================================


@pytest.mark.parametrize("n_classes", [2, 3, 10])
@pytest.mark.parametrize("sigma", [1.0, 5.0, 40.0, 100.0, 1000.0])
def test_ties_give_exactly_the_data_independent_bound(n_classes, sigma):
    votes = np.zeros((2, n_classes), dtype=int)
    votes[0, :2] = 60  # two-way tie for the plurality, other classes empty
    votes[1, :] = 120 // n_classes  # all classes tied (120 is divisible by 2, 3 and 10)
    assert np.all(votes.sum(axis=1) == 120)
    dependent = GNMax(sigma=sigma).privacy_cost(votes, orders=DEFAULT_ORDERS)
    independent = GNMax(sigma=sigma).privacy_cost(votes, orders=DEFAULT_ORDERS, data_dependent=False)
    np.testing.assert_allclose(independent, np.broadcast_to(DEFAULT_ORDERS / sigma**2, dependent.shape), rtol=1e-15)
    np.testing.assert_array_equal(dependent, independent)
    lap = LNMax(scale=sigma)
    np.testing.assert_array_equal(lap.privacy_cost(votes), lap.privacy_cost(votes, data_dependent=False))


@pytest.mark.parametrize("sigma, ratio", [(40.0, 1e-2), (20.0, 1e-4)])
def test_unanimity_with_large_sigma_is_orders_of_magnitude_cheaper(sigma, ratio):
    # 250 unanimous teachers, 10 classes, 1000 queries.
    votes = np.array([[250] + [0] * 9] * 1000)
    report = analyze(votes, GNMax(sigma=sigma), 1e-5)
    at = np.flatnonzero(report.orders == report.data_dependent_order)[0]
    per_query = report.rdp_per_query[0, at]
    independent = report.data_dependent_order / sigma**2
    assert 0 < per_query < ratio * independent
    assert report.data_dependent_epsilon < 0.1 * apriori_rdp_epsilon(report)
    # The single-query cost at moderate orders is far below lam / sigma^2 too.
    orders = np.array([5.0, 10.0, 20.0, 30.0])
    cost = GNMax(sigma=sigma).privacy_cost(votes[:1], orders=orders)[0]
    assert np.all(cost < ratio * orders / sigma**2)


def test_q_is_capped_at_one_minus_one_over_m():
    # Without the cap, the 9 rival tails would sum to ~4.3 (Gaussian) and ~4.4 (Laplace).
    votes = np.array([[26, 25, 25, 25, 25, 25, 25, 25, 25, 24]])
    assert bounds.logq_gaussian(votes, 40.0)[0] == pytest.approx(math.log(0.9), rel=1e-14)
    assert bounds.logq_laplace(votes, 20.0)[0] == pytest.approx(math.log(0.9), rel=1e-14)
    votes = np.array([[34, 33, 33]])  # q would be ~0.99 > 2/3
    assert bounds.logq_gaussian(votes, 10.0)[0] == pytest.approx(math.log(2 / 3), rel=1e-14)
    assert bounds.logq_laplace(votes, 10.0)[0] == pytest.approx(math.log(2 / 3), rel=1e-14)
    # Below the cap, no clipping.
    assert bounds.logq_gaussian([[40, 30, 30]], 10.0)[0] < math.log(2 / 3)


# =====================================================================
# 4. Properties (hypothesis)
# =====================================================================


@st.composite
def vote_matrices(draw, max_queries=6):
    """Random histograms (n_queries, n_classes) whose rows all sum to n_teachers."""
    n_teachers = draw(st.integers(1, 400))
    n_classes = draw(st.integers(2, 10))
    n_queries = draw(st.integers(1, max_queries))
    rows = []
    for _ in range(n_queries):
        if draw(st.booleans()):  # concentrated: a large plurality
            top = draw(st.integers(0, n_classes - 1))
            rest = draw(st.integers(0, n_teachers // 10))
            row = np.zeros(n_classes, dtype=int)
            if n_classes > 1 and rest:
                other = draw(st.integers(0, n_classes - 1))
                row[other] += rest
            row[top] += n_teachers - rest
        else:
            cuts = draw(st.lists(st.integers(0, n_teachers), min_size=n_classes - 1, max_size=n_classes - 1))
            row = np.diff([0, *sorted(cuts), n_teachers])
        rows.append(row)
    votes = np.array(rows, dtype=int)
    assert np.all(votes.sum(axis=1) == n_teachers)
    return votes


@st.composite
def scenarios(draw, max_queries=6):
    """A vote matrix with every aggregator, its answered mask and student probabilities."""
    votes = draw(vote_matrices(max_queries))
    n_queries, n_classes = votes.shape
    n_teachers = int(votes[0].sum())
    noise = st.floats(0.5, 500.0)
    sigma, sigma1, sigma2, scale = draw(noise), draw(noise), draw(noise), draw(noise)
    threshold = draw(st.floats(0.01, 1.0)) * n_teachers
    answered = np.array(draw(st.lists(st.booleans(), min_size=n_queries, max_size=n_queries)), dtype=bool)
    weights = np.array(
        draw(st.lists(st.floats(0.0, 1.0), min_size=n_queries * n_classes, max_size=n_queries * n_classes))
    ).reshape(n_queries, n_classes)
    weights[:, 0] += 1e-3
    proba = weights / weights.sum(axis=1, keepdims=True)
    c_gauss = draw(st.floats(0.0, 0.99)) * sigma  # small constant: no leak warning
    c_lap = draw(st.floats(0.0, 0.99)) * scale
    aggregators = [
        (GNMax(sigma=sigma), {}),
        (LNMax(scale=scale), {}),
        (ConfidentGNMax(threshold=threshold, sigma_threshold=sigma1, sigma=sigma2), {"answered": answered}),
        (
            InteractiveGNMax(threshold=threshold, sigma_threshold=sigma1, sigma=sigma2),
            {"answered": answered, "student_proba": proba},
        ),
        (NZC(constant=c_gauss, sigma=sigma), {}),
        (NZC(constant=c_lap, scale=scale), {}),
    ]
    return votes, aggregators


def _extend(extra, more_votes):
    """Extend the per-query keyword arguments to the appended queries."""
    extra = dict(extra)
    if "answered" in extra:
        extra["answered"] = np.concatenate([extra["answered"], np.ones(more_votes.shape[0], dtype=bool)])
    if "student_proba" in extra:
        uniform = np.full(more_votes.shape, 1.0 / more_votes.shape[1])
        extra["student_proba"] = np.vstack([extra["student_proba"], uniform])
    return extra


PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@PROPERTY_SETTINGS
@given(scenarios())
def test_per_query_curves_are_valid_rdp(scenario):
    votes, aggregators = scenario
    for aggregator, extra in aggregators:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            dependent = aggregator.privacy_cost(votes, **extra)
            independent = aggregator.privacy_cost(votes, data_dependent=False, **extra)
        name = repr(aggregator)
        assert dependent.shape == independent.shape == (votes.shape[0], DEFAULT_ORDERS.size), name
        assert np.all(np.isfinite(dependent)) and np.all(dependent >= 0), name
        assert np.all(np.isfinite(independent)) and np.all(independent > 0), name
        # Non-decreasing in the order. Where the true curve is almost flat (tiny q, low orders: the
        # bound is ~log A for every order) it may wobble by an ulp of rounding, hence the slack.
        assert np.all(np.diff(dependent, axis=1) >= -ULPS * dependent[:, 1:]), name
        assert np.all(np.diff(independent, axis=1) >= 0), name
        assert np.all(dependent <= independent * (1 + ULPS)), name
        if isinstance(aggregator, (GNMax, LNMax)):  # one float path for both curves: exact
            assert np.all(dependent <= independent), name


@PROPERTY_SETTINGS
@given(
    votes=vote_matrices(),
    sigma=st.floats(0.5, 500.0),
    scale=st.floats(0.5, 500.0),
    count=st.floats(0.0, 400.0),
    threshold=st.floats(0.01, 400.0),
)
def test_q_bounds_match_reference_on_random_histograms(votes, sigma, scale, count, threshold):
    cap = float(mp.log(1 - mp.mpf(1) / votes.shape[1])) + 1e-15  # log(1 - 1/m), up to rounding
    logq_g = bounds.logq_gaussian(votes, sigma)
    logq_l = bounds.logq_laplace(votes, scale)
    assert np.all(logq_g <= cap) and np.all(logq_l <= cap)
    for i, row in enumerate(votes[:2]):
        assert logq_g[i] == pytest.approx(float(ref_logq_gaussian(row, sigma)), rel=1e-9, abs=1e-12)
        assert logq_l[i] == pytest.approx(float(ref_logq_laplace(row, scale)), rel=1e-9, abs=1e-12)
    logq_t = bounds.logq_threshold(np.array([count]), threshold, sigma)[0]
    assert logq_t <= math.log(0.5) + 1e-15
    assert logq_t == pytest.approx(float(ref_logq_threshold(count, threshold, sigma)), rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logq=st.floats(-3000.0, -1e-3), sigma=st.floats(0.5, 300.0), eps=st.floats(1e-3, 5.0))
def test_data_dependent_bounds_match_reference_on_random_q(logq, sigma, eps):
    orders = DEFAULT_ORDERS[::16]
    assert_matches_reference(
        bounds.rdp_gaussian_data_dependent([logq], sigma, orders)[0],
        ref_curve(ref_rdp_gaussian, logq, sigma, orders),
    )
    assert_matches_reference(
        bounds.rdp_pure_dp_data_dependent([logq], eps, orders)[0], ref_curve(ref_rdp_pure, logq, eps, orders)
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    scenario=scenarios(max_queries=4),
    shift=st.integers(0, 9),
    n_more=st.integers(1, 3),
    delta=st.floats(1e-12, 0.5),
)
def test_composition_adds_and_epsilon_is_monotone(scenario, shift, n_more, delta):
    votes, aggregators = scenario
    # Appended queries: rolled copies of existing rows (same number of teachers and classes).
    more = np.roll(np.resize(votes, (n_more, votes.shape[1])), shift, axis=1)
    assert np.all(more.sum(axis=1) == votes[0].sum())
    for aggregator, extra in aggregators:
        name = repr(aggregator)
        report = analyze(votes, aggregator, delta, **extra)
        assert isinstance(report, PrivacyReport)
        # analyze composes by summing the per-query curves; so does compose.
        np.testing.assert_allclose(report.rdp, report.rdp_per_query.sum(axis=0), rtol=1e-12, atol=0)
        split = [report.rdp_per_query[i] for i in range(report.n_queries)]
        np.testing.assert_allclose(compose(*split), report.rdp, rtol=1e-12, atol=0)
        np.testing.assert_allclose(compose(report.rdp_per_query), report.rdp, rtol=1e-12, atol=0)
        assert report.data_dependent_epsilon <= apriori_rdp_epsilon(report) * (1 + ULPS), name
        # Appending queries never lowers epsilon (both bounds).
        longer = analyze(np.vstack([votes, more]), aggregator, delta, **_extend(extra, more))
        assert longer.n_queries == report.n_queries + more.shape[0]
        assert np.all(longer.rdp >= report.rdp), name
        assert longer.data_dependent_epsilon >= report.data_dependent_epsilon, name
        assert longer.epsilon >= report.epsilon, name
        # improved <= classic.
        improved = analyze(votes, aggregator, delta, method="improved", **extra)
        assert improved.data_dependent_epsilon <= report.data_dependent_epsilon, name
        assert improved.epsilon <= report.epsilon, name
        # Smaller delta (larger 1/delta): epsilon does not decrease.
        stricter = analyze(votes, aggregator, delta / 10.0, **extra)
        assert stricter.data_dependent_epsilon >= report.data_dependent_epsilon, name
        assert stricter.epsilon >= report.epsilon, name


@settings(max_examples=60, deadline=None)
@given(
    rdp=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=30),
    delta1=st.floats(1e-15, 0.9),
    delta2=st.floats(1e-15, 0.9),
    extra=st.floats(0.0, 10.0),
    data=st.data(),
)
def test_rdp_to_dp_properties(rdp, delta1, delta2, extra, data):
    n = len(rdp)
    orders = np.sort(np.array(data.draw(st.lists(st.floats(1.01, 1e4), min_size=n, max_size=n, unique=True))))
    rdp = np.array(rdp)
    lo, hi = sorted([delta1, delta2])
    for method in ("classic", "improved"):
        eps_hi, order = rdp_to_dp(orders, rdp, hi, method)
        assert eps_hi >= 0 and order in orders
        assert rdp_to_dp(orders, rdp, lo, method)[0] >= eps_hi  # non-decreasing in 1/delta
        assert rdp_to_dp(orders, rdp + extra, hi, method)[0] >= eps_hi  # more cost, more epsilon
    assert rdp_to_dp(orders, rdp, hi, "improved")[0] <= rdp_to_dp(orders, rdp, hi, "classic")[0]
    eps, _ = rdp_to_dp(orders, rdp, hi)
    assert eps == pytest.approx(float(ref_rdp_to_dp(orders, rdp, hi, "classic")), rel=RTOL, abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(curves=st.lists(st.lists(st.floats(0.0, 1e3), min_size=5, max_size=5), min_size=1, max_size=6))
def test_compose_is_the_sum(curves):
    curves = np.array(curves)
    np.testing.assert_allclose(compose(*curves), curves.sum(axis=0), rtol=1e-12, atol=0)
    np.testing.assert_allclose(compose(curves), curves.sum(axis=0), rtol=1e-12, atol=0)
    np.testing.assert_allclose(compose(curves[:1], curves[1:]), curves.sum(axis=0), rtol=1e-12, atol=0)


# =====================================================================
# 5. Report
# =====================================================================


def test_report_fields_and_text():
    votes = np.array([[240, 5, 5], [200, 30, 20], [100, 90, 60], [250, 0, 0]])
    agg = ConfidentGNMax(threshold=150, sigma_threshold=50, sigma=20)
    answered = np.array([True, True, False, True])
    orders = np.array([2.0, 5.0, 10.0, 20.0, 40.0, 80.0])
    report = analyze(votes, agg, 1e-6, answered=answered, orders=orders)
    assert (report.n_queries, report.n_answered, report.delta, report.method) == (4, 3, 1e-6, "classic")
    assert (report.guarantee, report.accounting, report.budget) == ("a-priori", "gdp", None)
    np.testing.assert_array_equal(report.orders, orders)
    assert report.rdp.shape == (6,)
    assert report.rdp_per_query.shape == report.data_independent_rdp_per_query.shape == (4, 6)
    np.testing.assert_array_equal(report.rdp_per_query, agg.privacy_cost(votes, answered=answered, orders=orders))
    assert (report.data_dependent_epsilon, report.data_dependent_order) == rdp_to_dp(orders, report.rdp, 1e-6)
    # Publishable: all 4 queries as if answered, each a 1/50-GDP check and a sqrt(2)/20-GDP answer.
    assert report.epsilon == gdp_epsilon(np.sqrt(4 / 50**2 + 4 * 2 / 20**2), 1e-6) == report.spent_epsilon
    assert report.cost.mu_squared == pytest.approx(4 / 50**2 + 4 * 2 / 20**2, rel=1e-15)
    # Per query a priori in RDP: lam / (2 * 50^2) + lam / 20^2, answered or not.
    np.testing.assert_allclose(report.data_independent_rdp_per_query, np.tile(orders / 5000 + orders / 400, (4, 1)))
    assert report.data_dependent_epsilon <= apriori_rdp_epsilon(report)
    assert report.is_private and "ConfidentGNMax" in report.aggregator
    text = str(report)
    assert "PUBLISH" in text and "PRIVATE" in text and "do not publish" in text
    assert text.index("PUBLISH") < text.index("PRIVATE")  # the publishable number leads
    assert f"{report.epsilon:.4g}" in text and f"{report.data_dependent_epsilon:.4g}" in text
    assert "classic" in text
    improved = analyze(votes, agg, 1e-6, answered=answered, orders=orders, method="improved")
    assert improved.method == "improved" and "improved" in str(improved)
    expected = rdp_to_dp(orders, improved.rdp, 1e-6, "improved")
    assert (improved.data_dependent_epsilon, improved.data_dependent_order) == expected
    assert improved.epsilon == report.epsilon  # the method is the data-dependent conversion's only
    # n_answered: all queries for aggregators that always answer.
    assert analyze(votes, GNMax(10.0), 1e-5).n_answered == 4


def test_votes_alone_never_claim_a_budget():
    """A vote matrix cannot prove a privacy filter stopped the queries: ``analyze`` charges every submitted query."""
    votes = np.array([[240, 5, 5], [100, 90, 60], [90, 85, 75]] * 20)
    agg = ConfidentGNMax(threshold=150, sigma_threshold=50, sigma=20)
    answered = votes.max(axis=1) > 150  # what a run would answer: 20 of 60
    with pytest.raises(TypeError, match="budget"):
        analyze(votes, agg, 1e-5, answered=answered, budget=10.0)
    report = analyze(votes, agg, 1e-5, answered=answered)
    assert report.guarantee == "a-priori" and report.budget is None
    # 60 checks and 60 answers, although only 20 ran: the ex-post count (20 answers) would be lower.
    check, answer = agg.query_cost()
    assert report.epsilon == gdp_epsilon(np.sqrt(60 / 50**2 + 60 * 2 / 20**2), 1e-5)
    assert report.epsilon > (60 * check + 20 * answer).epsilon(1e-5)[0]


def test_plurality_is_not_private():
    report = analyze([[9, 1], [5, 5]], Plurality(), 1e-5)
    assert report.data_dependent_epsilon == np.inf and report.epsilon == np.inf
    assert np.isnan(report.data_dependent_order)
    assert not report.is_private
    assert "NOT differentially private" in str(report)
    assert np.all(np.isinf(report.rdp_per_query))


def test_rdp_to_dp_on_infinite_curves():
    eps, order = rdp_to_dp(REF_ORDERS, np.full(REF_ORDERS.size, np.inf), 1e-5)
    assert eps == np.inf and np.isnan(order)
    # Infinite at some orders only: the finite ones are used.
    rdp = np.where(REF_ORDERS > 10, np.inf, 0.5)
    eps, order = rdp_to_dp(REF_ORDERS, rdp, 1e-5)
    assert order == REF_ORDERS[REF_ORDERS <= 10].max()
    assert eps == pytest.approx(0.5 + math.log(1e5) / (order - 1), rel=1e-14)


# =====================================================================
# 6. Validation errors
# =====================================================================


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"orders": [1.0, 2.0]}, "orders"),
        ({"orders": [0.5]}, "orders"),
        ({"orders": [-3.0, 2.0]}, "orders"),
        ({"orders": []}, "orders"),
        ({"orders": [[2.0, 3.0]]}, "orders"),
        ({"orders": [2.0, np.nan]}, "orders"),
        ({"orders": [2.0, np.inf]}, "orders"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1.0}, "delta"),
        ({"delta": 2.0}, "delta"),
        ({"delta": "1e-5"}, "delta"),
        ({"delta": None}, "delta"),
        ({"delta": True}, "delta"),
        ({"delta": np.nan}, "delta"),
        ({"rdp": [0.1]}, "rdp"),
        ({"rdp": [0.1, 0.2, 0.3]}, "rdp"),
        ({"rdp": [[0.1, 0.2]]}, "rdp"),
        ({"rdp": [-0.1, 0.2]}, "rdp"),
        ({"rdp": [np.nan, 0.2]}, "rdp"),
        ({"method": "tight"}, "method"),
        ({"method": None}, "method"),
    ],
)
def test_rdp_to_dp_errors_name_the_parameter(kwargs, match):
    args = {"orders": [2.0, 3.0], "rdp": [0.1, 0.2], "delta": 1e-5, "method": "classic"}
    args.update(kwargs)
    if "orders" in kwargs and "rdp" not in kwargs:
        args["rdp"] = np.zeros(np.size(kwargs["orders"]))
    with pytest.raises(ValueError, match=match):
        rdp_to_dp(**args)


@pytest.mark.parametrize("orders", [[1.0], [0.5, 2.0], [], [[2.0, 3.0]], [np.nan]])
def test_check_orders_errors(orders):
    with pytest.raises(ValueError, match="orders"):
        check_orders(orders)
    with pytest.raises(ValueError, match="orders"):
        analyze([[3, 1]], GNMax(1.0), delta=1e-5, orders=orders)
    with pytest.raises(ValueError, match="orders"):
        GNMax(1.0).privacy_cost([[3, 1]], orders=orders)


@pytest.mark.parametrize("delta", [0, 0.0, 1, 1.0, -1.0, 2.0, "1e-5", None, True, np.inf])
def test_check_delta_errors(delta):
    with pytest.raises(ValueError, match="delta"):
        check_delta(delta)
    with pytest.raises(ValueError, match="delta"):
        analyze([[3, 1]], GNMax(1.0), delta=delta)


def test_check_orders_and_delta_accept_valid_input():
    np.testing.assert_array_equal(check_orders(None), DEFAULT_ORDERS)
    np.testing.assert_array_equal(check_orders(3), [3.0])
    np.testing.assert_array_equal(check_orders([1.5, 2]), [1.5, 2.0])
    assert check_delta(1e-5) == 1e-5 and check_delta(np.float32(0.5)) == 0.5


# =====================================================================
# 7. Confident- and Interactive-GNMax accounting
# =====================================================================


def test_confident_gnmax_pays_the_check_always_and_the_answer_only_when_answered():
    votes = np.array([[200, 40, 10], [120, 100, 30], [250, 0, 0], [90, 80, 80]])
    sigma1, sigma2, threshold = 50.0, 20.0, 150.0
    agg = ConfidentGNMax(threshold=threshold, sigma_threshold=sigma1, sigma=sigma2)
    answered = np.array([True, False, True, False])
    cost = agg.privacy_cost(votes, answered=answered, orders=REF_ORDERS)
    logq_check = bounds.logq_threshold(votes.max(axis=1).astype(float), threshold, sigma1)
    check = bounds.rdp_threshold_data_dependent(logq_check, sigma1, REF_ORDERS)
    answer = bounds.rdp_gaussian_data_dependent(bounds.logq_gaussian(votes, sigma2), sigma2, REF_ORDERS)
    np.testing.assert_array_equal(cost[~answered], check[~answered])  # unanswered: threshold only
    np.testing.assert_allclose(cost[answered], check[answered] + answer[answered], rtol=1e-15)
    assert np.all(answer[answered] > 0)  # the answer step adds something
    # Against the mpmath references.
    for i, row in enumerate(votes):
        expected = ref_curve(
            ref_rdp_gaussian, ref_logq_threshold(row.max(), threshold, sigma1), mp.sqrt(2) * sigma1, REF_ORDERS
        )
        if answered[i]:
            expected = expected + ref_curve(ref_rdp_gaussian, ref_logq_gaussian(row, sigma2), sigma2, REF_ORDERS)
        np.testing.assert_allclose(cost[i], expected, rtol=RTOL, atol=1e-300)
    # A priori: lam / (2 sigma1^2) + lam / sigma2^2 on every query, answered or not: which queries
    # are answered is an outcome, and charging only those would be an ex-post count.
    independent = agg.privacy_cost(votes, answered=answered, orders=REF_ORDERS, data_dependent=False)
    for i in range(votes.shape[0]):
        np.testing.assert_allclose(independent[i], REF_ORDERS / (2 * sigma1**2) + REF_ORDERS / sigma2**2, rtol=1e-14)
    # Flipping one query's mask changes that row only, by exactly the answer step.
    flipped = answered.copy()
    flipped[1] = True
    cost2 = agg.privacy_cost(votes, answered=flipped, orders=REF_ORDERS)
    np.testing.assert_array_equal(np.delete(cost2, 1, axis=0), np.delete(cost, 1, axis=0))
    np.testing.assert_allclose(cost2[1], check[1] + answer[1], rtol=1e-15)
    # analyze: n_answered and the composed curve.
    report = analyze(votes, agg, 1e-5, answered=answered, orders=REF_ORDERS)
    assert report.n_answered == 2
    np.testing.assert_allclose(report.rdp, check.sum(axis=0) + answer[answered].sum(axis=0), rtol=1e-12)


def test_confident_gnmax_requires_the_answered_mask():
    with pytest.raises(ValueError, match="answered"):
        ConfidentGNMax(threshold=5).privacy_cost([[8, 2]])
    with pytest.raises(ValueError, match="answered"):
        analyze([[8, 2]], ConfidentGNMax(threshold=5), 1e-5)


def test_interactive_gnmax_checks_teachers_against_the_student():
    votes = np.array([[200, 40, 10], [120, 100, 30], [10, 20, 220]])
    proba = np.array([[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]])
    sigma1, sigma2, threshold = 20.0, 40.0, 50.0
    agg = InteractiveGNMax(threshold=threshold, sigma_threshold=sigma1, sigma=sigma2)
    answered = np.array([False, True, False])
    cost = agg.privacy_cost(votes, answered=answered, student_proba=proba, orders=REF_ORDERS)
    # max_j (v_j - n p_j), n = 250: max(-25, 27.5, -2.5), max(70, -75, 5), max(-15, -5, 20).
    counts = np.array([27.5, 70.0, 20.0])
    for i in range(3):
        expected = ref_curve(
            ref_rdp_gaussian, ref_logq_threshold(counts[i], threshold, sigma1), mp.sqrt(2) * sigma1, REF_ORDERS
        )
        if answered[i]:
            expected = expected + ref_curve(ref_rdp_gaussian, ref_logq_gaussian(votes[i], sigma2), sigma2, REF_ORDERS)
        np.testing.assert_allclose(cost[i], expected, rtol=RTOL, atol=1e-300)
    independent = agg.privacy_cost(
        votes, answered=answered, student_proba=proba, orders=REF_ORDERS, data_dependent=False
    )
    for row in independent:  # a priori: every query as if answered
        np.testing.assert_allclose(row, REF_ORDERS / (2 * sigma1**2) + REF_ORDERS / sigma2**2, rtol=1e-14)


# =====================================================================
# 8. NZC: honest accounting
# =====================================================================


@pytest.mark.parametrize("constant", [0.0, 0.5, 4.0, 30.0])
def test_nzc_data_independent_cost_uses_sensitivity_c_plus_1(constant):
    votes = np.array([[30, 20], [50, 0]])
    sigma, scale = 40.0, 50.0
    gauss = NZC(constant=constant, sigma=sigma).privacy_cost(votes, orders=REF_ORDERS, data_dependent=False)
    np.testing.assert_allclose(gauss, np.tile(REF_ORDERS * (constant + 1) ** 2 / sigma**2, (2, 1)), rtol=1e-14)
    lap = NZC(constant=constant, scale=scale).privacy_cost(votes, orders=REF_ORDERS, data_dependent=False)
    eps0 = 2 * (constant + 1) / scale
    np.testing.assert_allclose(lap, np.tile(np.minimum(eps0, REF_ORDERS * eps0**2 / 2), (2, 1)), rtol=1e-14)


def test_nzc_with_constant_zero_is_gnmax_and_lnmax():
    votes = np.array([[30, 20, 0], [50, 0, 0], [20, 15, 15], [25, 25, 0]])
    for data_dependent in (True, False):
        np.testing.assert_array_equal(
            NZC(constant=0.0, sigma=10.0).privacy_cost(votes, data_dependent=data_dependent),
            GNMax(10.0).privacy_cost(votes, data_dependent=data_dependent),
        )
        np.testing.assert_array_equal(
            NZC(constant=0.0, scale=5.0).privacy_cost(votes, data_dependent=data_dependent),
            LNMax(5.0).privacy_cost(votes, data_dependent=data_dependent),
        )


def test_nzc_data_dependent_cost_matches_reference():
    # Theorem 6 applies to any mechanism that is (lam, lam (c+1)^2 / sigma^2)-RDP, with q of the
    # boosted histogram: i.e. Theorem 6 with noise sigma / (c + 1).
    votes = np.array([[5, 45, 0], [45, 3, 2], [10, 10, 30]])
    constant, sigma, scale = 1.0, 5.0, 3.0
    boosted = votes + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]])  # c on each row's plurality
    gauss = NZC(constant=constant, sigma=sigma).privacy_cost(votes, orders=REF_ORDERS)
    lap = NZC(constant=constant, scale=scale).privacy_cost(votes, orders=REF_ORDERS)
    for i in range(3):
        logq = ref_logq_gaussian(boosted[i], sigma)
        assert_matches_reference(gauss[i], ref_curve(ref_rdp_gaussian, logq, sigma / (constant + 1), REF_ORDERS))
        logq = ref_logq_laplace(boosted[i], scale)
        assert_matches_reference(lap[i], ref_curve(ref_rdp_pure, logq, 2 * (constant + 1) / scale, REF_ORDERS))
    # Not a trivial comparison: the data-dependent bound is in force at low orders on every row.
    assert np.all(gauss[:, REF_ORDERS == 2.0] < 0.5 * 2.0 * (constant + 1) ** 2 / sigma**2)
    assert np.all(lap[:, REF_ORDERS == 2.0] < 0.5 * min(4 / 3, 2.0 * (4 / 3) ** 2 / 2))


def test_nzc_data_dependent_never_exceeds_data_independent():
    # One teacher: q is ~1/2, so the data-dependent bound falls back to the data-independent
    # one at every order, and the two curves must agree (not just to an ulp).
    aggregator = NZC(constant=0.5, sigma=1.0)
    votes = [[0, 0, 0, 0, 0, 1]]
    dependent = aggregator.privacy_cost(votes)
    independent = aggregator.privacy_cost(votes, data_dependent=False)
    np.testing.assert_allclose(dependent, independent, rtol=1e-14)  # they are the same bound ...
    assert np.all(dependent <= independent)  # ... but must not exceed it by rounding


def test_nzc_report_epsilon_never_exceeds_data_independent_epsilon():
    # Three queries, one teacher each (q ~ 1/2): epsilon 1.396165820946735 > 1.3961658209467347 once
    # came out of two float paths for the same bound; in RDP they must agree exactly.
    report = analyze([[1, 0]] * 3, NZC(constant=0.5, sigma=13.0), 1e-5)
    assert report.data_dependent_epsilon == pytest.approx(apriori_rdp_epsilon(report), rel=1e-14)
    assert report.data_dependent_epsilon <= apriori_rdp_epsilon(report)
    # The publishable epsilon converts the same cost exactly in Gaussian DP: lower still.
    assert report.epsilon == gdp_epsilon(np.sqrt(3 * 2 * 1.5**2 / 13.0**2), 1e-5) < report.data_dependent_epsilon


def test_threshold_check_data_dependent_never_exceeds_data_independent():
    # Unanswered query: only the check is paid; q = P[N(0, sigma1^2) < 0] = 1/2, so the
    # data-dependent bound is the data-independent lam / (2 sigma1^2) at every order.
    # (sigma1 found by hypothesis; round values happen not to trigger the rounding.)
    aggregator = ConfidentGNMax(threshold=1.0, sigma_threshold=45.77529985926631, sigma=1.0)
    dependent = aggregator.privacy_cost([[0, 1]], answered=[False])
    check = aggregator.query_cost()[0].rdp(DEFAULT_ORDERS)  # the check alone, a priori
    np.testing.assert_allclose(dependent[0], check, rtol=1e-14)
    assert np.all(dependent <= aggregator.privacy_cost([[0, 1]], answered=[False], data_dependent=False))


def test_nzc_huge_constant_is_charged_and_warned():
    # The paper's c = 1e100: the honest cost is astronomically large, not ~0.
    with pytest.warns(PrivacyLeakWarning):
        report = analyze([[30, 20]], NZC(constant=1e100, sigma=1e50), 1e-5)
    assert report.epsilon > 1.0 and report.data_dependent_epsilon > 1.0


# =====================================================================
# 9. Vectorized evaluation: the same numbers as the dense formulas
# =====================================================================


def _dense_rdp_gaussian(logq, sigma, orders, sensitivity=1.0):
    """Theorem 6 on every (query, order) pair with ``np.logaddexp``: no dedup, no blocking, no skipping."""
    logq = np.asarray(logq, dtype=float)[:, None]
    lam = np.asarray(orders, dtype=float)[None, :]
    independent = np.broadcast_to(bounds.rdp_gaussian(sigma, lam, sensitivity), (logq.shape[0], lam.shape[1]))
    sigma = sigma / sensitivity
    variance = sigma**2
    neg_logq = np.maximum(-logq, 0.0)
    mu2 = sigma * np.sqrt(neg_logq)
    mu1 = mu2 + 1.0
    eps2 = mu2 / variance
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        conditions = (
            (mu2 > 1.0)
            & (neg_logq > eps2)
            & (logq <= (mu2 - 1.0) * eps2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0)) + np.log1p(1.0 / (mu2 - 1.0))))
        )
        ok = conditions & np.isfinite(logq)
        safe_mu2 = np.where(ok, mu2, 2.0)
        safe_eps1, safe_eps2 = (safe_mu2 + 1.0) / variance, safe_mu2 / variance
        safe_logq = np.where(ok, logq, -safe_eps2 - 10.0)
        log1q = bounds.log1mexp(safe_logq)
        log_a = log1q - bounds.log1mexp((safe_logq + safe_eps2) * (1.0 - 1.0 / safe_mu2))
        log_b = safe_eps1 - safe_logq / safe_mu2
        log_s = np.logaddexp(log1q + (lam - 1.0) * log_a, safe_logq + (lam - 1.0) * log_b)
        dependent = np.maximum(log_s / (lam - 1.0), TINY)
    out = np.where(conditions & (lam < mu1), np.minimum(dependent, independent), independent)
    return np.where(np.isneginf(logq), 0.0, out)


def _logaddexp_is_libm():
    """Whether NumPy's exp and log1p are the libm ones that np.logaddexp calls (no SIMD kernels here)."""
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 30.0, 20000)
    y = x + rng.normal(0.0, 5.0, x.size)
    y[::50] = x[::50]
    return np.array_equal(bounds._logaddexp_into(x.copy(), y), np.logaddexp(x, y))


def _random_logq(rng):
    votes = np.stack([rng.multinomial(500, p) for p in rng.dirichlet(np.full(30, 0.2), size=1500)])
    return [
        bounds.logq_gaussian(votes, 20.0),  # votes of many classes: mostly distinct log q
        bounds.logq_threshold(votes.max(axis=1), 350.0, 150.0),  # few distinct values, many repeats
        -np.exp(rng.uniform(-8.0, 9.0, 2500)),  # log q from -3e-4 down to -8000
        np.concatenate([[-np.inf, np.nan, np.inf, 0.0, -1e-300, -750.0], -rng.exponential(30.0, 60)]),
        -rng.exponential(5.0, 3),
    ]


def test_logaddexp_in_whole_array_passes_is_numpy_logaddexp():
    rng = np.random.default_rng(1)
    x = rng.normal(0.0, 50.0, 50000)
    y = np.concatenate([x[:1000], x[1000:] + rng.normal(0.0, 3.0, x.size - 1000)])  # ties, close, far
    expected = np.logaddexp(x, y)
    got = bounds._logaddexp_into(x.copy(), y)
    # With SIMD exp/log1p (AVX-512), each rounds differently from libm: a few ulps of max(x, y) apart, which is
    # many ulps of a result near 0 after cancellation, so the tolerance is in units of the larger input.
    np.testing.assert_array_less(np.abs(got - expected), 4 * np.spacing(np.maximum(np.abs(np.maximum(x, y)), 1.0)))
    if _logaddexp_is_libm():
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("sigma", [0.7, 20.0, 150.0])
@pytest.mark.parametrize("sensitivity", [1.0, bounds.THRESHOLD_SENSITIVITY])
def test_data_dependent_gaussian_is_the_dense_formula_bit_for_bit(sigma, sensitivity):
    """Dedup, blocking, the certified data-independent prefix and the logaddexp passes change no bit."""
    rng = np.random.default_rng(2)
    exact = _logaddexp_is_libm()
    grids = [DEFAULT_ORDERS, DEFAULT_ORDERS[::-1].copy(), rng.permutation(DEFAULT_ORDERS), REF_ORDERS]
    grids.append(np.array([1.5, 1.5, 3.0, 2.0, 1000.0, 1.0001]))  # duplicates, unsorted, few orders
    for logq in _random_logq(rng):
        for orders in grids:
            got = bounds.rdp_gaussian_data_dependent(logq, sigma, orders, sensitivity=sensitivity)
            expected = _dense_rdp_gaussian(logq, sigma, orders, sensitivity)
            assert got.shape == expected.shape == (logq.size, orders.size)
            if exact:
                np.testing.assert_array_equal(got, expected)
            else:  # NumPy's SIMD exp/log1p: an ulp apart, amplified where the bound cancels
                np.testing.assert_allclose(got, expected, rtol=RTOL, atol=0)


@pytest.mark.parametrize("sigma", [0.7, 20.0, 150.0, 1500.0])
def test_certified_independent_prefix_is_the_data_independent_value(sigma):
    """The orders skipped as certainly data-independent are, in the dense formula, exactly that value."""
    rng = np.random.default_rng(3)
    orders = DEFAULT_ORDERS
    t = orders - 1.0
    independent = bounds.rdp_gaussian(sigma, orders)
    rate = np.max(independent / orders)  # as the library: independent <= rate * lam
    n_skipped = 0
    for logq in _random_logq(rng):
        logq = logq[np.isfinite(logq) & (logq < 0)]
        mu2 = sigma * np.sqrt(-logq)
        eps1, eps2 = (mu2 + 1.0) / sigma**2, mu2 / sigma**2
        keep = (mu2 > 1.0) & (-logq > eps2)  # where log1q, log_a, log_b are defined
        logq, mu2, eps1, eps2 = logq[keep], mu2[keep], eps1[keep], eps2[keep]
        log1q = bounds.log1mexp(logq)
        log_a = log1q - bounds.log1mexp((logq + eps2) * (1.0 - 1.0 / mu2))
        log_b = eps1 - logq / mu2
        count = bounds._independent_prefix(t, log1q, log_a, logq, log_b, rate)
        log_s = np.logaddexp(log1q[:, None] + t * log_a[:, None], logq[:, None] + t * log_b[:, None])
        dependent = np.maximum(log_s / t, TINY)
        for row, k in zip(dependent, count):
            assert np.all(row[:k] >= independent[:k])  # min(dependent, independent) is independent
        n_skipped += count.sum()
    assert n_skipped > 0


def test_logq_gaussian_lookup_table_is_the_direct_evaluation():
    from scipy.special import log_ndtr, logsumexp

    rng = np.random.default_rng(4)
    for n_teachers, n_classes, alpha in [(5000, 150, 0.1), (250, 10, 1.0), (3, 2, 1.0), (40, 7, 10.0)]:
        votes = np.stack([rng.multinomial(n_teachers, p) for p in rng.dirichlet(np.full(n_classes, alpha), 300)])
        for sigma in [0.5, 40.0, 1e4]:
            by_table = bounds.logq_gaussian(votes, sigma)  # integer gaps: one log_ndtr per gap value
            direct = bounds.logq_gaussian(votes.astype(float), sigma)  # float votes: log_ndtr per entry
            np.testing.assert_array_equal(by_table, direct)
            gaps, top = bounds.plurality_gaps(votes)
            log_tail = log_ndtr(-gaps / (np.sqrt(2.0) * sigma))
            log_tail[np.arange(votes.shape[0]), top] = -np.inf
            expected = np.minimum(logsumexp(log_tail, axis=1), np.log1p(-1.0 / n_classes))
            np.testing.assert_allclose(by_table, expected, rtol=1e-13, atol=0)


def test_logsumexp_rows_is_scipy_logsumexp():
    from scipy.special import logsumexp

    rng = np.random.default_rng(5)
    a = rng.normal(0.0, 20.0, (400, 30))
    a[::3, ::4] = -np.inf
    a[1::7] = a[1::7, :1]  # rows of ties
    a[5] = -np.inf  # no finite term
    a[6, 3] = np.nan
    np.testing.assert_allclose(bounds._logsumexp_rows(a.copy()), logsumexp(a, axis=1), rtol=1e-14, atol=1e-14)


def test_log1mexp_scalar_is_the_array_evaluation():
    x = np.concatenate([[0.0, -0.0, -1e-300, -np.log(2.0), -np.inf, np.nan], -np.logspace(-20, 3, 500)])
    as_array = bounds.log1mexp(x)
    for value, expected in zip(x, as_array):
        got = bounds.log1mexp(value)
        assert isinstance(got, np.ndarray) and got.shape == ()
        np.testing.assert_array_equal(got, expected)
