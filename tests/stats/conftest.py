"""The 'slow' marker for the coverage simulations of knorm.stats, until it is registered project-wide.

Slow tests are skipped unless selected with ``-m slow`` (or any -m expression naming it) or
with KNORM_RUN_SLOW=1 in the environment, so that the default run stays fast.
"""

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long statistical simulation (run in CI with -m slow)")


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("markexpr") or "") or os.environ.get("KNORM_RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or KNORM_RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
