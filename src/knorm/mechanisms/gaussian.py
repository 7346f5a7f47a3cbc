"""The Gaussian mechanism under rho-zCDP: spherical or shaped to the statistic, exact on a lattice.

Release T(X) + Y with Gaussian noise and charge rho to a rho ledger, through the one release
path of every mechanism (``ReleaseRules._publish``: the accountant is charged
before any draw and refuses a seed it has seen; a fixed seed warns without one;
:func:`~knorm.mechanisms.nonprivate` gives the zero law).

Privacy, by sampler:

* 'lattice' (the default; spherical only). T is rounded to gamma Z^m (gamma a power of two,
  from public inputs) and exact discrete Gaussian noise N_Z(0, sigma^2)^m is added in
  integer arithmetic (:mod:`knorm.noise.gaussian`). For neighbours, the lattice shift
  k = round(T/gamma) - round(T'/gamma) in Z^m has ||gamma k||_2 <= Delta + gamma sqrt(m)
  (each rounding moves a coordinate by at most gamma / 2) <= Dbar, a rational upper bound.
  CKS 2020 Theorem 14 with sigma_j = sigma: sum_j k_j^2 / sigma^2 <= Dbar^2 / (gamma sigma)^2
  = eps^2, so the release is (eps^2 / 2)-zCDP; sigma^2 is chosen (exactly, in rationals) so
  that eps^2 / 2 <= rho. No floating point enters the argument.
* 'continuous' (an explicit opt-in). N(0, c^2 L L') in binary64: rho-zCDP for the law
  (Bun & Steinke 2016, Proposition 1.6; :mod:`knorm.mechanisms.ellipsoid`), but the float
  draws are exposed to Mironov's (2012) attack; every Release says so in its caveats.

Shapes: 'spherical' (L = I, noise scaled to the l2 sensitivity), 'trace' (the ellipsoid of
least trace around certified vertices of S_T, so the least total variance) and 'volume'
(least volume, Khachiyan), or a :class:`~knorm.mechanisms.gaussian_shapes.CertifiedShape`
(a matrix A with a certified s >= sup_{u in S_T} u' A u: the closed forms for counts, sums,
votes and histograms, or a fitted shape). A shaped law is correlated: it has no exact
lattice sampler here, so shaped releases are continuous, and sampler='lattice' with a shape
is refused.

A CertifiedShape's floats are not trusted: the noise is F Z with F = fl(c L), L a binary64
factor of A^{-1} (from the Cholesky factor of A), and the privacy of *that* F is checked.
:func:`~knorm.mechanisms.ellipsoid.gram_lower_bound` gives a rational beta <= lambda_min(F' A F),
rigorously (Higham's bounds on the two products, Weyl's inequality); then for every u,
u' (F F')^{-1} u <= u' A u / beta <= s / beta, and the release is (s / (2 beta))-zCDP. c is
raised from sqrt(s / (2 rho)) until s <= 2 rho beta holds in exact rationals (the margin
paid in rho is the factorisation's relative error, about m 2^-52).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from knorm._exact import ExactSums
from knorm._validation import check_count, check_positive, check_vectors, param_error
from knorm.geometry import LinearImage, LpBall, NormBall
from knorm.mechanisms._mode import ReleaseRules, nonprivate_active
from knorm.mechanisms.ellipsoid import certify, gram_lower_bound, hull_points, min_trace_shape, min_volume_shape
from knorm.mechanisms.gaussian_shapes import CertifiedShape
from knorm.mechanisms.lattice import ROUNDING_SHARE, LatticeLaw, check_spacing
from knorm.mechanisms.objective import FLOAT_CAVEAT
from knorm.mechanisms.release import Release
from knorm.mechanisms.release import ball_name as _ball_name
from knorm.noise.gaussian import DiscreteGaussianNoise, GaussianNoise, lattice_sigma2
from knorm.noise.law import NoiseLaw, ZeroNoise
from knorm.sensitivity import SensitivitySpace
from knorm.sensitivity.certificate import Sensitivity, as_certified

__all__ = ["GaussianMechanism"]

_SHAPES = ("spherical", "trace", "volume")
_SAMPLERS = ("auto", "lattice", "continuous")
_NONPRIVATE_CAVEAT = "NON-PRIVATE: released inside knorm.mechanisms.nonprivate(), with no noise"
# sqrt(m) is bounded above by a dyadic rational with this many fractional bits.
_SQRT_BITS = 30


def _as_any(law) -> Any:
    """The discrete Gaussian as a LatticeLaw's integer law (it has the interface LatticeLaw uses)."""
    return law


