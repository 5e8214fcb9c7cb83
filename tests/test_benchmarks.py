"""The benchmarks package: its command line, record schema, tables, import graph, and the peers' accounting.

Fast and without fitting anything; Opacus is not needed (the accounting tests need dp-accounting).
"""

import ast
import json
import math
import pathlib

import numpy as np
import pytest

from benchmarks import harness
from benchmarks.__main__ import EXPERIMENTS, build_parser, header, main, protocol

PACKAGE = pathlib.Path(harness.__file__).resolve().parent


def fake_records():
    """Two methods on the same 3 seeds at two budgets, a peer, and a non-private reference."""
    records = []
    for seed, (a, b) in enumerate([(0.80, 0.78), (0.82, 0.79), (0.84, 0.80)]):
        for epsilon, shift in ((1.0, 0.0), (4.0, 0.01)):
            records.append(harness.make_record("adult", "model", epsilon, seed, a + shift, epsilon, 1.5))
            records.append(harness.make_record("adult", "baseline", epsilon, seed, b + shift, epsilon * 0.999, 2.0))
    records.append(harness.make_record("adult", "peer", 1.0, 0, 0.75, 1.0, None))
    records.append(harness.make_record("adult", "non-private", None, 0, 0.9, math.inf, None))
    return records


def test_cli_parses_every_command():
    parser = build_parser()
    args = parser.parse_args(["headline", "--quick", "--n-jobs", "1", "--no-peers"])
    assert (args.command, args.quick, args.n_jobs, args.peers) == ("headline", True, 1, False)
    args = parser.parse_args(["headline", "--seeds", "3", "--epsilons", "0.5", "4", "--no-figure"])
    assert (args.seeds, args.epsilons, args.peers, args.no_figure) == (3, [0.5, 4.0], True, True)
    for name in EXPERIMENTS:
        assert parser.parse_args(["run", name]).experiment == name
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "no such experiment"])
    assert parser.parse_args(["table", "a.jsonl", "b.jsonl"]).records == [pathlib.Path("a.jsonl")] * 1 + [
        pathlib.Path("b.jsonl")
    ]


def test_the_protocols_and_the_quick_header():
    headline = EXPERIMENTS["adult_headline"]
    full = build_parser().parse_args(["headline"])
    assert protocol(headline, full) == (list(range(10)), [0.5, 1.0, 2.0, 4.0], True)
    quick = build_parser().parse_args(["headline", "--quick"])
    seeds, epsilons, is_full = protocol(headline, quick)
    assert (seeds, epsilons, is_full) == ([0], [1.0], False)
    text = header(headline, seeds, epsilons, quick, is_full)
    assert "QUICK RUN" in text and "seeds 0-9" in text and "0.5 1 2 4" in text
    # Fewer seeds or no peers is not the recorded protocol either: its records go elsewhere.
    assert not protocol(headline, build_parser().parse_args(["headline", "--no-peers"]))[2]


def test_records_have_one_schema_and_round_trip(tmp_path):
    records = fake_records()
    for record in records:
        assert set(record) == set(harness.FIELDS)
    assert records[-1]["epsilon"] is None and records[-1]["publishable_epsilon"] is None  # JSON has no inf
    sink = harness.RecordFile(tmp_path / "run.jsonl")
    for record in records:
        sink(record)
    assert harness.read_records(sink.path) == records
    assert [json.loads(line) for line in sink.path.read_text().splitlines()] == records
    with pytest.raises(ValueError, match="keys"):
        harness.check_record({"method": "x"})
    detailed = harness.make_record("adult", "m", 1, 0, 0.5, 1, 3, details={"queries": 10})
    assert harness.check_record(detailed)["details"] == {"queries": 10.0}


def test_paired_difference_pairs_by_seed():
    gaps = harness.paired_difference(fake_records(), "model", "baseline")
    mean, se, n = gaps[1.0]
    assert n == 3 and mean == pytest.approx((0.02 + 0.03 + 0.04) / 3)
    assert se == pytest.approx(0.01 / math.sqrt(3))  # std(ddof=1) of (0.02, 0.03, 0.04) is 0.01
    assert set(gaps) == {1.0, 4.0}
    one_seed = [r for r in fake_records() if r["seed"] == 0]
    assert math.isnan(harness.paired_difference(one_seed, "model", "baseline")[1.0][1])


