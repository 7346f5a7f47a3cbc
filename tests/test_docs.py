"""The user guide's code cannot rot: every code block of its pages runs here.

Each page (docs/index.md and docs/guide/*.md) is run like a notebook, in a fresh temporary
directory, its blocks in order in one namespace:

* ``pycon`` blocks are doctests (``>>>``), checked with ELLIPSIS and NORMALIZE_WHITESPACE;
* ``console`` blocks are shell sessions of the ``knorm`` command (``$ knorm ...``, a trailing
  backslash continues a line); each command runs in-process through ``knorm.cli.main`` and
  its stdout and stderr together must match the lines shown (same flags);
* ``bash`` blocks may only hold the README's own commands, verbatim (they install packages
  or run the whole suite, so the README's CI runs them, not this file);
* directive blocks (``{plot}``, ``{note}``, ...) are not code here: the plot directive runs
  its code when Sphinx builds the docs (``sphinx-build -W``).

A block preceded by ``<!-- pending: some.dotted.name -->`` documents a feature that is not
merged yet: it runs on its own (in a fresh namespace) as soon as ``some.dotted.name`` can be
imported, and is skipped until then, with the name as the reason.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import re
import shlex
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [DOCS / "index.md", *sorted((DOCS / "guide").glob("*.md"))]  # guide/index.md has no code: harmless
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_PENDING = re.compile(r"<!--\s*pending:\s*(?P<name>[\w.]+)\s*-->\s*\Z")


def blocks(page):
    """Yield (kind, body, first line of the body, pending name or None) for each fenced block."""
    text = page.read_text()
    for match in _FENCE.finditer(text):
        info = match["info"].strip()
        kind = info.split()[0] if info else ""
        pending = _PENDING.search(text[: match.start()].rstrip() + "\n")
        lineno = text.count("\n", 0, match.start("body"))
        yield kind, match["body"], lineno, pending["name"] if pending else None


def resolve(dotted):
    """Return the object named ``dotted`` (a module, then attributes), or None if it does not exist."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def run_pycon(body, lineno, page, globs):
    """Run a doctest block; return the failure report ('' if it passed)."""
    test = doctest.DocTestParser().get_doctest(body, globs, f"{page.name}:{lineno + 1}", str(page), lineno)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=report.write, clear_globs=False)
    globs.update(test.globs)  # DocTest works on a copy: the page's next blocks see these names
    return report.getvalue() if runner.failures else ""


def console_commands(body):
    """Split a console block into (command, expected output) pairs."""
    pairs, command, output = [], None, []
    lines = iter(body.splitlines())
    for line in lines:
        if line.startswith("$ "):
            if command is not None:
                pairs.append((command, "\n".join(output)))
            command, output = line[2:], []
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
        else:
            output.append(line)
    if command is not None:
        pairs.append((command, "\n".join(output)))
    return pairs


def run_knorm(command):
    """Run one ``knorm ...`` command in-process; return its stdout and stderr, interleaved."""
    from knorm.cli import main

    argv = shlex.split(command, comments=True)
    assert argv[0] == "knorm", f"a console block may only run the knorm command; got {command!r}"
    buffer = io.StringIO()
    show = warnings.showwarning  # the CLI prints warnings as one line; put the hook back after
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            try:
                main(argv[1:])
            except SystemExit as stop:
                if stop.code not in (0, None):
                    buffer.write(f"[exit status {stop.code}]\n")
    finally:
        warnings.showwarning = show
    return buffer.getvalue()


def run_console(body, lineno, page):
    """Run a console block; return the failure report ('' if every output matched)."""
    checker, failures = doctest.OutputChecker(), []
    for command, expected in console_commands(body):
        got = run_knorm(command)
        want = expected.strip() + "\n" if expected.strip() else ""
        if not checker.check_output(want, got, FLAGS):
            failures.append(f"{page.name}:{lineno + 1}: $ {command}\nexpected:\n{want}got:\n{got}")
    return "\n".join(failures)


