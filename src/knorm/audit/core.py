"""The audit engine: event search on a selection split, Clopper-Pearson bounds on a test split.

A mechanism M is (eps, delta)-DP when, for the output laws P_a and P_b of M on
any two neighbouring inputs and every event E,

    P_a(E) <= exp(eps) P_b(E) + delta   and   P_b(E) <= exp(eps) P_a(E) + delta.

So each event E gives eps >= log((P_a(E) - delta) / P_b(E)) (and the same with a
and b swapped), and replacing P_a(E) by a lower and P_b(E) by an upper confidence
bound gives a lower confidence bound on eps. The engine

1. draws a *selection* split from P_a and P_b for every candidate neighbour
   pair, evaluates the test statistics f on it and searches the events
   {f >= tau} and {f < tau} (tau on a grid of sample quantiles, both ratio
   directions) for the one whose bound, computed on the selection split at the
   final per-interval error, is largest; it keeps the best event of each (pair, statistic) group and carries
   the ``n_final`` best groups forward;
2. draws a fresh, independent *test* split for the pairs carried forward and
   computes, for each of the k events, one-sided Clopper-Pearson bounds of error
   alpha / (2 k) on each probability, alpha = 1 - confidence;
3. reports eps_lower = max(0, max over the k events of the bound).

The events are functions of the selection split only, so on the test split they
are fixed; the union bound over the 2 k one-sided intervals gives
P(eps_lower > eps) <= alpha for every (eps, delta)-DP mechanism. That is the
false-alarm rate of :meth:`AuditResult.violates`.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from knorm._validation import check_count, check_probability, check_rng, param_error
from knorm.audit.stats import clopper_pearson, eps_lower_bound

__all__ = ["AuditResult", "EventBound", "NeighbourPair", "audit_pairs", "audit_samplers", "default_statistics"]

# The selection grid reaches down to tails holding this many pooled selection
# points: rarer events cannot show a ratio on the test split anyway.
_MIN_TAIL_COUNT = 8
# Largest number of coordinates used as default statistics.
_MAX_COORDINATE_STATISTICS = 10


@dataclass(frozen=True)
class NeighbourPair:
    """Output samplers of a mechanism on two neighbouring inputs, and the statistics to test.

    Parameters
    ----------
    sample_a, sample_b : callable
        ``sample(n, rng)`` returns ``n`` independent outputs of the mechanism on
        the first (a) and the second (b) input, as an array of shape (n,) or (n, m);
        ``rng`` is a :class:`numpy.random.Generator`.
    statistics : mapping or callable, optional
        Named scalar test statistics ``f(z)``, each mapping outputs of shape (n, m)
        to shape (n,); the audit searches thresholds of each. A callable
        ``statistics(z_a, z_b)`` is called with the *selection* outputs and must
        return such a mapping (statistics fitted on the selection split, for
        instance a projection on the estimated mean difference). By default:
        that projection and the first coordinates.
    label : str
        Name of the pair, used in event descriptions.
    """

    sample_a: Callable
    sample_b: Callable
    statistics: Mapping | Callable | None = None
    label: str = ""


@dataclass(frozen=True)
class EventBound:
    """The lower bound on eps given by one event on the test split.

    The event is E = {f(z) tail threshold} for a test statistic f. Each parameter
    is kept as the attribute of the same name.

    Parameters
    ----------
    pair : str
        Label of the neighbour pair.
    statistic : str
        Name of the test statistic f.
    tail : {'>=', '<'}
        Side of the threshold that E holds.
    threshold : float
        The threshold tau, chosen on the selection split.
    numerator : {'a', 'b'}
        The side whose probability is bounded from below: 'a' for
        log(P_a(E) / P_b(E)), 'b' for the reverse ratio.
    count_num, n_num : int
        Test outputs of the numerator side in E, and all of them.
    count_den, n_den : int
        The same for the denominator side.
    p_num_lower : float
        Clopper-Pearson lower bound on the numerator's probability of E.
    p_den_upper : float
        Clopper-Pearson upper bound on the denominator's probability of E.
    eps_lower : float
        The bound log((p_num_lower - delta) / p_den_upper) (-inf when
        p_num_lower <= delta).
    """

    pair: str
    statistic: str
    tail: str
    threshold: float
    numerator: str
    count_num: int
    n_num: int
    count_den: int
    n_den: int
    p_num_lower: float
    p_den_upper: float
    eps_lower: float

    @property
    def description(self):
        """A one-line description of the event and of the ratio bounded."""
        ratio = "P_a(E)/P_b(E)" if self.numerator == "a" else "P_b(E)/P_a(E)"
        where = f" on {self.pair}" if self.pair else ""
        return f"E = {{{self.statistic} {self.tail} {self.threshold:.6g}}}{where}, {ratio}"


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an empirical privacy audit: a lower confidence bound on eps.

    Returned by the audit functions; each parameter is kept as the attribute of the
    same name.

    Parameters
    ----------
    label : str
        What was audited.
    eps_lower : float
        Lower confidence bound on the privacy loss eps of the mechanism (>= 0).
    confidence : float
        P(eps_lower <= true eps) >= confidence for any (eps, delta)-DP mechanism.
    claimed_epsilon : float or None
        The epsilon the mechanism claims, if given.
    delta : float
        The delta assumed (0 for pure DP).
    event : EventBound or None
        The event attaining ``eps_lower`` (None if no event gave a positive bound).
    events : tuple of EventBound, default ()
        Every event evaluated on the test split (the Bonferroni family).
    n_select, n_test : int, default 0
        Outputs drawn per side and per pair on the selection split, and per side
        on the test split.
    n_searched : int, default 0
        Number of (event, ratio direction) candidates searched on the selection split.
    seconds : float, default 0.0
        Wall-clock time of the audit.
    """

    label: str
    eps_lower: float
    confidence: float
    claimed_epsilon: float | None
    delta: float
    event: EventBound | None
    events: tuple = field(default_factory=tuple)
    n_select: int = 0
    n_test: int = 0
    n_searched: int = 0
    seconds: float = 0.0

    def violates(self, epsilon):
        """Return whether the audit shows, at level ``confidence``, that the mechanism is not epsilon-DP.

        Parameters
        ----------
        epsilon : float
            The privacy level to test, in [0, inf].

        Returns
        -------
        bool
            True when eps_lower > epsilon. For an epsilon-DP mechanism this happens
            with probability at most 1 - confidence (the false-alarm rate).
        """
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not float(epsilon) >= 0:
            raise param_error("epsilon", "AuditResult.violates", "a float in the range [0, inf]", epsilon)
        return bool(self.eps_lower > float(epsilon))

    @property
    def passed(self):
        """No violation of the claimed epsilon was found (evidence, not a proof of privacy)."""
        if self.claimed_epsilon is None:
            raise ValueError("AuditResult.passed needs a claimed epsilon; use violates(epsilon) instead.")
        return not self.violates(self.claimed_epsilon)

    @property
    def verdict(self):
        """'pass', 'VIOLATION', or 'n/a' without a claimed epsilon."""
        if self.claimed_epsilon is None:
            return "n/a"
        return "pass" if self.passed else "VIOLATION"

    def __str__(self):
        claim = "" if self.claimed_epsilon is None else f", claimed eps = {self.claimed_epsilon:g} -> {self.verdict}"
        ev = self.event.description if self.event is not None else "no event with a positive bound"
        return (
            f"{self.label or 'audit'}: eps >= {self.eps_lower:.4f} at confidence {self.confidence:g}{claim}; "
            f"best {ev} ({self.n_test} test outputs per side)"
        )


