"""PATE, then private leaf refits: a forest grown on the public pool, its leaf label counts from the private rows.

PATE spends a teacher's worth of noise on every answer, so a small budget buys
few labels. Once the student exists, the private rows can say more for less: a
forest *grown on the public rows* (their features, labeled by the current
model: post-processing) partitions the feature space without looking at
private data, and the number of private rows of each class in each leaf is a
histogram. The leaf-count tables of ``T`` trees have the L2 sensitivity of
:func:`skpate.privacy.sensitivity.count_tables_sensitivity` (``sqrt(2 T)``):
the Gaussian mechanism at noise ``sigma`` is ``sqrt(2 T) / sigma``-GDP ([DRS22]
Thm. 2.7), and rounds of it compose with the PATE part by adding ``mu^2``
([DRS22] Cor. 3.3). Each round grows a new forest on the public rows and the
class shares of the previous round's counts, so the partition follows the
decision boundary more closely.
"""

import numpy as np
from sklearn.base import MetaEstimatorMixin, clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, StrOptions

from .._validation import (
    Count,
    RealRange,
    check_handles_unknown,
    fit_public_preprocessor,
    on_private_rows,
    within_float32,
)
from ..privacy import Cost
from ..privacy.calibration import budget_cost, count_sigma, gaussian_share_epsilon
from ._base import BasePoolClassifier, private_features, public_matrix
from .count_model import NoisyCountModel, PredictsWithCountsMixin, noisy_counts

__all__ = ["LeafRefitClassifier", "largest_leaf"]

#: Relative margin below the budget at which the PATE part's share is aimed: the conversions between epsilon and
#: Gaussian DP round, and a share computed to compose to exactly the budget may exceed it by a few ulps.
SHARE_MARGIN = 1e-9


def largest_leaf(n_public):
    """The largest ``min_samples_leaf`` with which a tree of the refit forests can split ``n_public`` public rows.

    A tree grows on a bootstrap sample of the public rows, which holds about ``1 - 1/e`` (63%) of them (the
    others have weight 0), and a split leaves ``min_samples_leaf`` of them on each side. A function of the
    number of public rows only.

    Parameters
    ----------
    n_public : int

    Returns
    -------
    min_samples_leaf : int
        0 if no split is possible.
    """
    return int((1.0 - np.exp(-1.0)) * n_public) // 2


