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
from fractions import Fraction

import numpy as np

from knorm._docs import fill_doc
from knorm._exact import ExactSums
from knorm._validation import check_positive, check_rng, param_error
from knorm.geometry.base import LowAcceptanceError, NormBall
from knorm.geometry.lp import LpBall
from knorm.mechanisms._cache import PublicCache
from knorm.mechanisms.compare import RankingReport, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism
from knorm.mechanisms.lattice import LatticeUnavailable, choose_spacing
from knorm.sensitivity import SensitivitySpace
from knorm.sensitivity.hull import TIME_LIMIT, certified_hull
from knorm.sensitivity.reduction import AffineReduction

__all__ = ["MIN_COUNT_RATE", "MechanismChoice", "choose_mechanism", "default_candidates"]


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
    note : str, default ""
        A switch away from the volume-best candidate (``prefer_lattice``, ``integer``)
        and its cost in epsilon; the release's ``sampler`` states it.
    """

    name: str
    mechanism: KNormMechanism
    report: RankingReport
    seconds_per_draw: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    gain: float = math.nan
    reduction: AffineReduction | None = None
    evidence: dict = field(default_factory=dict)
    note: str = ""

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

    @fill_doc
    def release(self, value, *, n_records=None, rng=None, accountant=None, label="K-norm release", names=()):
        """Release the statistic with the chosen mechanism (the one release path).

        Parameters
        ----------
        value : array_like of shape (m,) or (k, m), or ExactSums
            The full statistic T(X) (its released coordinates are taken for a flat one),
            or an :class:`~knorm._exact.ExactSums` when nothing is reduced.
        n_records : int, optional
            The public number of records: needed for a flat statistic whose reduction
            adds a per-record constant (replace-one neighbours), to rebuild the full
            statistic.
        %(rng)s
        %(accountant)s
        label : str, default "K-norm release"
            What is released.
        names : tuple of str, default ()
            Names of the coordinates of the full statistic.

        Returns
        -------
        Release
            From :meth:`KNormMechanism.release`, with this choice's name, gain and note.
            For a flat statistic it is the full statistic rebuilt exactly from the
            released coordinates (a post-processing: its ``parent`` is the release of
            those coordinates).
        """
        red = self.reduction
        if red is None:
            return self.mechanism.release(
                value,
                rng=rng,
                accountant=accountant,
                label=label,
                ball_name=self.name,
                gain=self.gain,
                names=names,
                note=self.note,
            )
        if isinstance(value, ExactSums):
            raise TypeError(
                "MechanismChoice.release takes an ExactSums only when nothing is reduced: its exact rounding is "
                "in the full coordinates. Choose with reduce=False, or pass the statistic as an array."
            )
        if n_records is None and red.needs_n:  # checked before anything is charged
            raise param_error(
                "n_records",
                "MechanismChoice.release",
                "the public number of records, which the flat statistic's reconstruction needs",
                None,
            )
        raw = self.mechanism.release(
            self.reduce(value),
            rng=rng,
            accountant=accountant,
            label=label,
            ball_name=self.name,
            gain=self.gain,
            note=self.note,
        )
        return raw.postprocess(_Expansion(red, n_records), names=names)

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
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Expansion:
    """The exact map from the released coordinates of a flat statistic to all of them (post-processing)."""

    reduction: AffineReduction
    n_records: int | None

    def __call__(self, v):
        return self.reduction.expand(v, self.n_records)


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


@fill_doc
def choose_mechanism(
    space,
    epsilon,
    candidates=None,
    *,
    prefer_lattice=False,
    integer=False,
    rounding_share=None,
    key=None,
    reduce=True,
    time_budget=0.05,
    time_limit=TIME_LIMIT,
    progress=None,
    cache=True,
    rng=None,
    owner="choose_mechanism",
):
    """Pick the best exactly-sampleable K-norm mechanism for a sensitivity space: the one chooser.

    :mod:`knorm.stats`, :mod:`knorm.models` and the command line all choose here.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space; every sensitivity is certified by it. A flat
        space is reduced to its affine span first (:meth:`SensitivitySpace.reduced`),
        unless ``reduce`` is False.
    %(epsilon)s
    candidates : dict of str to NormBall, optional
        Defaults to :func:`default_candidates` (with the certified hull). User balls
        may be given instead, in the space's dimension (or in the reduced dimension of
        a flat space).
    prefer_lattice : bool, default False
        When the volume-best candidate has no practical exact lattice law at this
        epsilon, use the first candidate in the volume order that has one, and state the
        switch and its cost in ``note`` (see Notes). Off by default: the cost can be large.
    integer : bool, default False
        The statistic lies on Z^m on every dataset (counts): the mechanism releases it
        without rounding, with exact integer noise, never continuous noise; the first
        candidate in the volume order with such a law is used (``note`` states a switch),
        and a ValueError naming 'epsilon' is raised when none has one.
    rounding_share : float, optional
        The largest share of Delta that the lattice's rounding slack may take (default:
        :func:`knorm.mechanisms.lattice.choose_spacing`'s).
    key : hashable, optional
        The public inputs that determine ``space`` and ``candidates`` completely (never
        data). The ranking, which does not depend on epsilon, is then computed once per
        key and kept (a bounded cache): it certifies every candidate's sensitivity, which
        can take a second. The choice at each epsilon is kept too: the same
        MechanismChoice (and mechanism) is returned for the same key and epsilon.
    reduce : bool, default True
        Reduce a flat space to its affine span (the released coordinates and an exact
        reconstruction). False keeps the full coordinates (the ball must then be full
        dimensional in them: the flat hull is not a candidate).
    time_budget : float or None, default 0.05
        Largest acceptable mean time, in seconds, to draw one noise vector; None skips the
        timing (for candidates known to sample fast).
    time_limit : float, default 3.0
        Seconds allowed to build the certified hull (default candidates only).
    progress : bool or None, default None
        Progress bar of that build: None past two seconds (tqdm optional), True, False.
    cache : bool, default True
        Reuse hulls built before for the same statistic (memory and disk).
    rng : None, int, SeedSequence or Generator
        Used for the hull build and the timing draws (64 draws of the public noise law
        per candidate; no data).
    owner : str, default "choose_mechanism"
        The public function named in error messages.

    Returns
    -------
    MechanismChoice
        The chosen mechanism, ready to ``release``, with the ranking, the timings, the
        skipped candidates, the gain against l1, the reduction of a flat space, the
        evidence of the hull build and the ``note`` of a switch.

    Raises
    ------
    ValueError
        If no candidate has a certified sensitivity, none samples within
        ``time_budget``, or (``integer``) none has an exact integer law at this epsilon.

    Notes
    -----
    The hull of S_T is optimal in both the containment and the volume order (paper
    Theorem "Optimal K-mech"). Candidates are ranked by vol(Delta_K K) (paper
    Definition "Containment and Volume Orders"), with Delta_K certified by
    :meth:`SensitivitySpace.sensitivity`; a candidate without a certified
    sensitivity is skipped, never estimated. The gain against l1 is
    (vol(Delta_1 B_1) / vol(Delta_K K))^(1/m): the factor of epsilon Laplace needs for
    the same entropy (paper Proposition "Entropy of K-mech").

    The exact lattice release (:mod:`knorm.mechanisms.lattice`) needs a practical lattice
    sampler; without ``prefer_lattice`` a ball whose rejection step accepts too rarely
    is released with continuous noise in binary64, with its floating-point caveat. With
    it, the switch costs the factor of epsilon between the two balls' volumes (1.62x for
    the vote ball of 5 candidates under replace-one neighbours).

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
            f"The 'space' parameter of {owner} must be a SensitivitySpace. Got {type(space).__name__} instead."
        )
    eps = check_positive(epsilon, "epsilon", owner)
    if progress not in (None, True, False):
        raise param_error("progress", owner, "True, False or None", progress, TypeError)
    budget = None if time_budget is None else check_positive(time_budget, "time_budget", owner)
    limit = check_positive(time_limit, "time_limit", owner)
    full_key = (
        None if key is None else (key, space.dim, None if candidates is None else tuple(candidates), reduce, budget)
    )
    if full_key is None:
        ranking = _rank(space, candidates, reduce, budget, limit, progress, cache, check_rng(rng, owner), owner)
        return _pick(ranking, eps, prefer_lattice, integer, rounding_share, owner)
    ranking = _remember(
        ("ranking", full_key),
        lambda: _rank(space, candidates, reduce, budget, limit, progress, cache, check_rng(rng, owner), owner),
    )
    pick = ("choice", full_key, eps, bool(prefer_lattice), bool(integer), rounding_share)
    return _remember(pick, lambda: _pick(ranking, eps, prefer_lattice, integer, rounding_share, owner))


