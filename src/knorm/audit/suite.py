"""The standard audit suite: sound mechanisms that must pass, broken ones that must fail.

One table (:func:`standard_cases`) lists every audited mechanism with its
neighbours and the verdict expected; ``python -m knorm.audit`` runs it at large
sample sizes and ``tests/audit`` runs it at test sizes. A new mechanism is
audited by adding a row.

The broken mechanisms are deliberately wrong and exist only to show that the
audit can fail: a sampler drawing half the noise it claims, a sensitivity that
is too small for the data domain (the l_inf sensitivity used with the l1 ball,
paper Example 2.1), noise that ignores epsilon, objective perturbation with
the paper's printed (negative) gamma (errata item 1), and two releases drawn from
the same seed on neighbouring data (the seed reuse that a ledger refuses).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from knorm.audit.mechanisms import audit_knorm
from knorm.geometry import K2Ball, LpBall, Polytope, k3_ball
from knorm.mechanisms import KNormMechanism
from knorm.mechanisms.lattice import LatticeUnavailable, build_lattice_law
from knorm.noise import KNormNoise
from knorm.sensitivity import (
    RegressionLayout,
    kt_ball,
    linear_regression_space,
    regression_cut_ball,
    squared_statistic_space,
    sum_product_space,
)

__all__ = [
    "AuditCase",
    "EpsilonIgnoringMechanism",
    "HalvedNoiseMechanism",
    "estimator_cases",
    "format_table",
    "printed_gamma_logistic",
    "table_rows",
    "run_case",
    "run_suite",
    "standard_cases",
]

# The cut ball is built with these fast settings (a certified ball either way).
CUT_BALL_SETTINGS = {"n_train": 20_000, "per_block": 40}
# Seed of the random points of the from-points polytope (a fixed, public ball).
_POLYTOPE_SEED = 20_240_917


class HalvedNoiseMechanism(KNormMechanism):
    """DELIBERATELY BROKEN: claims (ball, Delta, eps) but samples noise of scale Delta / (2 eps).

    The privacy loss is then 2 eps (a sampler bug, as in a missing factor 2).
    For audits only.

    Parameters
    ----------
    ball : NormBall
        The unit ball K of the noise.
    sensitivity : float or Sensitivity
        The claimed Delta.
    epsilon : float
        The claimed budget.
    """

    def __init__(self, ball, sensitivity, epsilon):
        super().__init__(ball, sensitivity, epsilon)
        self.noise = KNormNoise(ball, self.noise.scale / 2.0)
        _break_lattice(self, 2.0 * self.epsilon)  # the lattice law at twice the rate

    def __repr__(self):
        return "BROKEN(halved noise) " + super().__repr__()


class EpsilonIgnoringMechanism(KNormMechanism):
    """DELIBERATELY BROKEN: noise of scale Delta whatever epsilon (as if eps were 1).

    Its privacy loss is 1 for every claimed epsilon; the bug of samplers whose
    noise "did not change with epsilon" (a pitfall reported in the issue trackers
    of DP libraries). For audits only.

    Parameters
    ----------
    ball : NormBall
        The unit ball K of the noise.
    sensitivity : float or Sensitivity
        The claimed Delta.
    epsilon : float
        The claimed budget, which the noise ignores.
    """

    def __init__(self, ball, sensitivity, epsilon):
        super().__init__(ball, sensitivity, epsilon)
        self.noise = KNormNoise(ball, self.sensitivity.value)
        _break_lattice(self, 1.0)  # the lattice law at rate 1 / Delta~

    def __repr__(self):
        return "BROKEN(noise ignores eps) " + super().__repr__()


def _break_lattice(mechanism, epsilon):
    """Give a deliberately broken mechanism the lattice law of another epsilon (if it has one)."""
    try:
        mechanism._lattice = build_lattice_law(mechanism.ball, mechanism.sensitivity.value, epsilon)
    except LatticeUnavailable as err:
        mechanism._lattice_reason = str(err)


@dataclass(frozen=True)
class AuditCase:
    """One row of the suite.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    name : str
        Name of the row, shown in the table.
    build : callable
        For K-norm mechanisms: () -> (mechanism, space or None); a space gives
        the adversarial neighbours of the data domain, None audits against the
        mechanism's own sensitivity (neighbours at K-norm Delta). For other
        mechanisms: (n_samples, confidence, rng) -> AuditResult, with
        ``kind='custom'``.
    true_epsilon : float or None
        The privacy loss the mechanism really has on its worst neighbours (from
        the theory), for the table; None when only an upper bound (the claim)
        is known.
    sound : bool, default True
        Whether the mechanism is eps-DP for its claimed eps (the audit must pass),
        or deliberately broken (the audit must report a violation).
    sample_factor : float, default 1.0
        Multiplier of the suite's sample size (expensive samplers use fewer).
    kind : {'knorm', 'custom'}, default 'knorm'
        How ``build`` is called (see above).
    power : float, default 0.75
        For a sound row, the share of ``true_epsilon`` its lower bound must reach at test
        sizes (the audit finds most of the loss that is there, so a pass is informative).
    """

    name: str
    build: Callable
    true_epsilon: float | None
    sound: bool = True
    sample_factor: float = 1.0
    kind: str = "knorm"
    power: float = 0.75


def _example21(p, eps):
    def build():
        space = squared_statistic_space()
        return KNormMechanism(LpBall(2, p), space.sensitivity(p), eps), space

    return build


def _sum_product(ball_fn, eps):
    def build():
        space = sum_product_space()
        ball = ball_fn()
        return KNormMechanism(ball, space.sensitivity(ball), eps), space

    return build


def _from_points_polytope():
    # A fixed polytope from random points, audited against its declared Delta
    # (neighbours at its vertices, K-norm Delta).
    pts = np.random.default_rng(_POLYTOPE_SEED).standard_normal((7, 3))
    return KNormMechanism(Polytope.from_points(pts, name="random 7-point hull"), 1.5, 0.7), None


def _k2():
    space = squared_statistic_space()
    return KNormMechanism(K2Ball(), space.sensitivity(space.hull), 1.0), space


def _regression(ball_fn, eps, declared=None):
    def build():
        space = linear_regression_space(2)
        ball = ball_fn()
        sens = space.sensitivity(ball) if declared is None else declared
        return KNormMechanism(ball, sens, eps), space

    return build


def _cut_ball():
    return regression_cut_ball(2, **CUT_BALL_SETTINGS)[0]


def _halved_l2():
    space = squared_statistic_space()
    return HalvedNoiseMechanism(LpBall(2, 2), space.sensitivity(2), 1.0), space


def _l1_with_linf_sensitivity():
    # Paper Example 2.1: Delta_inf = 2, but the l1 sensitivity is 3.125.
    space = squared_statistic_space()
    return KNormMechanism(LpBall(2, 1), space.sensitivity(math.inf), 1.0), space


def _ignores_epsilon():
    space = squared_statistic_space()
    return EpsilonIgnoringMechanism(LpBall(2, math.inf), space.sensitivity(math.inf), 0.25), space


# -- estimators ------------------------------------------------------------------------
# Objective perturbation on n = 2 records with one feature in [-1, 1] and an
# intercept (m = 2): the neighbours differ in one feature value, 1 against -1,
# at the extremes of the domain. Small n is where one record weighs most.
_LOGISTIC_X = np.array([[1.0], [1.0]])
_LOGISTIC_X2 = np.array([[1.0], [-1.0]])
_LOGISTIC_Y = np.array([1, 0])


def _printed_gamma(lam, epsilon, q):
    """The paper's printed gamma = lambda / (exp(eps (q - 1)) - 1): NEGATIVE for q < 1 (errata item 1)."""
    return lam / np.expm1(epsilon * (q - 1.0))


