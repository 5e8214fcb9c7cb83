"""PATE: teachers on disjoint partitions of the private rows, a noisy aggregation of their votes, a student.

:class:`PATEClassifier` orchestrates; :mod:`skpate.pate.aggregators` holds the
noisy aggregators, :mod:`skpate.pate.students` and
:mod:`skpate.pate.semi_supervised` students made for noisy labels.
"""

from .aggregators import (
    NZC,
    ConfidentGNMax,
    GaussianHistogram,
    GNMax,
    InteractiveGNMax,
    LNMax,
    Plurality,
    teachers_for_budget,
)
from .estimator import PATEClassifier

__all__ = [
    "NZC",
    "ConfidentGNMax",
    "GaussianHistogram",
    "GNMax",
    "InteractiveGNMax",
    "LNMax",
    "PATEClassifier",
    "Plurality",
    "teachers_for_budget",
]
