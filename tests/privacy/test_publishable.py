"""The publishable epsilon: exact Gaussian DP, a-priori bounds, budget-first fits, the public label set.

Reference values are those of ``shared/design/publishable-privacy.md`` (Dong, Roth, Su 2022 for Gaussian
DP); the conversions are also checked against Google's dp-accounting, an independent implementation.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from skpate import NZC, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, PATEClassifier, Plurality, PrivacyLeakWarning
from skpate.privacy import DEFAULT_ORDERS, Cost, analyze, gdp_delta, gdp_epsilon, gdp_mu, rdp_to_dp
from skpate.privacy.calibration import gaussian_budget, largest_count

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402

# ---------------------------------------------------------------- Gaussian DP


@pytest.mark.parametrize("epsilon, mu", [(1.0, 0.268), (2.0, 0.502)])
def test_gdp_reference_values(epsilon, mu):
    assert gdp_mu(epsilon, 1e-5) == pytest.approx(mu, abs=5e-4)
    assert gdp_epsilon(gdp_mu(epsilon, 1e-5), 1e-5) == pytest.approx(epsilon, rel=1e-9)


def test_gdp_conversion_by_hand():
    # mu = 1, epsilon = 1: Phi(-1/2) - e Phi(-3/2) = 0.3085375387 - 2.718281828 * 0.0668072013 = 0.1269367.
    assert gdp_delta(1.0, 1.0) == pytest.approx(0.30853753872598688 - np.e * 0.066807201268858057, rel=1e-12)
    # epsilon = 0: delta = Phi(mu/2) - Phi(-mu/2), the total variation of N(0,1) and N(mu,1).
    assert gdp_delta(0.0, 0.5) == pytest.approx(0.19741265136584713, rel=1e-12)
    assert gdp_delta(1.0, 0.0) == 0.0 and gdp_epsilon(0.0, 1e-5) == 0.0 and gdp_epsilon(np.inf, 1e-5) == np.inf


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(1e-3, 20.0), delta=st.floats(1e-12, 0.1))
def test_gdp_epsilon_is_the_exact_inverse_and_monotone(mu, delta):
    epsilon = gdp_epsilon(mu, delta)
    assert epsilon >= 0
    if epsilon > 0:
        assert gdp_delta(epsilon, mu) <= delta  # valid: never below the exact value
        assert gdp_delta(epsilon * (1 - 1e-9), mu) > delta * (1 - 1e-6)  # and tight
    assert gdp_epsilon(mu * 1.01, delta) >= epsilon  # more mu, more epsilon
    assert gdp_epsilon(mu, delta / 10) >= epsilon  # smaller delta, more epsilon
    assert gdp_delta(gdp_epsilon(mu, delta), gdp_mu(gdp_epsilon(mu, delta), delta)) <= delta * (1 + 1e-9)


@pytest.mark.parametrize("mu", [0.05, 0.268, 1.0, 3.0])
def test_gdp_agrees_with_dp_accounting(mu):
    pld = privacy_loss_distribution.from_gaussian_mechanism(1.0 / mu, value_discretization_interval=1e-5)
    assert gdp_epsilon(mu, 1e-5) == pytest.approx(pld.get_epsilon_for_delta(1e-5), rel=1e-6)
    assert gdp_delta(1.0, mu) == pytest.approx(pld.get_delta_for_epsilon(1.0), rel=1e-4, abs=1e-20)


@settings(max_examples=30, deadline=None)
@given(rdp=st.lists(st.floats(1e-3, 20.0), min_size=5, max_size=5), delta=st.floats(1e-10, 1e-2))
def test_improved_rdp_conversion_agrees_with_dp_accounting(rdp, delta):
    # (dp-accounting also returns 0 when delta >= sqrt(1 - exp(-rdp)), a KL bound; not in this range.)
    orders = np.array([1.5, 2.0, 8.0, 32.0, 256.0])
    ours = rdp_to_dp(orders, np.sort(rdp), delta, method="improved")[0]
    theirs = rdp_privacy_accountant.compute_epsilon(orders, np.sort(rdp), delta)[0]
    assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


# --------------------------------------------------------------- Cost


def test_cost_composes_and_converts_by_kind():
    gnmax, check = GNMax(40).query_cost()[1], ConfidentGNMax(200, 150, 40).query_cost()[0]
    assert (250 * gnmax).mu_squared == pytest.approx(250 * 2 / 1600)
    assert (900 * (check + gnmax)).epsilon(1e-5) == (pytest.approx(4.783, abs=1e-3), "gdp")
    # Laplace: privacy loss distributions beat RDP (500 LNMax(20) queries: 11.41 against 12.30).
    lnmax = 500 * LNMax(20).query_cost()[1]
    epsilon, how = lnmax.epsilon(1e-5)
    assert how == "pld" and epsilon < rdp_to_dp(DEFAULT_ORDERS, lnmax.rdp(), 1e-5, "improved")[0]
    # A release is known only in RDP.
    assert (250 * gnmax + Cost(release=(0.02, 10.0))).epsilon(1e-5)[1] == "rdp"
    assert (0 * Plurality().query_cost()[1]).is_zero and np.isinf((1 * Plurality().query_cost()[1]).epsilon(1e-5)[0])
    with pytest.raises(ValueError):
        2 * Cost(release=(0.02, 10.0))
    # Laplace and Gaussian parts together (an LNMax fit next to Gaussian mechanisms) compose, above either part
    # alone and below the sum of their epsilons (it raised on mismatched discretisation grids before).
    mixed = lnmax + 250 * gnmax
    epsilon, how = mixed.epsilon(1e-5)
    alone = [lnmax.epsilon(1e-5)[0], (250 * gnmax).epsilon(1e-5)[0]]
    assert max(alone) < epsilon < sum(alone) and how in ("pld", "rdp")


@pytest.mark.parametrize("per_query", [GNMax(40).query_cost()[1], LNMax(20).query_cost()[1]])
def test_largest_count_is_the_largest_within_the_budget(per_query):
    n = largest_count(per_query, 2.0, 1e-5, limit=100_000)
    assert (n * per_query).epsilon(1e-5)[0] <= 2.0 < ((n + 1) * per_query).epsilon(1e-5)[0]
    assert largest_count(per_query, 2.0, 1e-5, limit=10) == 10


def test_gaussian_budget_with_and_without_a_release():
    assert gaussian_budget(1.0, 1e-5) == pytest.approx(gdp_mu(1.0, 1e-5) ** 2)
    release = Cost(release=(0.02, 10.0))
    budget = gaussian_budget(1.0, 1e-5, fixed=release)
    assert 0 < budget < gaussian_budget(1.0, 1e-5)
    assert (Cost(mu_squared=budget) + release).epsilon(1e-5)[0] <= 1.0
    assert (Cost(mu_squared=budget * 1.001) + release).epsilon(1e-5)[0] > 1.0


# --------------------------------------------------- a-priori, not ex-post


def test_selective_aggregator_publishes_the_all_answered_bound():
    """Finding 1: 900 queries, 478 answered, published 4.15 (an ex-post count); the bound is 4.78."""
    votes = np.tile([[200, 50], [120, 130]], (450, 1))
    answered = np.zeros(900, dtype=bool)
    answered[:478] = True
    report = analyze(votes, ConfidentGNMax(200, 150, 40), 1e-5, answered=answered)
    assert report.epsilon == pytest.approx(4.783, abs=1e-3) and report.guarantee == "a-priori"
    assert report.n_answered == 478


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    data=st.data(),
    sigmas=st.tuples(st.floats(1.0, 200.0), st.floats(1.0, 200.0)),
    interactive=st.booleans(),
)
def test_no_answered_mask_publishes_less_than_all_answered(n, data, sigmas, interactive):
    answered = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    votes = np.tile([[30, 10]], (n, 1))
    kwargs = dict(threshold=20, sigma_threshold=sigmas[0], sigma=sigmas[1])
    aggregator = InteractiveGNMax(**kwargs) if interactive else ConfidentGNMax(**kwargs)
    proba = np.full(votes.shape, 0.5) if interactive else None
    report = analyze(votes, aggregator, 1e-5, answered=answered, student_proba=proba)
    everything = analyze(votes, aggregator, 1e-5, answered=np.ones(n, dtype=bool), student_proba=proba)
    assert report.epsilon == everything.epsilon == aggregator.apriori_cost(n).epsilon(1e-5)[0]


# ------------------------------------------------------ budget-first fits


def pate(**params):
    """50 teachers, labels 0, 1, 2, no budget unless a test gives one (``epsilon=None``: the papers' protocol)."""
    defaults = dict(n_teachers=50, epsilon=None, random_state=0, classes=[0, 1, 2])
    return PATEClassifier(DecisionTreeClassifier(max_depth=4), **{**defaults, **params})


@pytest.mark.parametrize(
    "aggregator, rounds",
    [
        (GNMax(sigma=15.0), 1),
        (LNMax(scale=15.0), 1),
        (NZC(constant=0.5, sigma=20.0), 1),
        (ConfidentGNMax(threshold=35, sigma_threshold=40.0, sigma=25.0), 1),
        (ConfidentGNMax(threshold=35, sigma_threshold=40.0, sigma=25.0), 3),
        (InteractiveGNMax(threshold=10, sigma_threshold=30.0, sigma=25.0, confidence=0.9), 2),
    ],
)
@pytest.mark.parametrize("epsilon", [1.0, 3.0])
def test_budget_first_fit_never_publishes_more_and_spends_nearly_all(
    three_class_split_large, aggregator, rounds, epsilon
):
    X, y, X_pub, _ = three_class_split_large
    clf = pate(aggregator=aggregator, epsilon=epsilon, n_rounds=rounds).fit(X, y, X_public=X_pub)
    report = clf.privacy_report_
    assert clf.privacy_spent_ == (report.epsilon, 1e-5) and report.epsilon <= epsilon
    ran_out = clf.n_queries_ == len(X_pub)
    assert ran_out or report.spent_epsilon >= 0.9 * epsilon, (report.spent_epsilon, clf.n_queries_)
    assert report.spent_epsilon <= epsilon * (1 + 1e-12)
    # Selective aggregators run a filter: the answer step is charged only where it ran, and they answer
    # more queries than the a-priori bound would allow for the same budget.
    if isinstance(aggregator, ConfidentGNMax | InteractiveGNMax):
        assert report.guarantee == "budget" and report.epsilon == epsilon
        apriori = largest_count(sum(aggregator.query_cost(), Cost()), epsilon, 1e-5, limit=len(X_pub))
        assert clf.n_queries_ > apriori


def test_budget_without_noise_calibrates_gnmax(three_class_split_large):
    X, y, X_pub, y_pub = three_class_split_large
    clf = pate(epsilon=2.0).fit(X, y, X_public=X_pub)
    # GNMax.for_ensemble: 50 teachers, 3 classes -> sigma = 50 / (1.75 sqrt(3 / 2)) = 23.33, which 2.0 covers for
    # fewer than the 1,000 public rows (so the noise is not lowered).
    assert clf.aggregator_.sigma == pytest.approx(50 / (1.75 * np.sqrt(1.5)))
    assert clf.n_queries_ < len(X_pub)
    assert 0.9 * 2.0 <= clf.privacy_spent_[0] <= 2.0
    # A budget that covers every public row at that noise buys less noise instead, and spends it on all of them.
    rich = pate(epsilon=20.0).fit(X, y, X_public=X_pub)
    assert rich.aggregator_.sigma == GNMax.for_budget(20.0, 1e-5, len(X_pub)).sigma < 50 / (1.75 * np.sqrt(1.5))
    assert rich.n_queries_ == len(X_pub) and rich.privacy_spent_[0] == pytest.approx(20.0, rel=1e-6)
    fixed = pate(epsilon=2.0, max_queries=100).fit(X, y, X_public=X_pub)
    assert fixed.n_queries_ == 100 and fixed.aggregator_.sigma == GNMax.for_budget(2.0, 1e-5, 100).sigma
    assert fixed.privacy_spent_[0] == pytest.approx(2.0, rel=1e-6)


def test_publishable_epsilon_before_the_fit_needs_the_label_set_for_default_noise():
    # The default noise under a budget depends on the number of classes, which only classes= gives a priori.
    with pytest.raises(ValueError, match="classes="):
        pate(epsilon=2.0, classes=None).publishable_epsilon(1000)
    assert pate(epsilon=2.0).publishable_epsilon(1000) == pytest.approx(2.0, rel=0.05)
    assert pate(epsilon=2.0).publishable_epsilon(1000) <= 2.0
    assert pate(epsilon=2.0, classes=None, aggregator=GNMax(sigma=20.0)).publishable_epsilon(1000) <= 2.0


def test_budget_that_the_plan_never_reaches_publishes_the_apriori_bound(three_class_split_large):
    X, y, X_pub, _ = three_class_split_large
    clf = pate(aggregator=GNMax(sigma=15.0), epsilon=50.0, max_queries=40).fit(X, y, X_public=X_pub)
    assert clf.n_queries_ == 40 and clf.privacy_report_.guarantee == "a-priori"
    assert clf.privacy_spent_[0] == pytest.approx(gdp_epsilon(np.sqrt(40 * 2 / 225), 1e-5))


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(aggregator=Plurality(), epsilon=1.0), "not private"),
        (dict(aggregator=GNMax(sigma=0.5), epsilon=0.01), "does not cover one query"),
        (dict(aggregator=ConfidentGNMax(30, 0.5, 0.5), epsilon=0.01), "does not cover one query"),
        (dict(aggregator=GNMax(sigma=40.0), epsilon=0.05, sanitize_order=20.0), "release"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=-1.0), "epsilon"),
    ],
)
def test_bad_budgets_are_refused_before_any_teacher(three_class_split_large, params, match):
    X, y, X_pub, _ = three_class_split_large
    clf = pate(**params)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, X_public=X_pub)
    assert not hasattr(clf, "teachers_")