def _times(rho, rows):
    """rho x rows as a float never below the exact product (the ledger is charged it)."""
    exact = Fraction(rho) * rows
    out = float(exact)
    return out if Fraction(out) >= exact else math.nextafter(out, math.inf)


def _sqrt_up(m):
    """A Fraction >= sqrt(m) (m a positive int), within 2^-30."""
    scaled = m << (2 * _SQRT_BITS)
    r = math.isqrt(scaled)
    if r * r < scaled:
        r += 1
    return Fraction(r, 1 << _SQRT_BITS)


def _spherical_spacing(delta, dim):
    """The largest power of two gamma with gamma sqrt(m) <= ROUNDING_SHARE x Delta (public inputs only)."""
    return 2.0 ** math.floor(math.log2(ROUNDING_SHARE * delta / math.sqrt(dim) * (1 - 1e-12)))


class GaussianMechanism(ReleaseRules):
    """The Gaussian mechanism under rho-zCDP: release T(X) + Gaussian noise, charging rho.

    Parameters
    ----------
    sensitivity : float, Sensitivity, SensitivitySpace or None
        For shape='spherical', the certified l2 sensitivity Delta_2 = sup_{u in S_T}
        ||u||_2 (a float is taken as declared; an estimate is refused), or a sensitivity
        space, whose certified l2 sensitivity is used. Shaped noise needs a
        :class:`~knorm.sensitivity.SensitivitySpace` with certified vertices
        (:func:`knorm.mechanisms.ellipsoid.hull_points`). With a CertifiedShape, None (the
        shape carries its certified bound) or the space (its dimension is checked).
    rho : float
        The zCDP budget of one release, in (0, inf).
    dim : int, optional
        The dimension m of T; required with a float or Sensitivity, taken from a space.
    shape : {'spherical', 'trace', 'volume'} or CertifiedShape, default 'spherical'
        'spherical' is N(0, sigma^2 I) with sigma^2 = Delta_2^2 / (2 rho). 'trace' is
        N(0, Sigma) with Sigma of least trace (least total variance) such that
        sup_{u in S_T} u' Sigma^{-1} u <= 2 rho, found by an SDP (cvxpy, the ``zcdp``
        extra), 'volume' the same with least determinant (Khachiyan's algorithm); both are
        certified on every vertex and any excess is paid by scaling Sigma up. A
        :class:`~knorm.mechanisms.gaussian_shapes.CertifiedShape` (precision A, certified
        bound s) gives N(0, c^2 A^{-1}) with c^2 >= s / (2 rho), the factorisation's
        rounding paid in c (module docstring).
    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        'lattice': the statistic rounded to gamma Z^m plus exact discrete Gaussian noise
        (spherical only; exactly rho-zCDP, no floating point in the argument). 'continuous':
        binary64 Gaussian noise, **exposed to the least-significant-bit attack of Mironov
        (2012)**, stated in each Release's caveats. 'auto' is 'lattice' for the spherical
        shape and 'continuous' for a shaped one (whose correlated law has no exact lattice
        sampler here), with the caveat; it never changes sampler silently.
    lattice_spacing : float, optional
        The spacing gamma of the lattice (a power of two); by default the largest with
        gamma sqrt(m) <= 0.5 % of Delta_2 (the rounding then costs at most about 1 % of rho).
    on_lattice : bool, default False
        Declared: the statistic lies in ``lattice_spacing`` Z^m on every dataset (counts,
        spacing 1). No rounding slack is then paid; a value off the lattice is refused.
    computation_error : float, default 0.0
        A certified bound, in l2, on how far the *computation* of the statistic can move a
        difference of neighbours beyond S_T (spherical only); the noise then covers
        Delta_2 + computation_error. An :class:`~knorm._exact.ExactSums`
        released on the lattice adds its own certified error here.
    unsafe_allow_estimated_sensitivity : bool, default False
        Accept a sampled (uncertified) sensitivity. The guarantee may then fail.

    Attributes
    ----------
    rho : float
        The rho charged per released row.
    noise_law : NoiseLaw
        The law of the noise added (lattice or continuous).

    Notes
    -----
    A pure epsilon ledger refuses these releases (rho-zCDP does not imply pure epsilon-DP):
    charge them to ``PrivacyAccountant(total_rho=...)``. The zCDP guarantee of each law is
    stated in the module docstring, with its sources.

    Examples
    --------
    >>> from knorm.accounting import PrivacyAccountant
    >>> acc = PrivacyAccountant(total_rho=1.0)
    >>> mech = GaussianMechanism(2.0, rho=0.5, dim=3)
    >>> release = mech.release([10.0, 20.0, 30.0], accountant=acc)
    >>> release.rho, release.epsilon, release.budget, release.value.shape
    (0.5, None, 'rho', (3,))
    >>> mech.sampler_used
    'lattice'

    Joseph & Yu's elliptic Gaussian for counts with an l0 bound of 50 among 100: 0.6x the total
    variance of the spherical Gaussian (l2 sensitivity sqrt(50)) at the same rho.

    >>> from knorm.mechanisms.gaussian_shapes import count_shape
    >>> shaped = GaussianMechanism(None, rho=0.5, shape=count_shape(100, 50))
    >>> round(float(np.trace(shaped.covariance)) / (100 * 50 / 1.0), 3), shaped.sampler_used
    (0.599, 'continuous')
    """

    def __init__(
        self,
        sensitivity,
        rho,
        *,
        dim=None,
        shape="spherical",
        sampler="auto",
        lattice_spacing=None,
        on_lattice=False,
        computation_error=0.0,
        unsafe_allow_estimated_sensitivity=False,
    ):
        owner = "GaussianMechanism"
        self.ball: NormBall
        self.noise_law: NoiseLaw
        self.lattice: LatticeLaw | None
        self.rho = check_positive(rho, "rho", owner)
        certified = shape if isinstance(shape, CertifiedShape) else None
        if certified is None and shape not in _SHAPES:
            raise param_error("shape", owner, f"one of {_SHAPES} or a CertifiedShape", shape)
        if sampler not in _SAMPLERS:
            raise param_error("sampler", owner, f"one of {_SAMPLERS}", sampler)
        if shape != "spherical" and sampler == "lattice":
            shown = certified.name if certified is not None else shape
            raise ValueError(
                f"The 'sampler' parameter of {owner} must be 'continuous' (or 'auto') for shape={shown!r}. Got "
                "'lattice' instead: a shaped (correlated) Gaussian has no exact lattice sampler in knorm, and a "
                "silent change of sampler would be a change of guarantee. Use shape='spherical' for exact lattice "
                "noise, or sampler='continuous' to accept binary64 noise with its caveat."
            )
        self.shape, self.sampler = (certified.name if certified is not None else shape), sampler
        self.sampler_used = (
            "lattice" if sampler == "lattice" or (sampler == "auto" and shape == "spherical") else ("continuous")
        )
        self._unsafe = bool(unsafe_allow_estimated_sensitivity)
        space = sensitivity if isinstance(sensitivity, SensitivitySpace) else None
        if certified is not None:
            if sensitivity is not None and space is None:
                raise TypeError(
                    f"The 'sensitivity' parameter of {owner} must be None or a SensitivitySpace with a CertifiedShape "
                    f"(the shape carries its certified bound). Got {type(sensitivity).__name__} instead."
                )
            if dim is not None and dim != certified.dim:
                raise param_error("dim", owner, f"None or the shape's dimension {certified.dim}", dim)
            dim = certified.dim
        if space is not None:
            if dim is not None and dim != space.dim:
                raise param_error("dim", owner, f"None or the space's dimension {space.dim}", dim)
            dim = space.dim
        elif dim is None:
            raise TypeError(
                f"The 'dim' parameter of {owner} must be an int >= 1 when the sensitivity is a number. Got None instead."
            )
        self.dim = check_count(dim, "dim", owner)
        if self.dim < 1:
            raise param_error("dim", owner, "an int >= 1", dim)
        if lattice_spacing is not None and self.sampler_used != "lattice":
            raise ValueError(
                f"The 'lattice_spacing' parameter of {owner} must be None with a continuous sampler (there is no "
                f"lattice). Got {lattice_spacing!r} instead."
            )
        if on_lattice and lattice_spacing is None:
            raise ValueError(
                f"The 'on_lattice' parameter of {owner} needs lattice_spacing (the lattice the statistic lies on). "
                "Got on_lattice=True with lattice_spacing=None instead."
            )
        self.on_lattice = bool(on_lattice)
        self.computation_error = (
            check_positive(computation_error, "computation_error", owner) if computation_error else 0.0
        )
        if self.computation_error and shape != "spherical":
            raise ValueError(
                f"The 'computation_error' parameter of {owner} must be 0 for shape={self.shape!r} (the ellipsoid is "
                f"certified on the exact vertices of S_T). Got {computation_error!r} instead."
            )
        if certified is not None:
            self._build_certified(certified)
        elif shape == "spherical":
            l2 = space.sensitivity(LpBall(self.dim, 2)) if space is not None else sensitivity
            self.sensitivity = as_certified(l2, owner, unsafe_allow_estimated_sensitivity=self._unsafe)
            self.ball = LpBall(self.dim, 2)
            self._build_spherical(lattice_spacing)
        else:
            if space is None:
                raise TypeError(
                    f"The 'sensitivity' parameter of {owner} must be a SensitivitySpace for shape={shape!r} (the "
                    f"ellipsoid is fitted to, and certified on, its vertices). Got {type(sensitivity).__name__} instead."
                )
            self._build_shaped(space)

    # -- construction ----------------------------------------------------------------------------
    def _build_spherical(self, lattice_spacing):
        # The noise covers Delta_2 plus the computation's certified error, rounded up (exact in rationals below).
        delta = Fraction(self.sensitivity.value) + Fraction(self.computation_error)
        if self.sampler_used == "continuous":
            # sigma^2 >= Delta^2 / (2 rho), checked in rationals (Bun & Steinke 2016, Proposition 1.6).
            target = delta**2 / (2 * Fraction(self.rho))
            sigma = math.sqrt(target)
            while Fraction(sigma) ** 2 < target:
                sigma = math.nextafter(sigma, math.inf)
            self.sigma = sigma
            self.noise_law = GaussianNoise(sigma * np.eye(self.dim), "spherical")
            self.covered = math.nextafter(float(delta), math.inf) if self.computation_error else float(delta)
            self.lattice = None
            return
        gamma = (
            _spherical_spacing(float(delta), self.dim)
            if lattice_spacing is None
            else float(check_spacing(lattice_spacing, 1, "GaussianMechanism")[0])
        )
        slack = Fraction(0) if self.on_lattice else Fraction(gamma) * _sqrt_up(self.dim)
        covered = delta + slack  # Dbar >= ||gamma k||_2 for every neighbouring lattice shift k
        # sigma_lat^2 >= Dbar^2 / (2 rho gamma^2): then sum k_j^2 / sigma_lat^2 <= 2 rho (CKS 2020, Theorem 14).
        sigma2 = lattice_sigma2(covered**2 / (2 * Fraction(self.rho) * Fraction(gamma) ** 2))
        self.rho_certified = covered**2 / (2 * Fraction(gamma) ** 2 * sigma2)
        assert self.rho_certified <= Fraction(self.rho)  # the exact privacy check, in rationals
        self.covered = float(covered)
        self.sigma = math.sqrt(sigma2) * gamma
        self.lattice = LatticeLaw(
            noise=_as_any(DiscreteGaussianNoise(sigma2, self.dim)),
            spacing=np.full(self.dim, gamma),
            sensitivity=math.nextafter(float(covered), math.inf),
            slack=slack,
            on_lattice=self.on_lattice,
        )
        self.noise_law = self.lattice

    def _build_shaped(self, space):
        points = hull_points(space)
        V = points.differences()
        M = min_trace_shape(V) if self.shape == "trace" else min_volume_shape(V)
        cov = np.linalg.inv(M)
        factor = np.linalg.cholesky((cov + cov.T) / 2)  # L: the unscaled noise is L Z
        s = certify(factor, points)  # >= sup_V ||L^{-1} v||^2, rigorous
        target = Fraction(s) / (2 * Fraction(self.rho))  # c^2 >= s / (2 rho): sup u' (c^2 L L')^{-1} u <= 2 rho
        c = math.sqrt(target)
        while Fraction(c) ** 2 < target:
            c = math.nextafter(c, math.inf)
        self.points = points
        self.certified_norm2 = s
        self.ball = LinearImage(LpBall(self.dim, 2), factor, name=f"ellipsoid (min-{self.shape})")
        # The certified sensitivity in the ellipsoid's norm ||u|| = ||L^{-1} u||_2, rounded up.
        delta = math.nextafter(math.sqrt(s), math.inf)
        self.sensitivity = Sensitivity(delta, "bound", f"certified on the vertices of S_T ({points.method})")
        self.covered = delta
        self.sigma = c
        self.lattice = None
        self.noise_law = GaussianNoise(c * factor, f"shaped, min-{self.shape} ellipsoid")

    def _build_certified(self, shape):
        """N(0, F F') with F = fl(c L), L L' ~ A^{-1}, checked: s <= 2 rho beta, beta <= lambda_min(F' A F) (exact)."""
        A = shape.precision
        try:
            R = np.linalg.cholesky(A)  # A = R R'
        except np.linalg.LinAlgError as err:
            raise ValueError(
                f"The shape {shape.name!r} is not positive definite (its Cholesky factorisation failed)."
            ) from err
        from scipy.linalg import solve_triangular

        L = solve_triangular(R, np.eye(self.dim), lower=True).T  # R^{-T}: L L' = (R R')^{-1} = A^{-1}
        bound, two_rho = Fraction(shape.bound), 2 * Fraction(self.rho)
        c = math.sqrt(float(bound / two_rho))
        for _ in range(60):
            F = c * L
            beta = gram_lower_bound(A, F)
            if beta > 0 and bound <= two_rho * beta:
                break
            # beta ~ c^2 (1 - tiny): raise c by the shortfall and a little more
            short = float(bound / (two_rho * beta)) if beta > 0 else 4.0
            c = math.nextafter(c * math.sqrt(max(short, 1.0)) * (1 + 2.0**-40), math.inf)
        else:  # pragma: no cover - a factor this ill-conditioned is refused
            raise ValueError(f"The shape {shape.name!r} is too ill-conditioned to certify its Gaussian noise.")
        self.certified_shape = shape
        self.certified_beta = beta
        self.rho_certified = bound / (2 * beta)  # the exact zCDP of N(0, F F'): sup u'(F F')^{-1}u / 2 <= s / (2 beta)
        assert self.rho_certified <= Fraction(self.rho)
        self.ball = LinearImage(LpBall(self.dim, 2), F, name=f"ellipsoid ({shape.name})")
        # The certified sensitivity in the noise's own ellipsoid norm ||F^{-1} u||_2: sqrt(s / beta) <= sqrt(2 rho).
        delta = math.nextafter(math.sqrt(float(bound / beta)), math.inf)
        self.sensitivity = Sensitivity(delta, "bound", f"{shape.proof}; in the norm ||F^{{-1}} u||_2 of the noise")
        self.covered = delta
        self.sigma = 1.0
        self.lattice = None
        self.noise_law = GaussianNoise(F, f"shaped: {shape.name}")

    # -- release -------------------------------------------------------------------------------------
    @property
    def covariance(self):
        """The covariance of the noise (of the lattice noise: sigma^2 I in the statistic's units)."""
        if self.lattice is not None:
            sigma2 = _as_any(self.lattice.noise).sigma2
            return (float(sigma2) * self.lattice.spacing[0] ** 2) * np.eye(self.dim)
        return _as_any(self.noise_law).covariance

    def _law(self):
        if nonprivate_active():
            return ZeroNoise(self.dim)
        return self.noise_law

    def release(self, value, *, rng=None, accountant=None, label="Gaussian release", names=(), note=""):
        """Release ``value`` plus Gaussian noise, charging rho per row through the one release path.

        Parameters
        ----------
        value : array_like of shape (m,) or (k, m), or ExactSums
            The statistic T(X); each row gets independent noise (and is charged rho). An
            :class:`~knorm._exact.ExactSums` is rounded here: on the lattice
            exactly, the noise then also covering its certified computation error (in l2);
            else once to binary64.
        rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
            Source of the noise; None draws fresh entropy (use it to publish). A fixed seed
            is identified by its state, as in :meth:`KNormMechanism.release`.
        accountant : PrivacyAccountant, optional
            A rho ledger, charged ``rho`` x rows before any noise is drawn; a pure epsilon
            ledger refuses (rho-zCDP does not imply pure epsilon-DP).
        label : str, default "Gaussian release"
            What is released.
        names : tuple of str, default ()
            Names of the coordinates.
        note : str, default ""
            A remark added to the Release's ``sampler`` (why this shape was chosen, say).

        Returns
        -------
        Release
            With ``rho`` set, ``epsilon`` None and ``budget == 'rho'``.
        """
        owner = "GaussianMechanism.release"
        mechanism, value, notes = self._resolve(value)
        if note:
            notes = (*notes, str(note))
        return mechanism._release(value, notes, rng=rng, accountant=accountant, label=label, names=names, owner=owner)

    def _release(self, value, notes, *, rng, accountant, label, names, owner):
        value = check_vectors(value, self.dim, "value", owner)
        rows = 1 if value.ndim == 1 else int(np.prod(value.shape[:-1]))
        size = None if value.ndim == 1 else value.shape[:-1]
        law = self._law()
        if isinstance(law, LatticeLaw):

            def draw(gen):
                return law.perturb(value, size, gen)

        else:

            def draw(gen):
                return value + law.sample(size, rng=gen)

        # The one release path (ReleaseRules._publish): its rules, with rho charged instead of epsilon.
        return self._publish(
            draw,
            epsilon=None,
            rng=rng,
            accountant=accountant,
            label=label,
            owner=owner,
            method="Gaussian",
            rho=_times(self.rho, rows),
            record=dict(names=tuple(names), notes=tuple(notes)),
        )

    def _resolve(self, value):
        """(the mechanism that releases, the value, notes): an ExactSums rounded on this mechanism's lattice.

        Its certified computation error e (in l2) is covered by a mechanism of the same
        Delta_2, rho and lattice whose noise covers Delta_2 + e (never a change of sampler).
        """
        if not isinstance(value, ExactSums):
            return self, value, ()
        law = self._law()
        if not isinstance(law, LatticeLaw):
            return self, value.resolve(), ()
        rounded, error = value.on_lattice(law.spacing, self.ball)
        if not error:
            return self, rounded, (value.note,)
        covering = GaussianMechanism(
            self.sensitivity,
            self.rho,
            dim=self.dim,
            sampler="lattice",
            lattice_spacing=float(law.spacing[0]),
            on_lattice=self.on_lattice,
            computation_error=self.computation_error + error,
            unsafe_allow_estimated_sensitivity=self._unsafe,
        )
        return covering, rounded, (value.note,)

    def _record(
        self, value, *, epsilon, label, entry, method, rho=None, noiseless=False, describe=None, names=(), notes=()
    ):
        """Build the one Release of a draw (called by ``_publish``)."""
        caveats: tuple[str, ...]
        law: NoiseLaw
        if noiseless:
            sampler, caveats, law = "none (non-private)", (_NONPRIVATE_CAVEAT,), ZeroNoise(self.dim)
        elif self.lattice is not None:
            sampler, caveats, law = self.lattice.sampler, (), self.lattice
        else:
            sampler, caveats, law = _as_any(self.noise_law).sampler, (FLOAT_CAVEAT,), self.noise_law
        if notes and not noiseless:
            sampler = "; ".join((sampler, *notes))
        return Release(
            value=value,
            epsilon=math.inf if noiseless else None,
            ball=self.ball,
            ball_name=_ball_name(self.ball),
            sensitivity=self.sensitivity,
            noise_scale=0.0 if noiseless else self.sigma if self.lattice is not None else _as_any(self.noise_law).scale,
            label=str(label),
            ledger_entry=entry,
            method=method,
            sampler=sampler,
            caveats=caveats,
            names=tuple(names),
            lattice_spacing=None if noiseless or self.lattice is None else self.lattice.spacing,
            noise_law=law,
            rho=None if noiseless else rho,
        )

    def privacy_loss(self, u):
        """Return the zCDP rho of a change ``u`` of the statistic: u' Sigma^{-1} u / 2 (the Renyi slope).

        Parameters
        ----------
        u : array_like of shape (m,) or (..., m)
            Differences T(X) - T(X') of neighbouring datasets.

        Returns
        -------
        float or ndarray
            For the continuous law, u' Sigma^{-1} u / 2 (Bun & Steinke 2016, Lemma 2.4); for
            the lattice law, the bound (||u||_2 + gamma sqrt(m))^2 / (2 sigma^2) of the
            module docstring. At most ``rho`` for every u in S_T.
        """
        u = check_vectors(u, self.dim, "u", "GaussianMechanism.privacy_loss")
        if self.lattice is not None:
            slack = float(self.lattice.slack)
            loss = (np.linalg.norm(u, axis=-1) + slack) ** 2 / (2 * self.sigma**2)
        else:
            x = np.linalg.solve(_as_any(self.noise_law).factor, np.moveaxis(u, -1, 0))
            loss = np.sum(x * x, axis=0) / 2
        return float(loss) if np.ndim(loss) == 0 else loss

    def __repr__(self):
        extra = "" if self.sampler == "auto" else f", sampler={self.sampler!r}"
        return (
            f"GaussianMechanism(dim={self.dim}, rho={self.rho:g}, shape={self.shape!r}, "
            f"sensitivity={self.sensitivity.value:g}{extra})"
        )
