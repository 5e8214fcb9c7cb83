"""Levers that did not beat the recipe on UCI Adult, measured on the recipe's own teachers at publishable epsilon.

The recipe (:func:`skpate.make_tabular_pate`) asks GNMax at ``sigma = n / 1.75``
about the public rows its student is least sure of, in 5 rounds. This script
replays that loop on the teachers' cached votes (250 forest teachers trained
once per seed by ``PATEClassifier``; the budget is an a-priori Gaussian-DP
``mu``, ``skpate.privacy.gdp_mu(epsilon, delta)``, as the estimator's filter
uses) and changes one thing at a time:

* ``uncertainty`` (the recipe): the least-sure rows, ties broken at random;
* ``diverse xK``: k-means on the ``K * q`` least-sure rows (public features,
  standardized on the public pool), the least-sure row of each of ``q``
  clusters;
* ``band xK``: ``q`` rows at random among the ``K * q`` least sure;
* ``capped disagreements``: after a first GNMax round on a share of the
  budget, each later round releases, for a batch of ``m`` least-sure rows,
  the number of teachers whose vote differs from the current student's label,
  plus Gaussian noise, and flips the student's label where more than half do.
  Each teacher's disagreements are capped at ``K = ceil(kappa m)`` (its most
  confident ones; a function of the teacher alone), so a teacher moves the
  released vector by at most ``sqrt(2K)`` in L2 norm under replacement (two
  teachers' capped disagreement sets differ in at most ``2K`` rows): the
  Gaussian mechanism with that sensitivity, cheaper than GNMax's ``sqrt(2 m)``
  when teachers mostly agree with the student;
* students: other models fitted on the recipe's answers.

Every epsilon is publishable (a budget fixed in advance); the evaluation half
scores every row (non-private tuning, disclosed: none of these won).

Run: ``python benchmarks/adult_levers.py [--seeds 3] [--epsilons 0.5 1]`` (about 80 s per seed on 2 cores;
``benchmarks/results/adult_levers.txt``: 10 seeds).
"""

import argparse
import time

import numpy as np
from adult import CLASSES  # benchmarks/adult.py, next to this script: the public label set
from adult_sweep import students as sweep_students  # benchmarks/adult_sweep.py: the students it compares
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import SelfTrainingClassifier

from skpate import GNMax, make_tabular_pate
from skpate.datasets import adult_encoder, adult_papers_split
from skpate.privacy import gdp_mu
from skpate.privacy.cost import largest_count

DELTA = 1e-5
N_TEACHERS = 250
SIGMA = N_TEACHERS / 1.75  # the recipe's noise (GNMax.for_ensemble, two classes)


def forest_student(min_samples_leaf=5, seed=0):
    return make_pipeline(
        adult_encoder(), RandomForestClassifier(min_samples_leaf=min_samples_leaf, random_state=seed, n_jobs=2)
    )


class Simulation:
    """The recipe's query loop on one seed's cached teacher votes (probabilities of ``>50K`` on the public pool)."""

    def __init__(self, data, seed):
        self.data, self.seed = data, seed
        pate = make_tabular_pate(adult_encoder(), epsilon=1.0, classes=CLASSES, random_state=seed, n_jobs=2)
        pate.set_params(max_queries=1).fit(data.X_private, data.y_private, X_public=data.X_public)  # trains teachers
        self.proba = np.stack(
            [t.predict_proba(data.X_public)[:, list(t.classes_).index(">50K")] for t in pate.teachers_]
        )
        self.votes = (self.proba > 0.5).astype(int)  # the forests' predict: >50K above one half
        self.features = StandardScaler().fit_transform(adult_encoder().fit_transform(data.X_public))

    def gnmax(self, rows, rng):
        ones = self.votes[:, rows].sum(0)
        noisy = np.stack([N_TEACHERS - ones, ones]) + rng.normal(0, SIGMA, (2, rows.size))
        return noisy.argmax(0)

    def fit_student(self, rows, labels):
        return forest_student(seed=self.seed).fit(self.data.X_public.iloc[rows], labels)

    def least_sure(self, student, pool, rng):
        proba = student.predict_proba(self.data.X_public.iloc[pool])[:, 1]
        return pool[np.argsort(np.abs(proba - 0.5) + rng.uniform(0, 1e-9, pool.size))]

    def pick(self, strategy, student, pool, q, rng):
        if student is None:
            return rng.choice(pool, q, replace=False)
        ranked = self.least_sure(student, pool, rng)
        kind, factor = strategy
        if kind == "uncertainty":
            return ranked[:q]
        candidates = ranked[: factor * q]
        if kind == "band":
            return rng.choice(candidates, q, replace=False)
        clusters = KMeans(q, n_init=1, random_state=self.seed).fit_predict(self.features[candidates])
        return np.array([candidates[clusters == c][0] for c in np.unique(clusters)])  # ranked: first = least sure

    def run(self, epsilon, strategy=("uncertainty", 1), rounds=5):
        """The recipe's loop with another choice of rows; returns (student, answered rows, their labels)."""
        rng = np.random.default_rng(self.seed + 99)
        n_queries = largest_count(GNMax(SIGMA).query_cost()[1], epsilon, DELTA, self.votes.shape[1])  # as the fit
        labels = np.full(self.votes.shape[1], -1)
        student = None
        for q in np.diff(np.linspace(0, n_queries, rounds + 1).astype(int)):
            rows = self.pick(strategy, student, np.flatnonzero(labels < 0), q, rng)
            labels[rows] = self.gnmax(rows, rng)
            answered = np.flatnonzero(labels >= 0)
            student = self.fit_student(answered, labels[answered])
        return student, answered, labels[answered]

    def capped(self, epsilon, first=0.3, batches=(500, 500, 500, 500), kappa=0.4):
        """GNMax on a random ``first`` share of the budget, then capped disagreement counts on batches."""
        rng = np.random.default_rng(self.seed + 99)
        mu_squared = gdp_mu(epsilon, DELTA) ** 2
        n_first = int(first * mu_squared * SIGMA**2 / 2)
        labels = np.full(self.votes.shape[1], -1)
        rows = rng.choice(labels.size, n_first, replace=False)
        labels[rows] = self.gnmax(rows, rng)
        student = self.fit_student(rows, labels[rows])
        share = (mu_squared - 2 * n_first / SIGMA**2) / len(batches)
        for m in batches:
            cap = int(np.ceil(kappa * m))
            sigma = np.sqrt(2 * cap / share)  # Gaussian mechanism, L2 sensitivity sqrt(2 cap): mu^2 = 2 cap / sigma^2
            rows = self.least_sure(student, np.flatnonzero(labels < 0), rng)[:m]
            reference = (student.predict_proba(self.data.X_public.iloc[rows])[:, 1] > 0.5).astype(int)
            disagree = self.votes[:, rows] != reference
            confidence = np.abs(self.proba[:, rows] - 0.5)
            for t in np.flatnonzero(disagree.sum(1) > cap):  # keep each teacher's `cap` most confident disagreements
                keep = np.flatnonzero(disagree[t])[np.argsort(-confidence[t, disagree[t]])[:cap]]
                disagree[t] = False
                disagree[t, keep] = True
            count = disagree.sum(0) + rng.normal(0, sigma, m)
            labels[rows] = np.where(count > N_TEACHERS / 2, 1 - reference, reference)
            answered = np.flatnonzero(labels >= 0)
            student = self.fit_student(answered, labels[answered])
        return student