# --------------------------------------------------------- the label set


def test_classes_from_private_labels_warn_and_name_the_fix(three_class_split_large):
    """Without classes the label set is read from the private labels: a PrivacyLeakWarning that names the fix,
    points at the caller's line, and quotes no label (the warning lands in logs)."""
    X, y, X_pub, _ = three_class_split_large
    names = np.array(["secret-a", "secret-b", "secret-c"])
    with pytest.warns(
        PrivacyLeakWarning, match=r"from the private labels.*Pass PATEClassifier\(classes=\.\.\.\)"
    ) as caught:
        clf = pate(classes=None, aggregator=GNMax(5.0), max_queries=20).fit(X, names[y], X_public=X_pub)
    assert list(clf.classes_) == list(names)
    caught = [w for w in caught if w.category is PrivacyLeakWarning]  # not the seeded fit's SeededNoiseWarning
    assert len(caught) == 1 and caught[0].filename == __file__
    assert "secret" not in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pate(aggregator=GNMax(5.0), max_queries=20).fit(X, y, X_public=X_pub)


def test_public_classes_fix_the_vote_columns(three_class_split_large):
    """Finding 3: a label absent from the private rows is still a column, so its presence is not published."""
    X, y, X_pub, _ = three_class_split_large
    clf = pate(classes=[0, 1, 2, 3], aggregator=GNMax(5.0), max_queries=50).fit(X, y, X_public=X_pub)
    assert list(clf.classes_) == [0, 1, 2, 3] and clf.predict_proba(X_pub).shape == (len(X_pub), 4)
    with pytest.raises(ValueError, match="not in classes"):
        pate(classes=[0, 1]).fit(X, y, X_public=X_pub)
    with pytest.raises(ValueError, match="distinct"):
        pate(classes=[0, 0, 1]).fit(X, y, X_public=X_pub)


