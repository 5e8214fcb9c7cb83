"""Students made for PATE's noisy answers, and the published student that keeps every class.

:class:`VoteRegressionClassifier` learns from the teachers' noisy vote
counts (:class:`skpate.GaussianHistogram`) instead of their argmax: a hard
label says which class won, the noisy histogram also says by how much, and a
regression averages the noise over neighbouring rows.
:class:`StudentInClasses` publishes a student that never saw some classes with
a probability column for each of them.
"""

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _num_samples, assert_all_finite, check_is_fitted, column_or_1d, validate_data

from .._validation import check_rows
from ..base import PublishedModelMixin

__all__ = ["StudentInClasses", "VoteRegressionClassifier", "proba_in_classes"]


def _sees_every_class(model):
    seen = getattr(model.student, "classes_", None)
    return seen is not None and np.array_equal(np.asarray(seen), model.classes_)


def proba_in_classes(student, X, classes):
    """``student.predict_proba(X)`` with a column per class of ``classes`` (sorted), 0 for those it never saw."""
    proba = student.predict_proba(X)
    out = np.zeros((proba.shape[0], classes.size))
    out[:, np.searchsorted(classes, student.classes_)] = proba
    return out


class StudentInClasses(PublishedModelMixin, ClassifierMixin, BaseEstimator):
    """A fitted student with the whole label set: what ``PATEClassifier.export_model`` publishes.

    It predicts as the student does, and its probabilities have a column per class of ``classes``, 0 for the
    classes the student never saw (no answered query carried them), as the ``PATEClassifier`` that trained it.
    As every published model, it is fitted as built and refuses ``fit``: refitting it (``cross_val_score``
    on private rows, say) would train a non-private model. The user's estimator is its ``student``.

    Parameters
    ----------
    student : fitted classifier
        Its ``classes_`` are a subset of ``classes``.
    classes : array-like of shape (n_classes,)
        The public label set, sorted.
    """

    def __init__(self, student, classes):
        self.student = student
        self.classes = classes

    def predict(self, X):
        """The student's predictions (a class it saw)."""
        return self.student.predict(self._features(X))

    @available_if(lambda self: hasattr(self.student, "decision_function") and _sees_every_class(self))
    def decision_function(self, X):
        """The student's decision function, when it saw every class (its columns are then ``classes_``)."""
        return self.student.decision_function(self._features(X))

    def predict_proba(self, X):
        """The student's probabilities, a column per class of ``classes``."""
        return proba_in_classes(self.student, self._features(X), self.classes_)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` for the classes the student never saw)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class VoteRegressionClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """A classifier that regresses vote counts (or class indicators) and predicts their argmax.

    As a ``PATEClassifier`` student it is fit on the noisy histograms of
    :class:`skpate.GaussianHistogram` (the default aggregator of a budget fit
    with this student): each answered row's ``votes + N(0, sigma^2)``,
    centred on the row's mean, is a regression target whose argmax is the
    GNMax label and whose margin says how sure it is. The noise is
    independent across rows, so a regressor that averages neighbouring rows
    (a forest with large leaves) recovers the teachers' margins where hard
    labels would flip. The tabular recipe uses it where the budget buys few
    answers (measured on UCI Adult: ``docs/benchmarks/adult.md``).

    Fit on ordinary labels ``y`` of shape ``(n_samples,)``, it regresses
    the class indicators (one column per class), like
    :class:`sklearn.linear_model.RidgeClassifier`.

    Parameters
    ----------
    regressor : regressor object, default=None
        Fits ``X`` to one target column per class (multi-output). None: a
        ``RandomForestRegressor(min_samples_leaf=10, max_features="sqrt")``.
    classes : array-like of shape (n_classes,), default=None
        The class of each column of a histogram ``y``; ``PATEClassifier`` sets
        it to its label set. None: ``0 .. n_classes - 1``. Unused when ``y``
        holds labels.
    random_state : int, RandomState instance or None, default=None
        Seeds the default regressor (a given ``regressor`` keeps its own).

    Attributes
    ----------
    regressor_ : regressor
        The fitted regressor.
    scale_ : float
        Standard deviation of the (centred) targets: the unit of
        :meth:`predict_proba`'s softmax.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skpate.pate.students import VoteRegressionClassifier
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> noisy_votes = np.array([[9, 1], [8, 3], [7, 2], [6, 5], [2, 8], [3, 9], [1, 7], [0, 9]], dtype=float)
    >>> clf = VoteRegressionClassifier(LinearRegression(), classes=["no", "yes"]).fit(X, noisy_votes)
    >>> clf.predict([[0.0], [7.0]]).tolist()
    ['no', 'yes']
    """

    _parameter_constraints: dict = {
        "regressor": [None, HasMethods(["fit", "predict"])],
        "classes": [None, "array-like"],
        "random_state": ["random_state"],
    }
    #: ``PATEClassifier`` gives this student the noisy vote histograms instead of labels.
    _skpate_fits_votes = True

    def __init__(self, regressor=None, classes=None, random_state=None):
        self.regressor = regressor
        self.classes = classes
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the regressor to the vote counts (or the class indicators) of ``y``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Anything ``regressor`` accepts.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or one (noisy) vote count per class.

        Returns
        -------
        self : VoteRegressionClassifier
        """
        if y is None:
            raise ValueError(
                "VoteRegressionClassifier requires y to be passed, but the target y is None: give class labels "
                "or one vote count per class."
            )
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] > 1:
            targets = self._vote_targets(y)
        else:
            y = column_or_1d(y, warn=True)
            assert_all_finite(y, input_name="y")  # before type_of_target reads it
            check_classification_targets(y)
            self.classes_, indices = np.unique(y, return_inverse=True)
            targets = np.eye(self.classes_.size)[indices]
        if _num_samples(X) != targets.shape[0]:
            raise ValueError(f"X has {_num_samples(X)} rows but y has {targets.shape[0]}.")
        regressor = self.regressor
        if regressor is None:
            regressor = RandomForestRegressor(min_samples_leaf=10, max_features="sqrt", random_state=self.random_state)
        # One class: a 1-d target, as regressors expect a single output (the scores are reshaped per class).
        self.regressor_ = clone(regressor).fit(X, targets[:, 0] if targets.shape[1] == 1 else targets)
        self.scale_ = max(float(np.std(targets)), np.finfo(float).tiny)
        return self

    def _vote_targets(self, votes):
        votes = np.asarray(votes, dtype=float)
        if not np.all(np.isfinite(votes)):
            raise ValueError("the vote counts y must be finite numbers.")
        if self.classes is None:
            self.classes_ = np.arange(votes.shape[1])
        else:
            self.classes_ = np.asarray(self.classes)
            if self.classes_.ndim != 1 or self.classes_.size != votes.shape[1]:
                raise ValueError(
                    f"classes names the class of each column of y: {votes.shape[1]} classes needed, "
                    f"got {self.classes!r}."
                )
        # Noise common to a row's counts says nothing about the winner: regress the centred counts.
        return votes - votes.mean(axis=1, keepdims=True)

    def _scores(self, X):
        check_is_fitted(self, "regressor_")
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        scores = np.asarray(self.regressor_.predict(X), dtype=float)
        return scores.reshape(-1, self.classes_.size)

    def decision_function(self, X):
        """The predicted (centred) vote counts: of every class, or for two classes the second's margin.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            As scikit-learn's classifiers: positive for ``classes_[1]``.
        """
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X):
        """The class with the largest predicted vote count.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        scores = self._scores(X)  # raises NotFittedError before classes_ is read
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X):
        """Softmax of the predicted counts in units of the targets' spread (``scale_``).

        Not calibrated probabilities: a monotone reading of the predicted
        margins, enough to rank rows by how sure the student is (uncertainty
        sampling) and to agree with :meth:`predict`.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return softmax(self._scores(X) / self.scale_, axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        regressor = self.regressor if self.regressor is not None else RandomForestRegressor()
        regressor_tags = get_tags(regressor)
        tags.input_tags.allow_nan = regressor_tags.input_tags.allow_nan
        tags.input_tags.sparse = regressor_tags.input_tags.sparse
        return tags