def audit_samplers(
    sample_a,
    sample_b,
    *,
    statistics=None,
    claimed_epsilon=None,
    delta=0.0,
    n_samples=100_000,
    select_fraction=0.25,
    confidence=0.95,
    n_final=3,
    n_thresholds=128,
    rng=None,
    label="",
):
    """Audit a mechanism from samplers of its outputs on two neighbouring inputs.

    Parameters
    ----------
    sample_a, sample_b : callable
        ``sample(n, rng)``: ``n`` outputs on each input (see :class:`NeighbourPair`).
    statistics : mapping or callable, optional
        Scalar test statistics (see :class:`NeighbourPair`).
    claimed_epsilon : float, optional
        The epsilon to check; gives :attr:`AuditResult.passed`.
    delta : float, default 0
        The delta of (eps, delta)-DP assumed.
    n_samples : int, default 100000
        Outputs per side: ``select_fraction`` of them for the event search, the
        rest for the bound.
    select_fraction : float, default 0.25
        Share of the outputs used to choose the events.
    confidence : float, default 0.95
        Confidence level of the lower bound; 1 - confidence is the false-alarm rate.
    n_final : int, default 3
        Events carried to the test split (Bonferroni family size).
    n_thresholds : int, default 128
        Thresholds searched per statistic.
    rng : None, int, SeedSequence or Generator
        Randomness of the samplers.
    label : str, default ""
        Name of the audit.

    Returns
    -------
    AuditResult
        The lower confidence bound on eps, the event attaining it, and the verdict
        against ``claimed_epsilon``.

    Examples
    --------
    Laplace noise of scale 1 on neighbouring values 0 and 1 is exactly 1-DP:

    >>> import numpy as np
    >>> lap = lambda loc: (lambda n, rng: loc + rng.laplace(size=n))
    >>> res = audit_samplers(lap(0.0), lap(1.0), claimed_epsilon=1.0, n_samples=20_000, rng=5)
    >>> res.passed, 0.5 < res.eps_lower <= 1.0
    (True, True)
    >>> audit_samplers(lap(0.0), lap(3.0), claimed_epsilon=1.0, n_samples=20_000, rng=5).verdict
    'VIOLATION'
    """
    pair = NeighbourPair(sample_a, sample_b, statistics, "")
    return audit_pairs(
        [pair],
        claimed_epsilon=claimed_epsilon,
        delta=delta,
        n_samples=n_samples,
        select_fraction=select_fraction,
        confidence=confidence,
        n_final=n_final,
        n_thresholds=n_thresholds,
        rng=rng,
        label=label,
    )