def printed_gamma_logistic(X, y, *, epsilon=1.0, q=0.5):
    """DELIBERATELY BROKEN: objective perturbation with the paper's printed gamma, as published before.

    Parameters
    ----------
    X : array_like of shape (n, p)
        Features in [-1, 1].
    y : array_like of shape (n,)
        Labels in {0, 1}.
    epsilon : float, default 1.0
        The claimed budget.
    q : float, default 0.5
        The share of epsilon on the noise.

    Returns
    -------
    callable
        A sampler ``(n, rng) -> (n, p + 1)`` of the coefficients (intercept last) that the
        unguarded algorithm publishes: V with l_inf K-norm noise of scale 2 / (eps q) and
        the Newton point of the objective with gamma = lambda / (exp(eps (q - 1)) - 1) < 0
        (errata item 1), whatever its convergence. The library refuses that gamma; this
        reproduces the broken algorithm for the audit only.
    """
    from knorm.models import logistic_newton

    Z = np.column_stack([np.asarray(X, dtype=float), np.ones(len(X))])
    m = Z.shape[1]
    gamma = _printed_gamma(m / 4.0, epsilon, q)
    noise = KNormNoise(LpBall(m, math.inf), 2.0 / (epsilon * q))

    def sample(n, rng):
        out = np.empty((n, m))
        for k in range(n):
            out[k] = logistic_newton(Z, np.asarray(y, float), gamma=gamma, linear=noise.sample(rng=rng))[0]
        return out

    return sample


