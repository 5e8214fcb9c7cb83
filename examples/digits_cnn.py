"""
PATE with CNN teachers and a semi-supervised CNN student, offline, on 8x8 digits
================================================================================

scikit-learn's bundled digits stand in for MNIST (no download): 1,200 private
images for 20 CNN teachers, 300 public images for the student, the rest to
evaluate. The student learns from the answered queries *and* the unanswered
public images (virtual adversarial training). With only 20 teachers the noise
must stay small, so epsilon is large: PATE needs hundreds of teachers (see
``benchmarks/fashion_mnist.py``) for single-digit epsilons.

Run: ``python examples/digits_cnn.py`` (about a minute on 2 cores).
"""

import numpy as np
from sklearn.datasets import load_digits

from skpate import ConfidentGNMax, PATEClassifier
from skpate.nets import make_cnn

X, y = load_digits(return_X_y=True)
order = np.random.default_rng(0).permutation(len(y))
X, y = (X / 16.0)[order].astype(np.float32), y[order]
X_private, y_private = X[:1200], y[:1200]
X_public, y_public = X[1200:1500], y[1200:1500]
X_eval, y_eval = X[1500:], y[1500:]

for name, student in [
    ("supervised CNN student", make_cnn((1, 8, 8), max_epochs=60, batch_size=16)),
    ("semi-supervised CNN student (VAT)", make_cnn((1, 8, 8), max_epochs=60, batch_size=16, semi_supervised=True)),
]:
    pate = PATEClassifier(
        estimator=make_cnn((1, 8, 8), max_epochs=30, batch_size=16),  # 60 images per teacher
        n_teachers=20,
        aggregator=ConfidentGNMax(threshold=12, sigma_threshold=4, sigma=3),
        student=student,
        max_queries=150,
        classes=np.arange(10),  # public: digits 0-9
        random_state=0,
        n_jobs=-1,
    )
    pate.fit(X_private, y_private, X_public=X_public)
    answered = pate.public_labels_ != -1
    print(f"{name}:")
    print(f"  {pate.n_answered_} of {pate.n_queries_} queries answered, label accuracy "
          f"{np.mean(pate.public_labels_[answered] == y_public[answered]):.3f}")  # fmt: skip
    print(f"  student accuracy {pate.score(X_eval, y_eval):.3f}")
    print(f"  publishable epsilon {pate.privacy_report_.epsilon:.2f} at delta {pate.delta:g} "
          f"(data-dependent, private: {pate.privacy_report_.data_dependent_epsilon:.2f})")  # fmt: skip
