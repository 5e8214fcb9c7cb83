"""A fixed encoding of UCI Adult, taken from the published schema (``adult.names``).

The categories come from the dataset's public description, not from any row,
so an encoder built here holds no private statistic: it may be shipped inside
a published student pipeline.
"""

from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OrdinalEncoder

#: Categories of each categorical attribute, as listed in ``adult.names``.
ADULT_CATEGORIES = {
    "workclass": [
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ],
    "education": [
        "Bachelors",
        "Some-college",
        "11th",
        "HS-grad",
        "Prof-school",
        "Assoc-acdm",
        "Assoc-voc",
        "9th",
        "7th-8th",
        "12th",
        "Masters",
        "1st-4th",
        "10th",
        "Doctorate",
        "5th-6th",
        "Preschool",
    ],
    "marital-status": [
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
    ],
}


def adult_encoder():
    """Ordinal encoder of Adult's categorical columns with the schema's categories.

    Unknown categories and missing values (``'?'`` in the files, NaN once
    loaded) are encoded as ``-1``; numeric columns pass through. Fitting it
    learns nothing from the data beyond the column names, so it is safe inside
    teachers and student alike.

    Returns
    -------
    encoder : sklearn.compose.ColumnTransformer
        Apply to DataFrames with the columns of :func:`load_adult` (``income``
        excluded).
    """
    names = list(ADULT_CATEGORIES)
    encoder = OrdinalEncoder(
        categories=[ADULT_CATEGORIES[name] for name in names],
        handle_unknown="use_encoded_value",
        unknown_value=-1,
        encoded_missing_value=-1,
    )
    return ColumnTransformer([("categorical", encoder, names)], remainder="passthrough")
