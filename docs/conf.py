"""Sphinx configuration: numpydoc API reference, the Markdown user guide (MyST), the examples gallery."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "skpate"
author = "skpate developers"
copyright = "2026, skpate developers"  # noqa: A001

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
autosummary_generate = True
templates_path = ["_templates"]  # classes: their own members only, not scikit-learn's inherited ones
numpydoc_show_class_members = False
numpydoc_validation_checks = set()  # structure is checked by the build's warnings, not style rules
myst_heading_anchors = 3  # a link to a missing page or heading is a warning, and the docs test builds with -W

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Only examples that run in well under a minute are executed on a docs build.
    "filename_pattern": r"plots\.py$",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "alabaster"
html_static_path = []
