"""Automatic choice of the K-norm mechanism for a statistic (paper Theorem "Optimal K-mech").

The hull of S_T is optimal in both orders. By default the candidates are the l1, l2 and
l_inf balls, the hull of S_T when a closed form is known, and a certified hull built for
the statistic (:func:`knorm.sensitivity.hull.certified_hull`: closed forms, products of
blocks, then cutting planes, within a time limit and cached); the best certified
candidate in the volume order that samples in time is used. A flat sensitivity space
(counts that sum to n, ...) is handled in its affine span: the informative coordinates
are released and the others rebuilt exactly (:mod:`knorm.sensitivity.reduction`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from knorm._validation import check_positive, check_rng, param_error
from knorm.geometry.base import LowAcceptanceError, NormBall
from knorm.geometry.lp import LpBall
from knorm.mechanisms.compare import RankingReport, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism
from knorm.sensitivity import SensitivitySpace
from knorm.sensitivity.hull import TIME_LIMIT, certified_hull
from knorm.sensitivity.reduction import AffineReduction

__all__ = ["MechanismChoice", "choose_mechanism", "default_candidates"]


@dataclass
class MechanismChoice:
    """The chosen mechanism and the evidence for it, as returned by :func:`choose_mechanism`.

    Each parameter is kept as the attribute of the same name.

    Parameters
    ----------
    name : str
        Name of the chosen candidate.
    mechanism : KNormMechanism
        The chosen mechanism, ready to ``release`` (in the released coordinates when
        ``reduction`` is set).
    report : RankingReport
        All certified candidates in the volume order.
    seconds_per_draw : dict of str to float, default {}
        Measured sampling time per noise vector for each candidate tried.
    skipped : dict of str to str, default {}
        Candidates left out, with the reason (no certified sensitivity, too slow).
    gain : float, default nan
        Equivalent epsilon factor of the chosen mechanism against l1 (Laplace):
        l1 needs ``gain`` times the budget for the same entropy (nan if l1 has no
        certified sensitivity).
    reduction : AffineReduction or None, default None
        For a flat statistic: the released coordinates and the exact reconstruction of
        the others (:meth:`release` and :meth:`expand` use it).
    evidence : dict, default {}
        How the choice was made: the hull build (method, exactness, seconds, cache,
        sandwich), every qhull failure met ('qhull_errors'), the reduction, and how the
        l1 sensitivity behind ``gain`` was obtained.
    """

    name: str
    mechanism: KNormMechanism
    report: RankingReport
    seconds_per_draw: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    gain: float = math.nan
    reduction: AffineReduction | None = None
    evidence: dict = field(default_factory=dict)

    def reduce(self, value):
        """Return the coordinates the mechanism releases, from the full statistic.

        Parameters
        ----------
        value : array_like of shape (..., m)
            The full statistic T(X) (or already its released coordinates).

        Returns
        -------
        ndarray of shape (..., r)
            T_I for a flat statistic, else ``value`` itself.
        """
        value = np.asarray(value, dtype=float)
        red = self.reduction
        if red is None or value.shape[-1:] == (red.dim,):
            return value
        return red.reduce(value)

    def release(self, value, *, n_records=None, rng=None, accountant=None, label="K-norm release"):
        """Release the statistic with the chosen mechanism (the one release path).

        Parameters
        ----------
        value : array_like of shape (m,) or (k, m)
            The full statistic T(X) (its released coordinates are taken for a flat one).
        n_records : int, optional
            Unused here (the release itself never needs it); accepted so that callers can
            pass the same arguments to :meth:`expand`.
        rng : None, int, SeedSequence or Generator
            Source of the noise.
        accountant : PrivacyAccountant, optional
            Charged before the noise is drawn.
        label : str, default "K-norm release"
            What is released.

        Returns
        -------
        Release
            From :meth:`KNormMechanism.release`, in the released coordinates; rebuild the
            full statistic with :meth:`expand` (post-processing).
        """
        del n_records
        return self.mechanism.release(self.reduce(value), rng=rng, accountant=accountant, label=label)

    def expand(self, released, n_records=None):
        """Return the full statistic from released coordinates (exact post-processing).

        Parameters
        ----------
        released : array_like or Release
            Released coordinates (a :class:`Release` is read through its value).
        n_records : int, optional
            The public number of records, needed when the reduction adds a per-record
            constant (replace-one neighbours).

        Returns
        -------
        ndarray
            The full statistic (the released value itself when nothing was reduced).
        """
        v = np.asarray(released, dtype=float)
        return v.copy() if self.reduction is None else self.reduction.expand(v, n_records)

    def __str__(self):
        lines = [str(self.report), f"chosen: {self.name}"]
        if not math.isnan(self.gain):
            lines.append(f"l1 (Laplace) needs {self.gain:.3f}x the epsilon for the same entropy")
        if self.reduction is not None:
            lines.append(self.reduction.describe())
        hull = self.evidence.get("hull")
        if hull:
            sw = hull.get("sandwich")
            tail = "" if not sw else f", sandwich {sw['value']:.4g} ({'exact' if sw['exact'] else 'estimate'})"
            lines.append(
                f"hull: {hull['method']} in {hull['seconds']:.2f} s{' (cache)' if hull['from_cache'] else ''}{tail}"
            )
        lines += [f"qhull failure: {e}" for e in self.evidence.get("qhull_errors", [])]
        lines += [f"skipped {k}: {v}" for k, v in self.skipped.items()]
        return "\n".join(lines)


def _candidates(space, build_hull, time_limit, progress, cache, rng):
    """(candidates, hull build or None, skipped) for a full-dimensional space."""
    m = space.dim
    skipped, built, first = {}, None, {}
    if space.hull is not None:
        first["hull"] = space.hull
    elif build_hull:
        try:
            built = certified_hull(space, time_limit=time_limit, progress=progress, cache=cache, rng=rng)
        except (NotImplementedError, ValueError) as err:
            skipped["hull"] = f"not built: {err}"
        else:
            first["hull" if built.exact else "outer hull"] = built.outer
    # The hull comes first, so that it wins ties in the volume order (l_inf is the hull of a box).
    cands = {**first, "l1": LpBall(m, 1), "l2": LpBall(m, 2), "linf": LpBall(m, math.inf)}
    cands.update(getattr(space, "candidates", {}))
    return cands, built, skipped


def default_candidates(space, *, build_hull=True, time_limit=TIME_LIMIT, progress=None, cache=True, rng=None):
    """Return the candidate balls of :func:`choose_mechanism` for a sensitivity space.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space, of dimension m (full-dimensional: see
        :meth:`SensitivitySpace.reduced` for a flat one).
    build_hull : bool, default True
        Include the certified hull of :meth:`SensitivitySpace.certified_hull`.
    time_limit : float, default 3.0
        Seconds allowed for that build.
    progress : bool or None, default None
        Its progress bar (None: past two seconds, when tqdm is installed).
    cache : bool, default True
        Reuse hulls built before for the same statistic and domain.
    rng : None, int, SeedSequence or Generator
        Randomness of the build (no data).

    Returns
    -------
    dict of str to NormBall
        The unit balls 'l1', 'l2' and 'linf' of R^m, the hull of S_T as 'hull' (known,
        or built and exact) or 'outer hull' (built, a certified outer ball), and the
        space's own ``candidates``.

    Examples
    --------
    >>> from knorm.sensitivity import squared_statistic_space
    >>> sorted(default_candidates(squared_statistic_space()))
    ['hull', 'l1', 'l2', 'linf']
    """
    return _candidates(space, build_hull, time_limit, progress, cache, check_rng(rng, "default_candidates"))[0]


def choose_mechanism(
    space,
    epsilon,
    candidates=None,
    *,
    time_budget=0.05,
    time_limit=TIME_LIMIT,
    progress=None,
    cache=True,
    rng=None,
):
    """Pick the best exactly-sampleable K-norm mechanism for a sensitivity space.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space; every sensitivity is certified by it. A flat
        space is reduced to its affine span first (:meth:`SensitivitySpace.reduced`).
    epsilon : float
        Privacy budget.
    candidates : dict of str to NormBall, optional
        Defaults to :func:`default_candidates` (with the certified hull). User balls
        may be given instead, in the space's dimension (or in the reduced dimension of
        a flat space).
    time_budget : float, default 0.05
        Largest acceptable mean time, in seconds, to draw one noise vector.
    time_limit : float, default 3.0
        Seconds allowed to build the certified hull (default candidates only).
    progress : bool or None, default None
        Progress bar of that build: None past two seconds (tqdm optional), True, False.
    cache : bool, default True
        Reuse hulls built before for the same statistic (memory and disk).
    rng : None, int, SeedSequence or Generator
        Used for the hull build and the timing draws (64 draws of the public noise law
        per candidate; no data).

    Returns
    -------
    MechanismChoice
        The first candidate in the volume order that samples within
        ``time_budget``, with the ranking, the timings, the skipped candidates, the gain
        against l1, the reduction of a flat space and the evidence of the hull build.

    Raises
    ------
    ValueError
        If no candidate has a certified sensitivity, or none samples within
        ``time_budget``.

    Notes
    -----
    The hull of S_T is optimal in both the containment and the volume order (paper
    Theorem "Optimal K-mech"). Candidates are ranked by vol(Delta_K K) (paper
    Definition "Containment and Volume Orders"), with Delta_K certified by
    :meth:`SensitivitySpace.sensitivity`; a candidate without a certified
    sensitivity is skipped, never estimated. The gain against l1 is
    (vol(Delta_1 B_1) / vol(Delta_K K))^(1/m): the factor of epsilon Laplace needs for
    the same entropy (paper Proposition "Entropy of K-mech").

    Examples
    --------
    Paper Example 2.1, where the hull K_2 (Delta = 1) beats every l_p ball:

    >>> from knorm.sensitivity import squared_statistic_space
    >>> choice = choose_mechanism(squared_statistic_space(), epsilon=1.0, time_budget=1.0, rng=0)
    >>> choice.name, choice.mechanism.sensitivity.value, round(choice.gain, 2)
    ('hull', 1.0, 1.21)

    The moments (sum x, sum x^2) of x in [0, 10]: the exact hull is found from the statistic.

    >>> from knorm.sensitivity import QuadraticStatistic, SensitivitySpace
    >>> t = QuadraticStatistic([[[0.0]], [[1.0]]], [[1.0], [0.0]], [0.0], [10.0])
    >>> choice = choose_mechanism(SensitivitySpace.additive(t, None), 1.0, rng=0)
    >>> choice.name, round(choice.gain, 2)
    ('hull', 5.39)
    """
    if not isinstance(space, SensitivitySpace):
        raise TypeError(
            f"The 'space' parameter of choose_mechanism must be a SensitivitySpace. Got {type(space).__name__} instead."
        )
    eps = check_positive(epsilon, "epsilon", "choose_mechanism")
    if progress not in (None, True, False):
        raise param_error("progress", "choose_mechanism", "True, False or None", progress, TypeError)
    budget = check_positive(time_budget, "time_budget", "choose_mechanism")
    limit = check_positive(time_limit, "time_limit", "choose_mechanism")
    gen = check_rng(rng, "choose_mechanism")
    evidence: dict = {"qhull_errors": []}
    skipped: dict = {}
    work = space
    red = space.affine_reduction() if space.has_support or space.record_points is not None else None
    if red is not None and (candidates is None or all(getattr(b, "dim", None) == red.dim for b in candidates.values())):
        work = space.reduced()
        evidence["reduction"] = red.describe()
    if candidates is None:
        candidates, built, skipped = _candidates(work, True, limit, progress, cache, gen)
        if built is not None:
            evidence["hull"] = built.evidence()
            evidence["qhull_errors"] += list(built.qhull_errors)
    else:
        candidates = dict(candidates)
    mechs = {}
    for name, ball in candidates.items():
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"Candidate {name!r} of choose_mechanism must be a NormBall. Got {type(ball).__name__} instead."
            )
        if ball.dim != work.dim:
            raise ValueError(
                f"Candidate {name!r} of choose_mechanism must have dimension {work.dim} (the space's). "
                f"Got a ball of dimension {ball.dim} instead."
            )
        err = getattr(ball, "qhull_error", None)
        if err:
            evidence["qhull_errors"].append(f"candidate {name!r}: {err}")
        try:
            sens = work.sensitivity(ball)
        except NotImplementedError as exc:
            skipped[name] = f"no certified sensitivity ({exc})"
            continue
        mechs[name] = KNormMechanism(ball, sens, eps)
    if not mechs:
        raise ValueError(f"No candidate of choose_mechanism has a certified sensitivity: {skipped}")
    report = rank_mechanisms(mechs)
    timing = {}
    chosen = None
    for row in report.rows:
        name = row["name"]
        n = 64
        start = time.perf_counter()
        try:
            mechs[name].noise.public_law_sample(n, seed=gen)  # timing the public law: no data
        except LowAcceptanceError as exc:
            skipped[name] = f"sampler refused: {exc}"
            continue
        timing[name] = (time.perf_counter() - start) / n
        if timing[name] <= budget:
            chosen = name
            break
        skipped[name] = f"too slow: {timing[name]:.3g} s per draw > time_budget {budget:g} s"
    if chosen is None:
        raise ValueError(f"No candidate of choose_mechanism samples within time_budget={budget:g} s: {skipped}")
    gain = _gain(report, mechs, chosen, work, eps, evidence)
    return MechanismChoice(chosen, mechs[chosen], report, timing, skipped, gain, work.reduction, evidence)


def _gain(report, mechs, chosen, space, eps, evidence):
    """The epsilon factor of l1 over the chosen mechanism, from the volume order (l1 added if absent)."""
    lv = {r["name"]: r["log_volume"] for r in report.rows}
    l1 = mechs.get("l1")
    if l1 is None:
        try:
            l1 = KNormMechanism(LpBall(space.dim, 1), space.sensitivity(LpBall(space.dim, 1)), eps)
        except NotImplementedError:
            return math.nan
        lv["l1"] = float(l1.log_volume())
    sens = l1.sensitivity
    evidence["l1_sensitivity"] = f"{sens.kind}: {sens.method}"
    gain = math.exp((lv["l1"] - lv[chosen]) / space.dim)
    if sens.kind == "bound" and sens.lower is not None:
        # A loose certified bound makes l1 look worse: the gain over the best possible l1 lies in this range.
        evidence["gain_range"] = (gain * sens.lower / sens.value, gain)
    return gain
