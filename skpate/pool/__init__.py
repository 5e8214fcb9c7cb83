"""Learners that use the public pool without teachers, or after them.

:class:`CellCountClassifier` (noisy class counts in k-means cells of the pool),
:class:`NoisyGDClassifier` (noisy gradient descent shaped by the pool),
:class:`NoisyBoostingClassifier` (boosting over the pool's bins and random public trees),
:class:`LeafRefitClassifier` (a PATE estimator, then noisy leaf counts of
forests grown on the pool) and the model the count learners publish,
:class:`NoisyCountModel`. They share :class:`~skpate.pool._base.BasePoolClassifier`.
"""

from .boosting import BoostedPartitionsModel, NoisyBoostingClassifier
from .cells import CellCountClassifier, KMeansCells
from .count_model import NoisyCountModel
from .linear import NoisyGDClassifier, SoftmaxModel
from .refit import LeafRefitClassifier

__all__ = [
    "BoostedPartitionsModel",
    "CellCountClassifier",
    "KMeansCells",
    "LeafRefitClassifier",
    "NoisyBoostingClassifier",
    "NoisyCountModel",
    "NoisyGDClassifier",
    "SoftmaxModel",
]