class LeafRefitClassifier(PredictsWithCountsMixin, MetaEstimatorMixin, BasePoolClassifier):
    """A PATE estimator under part of the budget, then private leaf refits of forests grown on the public pool.

    The budget ``epsilon`` (at ``delta``) is split before the fit:
    ``refit_share`` of its Gaussian-DP ``mu^2`` for the refits, the rest for
    ``pate``, whose own budget is lowered so that the two compose to at most
    ``epsilon`` (a-priori: ``privacy_spent_`` is known before the fit). Then:

    1. ``pate`` is fitted (teachers, noisy answers, student), and its student
       labels every public row;
    2. each of ``n_refits`` rounds grows a random regression forest
       (``n_estimators`` trees, leaves of at least ``min_samples_leaf``
       public rows) on the public rows and their class shares (one-hot
       student labels in the first round, then the previous round's
       predicted probabilities), counts the private rows of each class in
       each leaf, and adds Gaussian noise to every leaf count (``sigma =
       sqrt(2 n_estimators) / mu_round``, ``mu_round^2`` an equal share of the
       refit budget).

    The published model is the last forest and its noisy counts (see
    :meth:`export_model`); it predicts the mean over trees of each leaf's
    class shares (counts clipped at 0, plus one pseudo-row per class).
    :func:`skpate.make_tabular_refit` configures it for tabular data; its
    settings and their measurements are in ``docs/benchmarks/adult.md``.

    The unit of privacy is one private row under replacement (the PATE part's
    partition of the rows is by position); ``groups`` is not supported, since
    one group would move several leaf counts.

    Parameters
    ----------
    pate : PATEClassifier or TabularPATEClassifier
        Unfitted; cloned. Its ``epsilon``, ``delta`` and ``classes`` are set
        by this estimator (its share of the budget); its ``accountant`` must
        be None (this estimator's reserves the whole cost) and a pool part's
        ``neighboring`` "replace-one" (both refused otherwise); it keeps its
        own ``random_state`` (ignored by an unseeded fit; None: one drawn
        from this estimator's, so that a seeded fit is reproducible). With
        ``warm_start=True``, a refit reuses the teachers of ``pate_``.
    epsilon : float > 0, default=1.0
        The whole budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves its a-priori cost (the
        PATE part's plan and the refits) before any teacher is trained.
    preprocessor : transformer or "passthrough", default="passthrough"
        Maps rows to the numeric features the forests split on; fitted on the
        public rows only (e.g. :func:`skpate.datasets.adult_encoder`). Its
        output may be sparse or hold NaN (the forests send it down a branch);
        values beyond float32's range, which scikit-learn's trees compare in,
        count as that range's ends, on the same side of every split.
        A step with ``handle_unknown="error"`` is refused before the fit (a
        private category the public rows never showed would fail it, quoted);
        a failure on the private rows is a ``ValueError`` that quotes none.
    refit_share : float in (0, 1), default=0.7
        Share of the budget's ``mu^2`` spent on the refits.
    n_refits : int >= 1, default=3
        Rounds of leaf refits.
    n_estimators : int >= 1, default=20
        Trees per forest. More trees average more partitions but each round's
        noise grows as their square root.
    min_samples_leaf : int >= 1, default=20
        Public rows per leaf, at least; at most :func:`largest_leaf`
        ``(n_public)`` (about a third of them), so that the trees can split:
        a larger value is refused at fit.
    random_state : int, RandomState instance or None, default=None
        Seeds the forests and the noise (``pate`` keeps its own, used only when
        this is seeded). None (default) draws from OS entropy; a seed makes
        the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).

    Attributes
    ----------
    pate_ : PATEClassifier or TabularPATEClassifier
        The fitted PATE part. Private: it holds the teachers.
    model_ : NoisyCountModel
        The publishable model: the last forest and its noisy leaf counts.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    sigma_ : float
        Noise of every leaf count.
    privacy_spent_ : tuple of (float, float)
        ``(epsilon, delta)`` to publish with the model: the a-priori cost of
        the PATE part's plan and the refits, at most ``epsilon``.
    privacy_report_ : skpate.PrivacyReport
        Its ``cost`` is that a-priori cost; the PATE part's own report
        (``pate_.privacy_report_``, with its private data-dependent epsilon)
        stays with ``pate_``.

    Examples
    --------
    >>> from skpate import make_tabular_pate
    >>> from skpate.datasets import adult_encoder
    >>> pate = make_tabular_pate(adult_encoder())
    >>> refit = LeafRefitClassifier(pate, epsilon=0.5, classes=["<=50K", ">50K"], preprocessor=adult_encoder())
    >>> refit.pate_epsilon(n_public=8140) < 0.5  # the PATE part's share, known before the fit
    True
    """

    _parameter_constraints = {
        **BasePoolClassifier._parameter_constraints,
        "pate": [HasMethods(["fit", "predict", "planned_cost"])],
        "preprocessor": [StrOptions({"passthrough"}), HasMethods(["fit", "transform"])],
        "refit_share": [RealRange(0, 1, closed="neither")],
        "n_refits": [Count(1)],
        "n_estimators": [Count(1)],
        "min_samples_leaf": [Count(1)],
    }

    _guarantee = "a-priori"

    def __init__(
        self, pate, *, epsilon=1.0, delta=1e-5, classes=None, accountant=None, preprocessor="passthrough",
        refit_share=0.7, n_refits=3, n_estimators=20, min_samples_leaf=20, random_state=None,
    ):  # fmt: skip
        self.pate = pate
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.accountant = accountant
        self.preprocessor = preprocessor
        self.refit_share = refit_share
        self.n_refits = n_refits
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    # ------------------------------------------------------------ budget

    def _refit_cost(self):
        """``Cost`` of all the refit rounds: ``refit_share`` of the budget's ``mu^2`` (public parameters only)."""
        return Cost(mu_squared=float(self.refit_share) * budget_cost(self.epsilon, self.delta).mu_squared)

    def _pate_part(self, n_public, classes=None):
        """``pate`` with the largest budget that composes with the refits to at most ``epsilon``.

        The accountant is not passed on: this estimator reserves the whole cost itself.
        """
        classes = self.classes if classes is None else classes
        if classes is None:
            raise ValueError(
                "LeafRefitClassifier plans the PATE part's noise before the fit from the number of classes: pass "
                "classes=[...] to plan it without data."
            )
        if getattr(self.pate, "accountant", None) is not None:  # it would be dropped: this estimator reserves all
            raise ValueError(
                "pate has an accountant of its own, which LeafRefitClassifier would not charge: it reserves the whole "
                "cost (the PATE part's and the refits') with its own accountant. Pass accountant= to "
                "LeafRefitClassifier and set pate__accountant=None."
            )
        if getattr(self.pate, "neighboring", "replace-one") != "replace-one":
            # Its noise would be sized for adding or removing a row: replacing one moves its release twice as far.
            raise ValueError(
                f"pate={type(self.pate).__name__}(neighboring={self.pate.neighboring!r}): LeafRefitClassifier's "
                "guarantee is for replacing one row, under which a part calibrated for adding or removing one costs "
                "twice its budget's mu. Set pate__neighboring='replace-one'."
            )
        pate = clone(self.pate).set_params(delta=self.delta, classes=classes, accountant=None)
        refit = self._refit_cost()

        def state(epsilon):
            """-1: the PATE part cannot plan a fit (e.g. pay one answer) at ``epsilon``; 0: the parts fit; 1: over."""
            try:
                cost = pate.set_params(epsilon=epsilon).planned_cost(n_public) + refit
            except ValueError:  # its reason is given by _no_room below if no budget works
                return -1
            return 0 if cost.epsilon(self.delta)[0] <= self.epsilon else 1

        # A Gaussian-DP plan (GNMax, Confident-GNMax) within the rest of mu^2 composes exactly ([DRS22] Cor. 3.3),
        # aimed a hair below it; a plan with other parts (LNMax, a sanitized release) composes in RDP, so its budget
        # is the largest that fits, found by bisection among the budgets that can pay an answer.
        top = gaussian_share_epsilon(self.epsilon, self.delta, (1.0 - float(self.refit_share)) * (1.0 - SHARE_MARGIN))
        found = state(top)
        if found == 0:
            return pate.set_params(epsilon=top)
        best, low, high = None, 0.0, top
        if found == 1:
            for _ in range(60):
                middle = (low + high) / 2.0
                found = state(middle)
                if found == 1:
                    high = middle
                else:
                    low = middle
                    best = middle if found == 0 else best
        if best is None:
            self._no_room(pate, top, n_public)
        return pate.set_params(epsilon=best)

    def _no_room(self, pate, epsilon, n_public):
        """Raise the ValueError of a split that leaves the PATE part no budget it can plan with (the reason chained)."""
        message = (
            f"refit_share={self.refit_share} of epsilon={self.epsilon} leaves the PATE part "
            f"({type(self.pate).__name__}) at most epsilon {epsilon:.4g}, with which it cannot plan a fit (e.g. pay "
            "one answer of its aggregator): lower refit_share, raise epsilon, or give the PATE part more noise per "
            "answer."
        )
        try:
            pate.set_params(epsilon=epsilon).planned_cost(n_public)
        except ValueError as error:  # the PATE part's own reason, from public parameters: chained for the user
            raise ValueError(message) from error
        raise ValueError(message)

    def _check_public(self, n_public):
        if isinstance(self.pate, BasePoolClassifier):  # a pool part transforms the private rows with its preprocessor
            check_handles_unknown(getattr(self.pate, "preprocessor", None), type(self).__name__, "pate__preprocessor")
        if self.min_samples_leaf > largest_leaf(n_public):
            raise ValueError(
                f"min_samples_leaf={self.min_samples_leaf} leaves the refit forests no split of {n_public} public "
                "rows (each tree grows on a bootstrap sample holding about 63% of them, and a split needs "
                f"min_samples_leaf on each side): the model would predict one share everywhere. Use "
                f"min_samples_leaf <= {largest_leaf(n_public)} (skpate.pool.refit.largest_leaf(n_public)), or pass "
                "more public rows."
            )

    def pate_epsilon(self, n_public):
        """The budget the PATE part gets, known before the fit.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        epsilon : float
        """
        self._validate_params()
        return self._pate_part(n_public).epsilon

    def planned_cost(self, n_public):
        """What a fit will cost, known before it runs: the PATE part's plan and the refits, at most ``epsilon``.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        self._validate_params()
        return self._plan(n_public, None)[0]

    def _plan(self, n_public, classes):
        """The whole cost, and the PATE part it was planned with (which the fit then runs)."""
        pate = self._pate_part(n_public, classes)
        return pate.planned_cost(n_public) + self._refit_cost(), pate

    # --------------------------------------------------------------- fit

    def _fit_public(self, X_public, name):
        self.pate.check_public(X_public)  # a pool learner as the PATE part fits its preprocessor there
        preprocessor, Z_public = fit_public_preprocessor(self._preprocessor(), X_public, name)
        # Dense or CSR, NaN allowed (the forests send it down a branch), beyond float32's range kept at its ends
        # (where the forests would put it anyway; see within_float32).
        return preprocessor, within_float32(public_matrix(Z_public, name, ensure_all_finite=False))

    def _fit_pool(self, X_private, y_private, X_public, public, classes, rng, plan):
        pate = plan
        if getattr(self.pate, "warm_start", False) and hasattr(self, "pate_"):  # reuse the teachers
            pate = self.pate_.set_params(**pate.get_params(deep=False))
        if pate.random_state is None:  # a seeded refit is reproducible as a whole (as scikit-learn's ensembles)
            pate.set_params(random_state=int(rng.integers(2**31)))
        pate.fit(X_private, y_private, X_public=X_public)
        codes = np.searchsorted(classes, y_private)  # the PATE part checked that every label is in classes
        name = type(self).__name__
        preprocessor, Z_public = public
        Z_private = private_features(preprocessor, X_private, Z_public, name)
        self.sigma_ = count_sigma(self.n_estimators, np.sqrt(self._refit_cost().mu_squared / self.n_refits))
        # The first partition follows the student's labels, later ones the refitted class shares (one-hot, then
        # probabilities: a regression forest places its splits where the shares change, not only the argmax).
        shares = (pate.predict(X_public)[:, None] == classes).astype(float)
        for round_number in range(self.n_refits):
            forest = RandomForestRegressor(
                self.n_estimators,
                min_samples_leaf=self.min_samples_leaf,
                max_features="sqrt",
                random_state=int(rng.integers(2**31)),
            ).fit(Z_public, shares)  # public rows, targets derived from released outputs: free
            counts = on_private_rows(
                name, "the leaf assignment of the private rows (the preprocessor's output, by the forest)",
                noisy_counts, forest, Z_private, codes, classes.size, self.sigma_, rng, stacklevel=3,
            )  # fmt: skip
            model = NoisyCountModel(forest, preprocessor, classes, counts)
            if round_number + 1 < self.n_refits:  # the next partition's targets
                shares = model.transformed_proba(Z_public)
        self.pate_ = pate
        self.model_ = model

    def _mechanism(self):
        return (
            f"{self.pate_.privacy_report_.mechanism} under epsilon {self.pate_.epsilon:.4g}, then {self.n_refits} "
            f"rounds of Gaussian leaf counts of {self.n_estimators}-tree forests (sigma={self.sigma_:.4g})"
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        pate_tags = get_tags(self.pate).input_tags  # the refit forests accept NaN and sparse input
        tags.input_tags.allow_nan, tags.input_tags.sparse = pate_tags.allow_nan, pate_tags.sparse
        return tags
