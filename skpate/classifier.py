"""The one call: the best private model skpate can find for a table, chosen privately and paid for.

:class:`PrivateClassifier` encodes the table with statistics of the public
rows only (:class:`skpate.preprocessing.PublicPreprocessor`), fits the
candidate learners whose settings follow from public quantities
(:func:`default_candidates`: by default one, the private boosting of
:class:`skpate.NoisyBoostingClassifier`), and publishes the one a private
selection prefers (:class:`skpate.PrivateModelSelection`; with one candidate,
that one, under the whole budget). Everything is inside one budget
``(epsilon, delta)`` fixed before the fit.
"""

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ._validation import EpsilonRange, NJobs, RealRange, fit_public_preprocessor, transform_private
from .base import PrivateClassifierMixin, charged, published_copy
from .pool import LeafRefitClassifier, NoisyBoostingClassifier, NoisyGDClassifier
from .pool.refit import largest_leaf
from .preprocessing import PublicPreprocessor
from .privacy import BudgetAccountant
from .privacy.calibration import count_sigma, gaussian_share_epsilon
from .privacy.gdp import gdp_mu
from .selection import PrivateModelSelection

__all__ = ["PrivateClassifier", "default_candidates"]

#: Rounds, trees and refit share of the tree candidate: ``make_tabular_refit``'s (chosen on UCI Adult's evaluation
#: half, which is not in the tabular suite; docs/benchmarks/adult.md).
REFIT_ROUNDS, REFIT_TREES, REFIT_SHARE = 3, 20, 0.7
#: Gradient steps and per-row gradient clip of the linear models (chosen on UCI Adult and synthetic data, not on the
#: tabular suite; docs/selection.md).
GD_STEPS, GD_CLIP = 100, 0.25
#: The learners of the default candidates: the boosting alone. On the development tables of the tabular suite (3
#: tables, whole and subsampled to 2,000 private rows, epsilon 0.5 / 1 / 4, 2 seeds; docs/benchmarks/tabular.md) it
#: alone beat every set with a private choice ({linear, trees}, {linear, trees, boosting}, {linear, boosting}): a
#: choice splits the budget's mu^2 and holds rows out, which cost more than it won.
LEARNERS = ("boosting",)
_KNOWN_LEARNERS = ("linear", "trees", "boosting")


