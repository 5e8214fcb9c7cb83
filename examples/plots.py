"""
The skpate plots on scikit-learn's 8x8 digits, saved as PNGs (offline, about 30 s on 2 cores)
=============================================================================================

Random-forest teachers, a logistic-regression student, at budgets one would
publish (epsilon 0.5 to 6). The vote-gap histogram and the data-dependent
curve are private diagnostics (computed from raw votes); the publishable
curve alone (``cumulative_epsilon.png``) is safe to publish. The
privacy-utility plot's epsilons are publishable, its scores are
cross-validated on private rows (a diagnostic); the teacher-count plot
costs the sum of its five fits' epsilons (printed).

Run: ``python examples/plots.py [--out plots/]``
"""

import argparse
import pathlib
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skpate import ConfidentGNMax, GNMax, PATEClassifier, SeededNoiseWarning  # noqa: E402
from skpate.plotting import (  # noqa: E402
    CumulativeEpsilonDisplay,
    PrivacyUtilityDisplay,
    TeacherCountDisplay,
    VoteGapDisplay,
)

# A reproducible demo: seeded on purpose. A release is fitted with random_state=None (docs/guarantees.md).
warnings.filterwarnings("ignore", category=SeededNoiseWarning)

parser = argparse.ArgumentParser(description="Save the skpate plots as PNGs.")
parser.add_argument("--out", default="plots")
out = pathlib.Path(parser.parse_known_args()[0].out)
out.mkdir(exist_ok=True)

X, y = load_digits(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
X, y = X[order], y[order]
X_private, y_private, X_public, y_public = X[:1300], y[:1300], X[1300:], y[1300:]

pate = PATEClassifier(
    RandomForestClassifier(n_estimators=20, random_state=0),
    n_teachers=50,
    aggregator=ConfidentGNMax(threshold=35, sigma_threshold=25, sigma=15),
    student=make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    epsilon=3.0,  # the budget: a privacy filter stops the queries when it is spent
    classes=np.arange(10),
    random_state=0,
    n_jobs=-1,
)
pate.fit(X_private, y_private, X_public=X_public)
unqueried = ~pate.public_queried_
student_accuracy = pate.score(X_public[unqueried], y_public[unqueried])
pate_epsilon = pate.privacy_spent_[0]

VoteGapDisplay.from_estimator(pate, X_public)
plt.savefig(out / "vote_gaps.png", dpi=100)
CumulativeEpsilonDisplay.from_estimator(pate, data_dependent=False)  # publishable: the a-priori curve only
plt.savefig(out / "cumulative_epsilon.png", dpi=100)
CumulativeEpsilonDisplay.from_estimator(pate)  # with the data-dependent curve: a private diagnostic
plt.savefig(out / "cumulative_epsilon_private.png", dpi=100)

X_all = np.vstack([X_private, X_public])
y_all = np.concatenate([y_private, -np.ones(len(X_public), dtype=int)])
search = GridSearchCV(
    pate.set_params(aggregator=GNMax(sigma=20.0), epsilon=None, max_queries=100),
    {"aggregator__sigma": [10.0, 20.0, 40.0, 80.0]}, cv=2,
).fit(X_all, y_all)  # fmt: skip
PrivacyUtilityDisplay.from_cv_results(search)
plt.savefig(out / "privacy_utility.png", dpi=100)

teacher_counts = TeacherCountDisplay.from_estimator(
    pate.set_params(aggregator=GNMax(sigma=5.0)),
    X_private,
    y_private,
    X_public,
    y_public,
    n_teachers=(5, 10, 25, 50, 100),
)
plt.savefig(out / "label_accuracy_vs_teachers.png", dpi=100)
print(f"saved 5 plots in {out}/; student accuracy on the unqueried public rows: {student_accuracy:.3f}, "
      f"publishable epsilon {pate_epsilon:.2f}; the teacher-count plot's fits: "
      f"{teacher_counts.epsilons.sum():.2f} together")  # fmt: skip
