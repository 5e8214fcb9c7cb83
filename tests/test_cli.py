"""python -m skpate analyze: the privacy report of a vote matrix from the command line."""

import subprocess
import sys

import numpy as np
import pytest

from skpate import ConfidentGNMax, GNMax, analyze
from skpate.__main__ import main
from skpate.privacy import Cost, PrivacyLedger


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    votes = rng.multinomial(250, [0.8, 0.1, 0.05, 0.05], size=200)
    answered = ConfidentGNMax(200, 150, 40).aggregate(votes, random_state=0, return_answered=True)[1]
    np.save(tmp_path / "votes.npy", votes)
    np.save(tmp_path / "answered.npy", answered)
    return tmp_path, votes, answered


def test_confident_report_matches_the_library(files, capsys):
    path, votes, answered = files
    code = main([
        "analyze", str(path / "votes.npy"), "--aggregator", "confident-gnmax", "--threshold", "200",
        "--sigma-threshold", "150", "--sigma", "40", "--delta", "1e-5", "--answered", str(path / "answered.npy"),
    ])  # fmt: skip
    assert code == 0
    expected = analyze(votes, ConfidentGNMax(200, 150, 40), 1e-5, answered=answered)
    out = capsys.readouterr().out
    assert f"(epsilon, delta) = ({expected.epsilon:.4g}, 1e-05)" in out  # publishable, a priori
    assert f"data-dependent epsilon: {expected.data_dependent_epsilon:.4g}" in out
    assert out.index("PUBLISH") < out.index("data-dependent")
    assert f"answered by the teachers: {answered.sum()}" in out


def test_sanitized_release_from_the_command_line(files, capsys):
    path, votes, _ = files
    args = ["analyze", str(path / "votes.npy"), "--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5"]
    assert main(args + ["--sanitize-order", "20", "--seed", "0"]) == 0
    expected = analyze(votes, GNMax(40), 1e-5, sanitize_order=20.0, random_state=0)
    assert f"sanitized data-dependent epsilon: {expected.sanitized_epsilon:.4g}" in capsys.readouterr().out


def test_runs_as_a_module(files):
    path, _, _ = files
    result = subprocess.run(
        [sys.executable, "-m", "skpate", "analyze", str(path / "votes.npy"), "--aggregator", "lnmax", "--scale",
         "20", "--delta", "1e-5"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0 and "Privacy report for LNMax(scale=20.0)" in result.stdout


CONFIDENT = ["--aggregator", "confident-gnmax", "--sigma-threshold", "150", "--sigma", "40", "--delta", "1e-5"]


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", "--votes-missing"], None),
        (CONFIDENT + ["--threshold", "200"], "answered"),
        (["--aggregator", "gnmax", "--delta", "1e-5"], "needs --sigma"),
        (["--aggregator", "gnmax", "--sigma", "40", "--scale", "3", "--delta", "1e-5"], "takes --sigma; got --scale"),
        (["--aggregator", "gnmax", "--sigma", "-1", "--delta", "1e-5"], "sigma"),
        (["--aggregator", "gnmax", "--sigma", "40", "--delta", "2"], "delta"),
        (CONFIDENT + ["--threshold", "300", "--answered", "ANSWERED"], "threshold"),
        (["--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", "--sanitize-order", "auto"], None),
        (["--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5", "--sanitize-order", "0.5"], "order"),
    ],
)
def test_bad_parameters(files, capsys, extra, match):
    path, _, _ = files
    extra = [str(path / "answered.npy") if item == "ANSWERED" else item for item in extra]
    if match is None:  # argparse's own usage error
        with pytest.raises(SystemExit):
            main(["analyze", str(path / "votes.npy"), *extra])
        return
    assert main(["analyze", str(path / "votes.npy"), *extra]) == 2
    assert match in capsys.readouterr().err


def test_bad_files(files, capsys, tmp_path):
    path, _, _ = files
    args = ["--aggregator", "gnmax", "--sigma", "40", "--delta", "1e-5"]
    assert main(["analyze", str(tmp_path / "nope.npy"), *args]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "text.npy").write_text("not an array")
    assert main(["analyze", str(tmp_path / "text.npy"), *args]) == 2
    assert "not a .npy array file" in capsys.readouterr().err
    np.save(tmp_path / "flat.npy", np.arange(5))
    assert main(["analyze", str(tmp_path / "flat.npy"), *args]) == 2
    assert "2-d" in capsys.readouterr().err
    np.save(tmp_path / "short.npy", np.ones(3, dtype=bool))
    short = ["--threshold", "200", "--answered", str(tmp_path / "short.npy")]
    assert main(["analyze", str(path / "votes.npy"), *CONFIDENT, *short]) == 2
    assert "shape" in capsys.readouterr().err


# ------------------------------------------------------------ python -m skpate ledger


def test_ledger_show_hides_a_password(monkeypatch, capsys):
    monkeypatch.setattr(PrivacyLedger, "datasets", staticmethod(lambda url: []))  # an empty database
    assert main(["ledger", "show", "postgresql+psycopg://team:Sup3rS3cret@db.example/budgets"]) == 0
    out = capsys.readouterr().out
    assert "no budgets in postgresql+psycopg://team:***@db.example/budgets" in out and "Sup3rS3cret" not in out


def test_ledger_create_show_and_resolve(tmp_path, capsys):
    path = str(tmp_path / "budget.db")
    assert main(["ledger", "show", path]) == 0 and "no budgets" in capsys.readouterr().out
    assert not (tmp_path / "budget.db").exists()  # reading creates nothing
    assert main(["ledger", "create", path, "--dataset", "patients", "--epsilon", "3", "--delta", "1e-5"]) == 0
    assert "patients: budget epsilon 3 at delta 1e-05; spent 0, left 3" in capsys.readouterr().out
    # The budget is fixed: creating it again with another epsilon is an error naming why.
    assert main(["ledger", "create", path, "--dataset", "patients", "--epsilon", "4", "--delta", "1e-5"]) == 2
    assert "fixed when its ledger was created" in capsys.readouterr().err
    ledger = PrivacyLedger(path, dataset="patients")
    reservation = ledger.reserve(Cost(mu_squared=0.1), label="a fit that died")
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    assert f"#{reservation}" in out and "reserved" in out and f"open reservations: {reservation}" in out
    assert main(["ledger", "resolve", path, "--dataset", "patients", "--id", str(reservation)]) == 0
    assert "abandoned" in capsys.readouterr().out and ledger.spent_epsilon > 0  # kept: fail closed
    assert main(["ledger", "resolve", path, "--dataset", "patients", "--id", str(reservation)]) == 2
    assert "already abandoned" in capsys.readouterr().err


def test_ledger_command_runs_as_a_module(tmp_path):
    path = str(tmp_path / "budget.db")
    create = [sys.executable, "-m", "skpate", "ledger", "create", path, "--dataset", "d", "--epsilon", "1", "--delta",
              "1e-6"]  # fmt: skip
    created = subprocess.run(create, capture_output=True, text=True, check=True)
    assert "budget epsilon 1 at delta 1e-06" in created.stdout
    missing = subprocess.run([sys.executable, "-m", "skpate", "ledger", "show", path, "--dataset", "other"],
                             capture_output=True, text=True)  # fmt: skip
    assert missing.returncode == 2 and "no budget for dataset 'other'" in missing.stderr
