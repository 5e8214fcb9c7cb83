"""
One call: PrivateClassifier on UCI Adult
========================================

The private rows are the 32,561 labelled rows of ``adult.data``, as they come:
numbers, strings and missing values. The public pool is the first half of
``adult.test`` (features only) and the evaluation rows its second half.
:class:`skpate.PrivateClassifier` encodes the table with statistics of the
public rows only and fits its default candidate, the private boosting of
:class:`skpate.NoisyBoostingClassifier` (per-feature bins cut at the public
rows' values, noisy clipped-gradient sums of the private rows per bin), under
the whole budget. ``candidates=["linear", "trees", "boosting"]`` makes it
choose privately among three learners instead. The budget ``epsilon=1.0`` at
``delta=1e-5`` covers all of it and is fixed before the fit.

Run: ``python examples/private_classifier.py`` (about ten seconds on 2 cores).
"""

from skpate import PrivateClassifier
from skpate.datasets import adult_papers_split

data = adult_papers_split()

model = PrivateClassifier(epsilon=1.0, delta=1e-5, classes=["<=50K", ">50K"], random_state=0, verbose=1)
model.fit(data.X_private, data.y_private, X_public=data.X_public)  # one line per phase and candidate

print(
    f"chosen: {model.selected_['name']}; accuracy on the evaluation rows: {model.score(data.X_eval, data.y_eval):.4f}"
)
print(model.privacy_report_)  # what to publish, first
epsilon, delta = model.privacy_spent_  # (1.0, 1e-05): publish this ...
published = model.export_model()  # ... with this: a scikit-learn model from raw rows, the only object to publish