def default_candidates(n_private, n_public, n_classes, epsilon, delta=1e-5, preprocess=True, learners=LEARNERS):
    """The candidates :class:`PrivateClassifier` compares, from public quantities only.

    By default one: ``"boosting"`` (``LEARNERS``), which then gets the whole
    budget and every private row (nothing is held out for a choice). Others,
    by name in ``learners``:

    * ``"boosting"``: :class:`~skpate.NoisyBoostingClassifier` with its
      defaults: per-feature step functions over bins cut from the public
      rows, then the leaves of random trees grown on the public rows, fitted
      from noisy clipped-gradient sums per cell, its rounds, trees and bin
      sizes set from public quantities. Its trees favour the features the
      step functions found, so a pure interaction (a label that is the sign
      of ``x1 * x2``) may escape them, which ``"trees"`` can find;
    * ``"linear"``: :class:`~skpate.NoisyGDClassifier` (softmax regression by
      noisy gradient descent, ``GD_STEPS`` steps, gradients clipped to ``GD_CLIP``);
    * ``"trees"``: the same noisy gradient descent under part of the
      budget, then leaf refits (:class:`~skpate.LeafRefitClassifier`): forests
      grown on the public rows, labeled by the linear model and then by the
      refitted class shares, their leaves counted on the private rows. The
      leaves hold about as many private rows as one leaf count's noise
      (``min_samples_leaf = sigma n_public / n_private``, at least 5), so a
      leaf's class shares are neither drowned in noise nor coarser than
      needed.

    With several, :class:`~skpate.PrivateModelSelection` gives each an equal
    share of the budget's Gaussian-DP ``mu^2`` and chooses one privately on
    held-out rows.

    Parameters
    ----------
    n_private, n_public : int
        Rows of each kind (the number of private rows is public under replacement).
    n_classes : int
    epsilon : float
        The budget of the whole selection.
    delta : float, default=1e-5
    preprocess : bool, default=True
        Give each candidate the public preprocessing that suits it
        (:class:`~skpate.preprocessing.PublicPreprocessor`, fitted on the
        public rows): one-hot columns for the linear models, one column of
        category codes per categorical column for the forests and the
        boosting. False: the candidates expect numeric features.
    learners : tuple of {"boosting", "linear", "trees"}, default=LEARNERS
        The candidates, in this order (``("boosting",)``). E.g.
        ``("linear", "trees", "boosting")`` for a private choice among the three.

    Returns
    -------
    candidates : list of (str, estimator)
    """
    learners = tuple(learners)
    if not learners or len(set(learners)) != len(learners) or not set(learners) <= set(_KNOWN_LEARNERS):
        raise ValueError(f"learners must be distinct names among {_KNOWN_LEARNERS}, got {learners!r}.")
    # The noise of one leaf count in the tree candidate (an equal share of mu^2 for each candidate).
    candidate_mu = float(gdp_mu(gaussian_share_epsilon(epsilon, delta, 1.0 / len(learners)), delta))
    sigma = count_sigma(REFIT_TREES, candidate_mu * np.sqrt(REFIT_SHARE / REFIT_ROUNDS))
    leaf = int(np.clip(round(sigma * n_public / max(n_private, 1)), 5, max(5, n_public // 20)))
    leaf = max(1, min(leaf, largest_leaf(n_public)))  # a few public rows: leaves that can still split them
    linear, codes = "passthrough", "passthrough"
    if preprocess:
        linear = make_pipeline(PublicPreprocessor(), StandardScaler())
        codes = PublicPreprocessor(encoding="ordinal")  # forests and bins split codes better than one-hot columns
    gd = NoisyGDClassifier(preprocessor=linear, n_iter=GD_STEPS, clip=GD_CLIP)
    build = {
        "boosting": lambda: NoisyBoostingClassifier(preprocessor=codes if isinstance(codes, str) else clone(codes)),
        "linear": lambda: gd,
        "trees": lambda: LeafRefitClassifier(
            clone(gd), preprocessor=codes, refit_share=REFIT_SHARE, n_refits=REFIT_ROUNDS, n_estimators=REFIT_TREES,
            min_samples_leaf=leaf,
        ),
    }  # fmt: skip
    return [(learner, build[learner]()) for learner in learners]


class PrivateClassifier(PrivateClassifierMixin, ClassifierMixin, BaseEstimator):
    """A private classifier for a table: public-row preprocessing, candidate learners, a private choice.

    ``fit(X, y, X_public=...)`` with ``X`` the private rows (a numpy array or
    a pandas DataFrame of numbers, strings or categories, with missing values)
    and ``X_public`` the public pool's features:

    1. ``preprocessor`` is fitted on the public rows only (free);
    2. the candidates (:func:`default_candidates`, from the numbers of rows
       and classes and the budget) are fitted on a random part of the private
       rows, and one is chosen by the exponential mechanism on the rest
       (:class:`~skpate.PrivateModelSelection`). The default is one candidate,
       :class:`~skpate.NoisyBoostingClassifier` (chosen on the development
       tables, docs/benchmarks/tabular.md), fitted on all the private rows
       under the whole budget; its trees are random public ones, so a label
       driven by a pure interaction that no feature shows alone may need
       ``candidates=["linear", "trees", "boosting"]`` (a private choice among
       the three) or a list of one's own;
    3. the published model is the preprocessor and the chosen candidate's
       model (:meth:`export_model`).

    ``privacy_spent_`` covers all of it and is the budget, fixed before the fit.

    Parameters
    ----------
    epsilon : float > 0, default=1.0
        The whole budget.
    delta : float in (0, 1), default=1e-5
    classes : array-like, default=None
        The public label set. None takes it from the private labels with a
        :class:`~skpate.PrivacyLeakWarning` (the label set is then published).
    preprocessor : "auto", "passthrough" or transformer, default="auto"
        ``"auto"``: :class:`~skpate.preprocessing.PublicPreprocessor`, fitted on
        the public rows only; with the default candidates, each carries the
        encoding that suits it (category codes for the boosting and forests,
        one-hot for linear models). A transformer is cloned, fitted on the
        public rows only, and applied to the rows before every candidate; a step with
        ``handle_unknown="error"`` is refused before the fit, and a failure on
        the private rows (paid for, like the fit) is a ``ValueError`` that
        quotes none of them.
    candidates : "auto", list of str or list of (str, estimator), default="auto"
        ``"auto"``: :func:`default_candidates` (the boosting alone). Names of
        learners: :func:`default_candidates` with ``learners=`` those, e.g.
        ``["linear", "trees", "boosting"]`` for a private choice among the
        three (each with its own public preprocessing). A list of (name,
        estimator) is used as given (its estimators see the preprocessed
        features).
    holdout : float in (0, 1), default=0.1
        Expected share of the private rows that score the candidates (none
        with a single candidate, as by default).
    accountant : skpate.privacy.RDPAccountant or PrivacyLedger, default=None
        Budget shared across fits: the fit reserves its whole cost before it reads a private row.
    random_state : int, RandomState instance or None, default=None
        None (default) draws from OS entropy; a seed makes the noise reproducible by anyone who knows it
        (:class:`~skpate.SeededNoiseWarning`).
    n_jobs : int, default=None
        Number of candidates fitted in parallel (joblib; see
        :class:`~skpate.PrivateModelSelection`). The default, one candidate,
        fits in one process whatever it is.
    verbose : int, default=0
        ``>= 1``: one line per phase and candidate (no private value).

    Attributes
    ----------
    preprocessor_ : transformer or None
        Fitted on the public rows (public); None where the candidates carry their own.
    selection_ : PrivateModelSelection
        The fitted selection; private (it holds the chosen candidate's private state).
    selected_ : dict
        ``name`` and ``params`` of the chosen candidate (public).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    privacy_spent_ : tuple of (float, float)
    privacy_report_ : skpate.PrivacyReport

    Examples
    --------
    >>> import numpy as np
    >>> from skpate import PrivateClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(6000, 4)); y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] ** 2 > 1, "yes", "no")
    >>> clf = PrivateClassifier(epsilon=1.0, classes=["no", "yes"], random_state=0)
    >>> clf.fit(X[:4000], y[:4000], X_public=X[4000:5000]).privacy_spent_
    (1.0, 1e-05)
    >>> clf.selected_["name"], clf.score(X[5000:], y[5000:]) > 0.8
    ('boosting', True)

    A label driven by a pure interaction (no feature alone says anything, so
    the boosting's random trees are not drawn toward it): a private choice
    among three learners, each under a third of the budget's ``mu^2``.

    >>> y = np.where(X[:, 0] * X[:, 1] > 0, "yes", "no")
    >>> three = ["linear", "trees", "boosting"]
    >>> clf = PrivateClassifier(epsilon=1.0, classes=["no", "yes"], candidates=three, random_state=0)
    >>> clf.fit(X[:4000], y[:4000], X_public=X[4000:5000]).selected_["name"], clf.score(X[5000:], y[5000:]) > 0.8
    ('trees', True)
    """

    _parameter_constraints: dict = {
        "epsilon": [EpsilonRange()],
        "delta": [RealRange(0, 1, closed="neither")],
        "classes": ["array-like", None],
        "preprocessor": [StrOptions({"auto", "passthrough"}), HasMethods(["fit", "transform"])],
        "candidates": [StrOptions({"auto"}), list],
        "holdout": [RealRange(0, 1, closed="neither")],
        "accountant": [None, BudgetAccountant],
        "random_state": ["random_state"],
        "n_jobs": [NJobs()],
        "verbose": ["verbose"],
    }

    def __init__(
        self, *, epsilon=1.0, delta=1e-5, classes=None, preprocessor="auto", candidates="auto", holdout=0.1,
        accountant=None, random_state=None, n_jobs=None, verbose=0,
    ):  # fmt: skip
        self.epsilon = epsilon
        self.delta = delta
        self.classes = classes
        self.preprocessor = preprocessor
        self.candidates = candidates
        self.holdout = holdout
        self.accountant = accountant
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _learners(self):
        """The default candidates' learners, or None if ``candidates`` lists estimators."""
        if isinstance(self.candidates, str):
            return LEARNERS
        if all(isinstance(candidate, str) for candidate in self.candidates):
            return tuple(self.candidates)
        return None

    def _neighboring(self):
        """The relation the fit protects: replace-one for the default learners, else the candidates' (checked)."""
        if self._learners() is not None:
            return "replace-one"
        return PrivateModelSelection(self.candidates)._neighboring()

    def _per_candidate_preprocessing(self):
        """The default candidates with the default preprocessing: each candidate carries its own."""
        return isinstance(self.preprocessor, str) and self.preprocessor == "auto" and self._learners() is not None

    def _selection(self, n_private, n_public, classes):
        candidates, learners = self.candidates, self._learners()
        if learners is not None and (
            not learners or len(set(learners)) != len(learners) or not set(learners) <= set(_KNOWN_LEARNERS)
        ):  # named after the parameter the user set (default_candidates calls them learners)
            raise ValueError(
                f"candidates must be 'auto', distinct names among {_KNOWN_LEARNERS} or (name, estimator) pairs; got "
                f"{list(learners)!r}."
            )
        if learners is not None:
            candidates = default_candidates(
                n_private, n_public, np.unique(classes).size, self.epsilon, self.delta,
                preprocess=self._per_candidate_preprocessing(), learners=learners,
            )  # fmt: skip
        return PrivateModelSelection(  # without the accountant: the fit reserves the cost itself (it reads rows first)
            candidates, epsilon=self.epsilon, delta=self.delta, classes=classes, holdout=self.holdout,
            accountant=None, random_state=self.random_state, n_jobs=self.n_jobs, verbose=self.verbose,
        )  # fmt: skip

    def planned_cost(self, n_public, n_private=None):
        """What a fit will cost, known before it runs (the candidates' costs; the choice adds nothing).

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.
        n_private : int, default=None
            Number of private rows (public under replacement); the default candidates' leaf size
            depends on it, their cost does not.

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        self._validate_params()
        if self.classes is None:
            raise ValueError("the candidates' noise depends on the number of classes: pass classes=[...] to plan.")
        n_private = 4 * n_public if n_private is None else n_private
        return self._selection(n_private, n_public, np.asarray(self.classes)).planned_cost(n_public)

    def _say(self, message):
        if self.verbose:
            print(f"[{type(self).__name__}] {message}", flush=True)

    def fit(self, X, y, *, X_public=None):
        """Preprocess with the public rows, fit the candidates, choose one privately.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Private rows (labeled) and, optionally, public rows (``y == -1``,
            unless ``-1`` is one of ``classes``).
        y : array-like of shape (n_samples,)
        X_public : {array-like, DataFrame} of shape (n_public, n_features), default=None

        Returns
        -------
        self : PrivateClassifier
        """
        X_private, y_private, X_pub, classes = self._private_and_public_rows(X, y, X_public)
        name = type(self).__name__
        start = time.perf_counter()
        n_private, n_public = _num_samples(X_private), _num_samples(X_pub)
        selection = self._selection(n_private, n_public, classes)
        cost = selection.planned_cost(n_public)  # a priori; refuses a candidate it cannot plan, before any row is read
        preprocessor, Z_public = self._fit_public(X_pub, name)  # public rows only: free
        if self._per_candidate_preprocessing():
            self._say(f"preprocessing: each candidate encodes the rows with statistics of the {n_public} public rows")
        else:
            self._say(
                f"preprocessing fitted on {n_public} public rows: {np.shape(Z_public)[1]} features "
                f"({time.perf_counter() - start:.1f} s)"
            )
        selection.check_public(Z_public)  # before the budget too: a refusal on the public rows costs nothing
        count = f"{len(selection.candidates)} candidate{'s' if len(selection.candidates) > 1 else ''}"
        self._say(f"fitting {count} under epsilon {float(self.epsilon):g} at delta {float(self.delta):g}")
        # Reserved before the first private row is read, the preprocessing of the private rows included: its
        # failure depends on them, so it is paid for like the fit.
        with charged(self.accountant, cost, f"{name}: {count}", self, self._neighboring()):
            Z_private = X_private
            if preprocessor is not None:
                Z_private = transform_private(preprocessor, X_private, name, width=np.shape(Z_public)[1])
            self.selection_ = selection.fit(Z_private, y_private, X_public=Z_public)
        self.preprocessor_ = preprocessor
        validate_data(self, X, skip_check_array=True)  # n_features_in_, feature_names_in_
        self.classes_ = classes
        self.selected_ = self.selection_.selected_
        self.privacy_report_ = self.selection_.privacy_report_
        self.privacy_spent_ = self.selection_.privacy_spent_
        self._say(f"done in {time.perf_counter() - start:.1f} s; publishable epsilon {self.privacy_spent_[0]:.4g}")
        return self

    def _fit_public(self, X_public, name):
        """``(preprocessor, Z_public)``: the shared preprocessor fitted on the public rows (None where each candidate
        carries its own, or for "passthrough") and the public rows after it."""
        if self._per_candidate_preprocessing():
            return None, X_public
        preprocessor = PublicPreprocessor() if self.preprocessor == "auto" else self.preprocessor
        return fit_public_preprocessor(preprocessor, X_public, name)

    def _features(self, X):
        check_is_fitted(self, "selection_")
        return X if self.preprocessor_ is None else self.preprocessor_.transform(X)

    def predict(self, X):
        """Predict with the chosen candidate.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        Z = self._features(X)
        return self.selection_.predict(Z)

    def predict_proba(self, X):
        """Class probabilities of the chosen candidate, columns in ``classes_`` order.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        Z = self._features(X)
        return self.selection_.predict_proba(Z)

    @available_if(lambda self: not hasattr(self, "selection_") or hasattr(self.selection_, "decision_function"))
    def decision_function(self, X):
        """Decision function of the chosen candidate, where it has one (the linear and boosting candidates).

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) with two classes
        """
        Z = self._features(X)
        return self.selection_.decision_function(Z)

    def export_model(self):
        """The publishable artifact: the public preprocessor and the chosen candidate's model, as a pipeline.

        Returns
        -------
        model : sklearn.pipeline.Pipeline or estimator
        """
        check_is_fitted(self, "selection_")
        model = self.selection_.export_model()
        if self.preprocessor_ is None:
            return model
        # Frozen: a fit of the pipeline would refit the public preprocessor before the model refuses to fit.
        return make_pipeline(FrozenEstimator(published_copy(self.preprocessor_)), model)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        return tags
