"""The bundled UCI Adult files and the papers' split."""

import numpy as np
import pytest

from skpate.datasets import (
    ADULT_CATEGORICAL,
    ADULT_CATEGORIES,
    ADULT_NUMERIC,
    _adult,
    adult_encoder,
    adult_papers_split,
    load_adult,
)


def test_shapes_labels_and_missing_values(adult):
    train, test = adult
    assert train.shape == (32561, 15) and test.shape == (16281, 15)
    for frame in adult:
        assert set(frame["income"]) == {"<=50K", ">50K"}
        assert not (frame.drop(columns=ADULT_NUMERIC) == "?").any().any()
        assert frame[ADULT_NUMERIC].dtypes.eq(np.int64).all()
    assert (train["income"] == ">50K").mean() == pytest.approx(0.2408, abs=1e-4)
    assert train["workclass"].isna().sum() == 1836  # '?' in adult.data
    assert sorted(ADULT_CATEGORICAL + ADULT_NUMERIC) == sorted(train.columns.drop("income"))


def test_schema_categories_cover_the_data(adult):
    for frame in adult:
        for column, categories in ADULT_CATEGORIES.items():
            assert set(frame[column].dropna()) <= set(categories), column


def test_papers_split(adult):
    train, test = adult
    data = adult_papers_split()
    assert (len(data.X_private), len(data.X_public), len(data.X_eval)) == (32561, 8140, 8141)
    assert len(data.y_private) == 32561 and len(data.y_public) == 8140 and len(data.y_eval) == 8141
    assert "income" not in data.X_public.columns
    # In file order: the public pool starts at test row 0, the evaluation set at row 8140.
    assert data.X_public.iloc[0].equals(test.drop(columns="income").iloc[0].rename(0))
    assert data.X_eval.iloc[0].equals(test.drop(columns="income").iloc[8140].rename(0))
    np.testing.assert_array_equal(data.y_eval, test["income"].to_numpy()[8140:])


def test_corrupted_file_raises(monkeypatch):
    monkeypatch.setitem(_adult._SHA256, "adult.data.gz", "0" * 64)
    with pytest.raises(OSError, match="corrupted"):
        load_adult()


def test_encoder_is_fixed_by_the_schema(adult):
    train, _ = adult
    X = train.drop(columns="income")
    # Fitting on two disjoint halves gives the same encoding: nothing is learnt from rows.
    a = adult_encoder().fit(X.iloc[:100]).transform(X.iloc[:50])
    b = adult_encoder().fit(X.iloc[100:]).transform(X.iloc[:50])
    np.testing.assert_array_equal(a, b)
    encoded = adult_encoder().fit_transform(X)
    assert encoded.shape == (32561, 14)
    assert (encoded[:, ADULT_CATEGORICAL.index("workclass")] == -1).sum() == 1836
