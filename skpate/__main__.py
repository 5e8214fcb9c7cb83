"""Command line: the privacy report of a vote matrix, and the budgets of a privacy ledger.

``python -m skpate analyze VOTES.npy --aggregator confident-gnmax --threshold 200
--sigma-threshold 150 --sigma 40 --delta 1e-5 --answered MASK.npy``

``python -m skpate ledger create budget.db --dataset patients --epsilon 3 --delta 1e-5``;
``python -m skpate ledger show budget.db --dataset patients``;
``python -m skpate ledger resolve budget.db --dataset patients --id 7 [--refund]``
"""

import argparse
import sys

import numpy as np

from .pate import aggregators as agg
from .privacy import LedgerLockTimeoutError, PrivacyLedger, analyze
from .privacy.ledger import database_url

NOISE_OPTIONS = ["threshold", "sigma_threshold", "sigma", "scale", "constant", "confidence"]


def _parser():
    parser = argparse.ArgumentParser(prog="python -m skpate", description="skpate command line.")
    commands = parser.add_subparsers(dest="command", required=True)
    analyze_cmd = commands.add_parser(
        "analyze",
        help="privacy report of a vote matrix",
        description="Print the privacy report (data-independent, data-dependent and, for GNMax and "
        "Confident-GNMax, sanitized epsilon) of aggregating a vote matrix.",
    )
    analyze_cmd.add_argument("votes", help="a .npy file: int array (n_queries, n_classes) of teacher vote counts")
    analyze_cmd.add_argument("--aggregator", required=True, choices=sorted(agg.AGGREGATORS))
    for name in NOISE_OPTIONS:
        analyze_cmd.add_argument("--" + name.replace("_", "-"), type=float, dest=name)
    analyze_cmd.add_argument("--delta", type=float, required=True)
    analyze_cmd.add_argument("--answered", help="a .npy file: bool array (n_queries,), the queries that were answered")
    analyze_cmd.add_argument("--student-proba", help="a .npy file: (n_queries, n_classes), for interactive-gnmax")
    analyze_cmd.add_argument("--method", choices=["classic", "improved"], default="classic")
    analyze_cmd.add_argument(
        "--sanitize-order",
        type=float,
        default=None,
        help="RDP order of the sanitized release, fixed before seeing the votes; none by default",
    )
    analyze_cmd.add_argument("--seed", type=int, default=None, help="seed of the sanitized release's noise")
    ledger_cmd = commands.add_parser(
        "ledger",
        help="create and read a privacy ledger (a budget in a database)",
        description="For the people who own a dataset's budget: create it, read what was spent and by which fits, "
        "and close reservations that fits left open when they died.",
    )
    actions = ledger_cmd.add_subparsers(dest="action", required=True)
    for action, text in [
        ("create", "create the budget of a dataset (fixed from then on)"),
        ("show", "the budget, what is spent and left, every charge"),
        ("resolve", "close a reservation left open by a fit that died"),
    ]:
        sub = actions.add_parser(action, help=text, description=text)
        sub.add_argument("url", help="a SQLite file path or a SQLAlchemy URL")
        sub.add_argument("--dataset", required=action != "show", help="the private dataset's name")
    actions.choices["create"].add_argument("--epsilon", type=float, required=True)
    actions.choices["create"].add_argument("--delta", type=float, required=True)
    actions.choices["resolve"].add_argument("--id", type=int, required=True, dest="reservation")
    actions.choices["resolve"].add_argument(
        "--refund", action="store_true", help="void the charge: only if the fit released nothing (default: keep it)"
    )
    return parser


def _load(path, option):
    if path is None:
        return None
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ValueError(f"{option}: no such file {path!r}.") from None
    except (ValueError, OSError) as exc:
        raise ValueError(f"{option}: {path!r} is not a .npy array file ({exc}).") from None


def _aggregator(args):
    cls = agg.AGGREGATORS[args.aggregator]
    options = list(cls._parameter_constraints)  # the parameters it takes
    flags = {name: "--" + name.replace("_", "-") for name in NOISE_OPTIONS}
    unused = [flags[name] for name in NOISE_OPTIONS if name not in options and getattr(args, name) is not None]
    if unused:
        takes = ", ".join(flags[name] for name in options) or "no options"
        raise ValueError(f"--aggregator {args.aggregator} takes {takes}; got {', '.join(unused)}.")
    # Every parameter explicit (NZC: its constant and one noise), never a silent default.
    required = ["constant"] if cls is agg.NZC else options
    missing = [flags[name] for name in required if getattr(args, name) is None]
    if missing:
        raise ValueError(f"--aggregator {args.aggregator} needs {', '.join(missing)}.")
    return cls(**{name: getattr(args, name) for name in options if getattr(args, name) is not None})


def _analyze(args):
    votes = _load(args.votes, "VOTES")
    answered = _load(args.answered, "--answered")
    proba = _load(args.student_proba, "--student-proba")
    aggregator = _aggregator(args)
    report = analyze(
        votes, aggregator, args.delta, answered=answered, student_proba=proba, method=args.method,
        sanitize_order=args.sanitize_order, random_state=args.seed,
    )  # fmt: skip
    print(report)


def _show(ledger):
    """A budget's state and every charge, one per line."""
    print(
        f"{ledger.dataset}: budget epsilon {ledger.epsilon:g} at delta {ledger.delta:g}; "
        f"spent {ledger.spent_epsilon:.4g}, left {ledger.remaining_epsilon:.4g}; "
        f"filters in force: {', '.join(ledger.filters) or 'none'}"
    )
    for entry in ledger.history():
        print(
            f"  #{entry['id']} {entry['time']} {entry['status']:<9} epsilon {entry['epsilon']:.4g}  {entry['label']} "
            f"(host {entry['host']}, pid {entry['pid']})"
        )
    open_ = ledger.pending()
    if open_:
        ids = ", ".join(str(entry["id"]) for entry in open_)
        print(f"  open reservations: {ids} (fits running now, or that died: charged until resolved)")


def _ledger(args):
    if args.action == "create":
        ledger = PrivacyLedger(args.url, dataset=args.dataset, epsilon=args.epsilon, delta=args.delta)
        _show(ledger)
    elif args.action == "resolve":
        ledger = PrivacyLedger(args.url, dataset=args.dataset)
        ledger.resolve(args.reservation, refund=args.refund)
        _show(ledger)
    else:
        names = [args.dataset] if args.dataset else PrivacyLedger.datasets(args.url)
        if not names:
            print(f"no budgets in {database_url(args.url).render_as_string(hide_password=True)}")
        for name in names:
            _show(PrivacyLedger(args.url, dataset=name))


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        _analyze(args) if args.command == "analyze" else _ledger(args)
    except (ValueError, LookupError, IndexError, LedgerLockTimeoutError) as exc:
        print(f"python -m skpate {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
