"""The privacy accounting engine: Renyi-DP bounds of PATE's aggregators.

Pure functions on arrays; no estimator code. ``analyze`` is the entry point
for a vote matrix; ``rdp_to_dp`` converts a composed RDP curve; ``RDPAccountant`` (in memory) and
``PrivacyLedger`` (in a database) keep a budget across fits.
"""

from . import bounds
from .accountant import BudgetAccountant, BudgetExceededError, RDPAccountant
from .cost import Cost
from .gdp import gdp_delta, gdp_epsilon, gdp_mu
from .ledger import LedgerLockTimeoutError, PrivacyLedger
from .rdp import DEFAULT_ORDERS, check_delta, check_orders, compose, rdp_to_dp
from .report import PrivacyReport, analyze

__all__ = [
    "BudgetAccountant",
    "PrivacyLedger",
    "LedgerLockTimeoutError",
    "BudgetExceededError",
    "Cost",
    "RDPAccountant",
    "DEFAULT_ORDERS",
    "PrivacyReport",
    "analyze",
    "bounds",
    "check_delta",
    "check_orders",
    "compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "rdp_to_dp",
]