def readme_commands():
    text = (ROOT / "README.md").read_text()
    return {line.strip() for line in text.splitlines() if line.strip()}


def run_block(kind, body, lineno, page, globs):
    if kind == "pycon":
        return run_pycon(body, lineno, page, globs)
    if kind == "console":
        return run_console(body, lineno, page)
    if kind == "bash":
        missing = [ln for ln in body.splitlines() if ln.strip() and ln.strip() not in readme_commands()]
        return f"{page.name}:{lineno + 1}: bash lines not in README.md: {missing}" if missing else ""
    if kind.startswith("{"):
        return ""  # a directive: Sphinx runs what it runs ({plot}) at build
    return f"{page.name}:{lineno + 1}: a code block of kind {kind!r} is not executed; use pycon or console"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    globs = {"__name__": f"docs.{page.stem}"}
    failures = [
        run_block(kind, body, lineno, page, globs) for kind, body, lineno, pending in blocks(page) if pending is None
    ]
    failures = [f for f in failures if f]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


PENDING = [(page, lineno, name, kind, body) for page in PAGES for kind, body, lineno, name in blocks(page) if name]


@pytest.mark.parametrize(
    ("page", "lineno", "name", "kind", "body"),
    PENDING,
    ids=[f"{p.relative_to(DOCS).as_posix()}:{n + 1}" for p, n, *_ in PENDING],
)
def test_pending_examples(page, lineno, name, kind, body, tmp_path, monkeypatch):
    if resolve(name) is None:
        pytest.skip(f"pending until {name} exists")
    monkeypatch.chdir(tmp_path)
    failure = run_block(kind, body, lineno, page, {"__name__": f"docs.{page.stem}"})
    if failure:
        pytest.fail(failure, pytrace=False)


def test_errata_items_cited_in_the_code_have_anchors():
    """Every "errata item N" of a docstring links to an (errata-N)= target of docs/errata.md."""
    cited = set()
    for path in (ROOT / "src" / "knorm").rglob("*.py"):
        for match in re.finditer(r"(?i)errata items? (\d+)(?:(?:, | and )(\d+))*", path.read_text()):
            cited.update(int(n) for n in re.findall(r"\d+", match[0]))
    anchors = {int(n) for n in re.findall(r"^\(errata-(\d+)\)=$", (DOCS / "errata.md").read_text(), re.M)}
    assert cited, "no docstring cites an errata item: the pattern is stale"
    assert cited <= anchors, f"errata items cited but without an anchor in docs/errata.md: {sorted(cited - anchors)}"


def test_runner_detects_wrong_outputs(tmp_path):
    """The runner can fail: a wrong doctest output and a wrong command output are reported."""
    page = tmp_path / "page.md"
    assert run_pycon(">>> 1 + 1\n3\n", 0, page, {})
    assert not run_pycon(">>> 1 + 1\n2\n", 0, page, {})
    assert run_block("python", "print(1)\n", 0, page, {})
    assert run_block("bash", "rm -rf /\n", 0, page, {})
    assert console_commands("$ knorm a \\\n   --b c\nout\n$ knorm d\n") == [("knorm a  --b c", "out"), ("knorm d", "")]


@pytest.mark.parametrize("page", [*PAGES, DOCS / "errata.md"], ids=lambda p: p.relative_to(DOCS).as_posix())
def test_headings_do_not_skip_levels(page):
    """conf.py silences MyST's heading check for the generated benchmarks.md; the hand-written pages keep it."""
    text = _FENCE.sub("", page.read_text())
    levels = [len(m[1]) for m in re.finditer(r"^(#{1,6}) ", text, re.M)]
    assert levels and levels[0] == 1, f"{page.name} must start with one '# ' title"
    jumps = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
    assert not jumps, f"{page.name} skips heading levels: {jumps}"
