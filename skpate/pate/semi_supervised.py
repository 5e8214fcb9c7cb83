"""Semi-supervised learning from public rows without labels, for teachers and students.

PATE's public pool is unlabeled and free: its features cost no privacy. A
teacher that also fits them (pseudo-labeled by itself) adapts to the rows it
will vote on; a student that does learns from the rows no teacher answered.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    assert_all_finite,
    check_is_fitted,
    column_or_1d,
    has_fit_parameter,
    validate_data,
)

from .._validation import Count, RealRange, check_rows, unlabeled_mask

__all__ = ["PseudoLabelClassifier"]


def _estimator_has(attr):
    """``available_if`` check: the fitted estimator, else the one that will be fit."""

    def check(self):
        return hasattr(self.estimator_ if hasattr(self, "estimator_") else self.estimator, attr)

    return check


class PseudoLabelClassifier(ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Self-training on every unlabeled row at once, which together weigh a fixed share of the labeled rows.

    Rows labeled ``-1`` (scikit-learn's semi-supervised convention) are
    unlabeled. The estimator is fit on the labeled rows, then ``max_iter``
    times refit on all rows, the unlabeled ones carrying its own hard
    predictions (pseudo-labels) and a weight that makes them together
    ``unlabeled_weight`` times the labeled rows. This is the pseudo-label
    loss of Lee (2013), a labeled loss plus a weighted loss on the model's own
    labels of the unlabeled rows, optimised by alternation; unlike
    :class:`sklearn.semi_supervised.SelfTrainingClassifier`, which labels
    only rows above a confidence threshold and gives each the weight of a
    labeled row, it needs no probabilities (a ``RidgeClassifier`` works), and
    a few labeled rows are not drowned by thousands of pseudo-labeled ones.

    As a ``PATEClassifier`` teacher, each teacher fits its private partition
    and the public pool (unlabeled, free), so that small partitions learn
    from more rows (measured on Fashion-MNIST scattering features:
    ``docs/benchmarks/fashion_mnist.md``). As a student, it learns from the
    public rows no teacher answered.

    Parameters
    ----------
    estimator : classifier object
        Must accept ``sample_weight`` in ``fit``. In a pipeline, wrap the
        final classifier, not the pipeline.
    unlabeled_weight : float >= 0, default=1.0
        Total weight of the unlabeled rows, relative to the labeled rows
        (each labeled row weighs 1). 0: supervised only.
    max_iter : int >= 0, default=2
        Rounds of pseudo-labeling and refitting. 0: supervised only.

    Attributes
    ----------
    estimator_ : classifier
        The last fitted estimator.
    classes_ : ndarray of shape (n_classes,)
        The labels of the labeled rows.
    n_iter_ : int
        Fits run: 1 on the labeled rows, plus one per round of
        pseudo-labeling (none without unlabeled rows).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    References
    ----------
    D.-H. Lee. Pseudo-Label: the simple and efficient semi-supervised learning
    method for deep neural networks. ICML 2013 Workshop on Challenges in
    Representation Learning.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import RidgeClassifier
    >>> from skpate.pate.semi_supervised import PseudoLabelClassifier
    >>> X = np.array([[0.0], [1.0], [9.0], [10.0], [2.0], [3.0], [7.0], [8.0]])
    >>> y = np.array([0, 0, 1, 1, -1, -1, -1, -1])  # the last four rows are unlabeled
    >>> clf = PseudoLabelClassifier(RidgeClassifier(alpha=1.0)).fit(X, y)
    >>> clf.predict([[2.5], [7.5]]).tolist(), clf.n_iter_
    ([0, 1], 3)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "unlabeled_weight": [RealRange(0, None, closed="left")],
        "max_iter": [Count(0)],
    }
    #: ``PATEClassifier`` gives this estimator the public rows too, labeled -1 (teacher or student).
    _skpate_semi_supervised = True

    def __init__(self, estimator, *, unlabeled_weight=1.0, max_iter=2):
        self.estimator = estimator
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit on the labeled rows, then on all rows with pseudo-labels for the unlabeled ones.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
            Anything ``estimator`` accepts.
        y : array-like of shape (n_samples,)
            Labels; ``-1`` marks an unlabeled row.

        Returns
        -------
        self : PseudoLabelClassifier
        """
        if y is None:
            raise ValueError("PseudoLabelClassifier requires y to be passed, but the target y is None.")
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True)
        y = column_or_1d(y, warn=True)
        if _num_samples(X) != y.shape[0]:
            raise ValueError(f"X has {_num_samples(X)} rows but y has {y.shape[0]}.")
        assert_all_finite(y, input_name="y")  # before type_of_target reads it
        unlabeled = unlabeled_mask(y)
        if unlabeled.all():
            raise ValueError("every row is unlabeled (y == -1): PseudoLabelClassifier needs some labeled rows.")
        check_classification_targets(y[~unlabeled])
        pseudo_labels = unlabeled.any() and self.unlabeled_weight > 0 and self.max_iter > 0
        if pseudo_labels and not has_fit_parameter(self.estimator, "sample_weight"):  # before any fit
            raise ValueError(
                f"estimator {type(self.estimator).__name__} does not accept sample_weight in fit, which "
                "PseudoLabelClassifier needs to weigh the unlabeled rows; in a pipeline, wrap its final classifier: "
                "make_pipeline(StandardScaler(), PseudoLabelClassifier(RidgeClassifier()))."
            )
        self.classes_ = np.unique(y[~unlabeled])
        self.estimator_ = clone(self.estimator).fit(_safe_indexing(X, ~unlabeled), y[~unlabeled])
        self.n_iter_ = 1
        if not pseudo_labels:
            return self
        n_labeled, n_unlabeled = np.count_nonzero(~unlabeled), np.count_nonzero(unlabeled)
        weight = np.where(unlabeled, self.unlabeled_weight * n_labeled / n_unlabeled, 1.0)
        X_unlabeled, pseudo = _safe_indexing(X, unlabeled), y.copy()
        for _ in range(self.max_iter):
            pseudo[unlabeled] = self.estimator_.predict(X_unlabeled)
            self.estimator_ = clone(self.estimator).fit(X, pseudo, sample_weight=weight)
            self.n_iter_ += 1
        return self

    def _checked(self, X):
        check_is_fitted(self, "estimator_")
        X = check_rows(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return X

    def predict(self, X):
        """The fitted estimator's predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        X = self._checked(X)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """The fitted estimator's decision function.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        X = self._checked(X)
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """The fitted estimator's class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._checked(X)
        return self.estimator_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator_tags = get_tags(self.estimator)
        tags.input_tags.allow_nan = estimator_tags.input_tags.allow_nan
        tags.input_tags.sparse = estimator_tags.input_tags.sparse
        return tags
