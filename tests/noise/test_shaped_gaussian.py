"""The shaped discrete Gaussian N_Z(0, A^-1): its exact law by enumeration, targeted atoms by sampling, the
exact PSD certificate, bad inputs, and the Renyi divergences behind its zCDP guarantee.

Enumeration (tests.noise.enumeration): the sampler runs on a fake Generator that enumerates its random
inputs, and the exact law of its output (Fractions, up to the pruned mass) is compared with the target.

* Full stack, m = 1: every random input of the spherical proposal (CKS Algorithm 3: discrete Laplace fast
  path, Bernoulli(exp(-q))) and of the shape's acceptance, or of the latent sampler (g by CKS Algorithm 3,
  the theta-ratio Bernoulli on 64-bit words, the coordinates around round(mu)). The target N_Z(0, 1/A) must
  lie within the exact bounds at every atom.
* The shape's layers, m = 1 and 2: the proposals replaced by a uniform draw on a box (a rational law), so
  that the enumeration is narrow and its pruned mass below 1e-6; the output law must then be exactly the
  proposal times the acceptance the proof needs: exp(-x'(A - tI)x / 2) for the spherical proposal,
  exp(-q_g) (Theta_a(f) / Theta_a(0))^m for the latent g and exp(-q_x) for each coordinate. The identity
  "proposal law x acceptance = target" for the true proposals is checked in exact rationals
  (test_acceptance_identities), so the two together give the target law.

Statistical tests use fixed seeds; each atom test (a chi-square of three atoms and the rest) fails with
probability P_ATOM = 1e-5 for a random seed under a correct sampler, each moment check (4 standard errors)
with about 6e-5.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction as F

import numpy as np
import pytest
from scipy import stats

from knorm.noise import discrete, gaussian
from knorm.noise import shaped_gaussian as sg
from knorm.noise.shaped_gaussian import ShapedDiscreteGaussianNoise as Shaped
from tests.noise.enumeration import check_law, dec, enumerate_law, exp_neg, intervals, rule, spot_check
from tests.noise.test_discrete import integers_only
from tests.settings import SEED

REJECT = "rejected"


# -- class rules of the shaped sampler's own draws (tests.noise.enumeration) ----------------------------
@rule(sg._lazy_less)
def _rule_lazy_less(frame, size, i, n):
    """A further 64-bit word of U: below cut_lo U < p, from cut_hi on U >= p, in between one more word."""
    loc = frame.f_locals
    return intervals(size, [loc["cut_lo"], loc["cut_hi"]])


@rule(sg._Latent.theta_accept)
def _rule_theta_first_word(frame, size, i, n):
    """U's first word: below the Poisson bound t_low, accept; else it is compared with the 64-bit bracket of p(f)."""
    loc = frame.f_locals
    plan, phi = loc["self"], loc["phi"]
    cuts = [loc["t_low"]]
    if int(phi[i]):
        cuts += list(sg._theta_ratio_bracket(plan.a, F(abs(int(phi[i])), plan.alpha), plan.dim, 64))
    return intervals(size, cuts)


@rule(sg._bernoulli_exp_big)
def _rule_exp_big(frame, size, i, n):
    """Round 1 of Algorithm 1 for the small rest e: floor and ceil of 2^64 e."""
    loc = frame.f_locals
    return intervals(size, [int(loc["lo64"][i]), int(loc["hi64"][i])])


# -- targets (decimal, 60 digits; independent of knorm) ----------------------------------------------------
def _quad(rows, x):
    return sum((rows[i][j] * x[i] * x[j] for i in range(len(x)) for j in range(len(x))), F(0))


def _target(rows):
    """x -> P(x) = exp(-x'Ax / 2) / Z on Z^m (m <= 2), Z summed over a box whose outside has mass < 1e-45."""
    m = len(rows)
    lam = float(np.linalg.eigvalsh(np.array(rows, dtype=float))[0])
    reach = math.ceil(math.sqrt(2 * 110 / lam)) + 1
    box = np.indices((2 * reach + 1,) * m).reshape(m, -1).T - reach
    with localcontext() as ctx:
        ctx.prec = 60
        norm = sum(exp_neg(_quad(rows, [int(v) for v in x]) / 2) for x in box)

    def target(x):
        x = (x,) if isinstance(x, int) else x
        with localcontext() as ctx:
            ctx.prec = 60
            return exp_neg(_quad(rows, list(x)) / 2) / norm

    return target


def _normalised(weights):
    """A dict of Decimal weights as a target function (0 outside)."""
    with localcontext() as ctx:
        ctx.prec = 60
        total = sum(weights.values(), Decimal(0))
        probs = {k: w / total for k, w in weights.items()}
    return lambda x: probs.get(x, Decimal(0))


def _theta_ratio(a, f, m):
    """(Theta_a(f) / Theta_a(0))^m by direct summation (decimal)."""
    reach = math.ceil(math.sqrt(2 * 140 / float(a))) + 2
    with localcontext() as ctx:
        ctx.prec = 60
        tf = sum(exp_neg(a * (y - f) ** 2 / 2) for y in range(-reach, reach + 2))
        t0 = sum(exp_neg(a * F(y) ** 2 / 2) for y in range(-reach, reach + 2))
        return (tf / t0) ** m


# -- enumerated runs -----------------------------------------------------------------------------------------
def _spherical_run(law):
    """One round of the spherical sampler (its real code): the accepted vector, or a restart."""
    plan = law._plan

    def run(rng):
        x, ok = plan.attempt(1, rng)
        return tuple(int(v) for v in x[0]) if ok[0] else REJECT

    return run


