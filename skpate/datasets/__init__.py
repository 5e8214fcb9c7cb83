"""Datasets: UCI Adult, bundled, with the PATE papers' split and a fixed encoder."""

from ._adult import ADULT_CATEGORICAL, ADULT_NUMERIC, adult_papers_split, load_adult
from ._schema import ADULT_CATEGORIES, adult_encoder

__all__ = [
    "ADULT_CATEGORICAL",
    "ADULT_CATEGORIES",
    "ADULT_NUMERIC",
    "adult_encoder",
    "adult_papers_split",
    "load_adult",
]