def audit_pairs(
    pairs,
    *,
    claimed_epsilon=None,
    delta=0.0,
    n_samples=100_000,
    select_fraction=0.25,
    confidence=0.95,
    n_final=3,
    n_thresholds=128,
    rng=None,
    label="",
):
    """Audit a mechanism on several candidate neighbour pairs at once.

    The selection split also chooses among the pairs, so adding candidate pairs
    costs selection samples but no confidence. Pairs holding the same
    ``sample_a`` object (the same first input) share its outputs: the events of
    the Bonferroni family need not be independent. ``n_samples`` outputs per side
    are drawn for each pair's selection share and once more for the test split of
    every pair carried forward.

    Parameters
    ----------
    pairs : sequence of NeighbourPair
        The candidate neighbour pairs, with their samplers and statistics.
    claimed_epsilon : float, optional
        The epsilon to check; gives :attr:`AuditResult.passed`.
    delta : float, default 0
        The delta of (eps, delta)-DP assumed, in [0, 1).
    n_samples : int, default 100000
        Outputs per side: ``select_fraction`` of them for the event search, the
        rest for the bound.
    select_fraction : float, default 0.25
        Share of the outputs used to choose the events, in (0, 1).
    confidence : float, default 0.95
        Confidence level of the lower bound; 1 - confidence is the false-alarm rate.
    n_final : int, default 3
        Events carried to the test split (Bonferroni family size).
    n_thresholds : int, default 128
        Thresholds searched per statistic (at least 2).
    rng : None, int, SeedSequence or Generator
        Randomness of the samplers.
    label : str, default ""
        Name of the audit.

    Returns
    -------
    AuditResult
        The lower confidence bound on eps over the events of every pair, the event
        attaining it, and the verdict against ``claimed_epsilon``.

    Notes
    -----
    The procedure and its guarantee, P(eps_lower > eps) <= 1 - confidence for every
    (eps, delta)-DP mechanism, are in the module notes (:mod:`knorm.audit.core`).
    """
    owner = "audit_pairs"
    start = time.perf_counter()
    pairs = list(pairs)
    if not pairs or not all(isinstance(p, NeighbourPair) for p in pairs):
        raise param_error("pairs", owner, "a non-empty sequence of NeighbourPair", pairs, TypeError)
    if claimed_epsilon is not None:
        real = isinstance(claimed_epsilon, numbers.Real) and not isinstance(claimed_epsilon, bool)
        if not real or not claimed_epsilon >= 0:
            raise param_error("claimed_epsilon", owner, "None or a float in the range [0, inf]", claimed_epsilon)
        claimed_epsilon = float(claimed_epsilon)
    delta = check_probability(delta, "delta", owner, closed=True)
    if delta >= 1:
        raise param_error("delta", owner, "a float in the range [0, 1)", delta)
    n_samples = check_count(n_samples, "n_samples", owner)
    select_fraction = check_probability(select_fraction, "select_fraction", owner)
    confidence = check_probability(confidence, "confidence", owner)
    n_final = check_count(n_final, "n_final", owner)
    n_thresholds = check_count(n_thresholds, "n_thresholds", owner)
    if n_final < 1:
        raise param_error("n_final", owner, "an int >= 1", n_final)
    if n_thresholds < 2:
        raise param_error("n_thresholds", owner, "an int >= 2", n_thresholds)
    n_sel = int(round(select_fraction * n_samples))
    n_test = n_samples - n_sel
    if n_sel < 2 * _MIN_TAIL_COUNT or n_test < 1:
        raise param_error("n_samples", owner, f"large enough for both splits (>= {4 * _MIN_TAIL_COUNT})", n_samples)
    gen = check_rng(rng)
    alpha = 1.0 - confidence
    # Selection ranks events by their bound on the selection split at the final
    # per-interval error (family size n_final), which penalises rare events.
    beta_sel = alpha / (2 * n_final)

    # -- 1. selection split -----------------------------------------------------
    groups = []  # (selection bound, pair index, stat name, stat fn, tail, threshold, numerator)
    n_searched = 0
    shared = {}  # pairs given the same sample_a object share its outputs
    for i, pair in enumerate(pairs):
        if id(pair.sample_a) not in shared:
            shared[id(pair.sample_a)] = _draw(pair.sample_a, n_sel, gen, "sample_a")
        za = shared[id(pair.sample_a)]
        zb = _draw(pair.sample_b, n_sel, gen, "sample_b")
        stats = _resolve_statistics(pair.statistics, za, zb)
        for name, fn in stats.items():
            fa, fb = _evaluate(fn, za, name), _evaluate(fn, zb, name)
            best, searched = _search(fa, fb, beta_sel, delta, n_thresholds)
            n_searched += searched
            if best is not None:
                groups.append((best[0], i, name, fn, *best[1:]))
    if not groups:
        raise ValueError(f"{owner}: no statistic gave a candidate event; check the statistics.")
    groups.sort(key=lambda g: -g[0])
    chosen = groups[:n_final]
    k = len(chosen)
    beta = alpha / (2 * k)

    # -- 2. test split: fresh outputs, events fixed -------------------------------
    test, shared = {}, {}
    for i in sorted({g[1] for g in chosen}):
        a = pairs[i].sample_a
        if id(a) not in shared:
            shared[id(a)] = _draw(a, n_test, gen, "sample_a")
        test[i] = (shared[id(a)], _draw(pairs[i].sample_b, n_test, gen, "sample_b"))
    events = []
    for _, i, name, fn, tail, tau, numerator in chosen:
        za, zb = test[i]
        fa, fb = _evaluate(fn, za, name), _evaluate(fn, zb, name)
        ca = int(np.count_nonzero(fa >= tau)) if tail == ">=" else int(np.count_nonzero(fa < tau))
        cb = int(np.count_nonzero(fb >= tau)) if tail == ">=" else int(np.count_nonzero(fb < tau))
        c_num, c_den = (ca, cb) if numerator == "a" else (cb, ca)
        lo, _ = clopper_pearson(c_num, n_test, beta)
        _, hi = clopper_pearson(c_den, n_test, beta)
        eps = float(eps_lower_bound(c_num, n_test, c_den, n_test, beta, delta))
        events.append(
            EventBound(
                pairs[i].label,
                name,
                tail,
                float(tau),
                numerator,
                c_num,
                n_test,
                c_den,
                n_test,
                float(lo),
                float(hi),
                eps,
            )
        )
    best = max(events, key=lambda e: e.eps_lower)
    eps_lower = max(0.0, best.eps_lower)
    return AuditResult(
        label,
        eps_lower,
        confidence,
        claimed_epsilon,
        delta,
        best if best.eps_lower > 0 else None,
        tuple(events),
        n_sel,
        n_test,
        n_searched,
        time.perf_counter() - start,
    )


