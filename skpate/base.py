"""The contract every skpate estimator that learns from private rows keeps.

Constructor parameters ``epsilon`` (the budget, fixed before the fit),
``delta``, ``classes`` (the public label set), ``accountant``,
``random_state`` and, where an estimator offers a choice, ``neighboring``;
``fit(X, y, *, X_public=None)`` with rows labeled ``-1`` public unless ``-1``
is one of ``classes``; fitted ``privacy_spent_``, ``privacy_report_`` and
``classes_``; :meth:`~PrivateClassifierMixin.planned_cost` before the fit and
:meth:`~PrivateClassifierMixin.export_model` after it.
"""

import copy
from contextlib import contextmanager

import numpy as np
from sklearn.tree._tree import Tree
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._validation import check_classes, check_delta_for_rows, fit_in_noise_scope, public_rows, split_private_public
from .privacy.accountant import fit_params
from .privacy.cost import replace_one_cost

__all__ = ["PrivateClassifierMixin", "PublishedModelMixin", "charge_record", "charged", "published_copy"]


def published_copy(model):
    """A deep copy of ``model`` to publish, with the padding bytes of every scikit-learn tree node set to 0.

    A tree's node records (64 bytes) hold 7 bytes the tree never writes: whatever the process's memory held
    there, heap addresses or earlier data (the teachers' private rows are in the same process), pickled with the
    model. Only the padding changes: the fields, and so the predictions, are the same.
    """
    published = copy.deepcopy(model)
    for tree in _trees(published, set()):
        state = tree.__getstate__()
        # np.zeros allocates zeroed memory, padding included (zeros_like fills the fields only); copied field by field.
        nodes = np.zeros(state["nodes"].shape, dtype=state["nodes"].dtype)
        for field in nodes.dtype.names:
            nodes[field] = state["nodes"][field]
        tree.__setstate__({**state, "nodes": nodes})
    return published


def _trees(obj, seen):
    """Every scikit-learn ``Tree`` reachable from ``obj`` through attributes, lists, tuples and dicts."""
    if id(obj) in seen or isinstance(obj, (str, bytes, np.ndarray, int, float)) or obj is None:
        return
    seen.add(id(obj))
    if isinstance(obj, Tree):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _trees(value, seen)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from _trees(value, seen)
    elif hasattr(obj, "__dict__"):
        yield from _trees(vars(obj), seen)


def charge_record(estimator):
    """What an accountant records of a fit besides its cost: the delta it was calibrated at, its parameters."""
    return {"delta": getattr(estimator, "delta", None), "params": fit_params(estimator)}


@contextmanager
def charged(accountant, cost, label, estimator=None, neighboring="replace-one"):
    """Reserve ``cost`` with ``accountant`` (if any) before the block reads a private row; charge it after.

    The planned cost stays charged whether the block succeeds or raises: once private rows were read,
    the fit is paid for (fail closed). A fit the budget cannot cover raises before the block runs.
    ``estimator``'s delta and parameters go into the accountant's history. A budget is for replacing one
    row: a cost stated for adding or removing one is charged as its replace-one cost (``replace_one_cost``).
    """
    cost = replace_one_cost(cost, neighboring)
    if neighboring != "replace-one":
        label = f"{label} ({neighboring} cost, charged for replace-one)"
    reservation = None if accountant is None else accountant.reserve(cost, label=label, **charge_record(estimator))
    try:
        yield
    finally:
        if reservation is not None:
            accountant.settle(reservation, cost)