def test_table_shows_mean_std_columns_and_the_difference():
    text = harness.format_table(fake_records(), [("model", "baseline", "model minus baseline")])
    lines = text.splitlines()
    assert lines[0].split() == ["method", "eps", "1", "eps", "4", "non-private"]
    model = next(line for line in lines if line.startswith("model "))
    assert "0.8200 +- 0.0163" in model and "0.8300 +- 0.0163" in model
    assert "+0.0300 +- 0.0058" in next(line for line in lines if line.startswith("model minus baseline"))
    assert "0.9000 +- 0.0000" in next(line for line in lines if line.startswith("non-private"))
    assert "1/3 seed(s)" in lines[-1]


def test_table_command_reads_the_recorded_adult_pate_table(capsys):
    # The recorded full run: the Adult page's PATE numbers come out of the records as they are.
    assert main(["table", str(harness.RESULTS / "adult_headline.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "0.8453 +- 0.0026" in out and "0.8372 +- 0.0063" in out and "+0.0081 +- 0.0025" in out
    page = (PACKAGE.parent / "docs" / "benchmarks" / "adult.md").read_text().replace("**", "")
    for row in ("recipe + leaf refit (`make_tabular_refit`)", "recipe (`make_tabular_pate`)"):
        cells = next(line for line in page.splitlines() if line.startswith(f"| {row} |")).split("|")[2:6]
        assert all(cell.strip() in out for cell in cells), (row, cells)


def test_the_readme_headline_table_is_the_recorded_runs():
    """Every accuracy of the README's table, recomputed from the records (means over seeds, 3 decimals)."""
    readme = (PACKAGE.parent / "README.md").read_text().replace("**", "")
    rows = {line.split("|")[1].split(" (")[0].strip(): line.split("|")[2:5] for line in readme.splitlines()
            if line.startswith("| ") and "/" in line.split("|")[2]}  # fmt: skip

    def means(records, benchmark, method, epsilons=(0.5, 1.0, 4.0)):
        return [
            np.mean([r["accuracy"] for r in records if r["benchmark"] == benchmark and r["method"] == method
                     and r["epsilon"] == epsilon]) for epsilon in epsilons
        ]  # fmt: skip

    def cell(values):
        return " / ".join(f"{v:.3f}" for v in values)

    adult = harness.read_records(harness.RESULTS / "adult_one_call.jsonl")
    pc, peer = rows["UCI Adult"][:2]
    assert pc.strip() == cell(means(adult, "adult", "skpate PrivateClassifier (defaults)"))
    assert peer.strip() == cell(means(adult, "adult", "Opacus dpsgd-logistic on public-row features (replace-one)"))
    suite = harness.read_records(harness.RESULTS / "tabular_suite.jsonl")
    peers = ("Opacus DP-SGD logistic (replace-one)", "Opacus DP-SGD MLP (replace-one)")
    from benchmarks import tabular_data

    for name in tabular_data.SUITE:
        pc, peer, hgb = (part.strip() for part in rows[name])
        assert pc == cell(means(suite, name, "skpate PrivateClassifier")), name
        best = np.max([means(suite, name, method) for method in peers], axis=0)  # the better peer, per budget
        assert peer == cell(best), name
        assert hgb == f"{means(suite, name, 'non-private HistGradientBoosting', [None])[0]:.3f}", name


def test_recorded_results_follow_the_schema():
    for path in harness.RESULTS.glob("*.jsonl"):
        records = harness.read_records(path)
        assert records, path
        from benchmarks import tabular_data

        known = {"adult", "fashion_mnist", *tabular_data.SUITE, *tabular_data.HOLDOUT, *tabular_data.ALL_DEVELOPMENT}
        assert {r["benchmark"] for r in records} <= known


def test_seed_epsilon_loop_reuses_a_warm_started_model():
    from sklearn.utils import Bunch

    class Fake:
        def __init__(self, epsilon):
            self.epsilon, self.fits = epsilon, 0

        def set_params(self, epsilon):
            self.epsilon = epsilon
            return self

        def fit(self, X, y, X_public=None):
            self.fits += 1
            self.privacy_spent_ = (self.epsilon, 1e-5)
            return self

        def score(self, X, y):
            return self.fits / 10

    built = []
    factory = harness.WarmStarted(lambda seed, epsilon: built.append(Fake(epsilon)) or built[-1])
    data = Bunch(X_private=None, y_private=None, X_public=None, X_eval=None, y_eval=None)
    sink = []
    records = harness.seed_epsilon_loop("adult", {"m": factory}, data, [0, 1], [0.5, 2.0], sink.append, log=None)
    assert len(built) == 2 and records == sink  # one model per seed, refitted at the second budget
    assert [(r["seed"], r["epsilon"], r["publishable_epsilon"], r["accuracy"]) for r in records] == [
        (0, 0.5, 0.5, 0.1), (0, 2.0, 2.0, 0.2), (1, 0.5, 0.5, 0.1), (1, 2.0, 2.0, 0.2),
    ]  # fmt: skip


def _imports(path):
    """Modules imported by the file at ``path`` (relative imports resolved within the package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found |= {f"benchmarks.{node.module}"} if node.module else {f"benchmarks.{a.name}" for a in node.names}
            else:
                found.add(node.module)
    return found


def test_package_has_no_import_cycle_and_no_sys_path_tricks():
    modules = {f"benchmarks.{path.stem}": path for path in PACKAGE.glob("*.py")}
    graph = {name: {m for m in _imports(path) if m in modules} for name, path in modules.items()}
    for name, path in modules.items():
        assert "sys.path" not in path.read_text(), name
    # Kahn's algorithm: every module is removed only if no cycle remains.
    remaining = dict(graph)
    while remaining:
        leaves = [name for name, deps in remaining.items() if not deps & set(remaining)]
        assert leaves, f"import cycle among {sorted(remaining)}"
        for leaf in leaves:
            del remaining[leaf]
    # The harness is at the bottom; skpate is imported only from its public places.
    assert graph["benchmarks.harness"] == set()
    public = {"skpate", "skpate.datasets", "skpate.privacy", "skpate.nets", "skpate.plotting", "skpate.pate.students",
              "skpate.pate.aggregators", "skpate.privacy.calibration", "skpate.preprocessing"}  # fmt: skip
    for name, path in modules.items():
        used = {m for m in _imports(path) if m.split(".")[0] == "skpate"}
        assert used <= public, (name, used - public)


def test_optional_dependencies_are_not_imported_with_the_package():
    import subprocess
    import sys

    code = (
        "import sys, benchmarks.__main__, benchmarks.peers\n"
        "heavy = {'torch', 'opacus', 'kymatio', 'matplotlib', 'dp_accounting', 'diffprivlib'} & set(sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)


def test_schema_features_are_bounded():
    pd = pytest.importorskip("pandas")
    from benchmarks import peers
    from skpate.datasets import ADULT_CATEGORIES

    row = {column: categories[0] for column, categories in ADULT_CATEGORIES.items()}
    row |= {column: high * 10 for column, (_, high, _) in peers.NUMERIC_BOUNDS.items()}
    missing = dict.fromkeys(row, None) | {column: 0 for column in peers.NUMERIC_BOUNDS}
    features = peers.schema_features(pd.DataFrame([row, missing]))
    assert features.dtype.name == "float32" and features.shape[0] == 2
    assert (features >= 0).all() and (features <= 1).all()
    assert abs(float((features[0] ** 2).sum()) ** 0.5 - peers.data_norm()) < 1e-5  # the largest norm is reached
    assert list(peers.encode_labels(["<=50K", ">50K"])) == [0, 1]
    with pytest.raises(ValueError, match="labels outside"):
        peers.encode_labels(["yes"])


# The peers' accounting under skpate's neighbouring relation: replacing one record (needs dp-accounting).
SAMPLE_RATE, STEPS, DELTA = 1 / 32, 960, 1e-5  # the Adult peers' schedule: batch 1024 of 32,561 rows, 30 epochs


def _add_remove_epsilon(noise):
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import PLDAccountant

    accountant = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    event = dp_accounting.PoissonSampledDpEvent(SAMPLE_RATE, dp_accounting.GaussianDpEvent(noise))
    return accountant.compose(event, STEPS).get_epsilon(DELTA)


@pytest.mark.parametrize("noise", [2.0, 4.0])
def test_replacing_a_record_costs_about_twice_adding_one(noise):
    from benchmarks import peers

    # Replacement = removal + addition, so about twice the add/remove epsilon (not exactly 2 at a fixed delta).
    add_remove = _add_remove_epsilon(noise)
    assert 1.8 * add_remove < peers.replace_one_epsilon(noise, SAMPLE_RATE, STEPS, DELTA) < 2.2 * add_remove


def test_replace_one_noise_meets_the_target_and_is_not_needlessly_large():
    from benchmarks import peers

    pytest.importorskip("dp_accounting")
    epsilon = 2.0
    noise = peers.replace_one_noise(epsilon, DELTA, SAMPLE_RATE, STEPS)
    assert peers.replace_one_epsilon(noise, SAMPLE_RATE, STEPS, DELTA) <= epsilon
    assert peers.replace_one_epsilon(noise * 0.995, SAMPLE_RATE, STEPS, DELTA) > epsilon
    assert _add_remove_epsilon(noise) < epsilon  # under replacement the same epsilon needs more noise


def test_a_run_names_the_versions_that_decide_its_numbers():
    import sklearn

    from benchmarks.__main__ import versions

    assert f"scikit-learn {sklearn.__version__}" in versions() and "skpate" in versions()


def test_the_suite_summary_compares_with_the_best_peer_and_the_boosted_reference():
    from benchmarks import tabular

    records = []
    for seed, (mine, logistic, mlp) in enumerate([(0.80, 0.70, 0.74), (0.82, 0.70, 0.76)]):
        for method, accuracy in [(tabular.PRIVATE_CLASSIFIER, mine), (tabular.DPSGD_LOGISTIC, logistic),
                                 (tabular.DPSGD_MLP, mlp)]:  # fmt: skip
            records.append(harness.make_record("toy", method, 1.0, seed, accuracy, 1.0, 2.0))
        records.append(harness.make_record("toy", "non-private HistGradientBoosting", None, seed, 0.85, None, 1.0))
    (row,) = tabular.summary(records)
    assert row["peer_name"] == tabular.DPSGD_MLP  # the best peer, by mean accuracy
    assert row["skpate"] == pytest.approx(0.81) and row["peer"] == pytest.approx(0.75)
    assert row["gap_closed"] == pytest.approx((0.81 - 0.75) / (0.85 - 0.75))
    table = tabular.format_summary([row])
    assert "| toy | 1 | 0.8100 +- 0.0100 | 0.7500 +- 0.0100 (MLP) | 0.8500 | +0.60 |" in table


def test_the_suite_command_parses():
    args = build_parser().parse_args(["suite", "--quick", "--datasets", "diamonds", "--no-peers"])
    assert args.command == "suite" and args.quick and args.datasets == ["diamonds"] and not args.peers


def test_the_boosting_headline_runs_its_peers_in_the_same_run_and_the_suite_measures_it():
    from benchmarks import adult, tabular

    boosting = EXPERIMENTS["adult_boosting"]
    full = build_parser().parse_args(["run", "adult_boosting"])
    assert protocol(boosting, full) == ([0, 1, 2], [0.1, 0.5, 1.0, 2.0, 4.0], True)
    assert list(boosting.methods(1, True)) == [adult.BOOSTING, adult.REFIT, adult.PEER_REPLACE_ONE]
    assert list(boosting.methods(1, False)) == [adult.BOOSTING, adult.REFIT]
    assert tabular.BOOSTING in tabular.private_methods(["a", "b"], peers=False)
    args = build_parser().parse_args(["suite", "--methods", tabular.BOOSTING])
    assert args.methods == [tabular.BOOSTING]
    records = [harness.make_record("toy", m, 1.0, 0, a, 1.0, 1.0) for m, a in
               [(tabular.BOOSTING, 0.8), (tabular.DPSGD_LOGISTIC, 0.7)]]  # fmt: skip
    records.append(harness.make_record("toy", "non-private HistGradientBoosting", None, 0, 0.9, None, 1.0))
    (row,) = tabular.summary(records, method=tabular.BOOSTING)
    assert row["gap_closed"] == pytest.approx(0.5) and not tabular.summary(records)  # no PrivateClassifier record