def test_unsigned_labels(three_class_split_large):
    X, y, X_pub, _ = three_class_split_large
    clf = pate(classes=np.array([0, 1, 2], dtype=np.uint8), aggregator=GNMax(5.0), max_queries=50)
    clf.fit(X, y.astype(np.uint8), X_public=X_pub)
    assert set(np.unique(clf.public_labels_)) <= {-1, 0, 1, 2}


def test_warm_start_checks_the_classes(three_class_split_large):
    X, y, X_pub, _ = three_class_split_large
    clf = pate(aggregator=GNMax(5.0), max_queries=20, warm_start=True).fit(X, y, X_public=X_pub)
    with pytest.raises(ValueError, match="warm_start"):
        clf.set_params(classes=[0, 1, 2, 3]).fit(X, y, X_public=X_pub)


def test_default_fit_publishes_a_number_independent_of_the_votes(three_class_split_large):
    """Finding 2: the default release order came from the private votes; now two different private
    datasets of the same size publish the same epsilon."""
    X, y, X_pub, _ = three_class_split_large
    noisy = np.random.default_rng(0).permutation(y)  # labels unrelated to X: teachers disagree
    a = pate(aggregator=ConfidentGNMax(35, 20.0, 10.0), max_queries=100).fit(X, y, X_public=X_pub)
    b = pate(aggregator=ConfidentGNMax(35, 20.0, 10.0), max_queries=100).fit(X, noisy, X_public=X_pub)
    assert a.privacy_report_.n_answered != b.privacy_report_.n_answered
    assert a.privacy_report_.data_dependent_epsilon != b.privacy_report_.data_dependent_epsilon
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.privacy_report_.sanitized_epsilon is None  # no release unless asked for