# -- helpers -------------------------------------------------------------------------
def _draw(sampler, n, gen, name):
    z = np.asarray(sampler(n, gen), dtype=float)
    if z.ndim == 1:
        z = z[:, None]
    if z.ndim != 2 or z.shape[0] != n:
        raise ValueError(
            f"The {name!r} sampler must return shape (n,) or (n, m) for n = {n}. Got shape {z.shape} instead."
        )
    if not np.all(np.isfinite(z)):
        raise ValueError(f"The {name!r} sampler returned non-finite outputs; the audit needs finite outputs.")
    return z


def _resolve_statistics(statistics, za, zb):
    if statistics is None:
        return default_statistics(za, zb)
    if callable(statistics) and not isinstance(statistics, Mapping):
        statistics = statistics(za, zb)
    if not isinstance(statistics, Mapping) or not statistics or not all(callable(f) for f in statistics.values()):
        raise TypeError(
            "The 'statistics' of a NeighbourPair must be a non-empty mapping of names to callables. "
            f"Got {statistics!r} instead."
        )
    return dict(statistics)


def default_statistics(za, zb):
    """Return the default test statistics, fitted on the selection outputs.

    Parameters
    ----------
    za, zb : ndarray of shape (n, m)
        Selection outputs of the mechanism on the two inputs.

    Returns
    -------
    dict of str to callable
        ``'proj(mean diff)'``, the projection on the normalised difference of the
        two sample means (when m > 1 and the means differ), and the first (at
        most 10) coordinates ``'z[j]'`` (``'z'`` when m = 1); each maps outputs of
        shape (n, m) to shape (n,).
    """
    m = za.shape[1]
    out = {}
    d = za.mean(axis=0) - zb.mean(axis=0)
    nd = float(np.linalg.norm(d))
    if m > 1 and nd > 0:
        c = d / nd
        out["proj(mean diff)"] = lambda z, c=c: z @ c
    for j in range(min(m, _MAX_COORDINATE_STATISTICS)):
        out[f"z[{j}]" if m > 1 else "z"] = lambda z, j=j: z[:, j]
    return out