def _box(reach):
    """A rational stand-in proposal: uniform on {-reach, ..., reach}, one small uniform per value."""
    return lambda n, rng: rng.integers(-reach, reach + 1, size=n)


# -- full stack, m = 1 and 2 -----------------------------------------------------------------------------------
class _Restart(Exception):
    """A rejection of the proposal's own CKS round, turned into a restart of the whole spherical round."""


def _one_cks_round(params, n, rng):
    """The spherical proposal as one CKS Algorithm 3 round (gaussian._attempt); a rejection restarts.

    Redrawing the proposal alone (the sampler) and restarting the whole round (this test) give the same
    law: the proposal is independent of everything drawn before it.
    """
    y, ok = gaussian._attempt(*params, n, rng)
    if not ok.all():
        raise _Restart
    return y


def test_full_stack_spherical_m1(monkeypatch):
    """Every random input of the spherical sampler for A = 3 with the proposal N_Z(0, 1/2) (the CKS round's
    discrete Laplace fast path and Bernoulli, then the shape's Bernoulli(exp(-x^2 / 2))), down to paths of
    probability 1e-6: N_Z(0, 1/3) lies within the exact bounds at every atom; pruned mass below 1e-3."""
    law = Shaped([[3]], proposal_sigma2=F(1, 2))
    monkeypatch.setattr(sg, "_discrete_gaussian", _one_cks_round)
    plan = law._plan

    def run(rng):
        try:
            x, ok = plan.attempt(1, rng)
        except _Restart:
            return REJECT
        return int(x[0, 0]) if ok[0] else REJECT

    enumerated = enumerate_law(run, threshold=F(1, 10**6), restart=REJECT)
    check_law(enumerated, lambda x: _target([[F(3)]])((x,)), max_pruned=F(1, 1000))
    assert {0, 1, -1, 2} <= set(enumerated.atoms)


def _check_bounds(bounds, target, max_width):
    """target(x) in [lo, hi] for every x (up to 1e-40), and the bounds tight enough to have power."""
    with localcontext() as ctx:
        ctx.prec = 60
        for x, (lo, hi) in bounds.items():
            t = target(x)
            assert dec(lo) - Decimal("1e-40") <= t <= dec(hi) + Decimal("1e-40"), (x, float(lo), float(t), float(hi))
    widest = max(hi - lo for lo, hi in bounds.values())
    assert widest <= max_width, float(widest)


def _stage_law(run, threshold):
    return enumerate_law(run, threshold=threshold, restart=REJECT)


def _two_stage_spherical(law, reach, threshold, reach_norm=6):
    """Exact bounds on P(x), x in a box, from enumerations of the real stages of a spherical round.

    The proposal's coordinates are independent rounds of CKS Algorithm 3 (gaussian._attempt, enumerated once);
    the acceptance of x is _bernoulli_exp_q(qform(x), den) (enumerated per x). With P_1(x) the probability that a
    round ends in x, P(x) = P_1(x) / T with T = sum over all x of P_1(x), bracketed by the box's bounds plus the
    proposal's mass outside the box.
    """
    plan, m = law._plan, law.dim

    def cks(rng):
        y, ok = gaussian._attempt(*plan.params, 1, rng)
        return int(y[0]) if ok[0] else REJECT

    p0 = _stage_law(cks, threshold)
    box = [tuple(int(v) for v in x) for x in np.indices((2 * reach_norm + 1,) * m).reshape(m, -1).T - reach_norm]
    lo1, hi1 = {}, {}
    for x in box:
        if plan.qform is None:
            alo = ahi = F(1)
        else:
            xs = np.array([x], dtype=np.int64)
            acc = enumerate_law(
                lambda rng, xs=xs: bool(sg._bernoulli_exp_q(plan.qform(xs), plan.den, rng)[0]), threshold=threshold
            )
            alo = acc.atoms.get(True, F(0))
            ahi = alo + acc.pruned
        lo1[x] = math.prod((p0.bounds(v)[0] for v in x), start=F(1)) * alo
        hi1[x] = min(F(1), math.prod((p0.bounds(v)[1] for v in x), start=F(1)) * ahi)
    inside = sum((p0.bounds(v)[0] for v in range(-reach_norm, reach_norm + 1)), F(0)) ** m
    t_lo, t_hi = sum(lo1.values(), F(0)), sum(hi1.values(), F(0)) + (1 - inside)
    return {x: (lo1[x] / t_hi, hi1[x] / t_lo) for x in box if max(map(abs, x)) <= reach}


def _two_stage_latent(law, reach, threshold):
    """Exact bounds on P(x), x in a box, from enumerations of the real stages of the latent sampler.

    The latent draw (g_attempt: its discrete Laplace, CKS Bernoulli and theta-ratio Bernoulli; a rejection
    restarts) gives the law of (phi, n_g); given phi each coordinate is an independent run of x_attempt until
    accepted (draw_x), whose law is enumerated once per phi. P(x) = sum over (phi, n_g) of
    P(phi, n_g) prod_i P(x_i - n_g | phi), bracketed term by term, plus the latent mass not enumerated.
    """
    plan, m = law._plan, law.dim

    def g_run(rng):
        _, phi, ng, ok = plan.g_attempt(1, rng)
        return (int(phi[0]), int(ng[0])) if ok[0] else REJECT

    g_law = _stage_law(g_run, threshold)
    y_laws = {}
    for phi, _ in g_law.atoms:
        if phi not in y_laws:

            def y_run(rng, phi=phi):
                y, ok = plan.x_attempt(np.array([phi], dtype=np.int64), rng)
                return int(y[0]) if ok[0] else REJECT

            y_laws[phi] = _stage_law(y_run, threshold)
    g_bounds = {k: g_law.bounds(k) for k in g_law.atoms}
    missing = 1 - sum((lo for lo, _ in g_bounds.values()), F(0))
    out = {}
    for x in np.indices((2 * reach + 1,) * m).reshape(m, -1).T - reach:
        x = tuple(int(v) for v in x)
        lo = hi = F(0)
        for (phi, ng), (glo, ghi) in g_bounds.items():
            yb = [y_laws[phi].bounds(v - ng) for v in x]
            lo += glo * math.prod((b[0] for b in yb), start=F(1))
            hi += ghi * math.prod((b[1] for b in yb), start=F(1))
        out[x] = (lo, min(F(1), hi + missing))
    return out