def test_publishable_fields_hold_nothing_computed_from_the_raw_votes(three_class_split_large):
    """report.publishable(): JSON-ready, and equal for two private datasets whose released outputs agree."""
    import json

    X, y, X_pub, _ = three_class_split_large
    noisy = np.random.default_rng(0).permutation(y)
    a = pate(aggregator=GNMax(5.0), max_queries=40).fit(X, y, X_public=X_pub).privacy_report_
    b = pate(aggregator=GNMax(5.0), max_queries=40).fit(X, noisy, X_public=X_pub).privacy_report_
    assert a.data_dependent_epsilon != b.data_dependent_epsilon  # the private analysis differs...
    assert a.publishable() == b.publishable()  # ...what may be published does not
    fields = json.loads(json.dumps(a.publishable()))
    assert fields["epsilon"] == a.epsilon == pytest.approx(gdp_epsilon(np.sqrt(2 * 40) / 5.0, 1e-5))
    assert fields["guarantee"] == "a-priori" and fields["n_queries"] == 40 and fields["sanitized_epsilon"] is None
    # What was released and the unit of privacy: public parameters, the same for both datasets.
    assert fields["mechanism"] == fields["aggregator"] == "GNMax(sigma=5.0)" and fields["neighboring"] == "replace-one"
    assert not {"data_dependent_epsilon", "data_dependent_order", "rdp", "rdp_per_query"} & set(fields)
    budget = pate(aggregator=ConfidentGNMax(35, 20.0, 10.0), epsilon=2.0, max_queries=None).fit(X, y, X_public=X_pub)
    fields = budget.privacy_report_.publishable()
    assert fields["guarantee"] == "budget" and fields["budget"] == fields["epsilon"] == 2.0
    assert fields["spent_epsilon"] <= 2.0 and fields["n_answered"] <= fields["n_queries"]
