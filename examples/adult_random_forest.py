"""
PATE on UCI Adult with random-forest teachers and student
=========================================================

The protocol of the PATE papers: 250 teachers share the 32,561 rows of
``adult.data``; the student queries rows from the first half of ``adult.test``
(the public pool, labels unseen) and is evaluated on the second half. The
budget comes first: ``epsilon=2.0`` at ``delta=1e-5`` covers everything the
fit releases, and Confident-GNMax answers consensus queries until it is spent.

Run: ``python examples/adult_random_forest.py`` (about a minute on 2 cores).
"""

import time

from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline

from skpate import ConfidentGNMax, PATEClassifier
from skpate.datasets import adult_encoder, adult_papers_split

data = adult_papers_split()


def forest():
    # The encoder is fixed by the published Adult schema, not fitted on private
    # data, so the student pipeline carries no private statistics.
    return make_pipeline(adult_encoder(), RandomForestClassifier(n_estimators=100, max_features=None))


pate = PATEClassifier(
    estimator=forest(),
    n_teachers=250,
    aggregator=ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=83.3),
    epsilon=2.0,  # the budget, fixed before the fit: a privacy filter stops the queries when it is spent
    delta=1e-5,
    classes=["<=50K", ">50K"],  # public: the dataset's documentation
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
# teachers), with privacy_spent_: here the budget, (2.0, 1e-05).
student = pate.export_student()
epsilon, delta = pate.privacy_spent_
print(f"publish the student with (epsilon, delta) = ({epsilon:g}, {delta:g})")
