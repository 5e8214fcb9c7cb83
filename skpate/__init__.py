"""skpate: private models from a private labelled dataset and a public unlabelled pool, for scikit-learn.

PATE (:class:`PATEClassifier`, :class:`TabularPATEClassifier`) and the learners
that use the public pool without teachers or after them
(:class:`LeafRefitClassifier`, :class:`CellCountClassifier`,
:class:`NoisyGDClassifier`, :class:`NoisyBoostingClassifier`) keep one contract (:mod:`skpate.base`).
"""

from .classifier import PrivateClassifier
from .exceptions import PrivacyLeakWarning, SeededNoiseWarning
from .pate import (
    NZC,
    ConfidentGNMax,
    GaussianHistogram,
    GNMax,
    InteractiveGNMax,
    LNMax,
    PATEClassifier,
    Plurality,
    teachers_for_budget,
)
from .pool import CellCountClassifier, LeafRefitClassifier, NoisyBoostingClassifier, NoisyCountModel, NoisyGDClassifier
from .privacy import BudgetExceededError, PrivacyLedger, PrivacyReport, RDPAccountant, analyze
from .recipes import TabularPATEClassifier, make_tabular_pate, make_tabular_refit
from .selection import PrivateModelSelection, grid_candidates, sampled_candidates

__version__ = "0.1.0"

__all__ = [
    "NZC",
    "BudgetExceededError",
    "CellCountClassifier",
    "ConfidentGNMax",
    "GaussianHistogram",
    "GNMax",
    "InteractiveGNMax",
    "LeafRefitClassifier",
    "LNMax",
    "NoisyBoostingClassifier",
    "NoisyCountModel",
    "NoisyGDClassifier",
    "PATEClassifier",
    "Plurality",
    "PrivacyLeakWarning",
    "PrivateClassifier",
    "PrivateModelSelection",
    "PrivacyReport",
    "PrivacyLedger",
    "RDPAccountant",
    "SeededNoiseWarning",
    "TabularPATEClassifier",
    "analyze",
    "grid_candidates",
    "sampled_candidates",
    "make_tabular_pate",
    "make_tabular_refit",
    "teachers_for_budget",
]
