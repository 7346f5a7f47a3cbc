"""The declared floors and the constraints CI tests them with (.ci/lowest-constraints.txt) must agree.

Every ``>=X`` floor in pyproject.toml (core dependencies and optional extras) is pinned ``==X.*`` or
``==X`` in the constraints file, so a floor cannot move without the tested floor moving with it.
"""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11; CI runs 3.11

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "lowest-constraints.txt"
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_floors():
    """``{name: [floor, ...]}`` for every ``>=`` requirement in pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        requirements += group
    floors = {}
    for req in requirements:
        name, _extras, spec = _REQ.match(req.split(";")[0]).groups()
        for clause in spec.split(","):
            clause = clause.strip()
            if clause.startswith(">="):
                floors.setdefault(_norm(name), set()).add(clause[2:].strip())
    return floors


def pins():
    """``{name: version}`` for every ``name==version`` line of the constraints file."""
    out = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*(\S+)", line)
        assert m, f"{CONSTRAINTS.name}: not a 'name==version' pin: {line!r}"
        assert _norm(m[1]) not in out, f"{CONSTRAINTS.name}: {m[1]} pinned twice"
        out[_norm(m[1])] = m[2]
    return out


def test_the_parsers_see_the_floors():
    floors = declared_floors()
    assert {"numpy", "scipy", "scikit-learn", "pytest"} <= set(floors)


@pytest.mark.parametrize("name", sorted(declared_floors()))
def test_every_floor_is_pinned_in_the_constraints(name):
    floors = declared_floors()[name]
    assert len(floors) == 1, f"pyproject.toml declares {name} with different floors: {sorted(floors)}"
    (floor,) = floors
    pinned = pins().get(name)
    assert pinned in (floor, floor + ".*"), (
        f"pyproject.toml declares {name}>={floor} but {CONSTRAINTS.relative_to(ROOT)} pins "
        f"{'nothing' if pinned is None else name + '==' + pinned}; pin {name}=={floor}.* there "
        "so that CI tests the floor"
    )
