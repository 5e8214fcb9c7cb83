"""Private model selection: a private counterpart of ``GridSearchCV`` over skpate estimators and their settings.

Choosing settings by their accuracy on private rows spends privacy, and
choosing them on another dataset's benchmark is a guess. :class:`PrivateModelSelection`
does the first and pays for it, before the fit:

1. the private rows are split at random, independently of their content, into
   training rows and held-out rows (``holdout`` of them);
2. every candidate is fitted on the training rows under an equal share of the
   budget's Gaussian-DP ``mu^2``, so that together they are ``mu``-GDP
   ([DRS22] Cor. 3.3) with ``mu = gdp_mu(epsilon, delta)``;
3. one candidate is chosen by the exponential mechanism on the number of
   held-out rows each predicts correctly, at the largest epsilon that is
   itself ``mu``-GDP (:func:`skpate.privacy.selection.gdp_pure_epsilon`).

A private row is either a training row or a held-out row, so the selection as a
whole is ``mu``-GDP: ``privacy_spent_`` is ``epsilon``, known before the fit
(the argument is in :mod:`skpate.privacy.selection`). The chosen candidate is
the only model published; the scores are never stored.

Why this design rather than the random-repetition analyses (Liu & Talwar 2019;
Papernot & Steinke 2022): every candidate runs exactly once (a known run time),
the few candidates a tabular user needs compose exactly in Gaussian DP, and the
choice itself costs no epsilon, only held-out rows. Papernot & Steinke's bound
pays a factor of about two on the repeated run's Renyi curve plus a term in the
log of the expected number of repetitions, and its number of runs is random;
it wins for many candidates, not for the two to four here
(``docs/selection.md`` has the numbers).

[DRS22] Dong, Roth, Su. "Gaussian Differential Privacy", JRSS B 2022.
"""

import time
import warnings

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import ClassifierMixin, clone
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.metaestimators import _BaseComposition, available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ._validation import (
    EpsilonRange,
    NJobs,
    RealRange,
    check_handles_unknown,
    check_noise_generator,
    in_caller_noise_scope,
    on_private_rows,
)
from .base import PrivateClassifierMixin, charged
from .privacy import BudgetAccountant, Cost, PrivacyReport
from .privacy.calibration import budget_cost, gaussian_share_epsilon
from .privacy.selection import exponential_mechanism, gdp_pure_epsilon, held_out_score_sensitivity

__all__ = ["PrivateModelSelection", "grid_candidates", "sampled_candidates"]


def _relation(estimator):
    """The neighbouring relation a candidate protects (a nested selection's is its candidates'); a candidate that is
    no private skpate estimator is refused by ``_check_candidates``, with the fix."""
    return estimator._neighboring() if hasattr(estimator, "_neighboring") else "replace-one"


def _chosen_has(selection, method):
    """``available_if`` check: the chosen candidate has ``method``; before a fit, every candidate has it."""
    if hasattr(selection, "best_estimator_"):
        return hasattr(selection.best_estimator_, method)
    try:
        return bool(selection.candidates) and all(hasattr(candidate, method) for _, candidate in selection.candidates)
    except (TypeError, ValueError):  # candidates fit refuses: fit says why
        return False


#: The parameters of the contract that the selection sets on every candidate.
_CONTRACT = ("epsilon", "delta", "classes", "accountant", "random_state")


def grid_candidates(estimator, param_grid, prefix=None):
    """``(name, estimator)`` candidates of :class:`PrivateModelSelection`, one per point of ``param_grid``.

    Parameters
    ----------
    estimator : skpate estimator
        Cloned for every point.
    param_grid : dict or list of dicts
        As ``GridSearchCV``'s (:class:`sklearn.model_selection.ParameterGrid`).
    prefix : str, default=None
        Start of every name; None: the estimator's class name.

    Returns
    -------
    candidates : list of (str, estimator)
    """
    prefix = type(estimator).__name__ if prefix is None else prefix
    return [(_name(prefix, params), clone(estimator).set_params(**params)) for params in ParameterGrid(param_grid)]