FULL_STACK = {
    "spherical-dense-2": (lambda: Shaped([[2, 1], [1, 3]], denominator=2), _two_stage_spherical, 2, F(1, 10**7)),
    "spherical-compound-2": (lambda: Shaped.compound(1, F(1, 2), 2), _two_stage_spherical, 2, F(1, 10**7)),
    "latent-1": (lambda: Shaped.compound(4, -1, 1), _two_stage_latent, 2, F(1, 10**7)),
    "latent-2-theta": (lambda: Shaped.compound(4, -1, 2), _two_stage_latent, 2, F(1, 10**7)),
    "latent-2": (lambda: Shaped.compound(1, F(-1, 4), 2), _two_stage_latent, 2, F(1, 10**7)),
}
_SLOW_FULL = {"spherical-dense-2", "latent-1", "latent-2-theta"}  # 10-20 s each; the other two run by default


@pytest.mark.parametrize(
    "name", [pytest.param(k, marks=pytest.mark.slow) if k in _SLOW_FULL else k for k in FULL_STACK]
)
def test_full_stack_law_is_exact(name):
    """The whole sampler's law from exact enumerations of its real stages (every random input down to paths of
    probability 1e-7): the target N_Z(0, A^-1) lies within the exact bounds at every point of a box, and the
    bounds are at most 1e-3 wide (a bias larger than that at any point fails)."""
    make, stages, reach, threshold = FULL_STACK[name]
    law = make()
    bounds = stages(law, reach, threshold)
    _check_bounds(bounds, _target(law.precision_matrix().tolist()), max_width=F(1, 1000))


# -- the shape's layers, m = 1 and 2 (rational stand-in proposals) ---------------------------------------------
SPHERICAL_LAYERS = {
    "dense-2": (lambda: Shaped([[2, 1], [1, 3]], denominator=2), 4),  # A - tI with t just below lambda_min
    "compound+-2": (lambda: Shaped.compound(1, F(1, 2), 2), 4),  # t = a = 1: exponent (1'x)^2 / 4
    "dense-2-forced": (lambda: Shaped([[2, 1], [1, 3]], proposal_sigma2=F(2)), 3),  # t = 1/2
    # a denominator beyond int64: q = (A - 1) x^2 / 2 = (2^64 + 1) x^2 / 2^67 over 2^67 (the split path)
    "big-den-1": (lambda: Shaped([[F(3 * 2**64 + 1, 2**65)]], proposal_sigma2=1), 6),
}


def _spherical_layer_target(law, reach):
    """The accepted law with a uniform proposal on the box: proportional to exp(-x'(A - tI)x / 2), t = 1 / s^2."""
    rows = law.precision_matrix().tolist()
    t = 1 / law._plan.sigma2
    m = law.dim
    box = np.indices((2 * reach + 1,) * m).reshape(m, -1).T - reach
    weights = {}
    with localcontext() as ctx:
        ctx.prec = 60
        for x in box:
            x = tuple(int(v) for v in x)
            weights[x] = exp_neg((_quad(rows, x) - t * sum(v * v for v in x)) / 2)
    return _normalised(weights)


@pytest.mark.parametrize("name", list(SPHERICAL_LAYERS))
def test_spherical_layer_law_is_exact(name, monkeypatch):
    """The shape's acceptance, exactly: with a uniform proposal on a box the accepted law is proportional to
    exp(-x'(A - tI)x / 2) at every point (pruned mass below 1e-6), with t = 1 / s^2 the proposal's precision."""
    law, reach = SPHERICAL_LAYERS[name][0](), SPHERICAL_LAYERS[name][1]
    t = 1 / law._plan.sigma2
    assert float(t) <= np.linalg.eigvalsh(law.precision_matrix().astype(float))[0] + 1e-12  # A - tI is PSD
    monkeypatch.setattr(sg, "_discrete_gaussian", lambda params, n, rng: _box(reach)(n, rng))
    enumerated = enumerate_law(_spherical_run(law), threshold=F(1, 10**12), restart=REJECT)
    target = _spherical_layer_target(law, reach)
    check_law(enumerated, target, max_pruned=F(1, 10**6))
    assert len(enumerated.atoms) > (2 * reach + 1) ** law.dim // 2  # atoms beyond exp(-q) < 1e-12 are pruned


def _g_stage_run(plan):
    """One latent round: the proposed g if accepted (checked against its (phi, n_g)), else a restart."""

    def run(rng):
        g, phi, ng, ok = plan.g_attempt(1, rng)
        g, phi, ng = int(g[0]), int(phi[0]), int(ng[0])
        assert F(plan.gamma * g, plan.alpha) == ng + F(phi, plan.alpha) and -plan.alpha <= 2 * phi < plan.alpha
        return g if ok[0] else REJECT

    return run


def _y_stage_run(plan, phi):
    """One coordinate round given phi: the offset y = x_i - n_g if accepted, else a restart (draw_x redraws it)."""

    def run(rng):
        y, ok = plan.x_attempt(np.array([phi], dtype=np.int64), rng)
        return int(y[0]) if ok[0] else REJECT

    return run


