"""skpate: PATE (Private Aggregation of Teacher Ensembles) for scikit-learn."""

from ._pate import PATEClassifier
from .aggregators import (
    NZC,
    ConfidentGNMax,
    GaussianHistogram,
    GNMax,
    InteractiveGNMax,
    LNMax,
    Plurality,
    PrivacyLeakWarning,
)
from .linear import NoisyGDClassifier
from .privacy import PrivacyReport, analyze
from .recipes import make_tabular_pate, make_tabular_refit, teachers_for_budget
from .refit import CellCountClassifier, LeafRefitClassifier

__version__ = "0.1.0"

__all__ = [
    "NZC",
    "CellCountClassifier",
    "ConfidentGNMax",
    "GaussianHistogram",
    "GNMax",
    "InteractiveGNMax",
    "LeafRefitClassifier",
    "LNMax",
    "NoisyGDClassifier",
    "PATEClassifier",
    "Plurality",
    "PrivacyLeakWarning",
    "PrivacyReport",
    "analyze",
    "make_tabular_pate",
    "make_tabular_refit",
    "teachers_for_budget",
]