def _logistic_case(printed_gamma):
    def run(n_samples, confidence, rng):
        from knorm.audit.core import NeighbourPair, audit_pairs
        from knorm.audit.estimators import audit_estimator
        from knorm.models import LogisticRegression

        if printed_gamma:
            pair = NeighbourPair(
                printed_gamma_logistic(_LOGISTIC_X, _LOGISTIC_Y),
                printed_gamma_logistic(_LOGISTIC_X2, _LOGISTIC_Y),
                None,
                "neighbouring datasets",
            )
            return audit_pairs([pair], claimed_epsilon=1.0, n_samples=n_samples, confidence=confidence, rng=rng)
        est = LogisticRegression(epsilon=1.0, q=0.5, inference_share=0, bounds_X=(-1.0, 1.0), classes=[0, 1])
        return audit_estimator(
            est,
            _LOGISTIC_X,
            _LOGISTIC_Y,
            _LOGISTIC_X2,
            _LOGISTIC_Y,
            n_samples=n_samples,
            confidence=confidence,
            rng=rng,
        )

    return run


# Functional-mechanism linear regression, p = 1: two fixed records plus one that
# differs between the datasets, chosen by adversarial_records so that the change
# of the statistic has the largest K_T-norm (1, the sensitivity).
_LINEAR_BASE = np.array([[0.3, -0.2], [-0.6, 0.5]])


def _linear_case(output):
    def run(n_samples, confidence, rng):
        from knorm.audit.estimators import adversarial_records, audit_estimator
        from knorm.audit.mechanisms import knorm_statistics
        from knorm.models import LinearRegression

        space, ball = linear_regression_space(1), kt_ball(1)
        layout = RegressionLayout(1)
        z, z2 = adversarial_records(space.statistic, ball, rng=0)
        D, D2 = np.vstack([_LINEAR_BASE, z]), np.vstack([_LINEAR_BASE, z2])
        est = LinearRegression(epsilon=1.0, norm="kt", statistic="paper", bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0))
        options = {}
        if output == "statistic":  # the eps-DP release itself, with the K_T likelihood-ratio events
            T, T2 = layout.from_data(D[:, :1], D[:, 1]), layout.from_data(D2[:, :1], D2[:, 1])
            options = {"output": lambda e: e.statistic_noisy_, "statistics": knorm_statistics(ball, T, T2)}
        return audit_estimator(
            est, D[:, :1], D[:, 1], D2[:, :1], D2[:, 1], n_samples=n_samples, confidence=confidence, rng=rng, **options
        )

    return run


