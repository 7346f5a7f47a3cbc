"""What a newcomer meets: the README's examples run as written, in order, in an empty folder.

The README's shell blocks are extracted, and every ``knorm ...`` line runs in-process through
``knorm.cli.main`` in a fresh temporary folder, in the order written, and must exit with status
0; the other shell lines are the install commands, which .ci/run runs. The README's Python block
runs there too. The guide's shell session (docs/guide/getting_started.md) runs the same way, on
its own, without the page's Python: its outputs are checked by tests/test_docs.py, which runs each
page whole (its Python and its shell blocks, in order, in an empty folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import shlex
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"
_FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_SHELL = {"", "bash", "sh", "shell", "console"}
# Guide pages whose shell session continues files made by the page's Python (run whole by test_docs).
_CONTINUES_PYTHON = {"budget.md"}


def fenced(text, kinds):
    """Yield (kind, body) of each fenced block whose info string is one of ``kinds``."""
    for match in _FENCE.finditer(text):
        kind = (match["info"].strip().split() or [""])[0]
        if kind in kinds:
            yield kind, match["body"]


def shell_lines(text):
    """The command lines of the shell blocks of ``text``, in order, continuation lines joined.

    In a ``console`` block only the lines after a ``$ `` prompt are commands (the others are
    output, and ``[exit status N]`` after a command says that it fails on purpose); in the other
    shell blocks every line is. Returns (command, expected exit status) pairs.
    """
    out = []
    for kind, body in fenced(text, _SHELL):
        lines = iter(body.splitlines())
        for line in lines:
            if kind == "console":
                if not line.startswith("$ "):
                    status = re.fullmatch(r"\[exit status (\d+)\]", line.strip())
                    if status and out:
                        out[-1] = (out[-1][0], int(status[1]))
                    continue
                line = line[2:]
            while line.rstrip().endswith("\\"):
                line = line.rstrip()[:-1].rstrip() + " " + next(lines).strip()
            if line.strip():
                out.append((line.strip(), 0))
    return out


def run_knorm(command):
    """Run one ``knorm ...`` line in-process: (exit status, stdout and stderr)."""
    from knorm.cli import main

    argv = shlex.split(command, comments=True)
    assert argv[0] == "knorm", command
    buffer, show = io.StringIO(), warnings.showwarning  # the CLI prints warnings as one line
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            try:
                status = main(argv[1:])
            except SystemExit as stop:
                status = stop.code
    finally:
        warnings.showwarning = show
    return status or 0, buffer.getvalue()


def knorm_commands(text):
    return [(c, s) for c, s in shell_lines(text) if c.split()[0] == "knorm"]


def test_the_readme_shell_lines_are_knorm_commands_or_the_install_commands():
    lines = [c for c, _ in shell_lines(README.read_text())]
    others = [c for c in lines if c.split()[0] != "knorm"]
    assert len(lines) - len(others) >= 5, "the README's knorm examples were not found"
    # The install commands (run by .ci/run): anything else in a shell block would go untested.
    assert others and all("pip install" in c for c in others), others


def test_the_readme_shell_examples_run_in_order_in_an_empty_folder(tmp_path, monkeypatch):
    from knorm import PrivacyAccountant
    from knorm.experiments.data import HOUSING_SHA256

    monkeypatch.chdir(tmp_path)
    commands = knorm_commands(README.read_text())
    charged = {}
    for command, _ in commands:
        status, output = run_knorm(command)
        assert status == 0, f"README: $ {command}\n{output}"
        argv = shlex.split(command, comments=True)
        if "--budget" in argv:
            ledger = argv[argv.index("--budget") + 1]
            charged[ledger] = charged.get(ledger, 0.0) + float(argv[argv.index("--epsilon") + 1])
            assert f"charged to {ledger}" in output, output
    # The example data is the packaged public file, byte for byte; each ledger holds the charges made.
    written = [shlex.split(c)[2] for c, _ in commands if shlex.split(c)[1] == "example-data"]
    assert written and hashlib.sha256(Path(written[0]).read_bytes()).hexdigest() == HOUSING_SHA256
    assert charged, "no README example charges a ledger"
    for ledger, spent in charged.items():
        with PrivacyAccountant.open(ledger) as acc:
            assert acc.spent == pytest.approx(spent) and len(acc.ledger) == 2


def test_the_readme_python_example_runs_and_spends_what_it_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = [body for _, body in fenced(README.read_text(), {"python"})]
    namespace = {"__name__": "readme"}
    exec(compile(block, str(README), "exec"), namespace)  # the README's own code
    budget = namespace["budget"]
    said = re.search(r"# (\S+) of (\S+) spent", block)
    assert said, "the README's Python example no longer says what it spends"
    assert (budget.spent, budget.total_epsilon) == (float(said[1]), float(said[2]))
    assert namespace["lin"].norm_ == "split" and sum(e.epsilon for e in budget.ledger) == pytest.approx(budget.spent)


GUIDE_PAGES = sorted(p for p in GUIDE.glob("*.md") if knorm_commands(p.read_text()))


def test_the_guide_shell_sessions_are_found():
    names = {p.name for p in GUIDE_PAGES}
    assert "getting_started.md" in names and _CONTINUES_PYTHON <= names


@pytest.mark.parametrize("page", [p for p in GUIDE_PAGES if p.name not in _CONTINUES_PYTHON], ids=lambda p: p.name)
def test_a_guide_shell_session_runs_on_its_own_in_an_empty_folder(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command, expected in knorm_commands(page.read_text()):
        status, output = run_knorm(command)
        assert status == expected, f"{page.name}: $ {command}\n{output}"


def test_the_extraction_joins_lines_and_reads_exit_statuses():
    text = "```console\n$ knorm a \\\n    --b c\nout\n[exit status 2]\n$ knorm d\n```\n```bash\nknorm e  # x\n```\n"
    assert shell_lines(text) == [("knorm a --b c", 2), ("knorm d", 0), ("knorm e  # x", 0)]
    assert knorm_commands("```python\nknorm = 1\n```\n") == []
