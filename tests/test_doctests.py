"""The examples in the docstrings run and print what they show (the README's test command runs them)."""

import doctest
import importlib
import pkgutil

import pytest

import skpate

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(skpate.__path__, "skpate.")
    if name != "skpate.__main__"  # the command line: tested in test_cli.py
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name}"


@pytest.mark.parametrize(
    "entry_point",
    [
        skpate.PATEClassifier,
        skpate.analyze,
        skpate.make_tabular_pate,
        skpate.make_tabular_refit,
        skpate.LeafRefitClassifier,
        skpate.CellCountClassifier,
        skpate.NoisyGDClassifier,
    ],
)
def test_entry_points_show_an_example(entry_point):
    assert doctest.DocTestFinder().find(entry_point)[0].examples, f"{entry_point.__name__} has no example"
