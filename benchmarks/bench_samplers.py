"""Section "samplers": noise vectors per second of every exact K-norm sampler.

Each sampler is timed next to ``rng.uniform(size=(n, dim))`` for the same ``n``,
``dim`` and Generator, and reported as a ratio. The issue's target is that the
l1, l2 and l_inf samplers take at most 3x the time numpy needs for the same
number of raw uniforms. Balls without a dedicated sampler go through
Gamma(m + 1) x Uniform(K), where Uniform(K) is often rejection from the bounding
box; its acceptance rate is reported, and cases whose exact expected acceptance
vol(K) / vol(box) is below 1e-4 are not run.

References
----------
Awan & Slavkovic (2021), appendix "Implementing K-Norm Mechanisms" (the l1, l2,
l_inf and rejection algorithms); ERRATA.md item 4 and "Facts worth having"
(samplers; rejection rates of the Section 5.1 K_T).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from benchmarks import _proposed_samplers as proposed
from benchmarks._harness import (
    choose_n,
    fmt_prob,
    fmt_rate,
    fmt_ratio,
    fmt_seconds,
    md_table,
    paired_timings,
)

TITLE = "Noise samplers"

DIMS = (2, 26, 100, 1000)
# The target: these samplers within 3x the time of the same number of raw uniforms.
TARGET_RATIO = 3.0
TARGET_LABELS = ("l1", "l2", "l_inf")
# Below this expected acceptance, rejection sampling is not run (and not practical).
HOPELESS_ACCEPTANCE = 1e-4
# Box points of the pilot that screens rejection cases whose volume is not exact.
PILOT_POINTS = 20_000
# Corner cut of the halfspace polytope: |u_i| + |u_(i+1)| <= CUT on disjoint pairs.
CUT = 1.5

LP_CASES = (("l1", 1.0), ("l2", 2.0), ("l_inf", math.inf), ("l_3", 3.0))


@dataclass
class BallCase:
    """A ball without a dedicated l_p sampler, built lazily (construction can be slow).

    ``expected`` is the exact vol(K) / vol(box) when known in closed form, so that
    hopeless cases are screened without building the ball.
    """

    label: str
    dim: int
    build: Callable
    uniform_method: str
    expected: float | None = None
    expected_note: str = ""


# -- timing a sampler ----------------------------------------------------------
def _time_sampler(ball, label, dim, config, extras=None, n=None):
    """Paired timings of sample_knorm, KNormNoise.sample, ``extras`` and rng.uniform.

    Parameters
    ----------
    ball : NormBall
        The ball; the noise scale is 1.
    label : str
        Case name, also used to derive the case's Generator.
    dim : int
        Dimension of ``ball``.
    config : BenchConfig
        Shared settings.
    extras : dict of str to callable, optional
        Callables ``f(n, rng)`` timed alongside (proposed samplers, reference draws).
    n : int, optional
        Vectors per call; by default the largest batch within ``config.max_entries``
        that one call draws in about ``config.target_seconds``.

    Returns
    -------
    dict
        ``n``; ``t``, median seconds per call of each candidate; ``ratio``, the
        median over repeats of each candidate's time over rng.uniform's.
    """
    from knorm.noise import KNormNoise, sample_knorm

    rng = config.rng("samplers", label, dim, n)
    noise = KNormNoise(ball, 1.0)
    if n is None:
        n_max = max(1, config.max_entries // dim)
        n = choose_n(lambda k: lambda: sample_knorm(ball, 1.0, k, rng), n_max, config.target_seconds)
    calls = {
        "sample_knorm": lambda: sample_knorm(ball, 1.0, n, rng),
        "KNormNoise.sample": lambda: noise.sample(n, rng=rng),
    }
    for name, f in (extras or {}).items():
        calls[name] = lambda f=f: f(n, rng)
    calls["uniform"] = lambda: rng.uniform(size=(n, dim))
    t = paired_timings(calls, config.repeats, config.target_seconds)
    res = {"n": n, "t": {k: float(np.median(v)) for k, v in t.items()}}
    res["ratio"] = {k: float(np.median(v / t["uniform"])) for k, v in t.items() if k != "uniform"}
    return res


def _verdict(label, ratio):
    if label not in TARGET_LABELS:
        return "no target"
    return "meets target" if ratio <= TARGET_RATIO else "**misses target**"


# -- l_p balls -----------------------------------------------------------------
def _bench_lp(config):
    from knorm.geometry import LpBall
    from knorm.noise.samplers import sampler_name

    rows = []
    for label, p in LP_CASES:
        for dim in DIMS:
            ball = LpBall(dim, p)
            extras = {"proposed": lambda n, rng, dim=dim, p=p: proposed.lp_noise(dim, p, 1.0, n, rng)}
            if p == 2:  # numpy's normals: the floor of any l2 sampler built on them
                extras["standard_normal"] = lambda n, rng, dim=dim: rng.standard_normal((n, dim))
            res = _time_sampler(ball, label, dim, config, extras=extras)
            ratio = res["ratio"]
            config.log(f"  {label} dim {dim}: ratio {ratio['sample_knorm']:.2f}, proposed {ratio['proposed']:.2f}")
            rows.append(dict(label=label, dim=dim, algorithm=sampler_name(ball), **res))
    return rows


def _lp_table(rows):
    out = []
    for r in rows:
        t, ratio = r["t"], r["ratio"]
        out.append(
            [
                r["label"],
                r["algorithm"],
                r["dim"],
                r["n"],
                fmt_seconds(t["sample_knorm"] / r["n"]),
                fmt_rate(r["n"] / t["sample_knorm"]),
                fmt_rate(r["n"] / t["uniform"]),
                fmt_ratio(ratio["sample_knorm"]),
                fmt_ratio(ratio["KNormNoise.sample"]),
                _verdict(r["label"], ratio["sample_knorm"]),
            ]
        )
    headers = [
        "sampler",
        "algorithm",
        "dim",
        "n",
        "time / vector",
        "vectors/s",
        "numpy uniform vectors/s",
        "ratio (sample_knorm)",
        "ratio (KNormNoise.sample)",
        "target (<= 3x)",
    ]
    return md_table(headers, out, "llrrrrrrrl")


def _proposed_table(rows):
    out = []
    for r in rows:
        lib, new = r["ratio"]["sample_knorm"], r["ratio"]["proposed"]
        out.append(
            [
                r["label"],
                r["dim"],
                fmt_ratio(lib),
                fmt_ratio(new),
                f"{lib / new:.2f}x",
                fmt_rate(r["n"] / r["t"]["proposed"]),
                fmt_ratio(r["ratio"].get("standard_normal")),
                _verdict(r["label"], new),
            ]
        )
    headers = [
        "sampler",
        "dim",
        "library ratio",
        "proposed ratio",
        "speed-up",
        "proposed vectors/s",
        "`standard_normal` ratio (l2 floor)",
        "target (<= 3x)",
    ]
    return md_table(headers, out, "lrrrrrrl")


BATCH_DIM = 100


def _batch_entries(config):
    return (1 << 10, 1 << 13) if config.quick else (1 << 12, 1 << 15, 1 << 18, 1 << 21)


def _bench_batch_sizes(config):
    """Library and proposed ratios against the batch size, in dimension BATCH_DIM.

    Small batches stay in cache; large ones make every temporary array a trip to
    memory, which is where the library samplers lose most against rng.uniform.
    """
    from knorm.geometry import LpBall

    rows = []
    for label, p in LP_CASES[:3]:
        for entries in _batch_entries(config):
            ball = LpBall(BATCH_DIM, p)
            extras = {"proposed": lambda n, rng, p=p: proposed.lp_noise(BATCH_DIM, p, 1.0, n, rng)}
            res = _time_sampler(ball, label, BATCH_DIM, config, extras=extras, n=entries // BATCH_DIM)
            rows.append(
                [
                    label,
                    f"{res['n'] * BATCH_DIM:,}",
                    res["n"],
                    fmt_ratio(res["ratio"]["sample_knorm"]),
                    fmt_ratio(res["ratio"]["proposed"]),
                    fmt_rate(res["n"] / res["t"]["uniform"]),
                ]
            )
    config.log("  batch-size sweep done")
    headers = ["sampler", "n x dim", "n", "library ratio", "proposed ratio", "numpy uniform vectors/s"]
    return md_table(headers, rows, "lrrrrr")


def _check_proposed_laws(config):
    """KS checks of the proposed samplers: ||V||_p ~ Gamma(m, scale) and V_0 against the library."""
    from knorm.geometry.lp import lp_norm
    from knorm.noise.samplers import lp_noise

    n = 4_000 if config.quick else 40_000
    scale = 1.7
    rows = []
    for label, p in LP_CASES:
        for dim in (1, 2, 5, 26):
            rng = config.rng("samplers-law", label, dim)
            v = proposed.lp_noise(dim, p, scale, n, rng)
            w = lp_noise(dim, p, scale, n, rng)
            p_norm = stats.kstest(lp_norm(v, p), stats.gamma(dim, scale=scale).cdf).pvalue
            p_coord = stats.ks_2samp(v[:, 0], w[:, 0]).pvalue
            p_sum = stats.ks_2samp(v.sum(axis=1), w.sum(axis=1)).pvalue
            rows.append([label, dim, n, f"{p_norm:.3f}", f"{p_coord:.3f}", f"{p_sum:.3f}"])
    ps = [float(x) for r in rows for x in r[3:]]
    # 48 p-values: a single one below 1e-3 would be a 5 % event under correct laws.
    ok = min(ps) > 1e-3
    headers = ["sampler", "dim", "draws", "KS p: norm vs Gamma(m)", "KS p: V_0 vs library", "KS p: sum V vs library"]
    table = md_table(headers, rows, "lrrrrr")
    return ok, table


# -- other balls -----------------------------------------------------------------
def _cut_box(dim):
    """Halfspaces of [-1, 1]^dim with the corners of disjoint pairs (2k, 2k + 1) cut.

    Its volume is exact: 4 - 2 (2 - CUT)^2 per pair, 2 for a leftover coordinate.
    """
    rows, b = [np.eye(dim), -np.eye(dim)], [np.ones(2 * dim)]
    for i in range(0, dim - 1, 2):
        for s1 in (1.0, -1.0):
            for s2 in (1.0, -1.0):
                a = np.zeros(dim)
                a[i], a[i + 1] = s1, s2
                rows.append(a[None])
                b.append([CUT])
    return np.vstack(rows), np.concatenate(b)


def _cut_box_acceptance(dim):
    return (1.0 - 0.5 * (2.0 - CUT) ** 2) ** (dim // 2)


def _disc_acceptance(dim):
    return (math.pi / 4.0) ** (dim // 2)


def _regression_dim(p):
    """Dimension of the Section 5.1 K_T for p predictors: (p+1)(p+2)/2 - 1 + (p+1)."""
    return (p + 1) * (p + 2) // 2 - 1 + (p + 1)


def _regression_kt(p):
    """The Section 5.1 K_T (ERRATA item 5 reading) as an IntersectionBall.

    Coordinates: x_j, x_j^2, x_j x_k (j < k), y, x_j y. Constraints: (x_j, x_j^2)
    in K_2; (x_j, x_k, x_j x_k) and (x_j, y, x_j y) in K_3.
    """
    from knorm.geometry.intersection import IntersectionBall
    from knorm.geometry.regression import K2Ball, k3_ball

    x = list(range(p))
    xx = list(range(p, 2 * p))
    pairs = [(j, k) for j in range(p) for k in range(j + 1, p)]
    xjxk = {jk: 2 * p + i for i, jk in enumerate(pairs)}
    y = 2 * p + len(pairs)
    xy = [y + 1 + j for j in range(p)]
    dim = y + 1 + p
    assert dim == _regression_dim(p)
    k2, k3 = K2Ball(), k3_ball()
    cons = [([x[j], xx[j]], k2) for j in range(p)]
    cons += [([x[j], x[k], xjxk[(j, k)]], k3) for j, k in pairs]
    cons += [([x[j], y, xy[j]], k3) for j in range(p)]
    return IntersectionBall(dim, cons, name=f"K_T, p={p}")


def _ball_cases(config):
    """Cases for balls other than l_p, with notes on those that could not be imported."""
    cases, missing = [], []
    try:
        from knorm.geometry.polytope import Polytope
    except Exception as exc:  # being written concurrently; include when importable
        missing.append(f"`knorm.geometry.polytope` ({type(exc).__name__}: {exc})")
    else:
        for dim in DIMS:
            A, b = _cut_box(dim)
            cases.append(
                BallCase(
                    "polytope, from_halfspaces (box, cut corners)",
                    dim,
                    lambda A=A, b=b: Polytope.from_halfspaces(A, b),
                    "qhull triangulation" if dim <= 8 else "box rejection",
                    expected=None if dim <= 8 else _cut_box_acceptance(dim),
                    expected_note="exact",
                )
            )
        for dim in (2, 6):
            pts = config.rng("samplers-points", dim).standard_normal((4 * dim + 4, dim))
            cases.append(
                BallCase(
                    f"polytope, from_points ({len(pts)} points)",
                    dim,
                    lambda pts=pts: Polytope.from_points(pts),
                    "qhull triangulation",
                )
            )
    try:
        from knorm.geometry.regression import K2Ball, k3_ball
    except Exception as exc:
        missing.append(f"`knorm.geometry.regression` ({type(exc).__name__}: {exc})")
    else:
        cases.append(
            BallCase(
                "K_2 (regression, Example 2.1)",
                2,
                K2Ball,
                "box rejection",
                expected=40.0 / 48.0,
                expected_note="exact, 40/3 over 16",
            )
        )
        cases.append(BallCase("K_3 (regression, cuboctahedron)", 3, k3_ball, "qhull triangulation"))
    try:
        from knorm.geometry.intersection import IntersectionBall
        from knorm.geometry.lp import LpBall
    except Exception as exc:
        missing.append(f"`knorm.geometry.intersection` ({type(exc).__name__}: {exc})")
    else:
        for dim in DIMS:

            def build(dim=dim):
                return IntersectionBall(dim, [([i, i + 1], LpBall(2, 2.0)) for i in range(0, dim - 1, 2)], name="discs")

            cases.append(
                BallCase(
                    "IntersectionBall, product of l2 discs",
                    dim,
                    build,
                    "box rejection",
                    expected=_disc_acceptance(dim),
                    expected_note="exact, (pi/4)^(m/2)",
                )
            )
        if not any("regression" in m for m in missing):
            # ERRATA's Monte Carlo acceptance rates of K_T from its box, for reference.
            for p, rate in ((1, 0.73), (5, 0.145)):
                cases.append(
                    BallCase(
                        f"IntersectionBall, Section 5.1 K_T (p={p})",
                        _regression_dim(p),
                        lambda p=p: _regression_kt(p),
                        "box rejection",
                        expected_note=f"about {rate} per ERRATA",
                    )
                )
    return cases, missing


def _pilot_acceptance(ball, rng):
    """Fraction of PILOT_POINTS box points in K, and a 95 % upper bound when none are."""
    b = ball.bounding_box()
    hits = int(np.count_nonzero(ball.contains(rng.uniform(-b, b, size=(PILOT_POINTS, ball.dim)))))
    return hits / PILOT_POINTS if hits else 3.0 / PILOT_POINTS


def _bench_balls(config):
    from knorm.noise.samplers import sampler_name

    cases, missing = _ball_cases(config)
    rows = []
    for case in cases:
        row = dict(case=case, status="ran", expected=case.expected, expected_note=case.expected_note)
        if case.expected is not None and case.expected < HOPELESS_ACCEPTANCE:
            row["status"] = f"not run: expected acceptance {fmt_prob(case.expected)} < {HOPELESS_ACCEPTANCE:g}"
            rows.append(row)
            config.log(f"  {case.label} dim {case.dim}: skipped ({fmt_prob(case.expected)})")
            continue
        try:
            ball = case.build()
        except Exception as exc:  # a half-written ball must not sink the section
            row["status"] = f"build failed: {type(exc).__name__}: {exc}"
            rows.append(row)
            continue
        if case.expected is None:
            vol = ball.volume(rng=config.rng("samplers-vol", case.label, case.dim), n_samples=PILOT_POINTS)
            if vol.exact:
                row["expected"] = float(vol) / float(np.prod(2.0 * ball.bounding_box()))
                row["expected_note"] = f"exact ({vol.method})"
            elif case.uniform_method == "box rejection":
                pilot = _pilot_acceptance(ball, config.rng("samplers-pilot", case.label, case.dim))
                if pilot < HOPELESS_ACCEPTANCE:
                    row["status"] = f"not run: pilot acceptance < {HOPELESS_ACCEPTANCE:g}"
                    rows.append(row)
                    continue
        res = _time_sampler(ball, case.label, case.dim, config)
        stats_ = ball.sampler_stats
        row.update(
            res,
            algorithm=sampler_name(ball),
            uniform_method="box rejection" if stats_.proposed else case.uniform_method,
            measured=stats_.acceptance_rate if stats_.proposed else None,
        )
        config.log(f"  {case.label} dim {case.dim}: {fmt_seconds(res['t']['sample_knorm'] / res['n'])}/vector")
        rows.append(row)
    return rows, missing


def _balls_table(rows):
    out = []
    for r in rows:
        c = r["case"]
        exp = (
            fmt_prob(r["expected"]) + (f" ({r['expected_note']})" if r["expected_note"] else "")
            if r["expected"] is not None
            else (r["expected_note"] or "—")
        )
        if r["status"] != "ran":
            out.append([c.label, c.uniform_method, c.dim, "—", "—", "—", "—", "—", exp, "—", r["status"]])
            continue
        t, n = r["t"], r["n"]
        out.append(
            [
                c.label,
                r["uniform_method"],
                c.dim,
                n,
                fmt_seconds(t["sample_knorm"] / n),
                fmt_rate(n / t["sample_knorm"]),
                fmt_ratio(r["ratio"]["sample_knorm"]),
                fmt_ratio(r["ratio"]["KNormNoise.sample"]),
                exp,
                fmt_prob(r["measured"]) if r["measured"] is not None else "— (no rejection)",
                "ran",
            ]
        )
    headers = [
        "ball",
        "Uniform(K) by",
        "dim",
        "n",
        "time / vector",
        "vectors/s",
        "ratio (sample_knorm)",
        "ratio (KNormNoise.sample)",
        "expected acceptance",
        "measured acceptance",
        "status",
    ]
    return md_table(headers, out, "llrrrrrrrrl")


def _practical_limits():
    """Smallest dimension at which the closed-form acceptance rates fall below the threshold."""

    def first(acc):
        return next(m for m in range(2, 100_000, 2) if acc(m) < HOPELESS_ACCEPTANCE)

    p = next(p for p in range(1, 100) if 2.0 ** -(p + 1) * p * p / 4 < HOPELESS_ACCEPTANCE)
    return [
        f"- Product of l2 discs: (pi/4)^(m/2) < {HOPELESS_ACCEPTANCE:g} from m = {first(_disc_acceptance)}.",
        f"- Box with cut corners: {1 - 0.5 * (2 - CUT) ** 2:g}^(m/2) < {HOPELESS_ACCEPTANCE:g} from m = "
        f"{first(_cut_box_acceptance)}; building it above dimension 100 also costs 2m linear programs "
        "(the boundedness check), which is why the m = 1000 case is not even constructed.",
        f"- Section 5.1 K_T: with the ERRATA trend 2^-(p+1) p^2 / 4 (an extrapolation, not a measurement) the "
        f"rate crosses {HOPELESS_ACCEPTANCE:g} near p = {p} predictors, i.e. m = {_regression_dim(p)}.",
        "- Polytopes up to dimension 8 (qhull) sample exactly without rejection, at a cost that grows with the "
        "number of facets; above 8 they fall back to box rejection.",
    ]


# -- figure ---------------------------------------------------------------------
def _figure(lp_rows, config):
    if config.figures_dir is None:
        return ""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ""
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for i, (label, _) in enumerate(LP_CASES):
        rows = [r for r in lp_rows if r["label"] == label]
        dims = [r["dim"] for r in rows]
        color = f"C{i}"
        ax.plot(dims, [r["ratio"]["sample_knorm"] for r in rows], "o-", color=color, label=f"{label} (library)")
        ax.plot(
            dims, [r["ratio"]["proposed"] for r in rows], "s--", color=color, alpha=0.7, label=f"{label} (proposed)"
        )
    ax.axhline(TARGET_RATIO, color="k", lw=1, ls=":", label="target 3x")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="dimension m",
        ylabel="time / time of rng.uniform (same n, m)",
        title="K-norm samplers relative to numpy uniforms",
    )
    ax.set_xticks(DIMS, [str(d) for d in DIMS])
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = config.figures_dir / "samplers_ratio.png"
    fig.savefig(path)
    plt.close(fig)
    return f"![Sampler time relative to numpy uniforms]({config.figures_href}/{path.name})\n"


# -- section ------------------------------------------------------------------------
def run(config):
    """Run the samplers benchmark and return its markdown."""
    lp_rows = _bench_lp(config)
    batch_table = _bench_batch_sizes(config)
    ok, law_table = _check_proposed_laws(config)
    ball_rows, missing = _bench_balls(config)

    misses = [
        f"{r['label']} (dim {r['dim']}, {fmt_ratio(r['ratio']['sample_knorm'])})"
        for r in lp_rows
        if r["label"] in TARGET_LABELS and r["ratio"]["sample_knorm"] > TARGET_RATIO
    ]
    new_misses = [
        f"{r['label']} (dim {r['dim']}, {fmt_ratio(r['ratio']['proposed'])})"
        for r in lp_rows
        if r["label"] in TARGET_LABELS and r["ratio"]["proposed"] > TARGET_RATIO
    ]
    parts = [
        "Noise vectors per second of `knorm.noise.sample_knorm(ball, 1.0, n, rng)` and "
        "`KNormNoise(ball, 1.0).sample(n, rng=rng)`. The **ratio** is the time of the sampler divided by the "
        "time of `rng.uniform(size=(n, dim))` for the same `n` and `dim`, with the same PCG64 Generator, "
        "timed back to back in every repeat. `n` is the largest batch within "
        f"n x dim <= {config.max_entries:,} entries (8 bytes each), "
        "or fewer when one call would exceed the per-timing budget. Target (from the issue): l1, l2 and l_inf "
        f"within {TARGET_RATIO:g}x.",
        "### l_p balls",
        _lp_table(lp_rows),
        _figure(lp_rows, config),
        "Target missed by the library: " + (", ".join(misses) if misses else "none") + ".",
        "### Other balls: Gamma(m+1) x Uniform(K)",
        "Balls without a dedicated sampler draw a Gamma(m+1) radius times an exact uniform point of K "
        "(`ball.sample_uniform`): a qhull triangulation for polytopes of dimension <= 8, otherwise rejection "
        "from the bounding box. *Expected acceptance* is vol(K) / vol(box) when the volume is exact; "
        f"*measured acceptance* is `ball.sampler_stats.acceptance_rate` after the timings. Cases with expected "
        f"acceptance below {HOPELESS_ACCEPTANCE:g} are not run: exact sampling is not practical there.",
        _balls_table(ball_rows),
        ("Not importable, so not benchmarked: " + "; ".join(missing) + ".") if missing else "",
        f"Where exact rejection sampling stops being practical (expected acceptance < {HOPELESS_ACCEPTANCE:g}):",
        "\n".join(_practical_limits()),
        "### Proposed samplers (`benchmarks/_proposed_samplers.py`; its l1, l_inf and l_p versions are now the library's, its l2 scale mixture is not)",
        "Exact rewrites of the l_p samplers, timed in the same repeats as the library rows above. "
        "l1: Exp(1) from numpy's ziggurat with a random sign bit instead of `rng.laplace` (one `log` per draw). "
        "l2: the Gaussian scale mixture sqrt(S) Z with S ~ Gamma((m+1)/2, 2), which has density proportional "
        "to exp(-||v||_2) and needs no norm of Z. l_inf: the same algorithm with in-place scaling, column by "
        "column in low dimension, and Gamma(m+1) as a sum of exponentials for m <= 3. l_p: ||Y||_p^p is the "
        "sum of the gamma draws, so no norm is recomputed.",
        _proposed_table(lp_rows),
        f"Ratios against the batch size (dim {BATCH_DIM}); the tables above use n x dim close to "
        f"{config.max_entries:,}:",
        batch_table,
        "Still missing the target with the proposed samplers: "
        + (", ".join(new_misses) if new_misses else "none")
        + ". For l2 the floor is `rng.standard_normal((n, dim))` itself (column above): numpy's normals cost "
        "several uniforms each, so an exact l2 sampler built on them cannot reach 3x; the proposed one is within "
        "a few tenths of that floor for dim >= 26. In dim 2 the per-vector radius (a gamma draw costs about 7 "
        "uniforms, a sum of exponentials about 3) is shared by only two coordinates.",
        f"Law checks of the proposed samplers (Kolmogorov-Smirnov p-values; all > 1e-3: **{'yes' if ok else 'NO'}**):",
        law_table,
    ]
    return "\n\n".join(p for p in parts if p)