class PrivateClassifierMixin:
    """Mixin of the private estimators: planning, publishing and scoring the same way everywhere.

    Put it before ``ClassifierMixin`` in the bases. A subclass implements
    :meth:`planned_cost` and :meth:`export_model`, and reserves
    ``planned_cost`` with its ``accountant`` before it reads a private row.
    Its ``fit`` runs in a noise scope (wrapped when the class is defined): the
    outermost fit warns once with :class:`~skpate.SeededNoiseWarning` if
    ``random_state`` is not None, and draws its noise with
    :func:`~skpate._validation.check_noise_generator`.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        if callable(fit) and not getattr(fit, "_skpate_noise_scope", False):  # one SeededNoiseWarning per fit
            cls.fit = fit_in_noise_scope(fit)

    def _private_and_public_rows(self, X, y, X_public):
        """The opening of every ``fit``: validated parameters, the row split, the resolved ``classes``.

        Returns
        -------
        X_private, y_private, X_public, classes
        """
        self._validate_params()
        name = type(self).__name__
        relation = self._neighboring()
        X_private, y_private, X_pub = split_private_public(X, y, X_public, self.classes, name, relation)
        classes = check_classes(self.classes, y_private, name, stacklevel=4)  # the warning points at the caller
        check_delta_for_rows(self, _num_samples(X_private), relation)
        return X_private, y_private, X_pub, classes

    def _neighboring(self):
        """The neighbouring relation a fit protects: its ``neighboring`` parameter, else "replace-one"."""
        return getattr(self, "neighboring", "replace-one")

    def planned_cost(self, n_public):
        """What a fit with these parameters will cost at most, known before it runs.

        A function of public quantities only (the parameters and the number of
        public rows): what an accountant reserves before the fit.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see (some estimators' cost does
            not depend on it).

        Returns
        -------
        cost : skpate.privacy.Cost
        """
        raise NotImplementedError

    def check_public(self, X_public):
        """Refuse, for free, what a fit would refuse on the public rows alone.

        A fit does this itself before it reserves its budget; a meta-estimator
        calls it on its parts before it reserves theirs, so that a part's
        refusal there costs nothing either. Nothing to check here; the learners
        that fit a preprocessor on the public rows fit it (and discard it).

        Parameters
        ----------
        X_public : {array-like, DataFrame} of shape (n_public, n_features)
            The public rows the fit will see.

        Returns
        -------
        self : object
        """
        return self

    def publishable_epsilon(self, n_public):
        """The epsilon a fit with these parameters can publish at most, at ``delta``, known before it runs.

        Parameters
        ----------
        n_public : int
            Number of public rows the fit will see.

        Returns
        -------
        epsilon : float
        """
        return self.planned_cost(n_public).epsilon(self.delta)[0]

    def export_model(self):
        """The publishable artifact: an independent copy of the only model meant for publication.

        Publish it with ``privacy_spent_``. The fitted estimator itself may hold
        private state (teachers, private rows' statistics): never publish it.

        Returns
        -------
        model : estimator
        """
        raise NotImplementedError

    def score(self, X, y, sample_weight=None):
        """Accuracy on the labeled rows: rows labeled ``-1`` are ignored unless ``-1`` is one of ``classes_``.

        The convention of ``fit``, so that ``GridSearchCV`` with public rows
        (``y == -1``) in a fold scores the labeled rows only.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, ...)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        check_is_fitted(self, "classes_")
        y = column_or_1d(y)
        check_consistent_length(X, y)
        if sample_weight is not None:  # one weight per row of X, checked before the -1 rows are dropped
            sample_weight = _check_sample_weight(sample_weight, y)
        keep = np.flatnonzero(~public_rows(y, self.classes_))
        if keep.size == 0:
            raise ValueError("score needs labeled rows; every label is -1.")
        weights = None if sample_weight is None else sample_weight[keep]
        return super().score(_safe_indexing(X, keep), y[keep], sample_weight=weights)


class PublishedModelMixin:
    """Mixin of the models an estimator publishes (built from released outputs, never fitted on rows).

    Such a model is fitted as built, and its ``classes_`` are its ``classes`` parameter, the public label set.
    ``fit`` exists so that scikit-learn treats them as estimators (in a ``Pipeline``, say) and refuses
    with a clear message: refitting a published model on rows would make it a non-private model.
    """

    @property
    def classes_(self):
        return np.asarray(self.classes)

    @property
    def n_features_in_(self):
        return self._recorded_input("n_features_in_")

    @property
    def feature_names_in_(self):
        return self._recorded_input("feature_names_in_")

    def _recorded_input(self, name):
        """What the fit that built the model recorded of its rows (:meth:`_record_columns`), else what the step that
        reads the model's rows first (its public preprocessor, or a PATE student) recorded (scikit-learn's fitted
        attributes of the input); absent if nothing was recorded (``hasattr`` False)."""
        recorded = self.__dict__.get("_columns", {})
        if name in recorded:
            return recorded[name]
        first = getattr(self, "preprocessor", None) or getattr(self, "student", None)
        if first is None or not hasattr(first, name):
            raise AttributeError(f"{type(self).__name__} has no {name}: no step of it recorded its input's columns.")
        return getattr(first, name)

    def _record_columns(self, estimator):
        """Record the columns the fitted ``estimator`` that built this model saw (``n_features_in_``,
        ``feature_names_in_``): the model then refuses other columns as the estimator does (:meth:`_features`)."""
        names = ("n_features_in_", "feature_names_in_")
        self._columns = {name: getattr(estimator, name) for name in names if hasattr(estimator, name)}

    def _features(self, X):
        """The rows through the model's ``preprocessor`` (as they are without one), their columns first checked
        against those recorded: without a preprocessor, nothing else would refuse reordered or extra columns."""
        if "_columns" in self.__dict__:
            validate_data(self, X, skip_check_array=True, reset=False)
        preprocessor = getattr(self, "preprocessor", None)
        return X if preprocessor is None else preprocessor.transform(X)

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_clone__(self):
        # Fitted as built, like scikit-learn's FrozenEstimator: clone gives an independent copy that still predicts
        # (cloning its parameters would unfit the public preprocessor it holds).
        return copy.deepcopy(self)

    def fit(self, X=None, y=None):
        """Not available: a published model is built by the private estimator that released it.

        Raises
        ------
        TypeError
        """
        raise TypeError(
            f"{type(self).__name__} is a published model built from a private fit's released outputs; it is not "
            "fitted on rows. Fit the private estimator (e.g. NoisyGDClassifier, LeafRefitClassifier) instead."
        )
