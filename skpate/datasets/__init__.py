"""Datasets: UCI Adult (bundled, with the papers' split and a fixed encoder); MNIST-like IDX files."""

from ._adult import ADULT_CATEGORICAL, ADULT_NUMERIC, adult_papers_split, load_adult
from ._idx import get_data_home, load_fashion_mnist, load_idx_dataset, load_mnist, read_idx
from ._schema import ADULT_CATEGORIES, adult_encoder

__all__ = [
    "ADULT_CATEGORICAL",
    "ADULT_CATEGORIES",
    "ADULT_NUMERIC",
    "adult_encoder",
    "adult_papers_split",
    "get_data_home",
    "load_adult",
    "load_fashion_mnist",
    "load_idx_dataset",
    "load_mnist",
    "read_idx",
]