def sampled_candidates(estimator, param_distributions, n_iter, *, random_state=None, prefix=None):
    """``n_iter`` candidates with settings drawn from ``param_distributions`` (as ``RandomizedSearchCV``'s).

    The draw reads no data, so it costs nothing; the selection pays for every candidate it trains.

    Parameters
    ----------
    estimator : skpate estimator
    param_distributions : dict or list of dicts
        As :class:`sklearn.model_selection.ParameterSampler`'s.
    n_iter : int
    random_state : int, RandomState instance or None, default=None
    prefix : str, default=None

    Returns
    -------
    candidates : list of (str, estimator)
    """
    prefix = type(estimator).__name__ if prefix is None else prefix
    return [
        (_name(prefix, params), clone(estimator).set_params(**params))
        for params in ParameterSampler(param_distributions, n_iter, random_state=random_state)
    ]


def _fit_candidate(candidate, X, y, X_public):
    """``(fitted candidate, seconds, warnings)``: one candidate's fit, in a worker process when ``n_jobs`` asks for
    several. Its warnings (as the caller's filters let them through) come back for the caller to re-emit: a worker
    process would print them to its own stderr, past the caller's filters, ``catch_warnings`` and logging."""
    start, error = time.perf_counter(), None
    with warnings.catch_warnings(record=True) as caught:
        try:
            candidate.fit(X, y, X_public=X_public)
        except Exception as failure:  # noqa: BLE001 - the caller raises it, in the candidates' order
            error = failure
    said = [(w.category, str(w.message), w.filename, w.lineno) for w in caught]
    return candidate, time.perf_counter() - start, said, error


def _name(prefix, params):
    return prefix + "(" + ", ".join(f"{key}={value!r}" for key, value in sorted(params.items())) + ")"


