"""Benchmarks of knorm; ``python -m benchmarks`` regenerates ``docs/benchmarks.md``.

Run from the repository root with the development environment's Python::

    python -m benchmarks                    # full run, rewrites docs/benchmarks.md
    python -m benchmarks --quick            # smoke run, prints the page to stdout
    python -m benchmarks --only samplers    # re-run one section, splice it into the page
    python -m benchmarks --list             # the registered sections

The runner puts ``src/`` first on ``sys.path``, so the working tree is measured
even if another knorm is installed.

Adding a section
----------------
Write ``benchmarks/bench_<name>.py`` defining

* ``TITLE``: the section heading;
* ``run(config)``: takes a :class:`benchmarks._harness.BenchConfig` and returns
  the section body as markdown (tables; figures saved under
  ``config.figures_dir`` and linked through ``config.figures_href``). Raise
  :class:`benchmarks._harness.SectionSkipped` when an optional dependency
  (scikit-learn, diffprivlib, dask, ...) is missing;

and add ``"<name>": "benchmarks.bench_<name>"`` to :data:`SECTIONS`. Sections are
imported only when they run, so one with a missing dependency cannot break the
others. Time with :func:`benchmarks._harness.paired_timings` so that every table
follows the same rules (perf_counter, medians of ``config.repeats``, candidates
measured back to back) and keep each section to a minute or so of the ~3 minute
budget of a full run on the 2-core reference machine.
"""

# Page order; values are module names, imported lazily by the runner.
SECTIONS = {
    "samplers": "benchmarks.bench_samplers",
    "lattice": "benchmarks.bench_lattice",
    "lattice_utility": "benchmarks.bench_lattice_utility",
    "regression_balls": "benchmarks.bench_regression_balls",
    "hulls": "benchmarks.bench_hulls",
    "logistic_q": "benchmarks.bench_logistic_q",
    "logistic_default": "benchmarks.bench_logistic_default",
    "multiclass": "benchmarks.bench_multiclass",
    "quantiles": "benchmarks.bench_quantiles",
    "linear": "benchmarks.bench_linear",
    "housing": "benchmarks.bench_housing",
    "peers": "benchmarks.bench_peers",
    "regression": "benchmarks.bench_regression",
    "dask": "benchmarks.bench_dask",
    "stats": "benchmarks.bench_stats",
    "front_door": "benchmarks.bench_front_door",
    "zcdp": "benchmarks.bench_zcdp",
    "zcdp_regression": "benchmarks.bench_zcdp_regression",
}