def _evaluate(fn, z, name):
    f = np.asarray(fn(z), dtype=float).reshape(-1)
    if f.shape != (len(z),):
        raise ValueError(
            f"The statistic {name!r} must return one value per output. Got shape {f.shape} for {len(z)} outputs instead."
        )
    if not np.all(np.isfinite(f)):
        raise ValueError(f"The statistic {name!r} returned non-finite values.")
    return f


def _threshold_grid(pooled_sorted, n_thresholds):
    """Sample quantiles, dense in both tails (where privacy ratios are largest)."""
    n = len(pooled_sorted)
    tail = min(0.5, _MIN_TAIL_COUNT / n)
    half = n_thresholds // 2
    probs = np.concatenate([np.geomspace(tail, 0.5, half), 1.0 - np.geomspace(tail, 0.5, n_thresholds - half)])
    idx = np.clip(np.ceil(probs * n).astype(int) - 1, 0, n - 1)  # inverted-cdf quantiles: sample values
    return np.unique(pooled_sorted[idx])


def _search(fa, fb, beta, delta, n_thresholds):
    """Best (projected bound, tail, threshold, numerator) over the threshold events of one statistic."""
    sa, sb = np.sort(fa), np.sort(fb)
    na, nb = len(sa), len(sb)
    taus = _threshold_grid(np.sort(np.concatenate([sa, sb])), n_thresholds)
    below_a = np.searchsorted(sa, taus, side="left")  # #{f < tau}
    below_b = np.searchsorted(sb, taus, side="left")
    options = []
    for tail, ca, cb in ((">=", na - below_a, nb - below_b), ("<", below_a, below_b)):
        for numerator, cn, cd in (("a", ca, cb), ("b", cb, ca)):
            # The bound on the selection split itself: an optimistic projection to the
            # test size would favour rare tail events seen a few times by chance.
            proj = eps_lower_bound(cn, na, cd, nb, beta, delta)
            j = int(np.argmax(proj))
            options.append((float(proj[j]), tail, float(taus[j]), numerator))
    return max(options, key=lambda o: o[0]), 4 * len(taus)
