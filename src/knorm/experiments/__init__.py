"""Reproductions of the paper's examples and experiments (``knorm reproduce``)."""

from knorm.experiments._runner import Claim, Config, Result

#: Experiment name -> module with a ``run(config) -> Result`` function, in page order.
EXPERIMENTS = {
    "example": "knorm.experiments.example21",
    "logistic": "knorm.experiments.logistic_sim",
    "logistic_intervals": "knorm.experiments.logistic_intervals",
    "linear": "knorm.experiments.linear_sim",
    "linear_intervals": "knorm.experiments.linear_intervals",
    "realdata": "knorm.experiments.realdata",
    "cautionary": "knorm.experiments.cautionary",
}

__all__ = ["Claim", "Config", "EXPERIMENTS", "Result", "run_experiments"]


def run_experiments(names, config, *, echo=print):
    """Run experiments by name, write their CSV and PNG files, and return the results.

    Parameters
    ----------
    names : iterable of str
        Keys of :data:`EXPERIMENTS`, run in the order given.
    config : Config
        The run's settings; files go to ``config.out``, which is created.
    echo : callable, default print
        Receives each experiment's summary and claims table as text; in a quick run, each
        "NO" and each claim not run or not judged says why beside its row.

    Returns
    -------
    list of Result
        One result per name, in order.
    """
    import importlib

    from knorm.experiments.report import reference_verdicts

    config.out.mkdir(parents=True, exist_ok=True)
    reference = reference_verdicts() if config.quick else None
    results = []
    for name in names:
        result = importlib.import_module(EXPERIMENTS[name]).run(config)
        for table_name, frame in result.tables.items():
            frame.to_csv(config.out / f"{table_name}.csv", index=False)
        echo(f"\n=== {name} ===\n{result.summary}")
        if result.claims:
            echo(_claims_table(result, reference))
        results.append(result)
    return results


def _claims_table(result, reference=None):
    """The claims of ``result`` as text; with the full run's ``reference`` (a quick run), why each verdict."""
    from knorm.experiments.report import quick_note

    lines = ["", "claim | paper | ours | agrees"]
    for c in result.claims:
        mark = {True: "yes", False: "NO", None: "-"}[c.agrees]
        note = quick_note(c, reference, result.replicates) if reference is not None else ""
        lines.append(f"{c.claim} | {c.paper} | {c.ours} | {mark}" + (f"  <- {note}" if note else ""))
    return "\n".join(lines)