def _centre(plan, g):
    """mu = c g / a = n + f with n = floor(mu + 1/2)."""
    mu = plan.c * g / plan.a
    n = math.floor(mu + F(1, 2))
    return n, mu - n


def _g_stage_target(plan, reach):
    """With a uniform g on the box: weight exp(-(omega g^2 / 2 - |g| / t_g + 1 / (2 omega t_g^2))) (Theta_a(f) / Theta_a(0))^m."""
    a, c, m, tg = plan.a, plan.c, plan.dim, plan.t_g
    omega = c * (a - m * c) / a
    with localcontext() as ctx:
        ctx.prec = 60
        weights = {
            g: exp_neg(omega * g * g / 2 - F(abs(g), tg) + 1 / (2 * omega * tg * tg))
            * _theta_ratio(a, _centre(plan, g)[1], m)
            for g in range(-reach, reach + 1)
        }
    return _normalised(weights)


def _y_stage_target(plan, f, reach):
    """With a uniform y on the box: weight exp(-(a (y - f)^2 / 2 - |y| / t_x + |f| / t_x + 1 / (2 a t_x^2)))."""
    a, tx = plan.a, plan.t_x
    with localcontext() as ctx:
        ctx.prec = 60
        weights = {
            y: exp_neg(a * (y - f) ** 2 / 2 - F(abs(y), tx) + abs(f) / tx + 1 / (2 * a * tx * tx))
            for y in range(-reach, reach + 1)
        }
    return _normalised(weights)


LATENT_LAYERS = {
    "a4-c1-m2": (lambda: Shaped.compound(4, -1, 2), 4, 3),  # sigma = 1/2: the theta ratio's exact brackets used
    "a1-c1/4-m3": (lambda: Shaped.compound(1, F(-1, 4), 3), 6, 4),  # fractional centres mu = g / 4
}


def _patch_laplace(monkeypatch, plan, reach_g, reach_x):
    reach = {plan.t_g: reach_g, plan.t_x: reach_x}
    assert len(reach) == 2, "the test needs t_g != t_x to tell the two proposals apart"
    monkeypatch.setattr(discrete, "_discrete_laplace", lambda s, t, n, rng: _box(reach[t])(n, rng))


@pytest.mark.parametrize("name", list(LATENT_LAYERS))
def test_latent_layer_law_is_exact(name, monkeypatch):
    """The latent sampler's acceptances, exactly (uniform proposals on boxes; pruned mass below 1e-6): the g-step
    with its CKS exponent and the irrational theta ratio (drawn on 64-bit words against exact brackets), and
    each coordinate given its centre's fractional part f, for every f the g-step produces."""
    make, reach_g, reach_x = LATENT_LAYERS[name]
    plan = make()._plan
    _patch_laplace(monkeypatch, plan, reach_g, reach_x)
    enumerated = enumerate_law(_g_stage_run(plan), threshold=F(1, 10**12), restart=REJECT)
    check_law(enumerated, _g_stage_target(plan, reach_g), max_pruned=F(1, 10**6))
    phis = {(_centre(plan, g)[1] * plan.alpha, _centre(plan, g)[1]) for g in range(-reach_g, reach_g + 1)}
    assert len(phis) > 2
    for phi, f in phis:
        enumerated = enumerate_law(_y_stage_run(plan, int(phi)), threshold=F(1, 10**12), restart=REJECT)
        check_law(enumerated, _y_stage_target(plan, f, reach_x), max_pruned=F(1, 10**6))


def test_layer_classes_are_honest(monkeypatch):
    """The class rules above are honest: the top and a random member of each class give the same law."""
    plan = Shaped.compound(4, -1, 2)._plan
    _patch_laplace(monkeypatch, plan, 3, 2)
    spot_check(_g_stage_run(plan), threshold=F(1, 10**8), restart=REJECT)
    spot_check(_y_stage_run(plan, 1), threshold=F(1, 10**8), restart=REJECT)
    law = Shaped([[F(3 * 2**64 + 1, 2**65)]], proposal_sigma2=1)
    monkeypatch.setattr(sg, "_discrete_gaussian", lambda params, n, rng: _box(2)(n, rng))
    spot_check(_spherical_run(law), threshold=F(1, 10**5), restart=REJECT)