RECIPE = "recipe: uncertainty, forest student"
STRATEGIES = [("uncertainty", 1)] + [("diverse", k) for k in (3, 5, 8)] + [("band", k) for k in (2, 3, 5)]


def students(seed):
    """Students other than the recipe's, fitted on its answers."""
    others = {name: model for name, model in sweep_students(seed).items() if name != "forest (min_samples_leaf=5)"}
    others["extra trees (min_samples_leaf=5)"] = make_pipeline(
        adult_encoder(), ExtraTreesClassifier(min_samples_leaf=5, random_state=seed, n_jobs=2)
    )
    others["self-training forest (min_samples_leaf=5)"] = make_pipeline(
        adult_encoder(),
        SelfTrainingClassifier(
            RandomForestClassifier(min_samples_leaf=5, random_state=seed, n_jobs=2), threshold=0.9, max_iter=5
        ),
    )
    return others


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0])
    args = parser.parse_args()
    data = adult_papers_split()
    y_eval = (np.asarray(data.y_eval) == ">50K").astype(int)
    results, start = {}, time.perf_counter()

    def add(name, epsilon, student):
        results.setdefault((name, epsilon), []).append(np.mean(student.predict(data.X_eval) == y_eval))

    for seed in range(args.seeds):
        sim = Simulation(data, seed)
        print(f"seed {seed}: teachers trained ({time.perf_counter() - start:.0f}s)", flush=True)
        for epsilon in args.epsilons:
            for strategy in STRATEGIES:
                name = RECIPE if strategy[0] == "uncertainty" else f"{strategy[0]} x{strategy[1]}"
                student, answered, labels = sim.run(epsilon, strategy)
                add(name, epsilon, student)
                if strategy[0] == "uncertainty":
                    semi = np.full(len(data.X_public), -1)  # every public row, -1 where no answer (self-training)
                    semi[answered] = labels
                    for other, model in students(seed).items():
                        if isinstance(model[-1], SelfTrainingClassifier):
                            add(f"student: {other}", epsilon, clone(model).fit(data.X_public, semi))
                        else:
                            add(f"student: {other}", epsilon, clone(model).fit(data.X_public.iloc[answered], labels))
            add("capped disagreements (0.3 first, 4 x 500, kappa 0.4)", epsilon, sim.capped(epsilon))
        print(f"seed {seed} done ({time.perf_counter() - start:.0f}s)", flush=True)
    print(f"\nUCI Adult, {N_TEACHERS} forest teachers, GNMax sigma n/1.75, delta {DELTA:g}, {args.seeds} seed(s)")
    names = list(dict.fromkeys(name for name, _ in results))
    print(f"{'setting':55s}" + "".join(f"  eps {e:<4g} (publishable), minus the recipe" for e in args.epsilons))
    for name in names:
        cells = []
        for e in args.epsilons:
            scores, gain = np.array(results[(name, e)]), np.subtract(results[(name, e)], results[(RECIPE, e)])
            sem = gain.std(ddof=1) / np.sqrt(gain.size) if gain.size > 1 else np.nan
            cells.append(f"  {scores.mean():.4f} +- {scores.std():.4f}, {gain.mean():+.4f} +- {sem:.4f}")
        print(f"{name:55s}" + "".join(cells))
    print("student accuracy on the evaluation half (the last 8,141 rows of adult.test), mean +- std over seeds;")
    print("minus the recipe: the paired difference with the recipe's row (same seed, teachers, first round), mean +-")
    print("its standard error over seeds")


if __name__ == "__main__":
    main()
