"""Better students on UCI Adult at equal privacy: semi-supervised and bias-corrected.

With 250 random-forest teachers, Confident-GNMax answers the confident queries,
and those are mostly the majority class: the answered labels hold ~11% ">50K"
against ~24% in the data. This script measures, on the *same* teachers,
queries and noisy labels (so at exactly the same epsilon), students that use
only what is already public (the public rows, which queries were answered, and
the answers), so they cost no extra privacy:

* plain: a random forest on the answered rows (the papers' student);
* self-training: ``SelfTrainingClassifier`` on all public rows (``-1`` where unanswered);
* prior shift (EM): the plain student's probabilities re-weighted to the class
  prior of the public pool estimated by EM (Saerens et al. 2002);
* propensity weighting: answered rows weighted by 1 / P(answered | x), with
  P(answered | x) learnt from the queried rows (answered or not), correcting the
  selection of confident queries (missing at random given x).

Run: ``python benchmarks/adult_students.py [--seeds 3]`` (about 3 minutes on 2 cores).
"""

import argparse

import numpy as np
from adult import CLASSES  # benchmarks/adult.py, next to this script: the public label set
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.semi_supervised import SelfTrainingClassifier

from skpate import ConfidentGNMax, PATEClassifier
from skpate.datasets import adult_encoder, adult_papers_split


def forest(seed):
    return make_pipeline(adult_encoder(), RandomForestClassifier(max_features=None, random_state=seed))


def em_prior(proba, train_prior, n_iter=200):
    """Class prior of the rows behind ``proba`` under label shift (Saerens et al. 2002, EM)."""
    prior = train_prior
    for _ in range(n_iter):
        adjusted = proba * prior / train_prior
        prior = (adjusted / adjusted.sum(axis=1, keepdims=True)).mean(axis=0)
    return prior


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    data = adult_papers_split()
    scores = {"plain": [], "self-training": [], "prior shift (EM)": [], "propensity weighting": []}
    positive = []
    for seed in range(args.seeds):
        pate = PATEClassifier(
            forest(seed), n_teachers=250, aggregator=ConfidentGNMax(200, 150, 40), max_queries=900,
            classes=CLASSES, warm_start=True, random_state=seed, n_jobs=-1,
        )  # fmt: skip
        pate.fit(data.X_private, data.y_private, X_public=data.X_public)
        answered = pate.public_labels_ != -1
        classes = pate.classes_
        positive.append(np.mean(pate.public_labels_[answered] == ">50K"))
        scores["plain"].append(pate.score(data.X_eval, data.y_eval))
        epsilon = pate.privacy_spent_[0]

        # Same random_state and teachers: identical queries and noisy labels.
        self_training = make_pipeline(
            adult_encoder(), SelfTrainingClassifier(RandomForestClassifier(max_features=None, random_state=seed))
        )
        pate.set_params(student=self_training).fit(data.X_private, data.y_private, X_public=data.X_public)
        assert pate.privacy_spent_[0] == epsilon
        scores["self-training"].append(pate.score(data.X_eval, data.y_eval))

        X_answered, y_answered = data.X_public[answered], pate.public_labels_[answered].astype(str)
        plain = forest(seed).fit(X_answered, y_answered)
        train_prior = np.array([np.mean(y_answered == c) for c in classes])
        prior = em_prior(plain.predict_proba(data.X_public), train_prior)
        shifted = plain.predict_proba(data.X_eval) * prior / train_prior
        scores["prior shift (EM)"].append(np.mean(classes[shifted.argmax(axis=1)] == data.y_eval))

        queried = pate.public_queried_
        encoder = adult_encoder().fit(data.X_public)
        propensity = HistGradientBoostingClassifier(max_depth=3, random_state=seed)
        propensity.fit(encoder.transform(data.X_public[queried]), answered[queried])
        weight = 1.0 / np.clip(propensity.predict_proba(encoder.transform(X_answered))[:, 1], 0.05, 1.0)
        weighted = forest(seed).fit(X_answered, y_answered, randomforestclassifier__sample_weight=weight)
        scores["propensity weighting"].append(weighted.score(data.X_eval, data.y_eval))
        print(f"seed {seed}: eps {epsilon:.2f}, {answered.sum()} answered, " +
              ", ".join(f"{k} {v[-1]:.4f}" for k, v in scores.items()), flush=True)  # fmt: skip

    print(f"\nConfident-GNMax T=200 s1=150 s2=40, 900 queries, mean over {args.seeds} seeds; "
          f"'>50K' among answered labels: {np.mean(positive):.3f} (data: 0.24)")  # fmt: skip
    for name, values in scores.items():
        print(f"  {name:22s} {np.mean(values):.4f} +- {np.std(values):.4f}")


if __name__ == "__main__":
    main()
