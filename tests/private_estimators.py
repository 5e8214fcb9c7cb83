"""Every private estimator of skpate, small enough for a unit test: the registry the contract-wide tests share.

``epsilon``, ``classes`` and ``random_state`` are set by the tests. The nested ones (the refit's PATE part,
the selection's candidates, the one call's selection, the recipe's PATEClassifier) fit other private
estimators inside their fit.
"""

from sklearn.tree import DecisionTreeClassifier

from skpate import (
    CellCountClassifier,
    LeafRefitClassifier,
    NoisyBoostingClassifier,
    NoisyGDClassifier,
    PATEClassifier,
    PrivateClassifier,
    PrivateModelSelection,
    TabularPATEClassifier,
)


def small_pate(**params):
    return PATEClassifier(DecisionTreeClassifier(max_depth=3), n_teachers=10, n_rounds=1, **params)


ESTIMATORS = {
    "PATEClassifier": lambda **p: small_pate(**p),
    "TabularPATEClassifier": lambda **p: TabularPATEClassifier(n_teachers=10, n_rounds=1, **p),
    "LeafRefitClassifier": lambda **p: LeafRefitClassifier(small_pate(random_state=0), n_estimators=5, **p),
    "CellCountClassifier": lambda **p: CellCountClassifier(n_cells=20, n_partitions=3, **p),
    "NoisyGDClassifier": lambda **p: NoisyGDClassifier(**p),
    "NoisyBoostingClassifier": lambda **p: NoisyBoostingClassifier(**p),
    "PrivateModelSelection": lambda **p: PrivateModelSelection(
        [("linear", NoisyGDClassifier()), ("cells", CellCountClassifier(n_cells=20, n_partitions=3))], **p
    ),
    "PrivateClassifier": lambda **p: PrivateClassifier(**p),
}
