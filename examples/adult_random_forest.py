"""
PATE on UCI Adult with random-forest teachers and student
=========================================================

The protocol of the PATE papers: 250 teachers share the 32,561 rows of
``adult.data``; the student queries rows from the first half of ``adult.test``
(the public pool, labels unseen) and is evaluated on the second half. The
budget comes first: ``epsilon=1.0`` at ``delta=1e-5`` covers everything the
fit releases. :func:`skpate.make_tabular_pate` is the recipe measured on this
split (forest teachers, GNMax noise ``n_teachers / 1.75``, a forest student
with leaves of at least 5 rows, 5 rounds of uncertainty sampling). Then
:func:`skpate.make_tabular_refit` spends the same budget differently: 30% on
the recipe, 70% on private leaf refits (per-leaf class counts of forests grown
on the public rows, with Gaussian noise), the best row on this split.

Run: ``python examples/adult_random_forest.py`` (about three minutes on 2 cores).
"""

import time

from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from skpate import make_tabular_pate, make_tabular_refit
from skpate.datasets import adult_encoder, adult_papers_split

data = adult_papers_split()


def forest():  # the non-private reference
    return make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None))


pate = make_tabular_pate(
    adult_encoder(),  # fixed by the published schema: the student pipeline carries no private statistics
    epsilon=1.0,  # the budget, fixed before the fit: it covers every query and the noise is calibrated to it
    delta=1e-5,
    classes=["<=50K", ">50K"],  # public: the dataset's documentation
    n_teachers=250,
    random_state=0,
    n_jobs=-1,
)
start = time.perf_counter()
pate.fit(data.X_private, data.y_private, X_public=data.X_public)
print(f"fit in {time.perf_counter() - start:.0f}s: {pate.n_answered_} of {pate.n_queries_} queries answered")

answered = pate.public_labels_ != -1
label_accuracy = (pate.public_labels_[answered] == data.y_public[answered]).mean()
print(f"accuracy of the noisy labels the student saw: {label_accuracy:.3f}")
print(f"student accuracy on the evaluation half:     {pate.score(data.X_eval, data.y_eval):.4f}")
print(pate.privacy_report_)

baseline = forest().fit(data.X_private, data.y_private)
print(f"non-private forest on all private rows:     {baseline.score(data.X_eval, data.y_eval):.4f}")

# The artifact to publish is the student alone (the PATEClassifier holds the
# teachers), with privacy_spent_: at most the budget, (1.0, 1e-05).
student = pate.export_model()
epsilon, delta = pate.privacy_spent_
print(f"publish the student with (epsilon, delta) = ({epsilon:g}, {delta:g})")

# The same budget, spent differently: the recipe under 30% of it (Gaussian DP mu^2), then 3 rounds of
# private leaf counts of forests grown on the public rows. Publish export_model(), with privacy_spent_.
refit = make_tabular_refit(
    adult_encoder(), epsilon=1.0, delta=1e-5, classes=["<=50K", ">50K"], random_state=0, n_jobs=-1
)
refit.fit(data.X_private, data.y_private, X_public=data.X_public)
epsilon, delta = refit.privacy_spent_
print(f"recipe + leaf refit at the same budget:     {refit.score(data.X_eval, data.y_eval):.4f} "
      f"(publish with ({epsilon:.4g}, {delta:g}); its PATE part had epsilon {refit.pate_.epsilon:.3f})")  # fmt: skip
model = refit.export_model()
