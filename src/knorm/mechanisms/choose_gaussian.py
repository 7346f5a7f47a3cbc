"""The chooser under rho-zCDP: the Gaussian shape of least total variance for a statistic.

The analogue of :func:`~knorm.mechanisms.choose_mechanism` (which ranks K-norm balls by the
paper's volume order under epsilon): under rho every candidate is a Gaussian N(0, Sigma)
certified to hold S_T in {u' Sigma^-1 u <= 2 rho} (:mod:`knorm.mechanisms.gaussian`), and they
are ranked by trace(Sigma), the expected squared error (of the full statistic, for a flat one
released in reduced coordinates). The candidates: the spherical Gaussian on the certified l2
sensitivity (exact on a lattice), the statistic's closed-form shapes
(:mod:`knorm.mechanisms.gaussian_shapes`) and the min-trace ellipsoid fitted on certified
vertices of S_T. Everything depends on public inputs only, so the choice is cached by key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from knorm.geometry import LpBall
from knorm.mechanisms._cache import PublicCache
from knorm.mechanisms.ellipsoid import hull_points
from knorm.mechanisms.gaussian import GaussianMechanism
from knorm.mechanisms.gaussian_shapes import hull_shape

__all__ = ["FIT_MAX_DIM", "SHAPE_MIN_GAIN", "GaussianChoice", "choose_gaussian"]

SHAPE_MIN_GAIN = 0.01
#: The largest dimension for which the min-trace shape is fitted on all m (m + 1) / 2 entries.
FIT_MAX_DIM = 15
# The Gaussian shapes (built from public inputs: the key) and the chosen mechanisms (key and rho).
_SHAPES = PublicCache(32)
_GAUSSIANS = PublicCache(64)


def _gaussian_shapes(space, shapes, hull, basis):
    """(the CertifiedShapes of the statistic, {name: why skipped}): closed forms, then a fitted one."""
    out, skipped = list(shapes() if shapes is not None else ()), {}
    if hull is not None and hull is not False:
        try:
            points = hull_points(space) if hull is True else hull
            if basis is None and space.dim > FIT_MAX_DIM:
                raise ValueError(f"{space.dim} coordinates: more than {FIT_MAX_DIM} for a full min-trace fit")
            out.append(hull_shape(points, basis=basis, name="min-trace ellipsoid" + (" (symmetric)" if basis else "")))
        except (ValueError, ImportError, RuntimeError, ArithmeticError) as exc:
            skipped["min-trace ellipsoid"] = str(exc).split("\n")[0]
    return tuple(out), skipped


def _full_trace(cov, full):
    return float(np.trace(cov) if full is None else np.trace(full @ cov @ full.T))


def _gaussian_choice(space, rho, counts, shapes, skipped, full, owner):
    """(the GaussianMechanism of least total variance, the note that says why, the ranking), from public inputs."""
    ranked = []
    try:
        l2 = space.sensitivity(LpBall(space.dim, 2))
        if counts:  # integer statistic: the exact discrete Gaussian on Z^m, no rounding, no slack
            spherical = GaussianMechanism(l2, rho, dim=space.dim, lattice_spacing=1.0, on_lattice=True)
        else:
            spherical = GaussianMechanism(l2, rho, dim=space.dim)
        ranked.append(("spherical", spherical, _full_trace(spherical.covariance, full)))
    except NotImplementedError as exc:
        skipped = dict(skipped, spherical=f"no certified l2 sensitivity ({exc})")
    for shape in shapes:
        mech = GaussianMechanism(None, rho, shape=shape)
        ranked.append((shape.name, mech, _full_trace(mech.covariance, full)))
    if not ranked:
        raise ValueError(f"No Gaussian shape of {owner} is certified: {skipped}")
    best = min(ranked[1:], key=lambda r: r[2], default=None)
    if ranked[0][0] == "spherical":
        base = ranked[0][2]
        if best is None or best[2] >= (1 - SHAPE_MIN_GAIN) * base:
            others = ", ".join(f"{n} {t / base:.3g}x" for n, _, t in ranked[1:]) or "none other"
            return ranked[0][1], f"spherical: least total variance among the Gaussian shapes ({others})", _table(ranked)
        note = f"{best[0]}: least total variance, {best[2] / base:.3g}x the spherical Gaussian's (on the certified l2 sensitivity)"
        return best[1], note, _table(ranked)
    best = min(ranked, key=lambda r: r[2])
    return (
        best[1],
        f"{best[0]}: least total variance among the Gaussian shapes (no spherical candidate)",
        _table(ranked),
    )


def _table(ranked):
    """((name, total variance), ...) of the candidates, in the order built."""
    return tuple((name, trace) for name, _, trace in ranked)


@dataclass(frozen=True)
class GaussianChoice:
    """The Gaussian mechanism chosen under rho, as returned by :func:`choose_gaussian`.

    Parameters
    ----------
    mechanism : GaussianMechanism
        The chosen mechanism, ready to ``release``.
    note : str
        Why: its total variance against the spherical Gaussian's (the release's ``sampler`` states it).
    ranking : tuple of (str, float), default ()
        Every certified candidate with its total variance (the expected squared error of the
        full statistic), the spherical Gaussian first.
    skipped : dict of str to str, default {}
        Candidates left out, with the reason.
    """

    mechanism: GaussianMechanism
    note: str
    ranking: tuple = ()
    skipped: dict = field(default_factory=dict)


def choose_gaussian(
    space, rho, *, shapes=None, hull=None, basis=None, full=None, integer=False, key=None, owner="choose_gaussian"
):
    """Pick the certified Gaussian shape of least total variance for a statistic: the chooser under rho.

    Parameters
    ----------
    space : SensitivitySpace
        The statistic's sensitivity space: the spherical candidate's l2 sensitivity, the hull's vertices.
    rho : float
        The zCDP budget of one release, in (0, inf).
    shapes : callable, optional
        Returns the statistic's closed-form :class:`~knorm.mechanisms.gaussian_shapes.CertifiedShape`
        candidates (a tuple).
    hull : bool or HullPoints, optional
        Also fit the min-trace ellipsoid on certified vertices of S_T (True: from
        :func:`~knorm.mechanisms.ellipsoid.hull_points`; or given points).
    basis : list of ndarray, optional
        A symmetric family of matrices the fitted shape is restricted to (fewer SDP variables).
    full : ndarray of shape (k, m), optional
        For a statistic released in reduced coordinates: the linear map to the full statistic,
        whose total variance is then ranked.
    integer : bool, default False
        An integer statistic: the spherical candidate is the exact discrete Gaussian on Z^m with
        no rounding slack.
    key : hashable, optional
        The public inputs that determine ``space`` and the shapes; the shapes and the choice at
        each rho are then built once and kept (a bounded cache).
    owner : str, default 'choose_gaussian'
        The public function, for messages.

    Returns
    -------
    GaussianChoice
        The spherical Gaussian unless a shape cuts the total variance by more than
        :data:`SHAPE_MIN_GAIN` (a shaped law is continuous, with the floating-point caveat, and
        replaces the exact spherical lattice law only for a clear gain).
    """
    if key is None:
        built, skipped = _gaussian_shapes(space, shapes, hull, basis)
        mech, note, ranking = _gaussian_choice(space, rho, integer, built, skipped, full, owner)
    else:
        built, skipped = _SHAPES.get(("shapes", key), lambda: _gaussian_shapes(space, shapes, hull, basis))
        mech, note, ranking = _GAUSSIANS.get(
            ("gaussian", key, rho, bool(integer), None if full is None else full.tobytes()),
            lambda: _gaussian_choice(space, rho, integer, built, skipped, full, owner),
        )
    return GaussianChoice(mech, note, ranking, dict(skipped))
