"""Automatic choice of the K-norm mechanism for a statistic (paper Theorem "Optimal K-mech").

The hull of S_T is optimal in both orders; when it is not available or cannot be
sampled in time, the best certified candidate in the volume order is used.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from knorm._validation import check_positive, check_rng
from knorm.geometry.base import NormBall
from knorm.geometry.lp import LpBall
from knorm.mechanisms.compare import RankingReport, rank_mechanisms
from knorm.mechanisms.knorm_mechanism import KNormMechanism
from knorm.sensitivity import SensitivitySpace

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
        The chosen mechanism, ready to ``release``.
    report : RankingReport
        All certified candidates in the volume order.
    seconds_per_draw : dict of str to float, default {}
        Measured sampling time per noise vector for each candidate tried.
    skipped : dict of str to str, default {}
        Candidates left out, with the reason (no certified sensitivity, too slow).
    gain : float, default nan
        Equivalent epsilon factor of the chosen mechanism against l1 (Laplace):
        l1 needs ``gain`` times the budget for the same entropy (nan if l1 absent).
    """

    name: str
    mechanism: KNormMechanism
    report: RankingReport
    seconds_per_draw: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    gain: float = math.nan

    def __str__(self):
        lines = [str(self.report), f"chosen: {self.name}"]
        if not math.isnan(self.gain):
            lines.append(f"l1 (Laplace) needs {self.gain:.3f}x the epsilon for the same entropy")
        lines += [f"skipped {k}: {v}" for k, v in self.skipped.items()]
        return "\n".join(lines)


def default_candidates(space):
    """Return the candidate balls of :func:`choose_mechanism` for a sensitivity space.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space, of dimension m.

    Returns
    -------
    dict of str to NormBall
        The unit balls 'l1', 'l2' and 'linf' of R^m, the known hull of S_T as
        'hull' (when ``space.hull`` is set), and the space's own ``candidates``.
    """
    m = space.dim
    cands = {"l1": LpBall(m, 1), "l2": LpBall(m, 2), "linf": LpBall(m, math.inf)}
    if space.hull is not None:
        cands["hull"] = space.hull
    cands.update(getattr(space, "candidates", {}))
    return cands


def choose_mechanism(space, epsilon, candidates=None, *, time_budget=0.05, rng=None):
    """Pick the best exactly-sampleable K-norm mechanism for a sensitivity space.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space; every sensitivity is certified by it.
    epsilon : float
        Privacy budget.
    candidates : dict of str to NormBall, optional
        Defaults to :func:`default_candidates`. User balls may be added.
    time_budget : float, default 0.05
        Largest acceptable mean time, in seconds, to draw one noise vector.
    rng : None, int, SeedSequence or Generator
        Used for the timing draws only (64 draws of the public noise law per
        candidate; no data).

    Returns
    -------
    MechanismChoice
        The first candidate in the volume order that samples within
        ``time_budget``, with the ranking, the timings and the skipped candidates.

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
    sensitivity is skipped, never estimated.

    Examples
    --------
    Paper Example 2.1, where the hull K_2 (Delta = 1) beats every l_p ball:

    >>> from knorm.sensitivity import squared_statistic_space
    >>> choice = choose_mechanism(squared_statistic_space(), epsilon=1.0, time_budget=1.0, rng=0)
    >>> choice.name, choice.mechanism.sensitivity.value, round(choice.gain, 2)
    ('hull', 1.0, 1.21)
    """
    if not isinstance(space, SensitivitySpace):
        raise TypeError(
            f"The 'space' parameter of choose_mechanism must be a SensitivitySpace. Got {type(space).__name__} instead."
        )
    eps = check_positive(epsilon, "epsilon", "choose_mechanism")
    budget = check_positive(time_budget, "time_budget", "choose_mechanism")
    gen = check_rng(rng, "choose_mechanism")
    candidates = default_candidates(space) if candidates is None else dict(candidates)
    mechs, skipped = {}, {}
    for name, ball in candidates.items():
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"Candidate {name!r} of choose_mechanism must be a NormBall. Got {type(ball).__name__} instead."
            )
        if ball.dim != space.dim:
            raise ValueError(
                f"Candidate {name!r} of choose_mechanism must have dimension {space.dim} (the space's). "
                f"Got a ball of dimension {ball.dim} instead."
            )
        try:
            sens = space.sensitivity(ball)
        except NotImplementedError as err:
            skipped[name] = f"no certified sensitivity ({err})"
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
        mechs[name].noise.public_law_sample(n, seed=gen)  # timing the public law: no data
        timing[name] = (time.perf_counter() - start) / n
        if timing[name] <= budget:
            chosen = name
            break
        skipped[name] = f"too slow: {timing[name]:.3g} s per draw > time_budget {budget:g} s"
    if chosen is None:
        raise ValueError(f"No candidate of choose_mechanism samples within time_budget={budget:g} s: {skipped}")
    factors = {r["name"]: r["epsilon_factor"] for r in report.rows}
    gain = factors["l1"] / factors[chosen] if "l1" in factors else math.nan
    return MechanismChoice(chosen, mechs[chosen], report, timing, skipped, gain)