class PrivateModelSelection(PrivateClassifierMixin, ClassifierMixin, _BaseComposition):
    """Fit several private candidates under one budget and publish the one a private choice prefers.

    Every candidate is a skpate estimator (the contract of :mod:`skpate.base`)
    whose a-priori cost is Gaussian DP (noisy gradient descent, leaf counts,
    cells, GNMax or Confident-GNMax PATE). The budget ``(epsilon, delta)`` is
    fixed before the fit, and covers the candidates' training and the choice
    (see :mod:`skpate.selection` for the analysis).

    Parameters
    ----------
    candidates : list of (str, estimator)
        Named, unfitted private estimators (cloned). Their ``epsilon``,
        ``delta``, ``classes`` and ``random_state`` are set by the selection;
        their ``accountant`` must be None (the selection's reserves the whole
        cost; refused otherwise). :func:`grid_candidates` expands a parameter grid,
        :func:`sampled_candidates` draws settings from distributions.
    epsilon : float > 0, default=1.0
        The whole budget, fixed before the fit.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    holdout : float in (0, 1), default=0.1
        Expected share of the private rows held out to score the candidates
        (each row independently); with one candidate, no row is held out.
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves its whole cost before it
        reads a private row.
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the candidates and the choice. None (default) draws
        from OS entropy; a seed makes the noise reproducible by anyone who
        knows it (:class:`~skpate.SeededNoiseWarning`).
    n_jobs : int, default=None
        Number of candidates fitted in parallel, in worker processes
        (joblib's loky, whatever backend is configured: threads would share
        the warnings that keep private values out of messages). ``None``
        means 1 unless in a :func:`joblib.parallel_config` context; ``-1``
        means all processors. A candidate's own ``n_jobs`` (a PATE
        candidate's teachers) is left as given. The draws do not depend on
        it: a seeded selection chooses and fits the same with any ``n_jobs``;
        the candidates' warnings reach the caller, in the candidates' order.
    verbose : int, default=0
        With ``verbose >= 1``, one line per candidate and one for the choice (no private value).

    Attributes
    ----------
    best_estimator_ : estimator
        The chosen candidate, fitted on the training rows. It may hold private
        state (teachers); publish :meth:`export_model`.
    selected_ : dict
        ``name`` and ``params`` of the chosen candidate: a released output, public.
    candidate_epsilons_ : dict
        The budget each candidate was given, by name (public).
    selection_epsilon_ : float
        Epsilon of the exponential mechanism that chose (pure DP, within ``mu``).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

    Examples
    --------
    >>> from skpate import NoisyGDClassifier, PrivateModelSelection, grid_candidates
    >>> search = PrivateModelSelection(grid_candidates(NoisyGDClassifier(), {"n_iter": [50, 200]}),
    ...                                epsilon=1.0, classes=[0, 1])
    >>> round(search.publishable_epsilon(n_public=1000), 6)  # the budget, known before the fit
    1.0
    """

    _parameter_constraints: dict = {
        "candidates": [list],
        "epsilon": [EpsilonRange()],
        "delta": [RealRange(0, 1, closed="neither")],
        "classes": ["array-like", None],
        "holdout": [RealRange(0, 1, closed="neither")],
        "accountant": [None, BudgetAccountant],
        "random_state": ["random_state"],
        "n_jobs": [NJobs()],
        "verbose": ["verbose"],
    }

    def __init__(
        self, candidates, *, epsilon=1.0, delta=1e-5, classes=None, holdout=0.1, accountant=None,
        random_state=None, n_jobs=None, verbose=0,
    ):  # fmt: skip
        self.candidates = candidates
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.holdout = holdout
        self.accountant = accountant
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def get_params(self, deep=True):
        """Parameters of this selection and, with ``deep``, of its candidates as ``<name>__<parameter>``
        (as ``VotingClassifier``'s), so that ``set_params`` and ``GridSearchCV`` reach them.

        Parameters
        ----------
        deep : bool, default=True

        Returns
        -------
        params : dict
        """
        return self._get_params("candidates", deep=deep)

    def set_params(self, **params):
        """Set the parameters of this selection, or of a candidate as ``<name>__<parameter>``.

        Parameters
        ----------
        **params : dict

        Returns
        -------
        self : object
        """
        self._set_params("candidates", **params)
        return self

    # ------------------------------------------------------------ budget

    def _check_candidates(self):
        if not self.candidates:
            raise ValueError("candidates must name at least one estimator: [('name', estimator), ...].")
        names = []
        for item in self.candidates:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise ValueError(f"candidates must be (name, estimator) pairs, got {item!r}.")
            name, estimator = item
            missing = [p for p in _CONTRACT if p not in estimator.get_params(deep=False)]
            if missing or not hasattr(estimator, "planned_cost"):
                raise ValueError(
                    f"candidate {name!r} is not a private skpate estimator (it lacks {missing or 'planned_cost'}); "
                    "candidates are estimators such as NoisyGDClassifier, LeafRefitClassifier or PATEClassifier."
                )
            if estimator.get_params(deep=False).get("accountant") is not None:  # it would be dropped, not charged
                raise ValueError(
                    f"candidate {name!r} has an accountant of its own, which the selection would not charge: it "
                    "reserves every candidate's cost with its own accountant. Pass accountant= to the selection "
                    f"and set {name}'s accountant to None."
                )
            # A step that would fail on (and quote) an unknown private category: refused from the configuration.
            check_handles_unknown(estimator.get_params(deep=False).get("preprocessor"), f"candidate {name!r}")
            names.append(name)
        if len(set(names)) != len(names):
            raise ValueError(f"candidate names must be unique, got {names!r}.")
        # Mixed relations are refused before any private row is read.
        if len({_relation(estimator) for _, estimator in self.candidates}) != 1:
            raise ValueError("the candidates protect different neighbouring relations; give them all the same one.")
        return names

    def _neighboring(self):
        """The neighbouring relation every candidate protects, the selection's (the candidates checked first)."""
        self._check_candidates()
        return _relation(self.candidates[0][1])

    def _plan(self, n_public, classes):
        """The candidates configured with their budgets, and the cost of them all (a priori).

        Each gets an equal share of the budget's ``mu^2``; the shares shrink by a hair until the
        composed cost is within ``epsilon`` and its ``mu^2`` within the budget's (the conversions round),
        so the guarantee holds exactly.
        """
        names = self._check_candidates()
        budget_mu_squared = budget_cost(self.epsilon, self.delta).mu_squared
        share = 1.0 / len(names)
        for _ in range(50):
            epsilon_each = gaussian_share_epsilon(self.epsilon, self.delta, share)
            if epsilon_each <= 0.0:  # the share's noise meets delta at epsilon 0: no candidate takes epsilon 0
                raise ValueError(
                    f"epsilon={float(self.epsilon):g} is too small to share among {len(names)} candidates at "
                    f"delta={float(self.delta):g}: each share converts to epsilon 0. Raise epsilon or pass fewer "
                    "candidates."
                )
            planned, total = [], Cost()
            for name, estimator in self.candidates:
                candidate = clone(estimator).set_params(
                    epsilon=epsilon_each, delta=self.delta, classes=classes, accountant=None
                )
                cost = candidate.planned_cost(n_public)
                if cost.pure or cost.release is not None:
                    raise ValueError(
                        f"candidate {name!r} has a cost that is not Gaussian DP (a Laplace mechanism or a sanitized "
                        "release); the selection composes Gaussian-DP candidates only: use GNMax or "
                        "Confident-GNMax, or no data-dependent release."
                    )
                planned.append((name, candidate))
                total = total + cost
            if total.epsilon(self.delta)[0] <= self.epsilon and total.mu_squared <= budget_mu_squared:
                return total, planned
            share *= 1.0 - 1e-9
        raise RuntimeError("the candidates' budgets could not be made to fit the budget; please report this.")

    def check_public(self, X_public):
        """Refuse, for free, what a fit would refuse on the public rows alone: each candidate's ``check_public``.

        Parameters
        ----------
        X_public : {array-like, DataFrame} of shape (n_public, n_features)

        Returns
        -------
        self : PrivateModelSelection
        """
        self._validate_params()
        self._check_candidates()
        for _, estimator in self.candidates:
            estimator.check_public(X_public)
        return self

    def planned_cost(self, n_public):
        """What a fit will cost, known before it runs: the candidates' costs composed (the choice adds nothing).

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        self._validate_params()
        return self._plan(n_public, self.classes)[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            inputs = [get_tags(estimator).input_tags for _, estimator in self.candidates]
        except (TypeError, ValueError):  # candidates fit refuses: fit says why
            return tags
        if inputs:  # what every candidate takes: the chosen one must read the rows it is given
            tags.input_tags.allow_nan = all(tag.allow_nan for tag in inputs)
            tags.input_tags.string = all(tag.string for tag in inputs)
            tags.input_tags.sparse = all(tag.sparse for tag in inputs)
        return tags

    # --------------------------------------------------------------- fit

    def _say(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def fit(self, X, y, *, X_public=None):
        """Fit every candidate on the training rows, choose one privately on the held-out rows.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Private rows (labeled) and, optionally, public rows (``y == -1``,
            unless ``-1`` is one of ``classes``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, n_features), default=None

        Returns
        -------
        self : PrivateModelSelection
        """
        X_private, y_private, X_pub, classes = self._private_and_public_rows(X, y, X_public)
        name = type(self).__name__
        n_public = _num_samples(X_pub)
        total, planned = self._plan(n_public, classes)  # a priori, before any private row is read
        neighboring = self._neighboring()
        for _, candidate in planned:  # before the budget too: a refusal on the public rows costs nothing
            candidate.check_public(X_pub)
        rng = check_noise_generator(self.random_state)
        # Blind to the rows: before the budget.
        held = self._held_out(_num_samples(X_private), len(planned), neighboring, rng)
        with charged(self.accountant, total, f"{name}: {len(planned)} candidates", self, neighboring):
            self._select(X_private, y_private, X_pub, planned, total, neighboring, rng, held)
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.classes_ = classes
        chosen = self.best_estimator_.privacy_report_.mechanism
        if len(planned) == 1:
            mechanism = (
                f"one candidate, {self.selected_['name']!r}, on every private row under the whole budget: {chosen}"
            )
        else:
            mechanism = (
                f"{len(planned)} candidates under equal shares of Gaussian-DP mu^2, then the exponential mechanism "
                f"(epsilon {self.selection_epsilon_:.4g}) on held-out rows; chosen {self.selected_['name']!r}: {chosen}"
            )
        self.privacy_report_ = PrivacyReport.from_cost(
            total,
            self.delta,
            mechanism=mechanism,
            neighboring=neighboring,
            budget=self.epsilon,
            guarantee="budget",
        )
        self.privacy_spent_ = (self.privacy_report_.epsilon, self.privacy_report_.delta)
        return self

    def _held_out(self, n_private, n_candidates, neighboring, rng):
        """Which private rows the choice scores on: each held out independently, whatever its content (the split is
        valid for either relation); none for one candidate. A split that leaves no row to fit on is refused, under
        replace-one only: under add/remove the number of rows is private (that split has probability holdout^n), and
        candidates fit on no private rows as on one."""
        if n_candidates == 1:
            return np.zeros(n_private, dtype=bool)
        held = rng.random(n_private) < self.holdout
        if held.all() and neighboring == "replace-one":
            raise ValueError(
                f"the random split held out every private row (holdout={self.holdout:g}), leaving the "
                "candidates none to fit on; lower holdout or pass more private rows."
            )
        return held

    def _select(self, X_private, y_private, X_public, planned, total, neighboring, rng, held):
        train, test = np.flatnonzero(~held), np.flatnonzero(held)
        X_train, y_train = _safe_indexing(X_private, train), y_private[train]
        X_test, y_test = _safe_indexing(X_private, test), y_private[test]
        # Every random_state of a candidate, nested ones too (as scikit-learn's ensembles seed their members), drawn
        # before any fit so that the draws do not depend on n_jobs; unseeded: None, so that each draws from OS
        # entropy and no fitted parameter holds a seed of its noise.
        seeded = [
            candidate.set_params(**{
                key: None if self.random_state is None else int(rng.integers(2**31))
                for key in candidate.get_params(deep=True)
                if key == "random_state" or key.endswith("__random_state")
            })
            for _, candidate in planned
        ]  # fmt: skip
        if effective_n_jobs(self.n_jobs) == 1:  # in turn, here: a failure stops the candidates after it
            fits = (_fit_candidate(candidate, X_train, y_train, X_public) for candidate in seeded)
        else:
            # Processes, whatever joblib backend is configured: threads share the warnings machinery with which
            # on_private_rows keeps private values out of messages (catch_warnings is process-wide), so one
            # thread's raw warning could pass while another's capture ends. Every candidate runs to its end (a
            # failure is returned, not raised), so none is cancelled mid-fit.
            fits = Parallel(n_jobs=self.n_jobs, backend="loky")(
                delayed(in_caller_noise_scope(_fit_candidate))(candidate, X_train, y_train, X_public)
                for candidate in seeded
            )
        planned, scores = self._scored(fits, [name for name, _ in planned], X_test, y_test)
        mu = float(np.sqrt(total.mu_squared))
        self.selection_epsilon_ = float(gdp_pure_epsilon(mu))
        sensitivity = held_out_score_sensitivity(neighboring)
        chosen = 0 if len(planned) == 1 else exponential_mechanism(scores, self.selection_epsilon_, rng, sensitivity)
        del scores  # private: only the choice is released
        chosen_name, best = planned[chosen]
        if len(planned) > 1:
            self._say(f"chose {chosen_name!r} by the exponential mechanism on the held-out rows")
        self.best_estimator_ = best
        self.selected_ = {"name": chosen_name, "params": best.get_params(deep=False)}
        self.candidate_epsilons_ = {candidate_name: float(c.epsilon) for candidate_name, c in planned}
        self.mu_ = mu

    def _scored(self, fits, names, X_test, y_test):
        """``(fitted, scores)``: the fitted candidates, named and in order (from a worker, copies), and each one's
        number of correct predictions on the held-out rows. Their warnings are re-emitted, the first failure raised."""
        fitted, scores = [], np.zeros(len(names))
        for index, (candidate_name, (candidate, seconds, said, error)) in enumerate(zip(names, fits)):
            for category, message, filename, lineno in said:
                warnings.warn_explicit(message, category, filename, lineno)
            if error is not None:
                raise error
            fitted.append((candidate_name, candidate))
            if len(y_test):  # the held-out private rows: errors and warnings quote none of them
                predicted = on_private_rows(
                    type(self).__name__, f"candidate {candidate_name!r}'s predict on the held-out rows",
                    candidate.predict, X_test,
                )  # fmt: skip
                scores[index] = np.sum(predicted == y_test)
            self._say(
                f"candidate {index + 1}/{len(names)} {candidate_name!r} (epsilon {candidate.epsilon:.3g}) fitted "
                f"in {seconds:.1f} s"
            )
        return fitted, scores

    # ------------------------------------------------------------ predict

    def predict(self, X):
        """Predict with the chosen candidate.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of the chosen candidate, columns in ``classes_`` order.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    @available_if(lambda self: _chosen_has(self, "decision_function"))
    def decision_function(self, X):
        """Decision function of the chosen candidate, where it has one (see its own ``decision_function``).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) with two classes
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def export_model(self):
        """The publishable artifact: the chosen candidate's exported model.

        Returns
        -------
        model : estimator
        """
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.export_model()
