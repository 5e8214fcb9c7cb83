"""The layout's rules, checked on the import statements of every module of skpate (issue 28).

* No module imports a private name (or a private module) of another package: ``skpate.pate``,
  ``skpate.pool``, ``skpate.privacy``, ``skpate.datasets`` and the top-level modules are packages here.
  ``skpate._validation`` is the bottom of the library: every package may use it, by its public names.
* ``skpate.privacy`` imports no estimator: only itself and the bottom (``_validation``, ``exceptions``).
* The public-pool learners (``skpate.pool``) do not import the PATE estimator: a learner that composes
  PATE (the leaf refit) takes it as a parameter.
* The bottom imports nothing of skpate but its exceptions.
"""

import ast
from pathlib import Path

import pytest

import skpate

ROOT = Path(skpate.__file__).parent
BOTTOM = {"skpate._validation", "skpate.exceptions"}
SUBPACKAGES = {"pate", "pool", "privacy", "datasets"}


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module):
    """``skpate.pate``, ``skpate.pool``, ... for a module inside one, ``skpate`` for a top-level module."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and parts[1] in SUBPACKAGES else "skpate"


def _imports(path):
    """``(imported module, imported name or None)`` of every import statement of the file, relative ones resolved."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                # ``from . import aggregators`` imports a module, not a name.
                as_module = f"{base}.{alias.name}"
                if (ROOT.parent / as_module.replace(".", "/")).with_suffix(".py").exists() or (
                    ROOT.parent / as_module.replace(".", "/") / "__init__.py"
                ).exists():
                    yield as_module, None
                else:
                    yield base, alias.name


MODULES = {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
EDGES = {name: [edge for edge in _imports(path) if edge[0].startswith("skpate")] for name, path in MODULES.items()}


def _private(module, name):
    parts = module.split(".")[1:] + ([name] if name else [])
    return any(part.startswith("_") and not part.startswith("__") for part in parts)


def test_the_graph_was_read():
    assert {"skpate.pate.estimator", "skpate.pool.refit", "skpate.privacy.calibration"} <= set(EDGES)
    assert ("skpate._validation", "check_noise_generator") in EDGES["skpate.pool._base"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_another_packages_private_name(module):
    package = _package(module)
    offending = []
    for target, name in EDGES[module]:
        if _package(target) == package:
            continue  # a package's private parts are its own to share
        if target in BOTTOM and not (name or "").startswith("_"):
            continue
        if _private(target, name):
            offending.append(f"{target}.{name}" if name else target)
    assert not offending, f"{module} imports private names of other packages: {offending}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("skpate.privacy")))
def test_the_accounting_engine_imports_no_estimator(module):
    outside = [t for t, _ in EDGES[module] if not t.startswith("skpate.privacy") and t not in BOTTOM]
    assert not outside, f"{module} imports {outside}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("skpate.pool")))
def test_the_public_pool_learners_do_not_import_pate(module):
    pate = [t for t, _ in EDGES[module] if t.startswith(("skpate.pate", "skpate.recipes")) or t == "skpate"]
    assert not pate, f"{module} imports {pate}"


@pytest.mark.parametrize("module", sorted(BOTTOM))
def test_the_bottom_imports_nothing_of_skpate_but_its_exceptions(module):
    assert {t for t, _ in EDGES[module]} <= {"skpate.exceptions"}
