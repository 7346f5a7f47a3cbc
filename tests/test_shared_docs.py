"""The shared parameter docs (knorm._docs): filled where marked, refused when misspelt, never left behind."""

import inspect
import pkgutil
import re

import pytest

import knorm
from knorm._docs import PARAMETERS, fill_doc


def test_a_marker_is_replaced_by_the_entry_at_its_indentation():
    def f():
        """Do it.

        Parameters
        ----------
        %(rng)s
        x : int
            Kept, with 100% of its text.
        """

    doc = fill_doc(f).__doc__
    entry = PARAMETERS["rng"].split("\n")
    assert f"\n        {entry[0]}\n            {entry[1].strip()}" in doc
    assert "%(" not in doc and "Kept, with 100% of its text." in doc


def test_a_misspelt_marker_is_refused():
    def f():
        """%(rgn)s"""

    with pytest.raises(KeyError, match="rgn"):
        fill_doc(f)


def test_no_public_docstring_keeps_a_marker():
    left = []
    for info in pkgutil.walk_packages(knorm.__path__, "knorm."):
        if ".cli" in info.name or info.name.endswith("__main__"):
            continue
        module = __import__(info.name, fromlist=["_"])
        for name, obj in vars(module).items():
            for member in [obj, *vars(obj).values()] if inspect.isclass(obj) else [obj]:
                doc = getattr(member, "__doc__", None)
                if isinstance(doc, str) and re.search(r"^\s*%\(\w+\)s\s*$", doc, re.MULTILINE):
                    left.append(f"{info.name}.{name}")
    assert not left, left
