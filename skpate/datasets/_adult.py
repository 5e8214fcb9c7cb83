"""UCI Adult, bundled (gzipped, CC BY 4.0), and the PATE papers' split."""

import gzip
import hashlib
import io
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ._schema import ADULT_CATEGORIES

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
]  # fmt: skip
#: Categorical feature columns.
ADULT_CATEGORICAL = list(ADULT_CATEGORIES)
#: Numeric feature columns.
ADULT_NUMERIC = [c for c in ADULT_COLUMNS[:-1] if c not in ADULT_CATEGORIES]

#: sha256 of the uncompressed files, from the dataset's provenance note.
_SHA256 = {
    "adult.data.gz": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test.gz": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
}


def _read(name):
    raw = gzip.decompress(resources.files("skpate.datasets").joinpath("data", name).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SHA256[name]:
        raise OSError(f"the bundled {name} is corrupted (sha256 {digest}, expected {_SHA256[name]}); reinstall skpate.")
    frame = pd.read_csv(
        io.BytesIO(raw),
        names=ADULT_COLUMNS,
        skipinitialspace=True,
        na_values="?",
        comment="|",  # the test file opens with "|1x3 Cross validator"
    )
    frame["income"] = frame["income"].str.rstrip(".")  # the test file writes ">50K."
    for column in ADULT_NUMERIC:
        frame[column] = frame[column].astype(np.int64)
    return frame


def load_adult():
    """Load the UCI Adult (Census Income) train and test files, offline.

    The original files ship with skpate, gzipped and checked against their
    sha256. Missing values (``'?'``) become NaN; the test file's comment line
    and the trailing ``'.'`` of its labels are removed.

    Returns
    -------
    train : pandas.DataFrame of shape (32561, 15)
        ``adult.data``: 14 attributes and the label ``income``
        (``'<=50K'`` or ``'>50K'``).
    test : pandas.DataFrame of shape (16281, 15)
        ``adult.test``, same columns.

    Raises
    ------
    OSError
        If a bundled file does not match its checksum.

    Notes
    -----
    Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository.
    doi:10.24432/C5XW20. Licensed under CC BY 4.0 (see
    ``skpate/datasets/data/ADULT_LICENSE.md``).
    """
    return _read("adult.data.gz"), _read("adult.test.gz")


def adult_papers_split():
    """The PATE papers' Adult protocol: private, public and evaluation sets.

    Private rows are the whole train file; the test file is split in file
    order: rows ``[0, 8140)`` (``n_test // 2``) form the public pool the
    student queries, rows ``[8140, 16281)`` the evaluation set.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_private`` (32561 rows), ``y_private``, ``X_public`` (8140 rows),
        ``y_public``, ``X_eval`` (8141 rows), ``y_eval``. ``X_*`` are
        DataFrames of the 14 attributes, ``y_*`` arrays of ``'<=50K'`` /
        ``'>50K'``. ``y_public`` is there only to measure the accuracy of
        the noisy labels: it must never reach the teachers, the aggregator or
        the student.
    """
    train, test = load_adult()
    half = len(test) // 2

    def xy(frame):
        return frame.drop(columns="income").reset_index(drop=True), frame["income"].to_numpy(dtype=object)

    X_private, y_private = xy(train)
    X_public, y_public = xy(test.iloc[:half])
    X_eval, y_eval = xy(test.iloc[half:])
    return Bunch(
        X_private=X_private, y_private=y_private, X_public=X_public, y_public=y_public, X_eval=X_eval, y_eval=y_eval
    )