def test_a_wrong_acceptance_is_caught(monkeypatch):
    """Mutation checks: the layer tests fail for an acceptance exponent 2% low, and for a latent sampler without
    its theta-ratio step (at sigma = 1/2 the ratio is about 0.94-1 and matters)."""
    law = Shaped([[2, 1], [1, 3]], denominator=2)
    right = law._plan.qform
    monkeypatch.setattr(law._plan, "qform", lambda x: right(x) * 49 // 50)
    monkeypatch.setattr(sg, "_discrete_gaussian", lambda params, n, rng: _box(4)(n, rng))
    enumerated = enumerate_law(_spherical_run(law), threshold=F(1, 10**12), restart=REJECT)
    with pytest.raises(AssertionError):
        check_law(enumerated, _spherical_layer_target(law, 4), max_pruned=F(1, 10**6))

    plan = Shaped.compound(4, -1, 2)._plan
    _patch_laplace(monkeypatch, plan, 4, 3)
    monkeypatch.setattr(sg._Latent, "theta_accept", lambda self, phi, rng: np.ones(phi.size, dtype=bool))
    enumerated = enumerate_law(_g_stage_run(plan), threshold=F(1, 10**12), restart=REJECT)
    with pytest.raises(AssertionError):
        check_law(enumerated, _g_stage_target(plan, 4), max_pruned=F(1, 10**6))


@pytest.mark.parametrize("num, den", [(1, 2), (3, 4), (1, 1)])
def test_lazy_algorithm1_is_exact(num, den):
    """CKS Algorithm 1 with its Bernoulli(gamma / K) rounds decided on 64-bit words against exact brackets
    (the rest e of a split exponent uses it): the law of the output is Bernoulli(exp(-gamma))."""
    enumerated = enumerate_law(lambda rng: sg._alg1_from(1, num, den, rng), threshold=F(1, 10**12))
    check_law(enumerated, lambda x: exp_neg(F(num, den)) if x else 1 - exp_neg(F(num, den)), max_pruned=F(1, 10**9))


def test_split_exponent_is_exact(monkeypatch):
    """An exponent whose denominator passes int64: exp(-r0 / 2^s) by the int64 primitive times exp(-e) by the lazy
    Algorithm 1 is exactly exp(-frac / den). With s = 3 (not 62) the rest e is large enough to be enumerated."""
    monkeypatch.setattr(sg, "_SPLIT", 3)
    den = 2**70 + 1
    for frac in (den // 3, (5 * den) // 7, 12345):
        enumerated = enumerate_law(
            lambda rng, frac=frac: bool(sg._bernoulli_exp_big(np.array([frac], dtype=object), den, rng)[0]),
            threshold=F(1, 10**12),
        )
        p = exp_neg(F(frac, den))
        check_law(enumerated, lambda x, p=p: p if x else 1 - p, max_pruned=F(1, 10**9))


def test_acceptance_identities(monkeypatch):
    """The proofs' identities, in exact rationals on boxes of integers: proposal log-weight plus acceptance exponent
    equals the target log-weight plus a constant. Spherical: t ||x||^2 / 2 + q(x) = x'Ax / 2. Latent: for g,
    |g| / t_g + q_g = omega g^2 / 2 + C; for a coordinate, |y| / t_x + q_x(y) = a (y - f)^2 / 2 + C(f); with the
    integers the sampler computes (q = num / den)."""
    for law in (Shaped([[2, 1], [1, 3]], denominator=2), Shaped.compound(1, F(1, 2), 3)):
        plan, rows, t = law._plan, law.precision_matrix().tolist(), 1 / law._plan.sigma2
        box = np.indices((7,) * law.dim).reshape(law.dim, -1).T - 3
        nums = plan.qform(box.astype(np.int64))
        for x, num in zip(box, nums):
            x = [int(v) for v in x]
            assert t * sum(v * v for v in x) / 2 + F(int(num), plan.den) == _quad(rows, x) / 2
    plan = Shaped.compound(F(3, 7), F(-1, 50), 4)._plan
    omega = plan.c * (plan.a - plan.dim * plan.c) / plan.a
    ys = np.arange(-40, 41)
    seen = []
    # The sampler's own integers: proposals are the offsets of the box, and the Bernoulli records its exponents.
    monkeypatch.setattr(discrete, "_discrete_laplace", lambda s, t, n, rng: ys.astype(np.int64))
    monkeypatch.setattr(
        sg, "_bernoulli_exp_q", lambda num, den, rng: seen.append((num, den)) or np.zeros(len(num), dtype=bool)
    )
    plan.g_attempt(ys.size, np.random.default_rng(0))
    ((nums, den),) = seen
    assert den == plan.den_g and all(int(v) >= 0 for v in nums)
    assert len({F(abs(int(y)), plan.t_g) + F(int(v), den) - omega * int(y) ** 2 / 2 for y, v in zip(ys, nums)}) == 1
    for phi in (0, 1, -3, plan.alpha // 2 - 1, -(plan.alpha // 2)):
        f = F(phi, plan.alpha)
        seen.clear()
        plan.x_attempt(np.full(ys.size, phi, dtype=np.int64), np.random.default_rng(0))
        ((nums, den),) = seen
        assert den == plan.den_x and all(int(v) >= 0 for v in nums)
        vals = {F(abs(int(y)), plan.t_x) + F(int(v), den) - plan.a * (int(y) - f) ** 2 / 2 for y, v in zip(ys, nums)}
        assert len(vals) == 1
        seen.clear()  # the Python-integer branch (taken for entries whose int64 bound fails) gives the same integers
        plan.x_attempt(np.full(ys.size, phi, dtype=object), np.random.default_rng(0))
        ((nums_big, _),) = seen
        assert nums_big.dtype == object and [int(v) for v in nums_big] == [int(v) for v in nums]


# -- targeted atoms (sampling) --------------------------------------------------------------------------------
def _pmf(rows, reach=60):
    """Exact-enough pmf on a box (float64 with log-sum-exp; the outside mass is below 1e-30)."""
    a = np.array(rows, dtype=float)
    m = len(rows)
    grid = np.indices((2 * reach + 1,) * m).reshape(m, -1).T - reach
    logw = -np.einsum("ij,jk,ik->i", grid, a, grid) / 2
    lz = np.logaddexp.reduce(logw)
    return {tuple(int(v) for v in x): math.exp(lw - lz) for x, lw in zip(grid, logw)}


def _atom_pvalue(draws, pmf, atoms):
    """Chi-square p-value of the counts at ``atoms`` and of all other points pooled, against the exact pmf."""
    n = len(draws)
    counts = [int(np.count_nonzero(np.all(draws == np.array(atom), axis=1))) for atom in atoms]
    probs = [pmf[atom] for atom in atoms]
    counts.append(n - sum(counts))
    probs.append(1 - sum(probs))
    return stats.chisquare(counts, n * np.array(probs)).pvalue


ATOM_LAWS = {
    # P(0) about 0.056 and 0.044: a 2% change of A moves P(0) by about 2% (det^(-1/2)), which 2e6 draws see at
    # about 4-6 standard errors per atom; the chi-square of three atoms gives p < 1e-9 for it.
    "latent": lambda scale: Shaped.compound(F(1, 2) * scale, F(-1, 8) * scale, 2),
    "dense": lambda scale: Shaped([[3 * scale, scale], [scale, 2 * scale]], denominator=8),
}
ATOMS = [(0, 0), (1, -1), (1, 1)]
N_ATOMS = 2_000_000
P_ATOM = 1e-5  # failure rate of each atom test for a random seed under a correct sampler


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ATOM_LAWS))
def test_atoms(name):
    """Frequencies of the atoms 0, (1, -1) and (1, 1) in 2e6 draws against the pmf summed over a box (chi-square,
    4 cells, p > 1e-5); the same test rejects the law of 1.02 A (p < 1e-5)."""
    law = ATOM_LAWS[name](F(1))
    pmf = _pmf(law.precision_matrix().tolist())
    assert _atom_pvalue(law.sample(N_ATOMS, rng=SEED), pmf, ATOMS) > P_ATOM
    broken = ATOM_LAWS[name](F(102, 100))
    assert _atom_pvalue(broken.sample(N_ATOMS, rng=SEED), pmf, ATOMS) < P_ATOM


@pytest.mark.parametrize("name", list(ATOM_LAWS))
def test_atoms_quick(name):
    """A smaller version of test_atoms for the default run: 2e5 draws, p > 1e-5."""
    law = ATOM_LAWS[name](F(1))
    pmf = _pmf(law.precision_matrix().tolist())
    assert _atom_pvalue(law.sample(200_000, rng=SEED + 1), pmf, ATOMS) > P_ATOM


def test_count_shape_moments():
    """The shape of counts (m = 100, l0 bound 50 at rho = 0.5): A = aI + b11', b < 0. 4000 draws: the variance of
    a coordinate and of the sum against A^-1 (the discrete law's differ by far less than the tolerance at
    sigma >= 5), each within 4 standard errors (sqrt(2 / n) relative); the integers are exact counts."""
    law = Shaped.compound(F(9529, 2**18), F(-343, 2**20), 100)
    x = law.sample(4000, rng=SEED)
    assert x.dtype == np.int64 and x.shape == (4000, 100)
    cov = law.covariance
    tol = 4 * math.sqrt(2 / 4000)
    assert abs(x[:, 0].var() / cov[0, 0] - 1) < tol
    assert abs(x.sum(axis=1).var() / cov.sum() - 1) < tol
    assert law.rho(np.r_[np.ones(50, dtype=np.int64), np.zeros(50, dtype=np.int64)][None, :]) <= F(1, 2)


# -- the exact PSD certificate ---------------------------------------------------------------------------------
def test_certificate_refuses_a_proposal_too_narrow():
    """lambda_min([[2, 1], [1, 3]]) = (5 - sqrt 5) / 2 = 1.38196601...: 1/s^2 = 1.3819 is certified, 1.382 (3e-5
    too high) and 2 are refused with the cause."""
    Shaped([[2, 1], [1, 3]], proposal_sigma2=1 / F("1.3819"))
    for t in (F("1.382"), F(2)):
        with pytest.raises(
            ValueError,
            match=r"The 'proposal_sigma2' parameter of ShapedDiscreteGaussianNoise must be a variance s\^2 with A - I / s\^2 positive semidefinite",
        ):
            Shaped([[2, 1], [1, 3]], proposal_sigma2=1 / t)
    with pytest.raises(ValueError, match=r"'proposal_sigma2'.*1 / s\^2 = 2 > lambda_min\(A\) = 1"):
        Shaped.compound(1, F(1, 2), 2, proposal_sigma2=F(1, 2))


def test_exact_psd_and_minors_against_numpy():
    rng = np.random.default_rng(SEED)
    for _ in range(40):
        m = int(rng.integers(2, 6))
        b = rng.integers(-5, 6, size=(m, m))
        a = b @ b.T
        if rng.random() < 0.5:
            a = a - int(rng.integers(0, 3)) * np.eye(m, dtype=np.int64)
        eig = np.linalg.eigvalsh(a.astype(float))
        ok, _ = sg._is_psd(sg._as_objects(a))
        if eig[0] > 1e-9:
            assert ok
        elif eig[0] < -1e-9:
            assert not ok
        minors = sg._leading_minors(sg._as_objects(a))
        for k, mk in enumerate(minors, start=1):
            assert mk == round(np.linalg.det(a[:k, :k].astype(float)))
    assert sg._is_psd(sg._as_objects(np.outer([1, 2, 3], [1, 2, 3])))[0]  # singular PSD
    assert not sg._is_psd(sg._as_objects(np.array([[0, 1], [1, 0]])))[0]  # zero pivot with a non-zero row


def test_chosen_proposal_is_certified_and_tight():
    """For random rational A the proposal precision t = 1 / s^2 satisfies A - tI PSD (checked again here, by exact
    elimination in Fractions) and t >= (1 - 10^-5) lambda_min(A)."""
    rng = np.random.default_rng(SEED + 1)
    for _ in range(10):
        m = int(rng.integers(2, 5))
        b = rng.integers(-4, 5, size=(m, m))
        a = b @ b.T + m * np.eye(m, dtype=np.int64)
        law = Shaped(a, denominator=int(rng.integers(1, 9)))
        t = 1 / law._plan.sigma2
        rows = law.precision_matrix()
        shifted = [[rows[i][j] - (t if i == j else 0) for j in range(m)] for i in range(m)]
        s = [row[:] for row in shifted]
        for k in range(m):  # LDL' in Fractions: positive pivots
            assert s[k][k] > 0
            for i in range(k + 1, m):
                r = s[i][k] / s[k][k]
                for j in range(k + 1, m):
                    s[i][j] -= r * s[k][j]
        lam = np.linalg.eigvalsh(rows.astype(float))[0]
        assert float(t) >= (1 - 1e-5) * lam


# -- exact inputs and bad inputs ----------------------------------------------------------------------------------
def test_small_noise_falls_back_to_the_spherical_proposal():
    """A = aI - c11' with sigma = 1/sqrt(a) = 1/4 (the theta step's bound is void) and a mild shape: the spherical
    proposal (1 / s^2 = a - m c) is used, with its acceptance bound. Its draws against the exact pmf (summed over
    {-1, 0, 1}^10; points with a coordinate beyond 1 have relative weight below e^-30): the frequencies of 0 and
    of the unit vectors +-e_i in 2e5 draws, binomial |z| < 4.5 each (failure rate about 1e-5)."""
    law = Shaped.compound(16, F(-1, 100), 10)
    assert isinstance(law._plan, sg._Spherical) and law._plan.sigma2 == F(10, 159)
    assert 0.001 <= law.expected_acceptance <= 1
    grid = np.indices((3,) * 10).reshape(10, -1).T - 1
    logw = law.unnormalised_logpmf(grid)
    lz = np.logaddexp.reduce(logw)
    p0 = math.exp(-lz)
    p1 = 20 * math.exp(float(law.unnormalised_logpmf(np.eye(10)[0])) - lz)
    x = law.sample(200_000, rng=SEED)
    n0 = int(np.count_nonzero(~x.any(axis=1)))
    n1 = int(np.count_nonzero(np.abs(x).sum(axis=1) == 1))
    for count, p in ((n0, p0), (n1, p1)):
        assert abs(count - 200_000 * p) < 4.5 * math.sqrt(200_000 * p * (1 - p)), (count, p)


def test_inputs_are_read_exactly():
    """Ints over a denominator, Fractions and dyadic floats give the same law; A = aI + b11' is recognised."""
    a = Shaped([[2, 1], [1, 3]], denominator=4)
    b = Shaped([[F(1, 2), F(1, 4)], [F(1, 4), F(3, 4)]])
    c = Shaped(np.array([[0.5, 0.25], [0.25, 0.75]]))
    assert a.cache_key == b.cache_key == c.cache_key
    assert a.kind == "dense"
    d = Shaped([[3, -1, -1], [-1, 3, -1], [-1, -1, 3]], denominator=2)
    e = Shaped.compound(2, F(-1, 2), 3)
    assert d.kind == e.kind == "compound" and d.cache_key == e.cache_key
    assert (
        d.quadratic_form([1, 2, -1]) == e.quadratic_form([1, 2, -1]) == _quad(d.precision_matrix().tolist(), [1, 2, -1])
    )
    np.testing.assert_array_equal(d.sample(50, rng=3), e.sample(50, rng=3))


def test_interface():
    for law in (
        Shaped([[2, 1], [1, 3]], denominator=4),
        Shaped.compound(1, F(1, 4), 3),
        Shaped.compound(1, F(-1, 4), 3),
        Shaped.compound(F(2**70 + 1, 2**70), F(-1, 2**72), 3),  # numerators beyond int64: Python integers throughout
        Shaped([[F(2**70 + 1, 2**70), F(1, 2**71)], [F(1, 2**71), 2]]),
    ):
        assert law.sample(rng=1).shape == (law.dim,)
        assert law.sample((2, 3), rng=1).shape == (2, 3, law.dim)
        assert law.sample(5, rng=1).dtype == np.int64
        np.testing.assert_array_equal(law.sample(7, rng=5), law.sample(7, rng=5))
        assert 0 < law.expected_acceptance <= 1
        np.testing.assert_allclose(law.scale, math.sqrt(np.max(np.diag(law.covariance))))
        np.testing.assert_allclose(law.covariance, np.linalg.inv(law.precision_matrix().astype(float)))
        assert "exact shaped discrete Gaussian" in law.sampler
        assert law.sample(100, rng=integers_only(SEED)).shape == (100, law.dim)  # only Generator.integers is called
        half = law.marginal_half_width(0.1, n_draws=2000)
        assert half.method == "Monte Carlo" and np.asarray(half).shape == (law.dim,)


BAD = [
    (
        lambda: Shaped([[1, F(1, 2)], [F(1, 3), 1]]),
        ValueError,
        r"The 'precision' parameter of ShapedDiscreteGaussianNoise must be a symmetric matrix \(A = A'\)\. Got 'entry \(0, 1\) = 1/2 but entry \(1, 0\) = 1/3' instead",
    ),
    (
        lambda: Shaped([[1, 2, 0], [2, 1, 0], [0, 0, 1]]),
        ValueError,
        r"'precision' parameter .* must be positive definite \(every leading principal minor > 0.*order 2 = -3",
    ),
    (
        lambda: Shaped([[1, 2], [2, 1]]),
        ValueError,
        r"'precision' parameter .* such that A = aI \+ b11' is positive definite .*eigenvalues -1 and 3",
    ),
    (
        lambda: Shaped([[0.1, 0.0], [0.0, 1.0]]),
        ValueError,
        r"'precision' parameter .* exact multiples of 2\^-30 .*Got '0.1 at entry \(0, 0\) \(exactly 3602879701896397/36028797018963968, denominator 2\^55\)'",
    ),
    (lambda: Shaped([[float("nan")]]), ValueError, r"'precision' parameter .*Got 'nan at entry \(0, 0\)'"),
    (lambda: Shaped([[True]]), TypeError, r"'precision' parameter .*Got 'True at entry \(0, 0\)'"),
    (lambda: Shaped([["1"]]), TypeError, r"'precision' parameter"),
    (lambda: Shaped([[1, 2], [3]]), ValueError, r"'precision' parameter .* must be a square matrix"),
    (
        lambda: Shaped([[1, 2, 3]]),
        ValueError,
        r"'precision' parameter .* must be a square matrix of shape \(m, m\), m >= 1\. Got 'shape \(1, 3\)'",
    ),
    (lambda: Shaped([[1]], denominator=0), ValueError, r"'denominator' parameter .* must be an int >= 1\. Got 0"),
    (lambda: Shaped([[1]], denominator=1.5), TypeError, r"'denominator' parameter"),
    (
        lambda: Shaped.compound(0, 1, 3),
        ValueError,
        r"'a' parameter of ShapedDiscreteGaussianNoise\.compound .* positive definite \(a > 0 and a \+ m b > 0\)",
    ),
    (lambda: Shaped.compound(1, F(-1, 3), 3), ValueError, r"'b' parameter .*eigenvalues 1 and 0"),
    (lambda: Shaped.compound(1, 1, 0), ValueError, r"'dim' parameter .* an int >= 1\. Got 0"),
    (
        lambda: Shaped([[1, 0], [0, 10**8]]),
        ValueError,
        r"'precision' parameter .* accepts with probability >= 0\.001 .*condition number 1e\+08",
    ),
    (
        lambda: Shaped.compound(1, 10**5, 100),
        ValueError,
        r"'b' parameter of ShapedDiscreteGaussianNoise\.compound must be such that the exact rejection",
    ),
    (
        lambda: Shaped([[1]], min_acceptance=0),
        ValueError,
        r"'min_acceptance' parameter .* a float in the range \(0, 1\]",
    ),
    (
        # sigma = 1/4 against the lattice, m = 100, strongly shaped: neither sampler accepts often enough
        lambda: Shaped.compound(16, F(-15, 100), 100),
        ValueError,
        r"'a' parameter of ShapedDiscreteGaussianNoise\.compound must be such that an exact sampler accepts with "
        r"probability >= 0\.001\. Got .*theta step has the bound 0 .*1/sqrt\(a\) = 0\.25",
    ),
    (
        lambda: Shaped([[1]], proposal_sigma2=F(2**61 + 1, 3)),
        ValueError,
        r"'proposal_sigma2' parameter .* a variance the exact sampler takes",
    ),
    (lambda: Shaped([[1]], proposal_sigma2=-1), ValueError, r"'proposal_sigma2' parameter .* a positive rational"),
    (
        lambda: Shaped([[1]]).quadratic_form([0.5]),
        ValueError,
        r"'k' parameter of ShapedDiscreteGaussianNoise\.quadratic_form",
    ),
]


@pytest.mark.parametrize("make, exc, match", BAD, ids=range(len(BAD)))
def test_bad_inputs(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


# -- privacy: Renyi divergences of shifted laws ----------------------------------------------------------------------
def _renyi(rows, shift, alpha, reach=60):
    """D_alpha(N_Z(k, A^-1) || N_Z(0, A^-1)) summed over a box (floats; the outside is negligible)."""
    a = np.array(rows, dtype=float)
    grid = (np.indices((2 * reach + 1,) * 2).reshape(2, -1).T - reach).astype(float)
    logq = -np.einsum("ij,jk,ik->i", grid, a, grid) / 2
    d = grid - np.asarray(shift, dtype=float)
    logp = -np.einsum("ij,jk,ik->i", d, a, d) / 2
    lzq, lzp = np.logaddexp.reduce(logq), np.logaddexp.reduce(logp)
    assert lzp == pytest.approx(lzq, rel=1e-13)  # point 1: one normaliser for every integer shift
    return np.logaddexp.reduce(alpha * (logp - lzp) + (1 - alpha) * (logq - lzq)) / (alpha - 1)


@pytest.mark.parametrize(
    "rows",
    [
        [[F(3, 8), F(-1, 8)], [F(-1, 8), F(3, 8)]],  # aI - c11'
        [[F(3, 8), F(1, 8)], [F(1, 8), F(2, 8)]],  # dense
        [[F(3), F(-1)], [F(-1), F(3)]],  # sigma below 1: the theta factor is far from 1
    ],
)
@pytest.mark.parametrize("shift", [(1, 0), (1, -1), (2, 1)])
def test_renyi_divergence_within_zcdp(rows, shift):
    """D_alpha <= alpha k'Ak / 2 for every alpha (module docstring, point 3), with equality where alpha k is an
    integer vector: rho = sup_k k'Ak / 2 is the zCDP parameter, without a discrete correction."""
    law = Shaped(rows)
    half = float(law.quadratic_form(np.array(shift)) / 2)
    assert law.rho([shift, (0, 0)]) == law.quadratic_form(np.array(shift)) / 2
    for alpha in (1.01, 1.5, 2.0, 3.0, 7.5, 20.0):
        d = _renyi(rows, shift, alpha)
        assert d <= alpha * half * (1 + 1e-10) + 1e-12
        if float(alpha).is_integer():
            assert d == pytest.approx(alpha * half, rel=1e-9)
    # the other direction: exchanging the laws is the shift -k
    assert _renyi(rows, tuple(-v for v in shift), 2.5) <= 2.5 * half * (1 + 1e-10)