# The chooser's cache, by public key (see choose_mechanism's ``key``; never data): the rankings, which
# do not depend on epsilon, and the choices at each epsilon (their mechanisms, lattice laws included,
# are reused release after release).
_CHOICES = PublicCache(512)
_remember = _CHOICES.get


#: The smallest rate epsilon / Delta of an integer release: the exact discrete Laplace's floor, where
#: its draws still stay far inside the integers a double holds (knorm.noise.discrete; memory is bounded).
MIN_COUNT_RATE = Fraction(1, 2**46)


@dataclass(frozen=True)
class _Ranking:
    """The epsilon-free part of a choice: certified candidates in the volume order, and the evidence."""

    order: tuple  # (name, ball, certified sensitivity, epsilon factor) of the eligible candidates, best first
    report: RankingReport
    timing: dict
    skipped: dict
    reduction: AffineReduction | None
    evidence: dict
    log_volume_l1: float  # at epsilon 1 (nan: no certified l1)
    log_volumes: dict  # at epsilon 1


def _rank(space, candidates, reduce, budget, limit, progress, cache, gen, owner):
    evidence: dict = {"qhull_errors": []}
    skipped: dict = {}
    work = space
    red = space.affine_reduction() if reduce and (space.has_support or space.record_points is not None) else None
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
            raise TypeError(f"Candidate {name!r} of {owner} must be a NormBall. Got {type(ball).__name__} instead.")
        if ball.dim != work.dim:
            raise ValueError(
                f"Candidate {name!r} of {owner} must have dimension {work.dim} (the space's). "
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
        # Epsilon scales every candidate alike: the order and the gain do not depend on it.
        mechs[name] = KNormMechanism(ball, sens, 1.0)
    if not mechs:
        raise ValueError(f"No candidate of {owner} has a certified sensitivity: {skipped}")
    report = rank_mechanisms(mechs)
    timing: dict = {}
    order: list = []
    for row in report.rows:
        name = row["name"]
        if budget is not None and not order:  # time candidates until the first fast one; the rest follow it
            start = time.perf_counter()
            try:
                mechs[name].noise.public_law_sample(64, seed=gen)  # timing the public law: no data
            except LowAcceptanceError as exc:
                skipped[name] = f"sampler refused: {exc}"
                continue
            timing[name] = (time.perf_counter() - start) / 64
            if timing[name] > budget:
                skipped[name] = f"too slow: {timing[name]:.3g} s per draw > time_budget {budget:g} s"
                continue
        order.append((name, mechs[name].ball, mechs[name].sensitivity, row["epsilon_factor"]))
    if not order:
        raise ValueError(f"No candidate of {owner} samples within time_budget={budget:g} s: {skipped}")
    lv = {r["name"]: r["log_volume"] for r in report.rows}
    lv_l1 = _log_volume_l1(mechs, lv, work, evidence)
    # reduce=False: the caller releases in the space's own coordinates (and rebuilds any others itself).
    reduction = work.reduction if reduce else None
    return _Ranking(tuple(order), report, timing, skipped, reduction, evidence, lv_l1, lv)


def _log_volume_l1(mechs, lv, space, evidence):
    """log vol(Delta_1 B_1) at epsilon 1 (l1 added if absent; nan without a certified l1 sensitivity)."""
    l1 = mechs.get("l1")
    if l1 is None:
        try:
            l1 = KNormMechanism(LpBall(space.dim, 1), space.sensitivity(LpBall(space.dim, 1)), 1.0)
        except NotImplementedError:
            return math.nan
    sens = l1.sensitivity
    evidence["l1_sensitivity"] = f"{sens.kind}: {sens.method}"
    if sens.kind == "bound" and sens.lower is not None:
        # A loose certified bound makes l1 look worse: the gain over the best possible l1 lies below by this factor.
        evidence["l1_bound_ratio"] = sens.lower / sens.value
    return lv.get("l1", float(l1.log_volume()))


def _pick(ranking, eps, prefer_lattice, integer, share, owner):
    """The mechanism at ``eps``: the volume-best eligible candidate, or the first with the lattice law asked for."""
    first = ranking.order[0]
    chosen: tuple | None = None
    mechanism: KNormMechanism | None = None
    why = ""
    if integer:
        why = "has no exact integer sampler at this size"
        for cand in ranking.order:
            name, ball, sens, _ = cand
            if Fraction(eps) / Fraction(float(sens.value)) < MIN_COUNT_RATE:
                continue
            try:
                mechanism = KNormMechanism(
                    ball, sens, eps, sampler="lattice", lattice_spacing=np.ones(ball.dim), on_lattice=True
                )
            except LatticeUnavailable:
                continue
            chosen = cand
            break
        if chosen is None:
            low = float(MIN_COUNT_RATE) * min(float(s.value) for _, _, s, _ in ranking.order)
            raise ValueError(
                f"The 'epsilon' parameter of {owner} is too small for an exact integer release (counts get exact "
                f"integer noise, never continuous noise, and the exact discrete Laplace serves rates epsilon / Delta "
                f"of at least 2^-46), so epsilon >= {low:.3g} here. Got {float(eps):.3g} instead."
            )
    else:
        chosen, mechanism = first, _mechanism(first[1], first[2], eps, share)
        if prefer_lattice and mechanism.lattice is None:
            why = "has no practical lattice sampler"
            for cand in ranking.order[1:]:  # the first lattice-capable ball in the volume order
                other = _mechanism(cand[1], cand[2], eps, share)
                if other.lattice is not None:
                    chosen, mechanism = cand, other
                    break
    assert chosen is not None and mechanism is not None
    name, _, _, factor = chosen
    note = ""
    if name != first[0]:
        note = (
            f"{first[0]!r}, first in the volume order, {why}: {name!r} is used, which needs {factor:.3g}x the epsilon "
            "for the same entropy"
        )
    gain = math.exp((ranking.log_volume_l1 - ranking.log_volumes[name]) / mechanism.dim)
    evidence = dict(ranking.evidence)
    if "l1_bound_ratio" in evidence:
        evidence["gain_range"] = (gain * evidence.pop("l1_bound_ratio"), gain)
    return MechanismChoice(
        name, mechanism, ranking.report, ranking.timing, ranking.skipped, gain, ranking.reduction, evidence, note
    )


def _mechanism(ball, sensitivity, epsilon, share):
    """The K-norm mechanism, on a lattice whose rounding slack is at most ``share`` x Delta when given."""
    if share is None:
        return KNormMechanism(ball, sensitivity, epsilon)
    try:
        spacing = choose_spacing(ball, float(sensitivity.value), share=share)
    except (ValueError, TypeError):  # no lattice for this ball: the mechanism finds out and samples continuously
        return KNormMechanism(ball, sensitivity, epsilon)
    return KNormMechanism(ball, sensitivity, epsilon, lattice_spacing=spacing)