def _have_module(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def estimator_cases():
    """Return the rows of the private estimators that are available.

    Returns
    -------
    list of AuditCase
        Objective-perturbation logistic regression (sound, and broken with the
        printed gamma) and functional-mechanism linear regression; empty if no
        estimator module is available.
    """
    cases = []
    if _have_module("knorm.models.logistic"):
        cases += [
            AuditCase(
                "logistic, objective perturbation (n=2, m=2)",
                _logistic_case(False),
                None,
                sample_factor=0.015,
                kind="custom",
            ),
            AuditCase(
                "BROKEN logistic with the printed gamma < 0",
                _logistic_case(True),
                math.inf,
                sound=False,
                sample_factor=0.015,
                kind="custom",
            ),
        ]
    if _have_module("knorm.models.linear"):
        cases += [
            AuditCase(
                "linear, functional mechanism K_T (p=1), coefficients",
                _linear_case("coefficients"),
                None,
                sample_factor=0.02,
                kind="custom",
            ),
            AuditCase(
                "linear, functional mechanism K_T (p=1), noisy statistic",
                _linear_case("statistic"),
                1.0,
                sample_factor=0.02,
                kind="custom",
            ),
        ]
    return cases


def standard_cases(*, estimators=True):
    """Return the suite: sound mechanisms (audit must pass) then broken ones (audit must fail).

    Parameters
    ----------
    estimators : bool, default True
        Include the rows of the private estimators available (one fit per
        output, so they use fewer outputs).

    Returns
    -------
    list of AuditCase
        The K-norm mechanism rows (sound ones first, then broken ones), the Gaussian rows
        (:func:`knorm.audit.gaussian.gaussian_cases`), then the
        estimator rows.
    """
    from knorm.audit.gaussian import gaussian_cases

    return _mechanism_cases() + gaussian_cases() + (estimator_cases() if estimators else [])


def _seed_reuse(reuse):
    """Two monthly releases of Example 2.1 (l_inf, eps = 1); one record changes in month 2.

    The input is the pair of datasets (month 1, month 2); neighbouring inputs differ in
    month 2 only, so the pair of releases is 1-DP when each draws fresh noise. With the
    seed reused, R2 - R1 = T2 - T1 exactly: the change is revealed (unbounded loss). This
    is why a ledger refuses a seed it has seen (:class:`knorm.accounting.SeedReuseError`).
    """

    def run(n_samples, confidence, rng):
        from knorm.audit.core import NeighbourPair, audit_pairs
        from knorm.audit.mechanisms import knorm_statistics

        space = squared_statistic_space()
        ball = LpBall(2, math.inf)
        mechanism = KNormMechanism(ball, space.sensitivity(math.inf), 1.0)
        T, u = np.zeros(2), np.array([2.0, 0.0])  # u = t(1) - t(-1): a point of S_T of l_inf norm Delta = 2

        def months(second):
            def sample(n, gen):
                s1 = int(gen.integers(2**63))
                s2 = s1 if reuse else int(gen.integers(2**63))
                r1 = mechanism.release(np.tile(T, (n, 1)), rng=np.random.default_rng(s1)).value
                r2 = mechanism.release(np.tile(second, (n, 1)), rng=np.random.default_rng(s2)).value
                return np.hstack([r1, r2])

            return sample

        stats: dict[str, Callable] = {
            f"month 2, {k}": (lambda z, f=f: f(z[:, 2:])) for k, f in knorm_statistics(ball, T, T + u).items()
        }
        stats["(month 2 - month 1) . u"] = lambda z: (z[:, 2:] - z[:, :2]) @ u
        pair = NeighbourPair(months(T), months(T + u), stats, "month 2 changes by one record")
        return audit_pairs([pair], claimed_epsilon=1.0, n_samples=n_samples, confidence=confidence, rng=rng)

    return run


def _mechanism_cases():
    return [
        AuditCase("l1, Example 2.1", _example21(1, 1.0), 1.0),
        AuditCase("l2, Example 2.1", _example21(2, 0.5), 0.5),
        AuditCase("l_inf, Example 2.1", _example21(math.inf, 2.0), 2.0),
        AuditCase("l3, (sum x, sum y, sum xy)", _sum_product(lambda: LpBall(3, 3), 1.0), 1.0),
        AuditCase("polytope K_3, (sum x, sum y, sum xy)", _sum_product(k3_ball, 1.0), 1.0),
        AuditCase("polytope from 7 points (declared Delta)", _from_points_polytope, 0.7),
        AuditCase("K_2, Example 2.1", _k2, 1.0),
        AuditCase("K_T, regression p=2", _regression(lambda: kt_ball(2), 1.0), 1.0, sample_factor=0.5),
        AuditCase("cut ball, regression p=2", _regression(_cut_ball, 1.0), 1.0, sample_factor=0.5),
        AuditCase("two releases, fresh seeds (l_inf)", _seed_reuse(False), 1.0, kind="custom"),
        AuditCase("BROKEN l2 sampler draws half the noise", _halved_l2, 2.0, sound=False),
        AuditCase(
            "BROKEN K_T with Delta/2 declared",
            _regression(lambda: kt_ball(2), 0.5, declared=0.5),
            1.0,
            sound=False,
            sample_factor=0.5,
        ),
        AuditCase("BROKEN l1 ball with Delta_inf = 2", _l1_with_linf_sensitivity, 1.5625, sound=False),
        AuditCase("BROKEN noise ignores eps (l_inf)", _ignores_epsilon, 1.0, sound=False),
        AuditCase(
            "BROKEN two releases, one seed reused (l_inf)", _seed_reuse(True), math.inf, sound=False, kind="custom"
        ),
    ]


def run_case(case, *, n_samples, confidence, rng):
    """Build and audit one case of the suite.

    Parameters
    ----------
    case : AuditCase
        The row.
    n_samples : int
        The suite's outputs per side, scaled by ``case.sample_factor`` (at least
        1000 are used).
    confidence : float
        Confidence level of the lower bound.
    rng : None, int, SeedSequence or Generator
        Randomness of the audit.

    Returns
    -------
    AuditResult
        The audit, labelled with the case name.
    """
    n = max(1000, int(round(case.sample_factor * n_samples)))
    if case.kind == "custom":
        return dataclasses.replace(case.build(n, confidence, rng), label=case.name)
    mechanism, space = case.build()
    return audit_knorm(mechanism, space, n_samples=n, confidence=confidence, rng=rng, label=case.name)


def run_suite(*, n_samples=1_000_000, confidence=0.999, seed=20261121, cases=None):
    """Audit every case of the suite.

    Parameters
    ----------
    n_samples : int, default 1000000
        Outputs per side and per neighbour pair, before each case's ``sample_factor``.
    confidence : float, default 0.999
        Confidence of each lower bound: a sound row fails with probability at most
        1 - confidence.
    seed : int, default 20261121
        Root seed; case i uses the seed (seed, i), so any row can be reproduced alone.
    cases : list of AuditCase, optional
        The rows; :func:`standard_cases` by default.

    Returns
    -------
    list of (AuditCase, AuditResult)
        Each case with its audit, in order.
    """
    cases = standard_cases() if cases is None else cases
    return [
        (c, run_case(c, n_samples=n_samples, confidence=confidence, rng=np.random.SeedSequence([seed, i])))
        for i, c in enumerate(cases)
    ]


_TABLE_HEAD = (
    "mechanism",
    "claimed eps",
    "true eps",
    "eps lower bound",
    "verdict",
    "expected",
    "test outputs/side",
    "seconds",
)


def table_rows(rows):
    """Return the cells of the suite's table, one tuple of strings per row.

    Parameters
    ----------
    rows : list of (AuditCase, AuditResult)
        The output of :func:`run_suite`.

    Returns
    -------
    list of tuple of str
        Mechanism, claimed eps, true eps, eps lower bound, verdict, expected verdict,
        test outputs per side and seconds.
    """
    out = []
    for case, res in rows:
        expected = "pass" if case.sound else "VIOLATION"
        true = f"<= {res.claimed_epsilon:g}" if case.true_epsilon is None else f"{case.true_epsilon:g}"
        out.append(
            (
                case.name,
                f"{res.claimed_epsilon:g}",
                true,
                f"{res.eps_lower:.4f}",
                res.verdict,
                expected,
                f"{res.n_test:,}",
                f"{res.seconds:.1f}",
            )
        )
    return out


def format_table(rows):
    """Format the results of :func:`run_suite` as a markdown table.

    Parameters
    ----------
    rows : list of (AuditCase, AuditResult)
        The output of :func:`run_suite`.

    Returns
    -------
    str
        A header and one line per row (see :func:`table_rows`).
    """
    lines = ["| " + " | ".join(_TABLE_HEAD) + " |", "|" + "|".join("---" for _ in _TABLE_HEAD) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines)
