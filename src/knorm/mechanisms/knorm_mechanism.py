"""The K-norm mechanism: release T(X) + V, V with density exp(-eps ||v||_K / Delta)."""

from __future__ import annotations

import math

import numpy as np

from knorm._exact import ExactSums
from knorm._validation import check_positive, check_rng, check_vectors, param_error
from knorm.geometry import NormBall
from knorm.mechanisms._mode import ReleaseRules, nonprivate, nonprivate_active
from knorm.mechanisms.lattice import LatticeLaw, LatticeUnavailable, build_lattice_law, check_spacing
from knorm.mechanisms.objective import FLOAT_CAVEAT, GRADIENT_TOLERANCE, OUTPUT_SHARE, release_objective
from knorm.mechanisms.release import Release
from knorm.mechanisms.release import ball_name as _ball_name
from knorm.noise import KNormNoise
from knorm.noise.law import ZeroNoise
from knorm.sensitivity.certificate import UnsafeSensitivityError, as_certified

__all__ = [
    "GRADIENT_TOLERANCE",
    "OUTPUT_SHARE",
    "KNormMechanism",
    "nonprivate",
    "nonprivate_active",
]

_NONPRIVATE_CAVEAT = "NON-PRIVATE: released inside knorm.mechanisms.nonprivate(), with no noise"
_SAMPLERS = ("auto", "lattice", "continuous")


class KNormMechanism(ReleaseRules):
    """The K-norm mechanism of Hardt & Talwar (2010), paper Proposition "K-Norm Mechanism".

    Releasing ``T(X) + V`` with V ~ :class:`~knorm.noise.KNormNoise` (ball,
    Delta / eps) is eps-DP whenever Delta >= Delta_K(T) = sup_{u in S_T} ||u||_K.

    Parameters
    ----------
    ball : NormBall
        The unit ball K of the norm.
    sensitivity : float or Sensitivity
        Delta, a certified upper bound on the K-norm sensitivity. A float is taken
        as declared by the caller from the data domain. A :class:`Sensitivity`
        of kind 'estimate' is refused.
    epsilon : float
        Privacy budget, in (0, inf).
    sampler : {'auto', 'lattice', 'continuous'}, default 'auto'
        How releases draw their noise. 'lattice' rounds the statistic to a lattice
        gamma Z^m and adds exact lattice K-norm noise drawn in integer arithmetic
        (:mod:`knorm.mechanisms.lattice`; exactly eps-DP with no floating point in the
        argument); it needs a polytope ball (l1, l_inf, polytopes, hulls, K_2, K_3,
        intersections of those). 'continuous' adds binary64 noise: **exposed to the
        least-significant-bit attack of Mironov (2012)**, which turns the float
        structure of T + V into an unbounded privacy loss; the Release says so in its
        caveats. 'auto' is 'lattice' where the ball has a practical exact lattice
        sampler, else 'continuous' (with the caveat and the reason). A ball whose lattice
        sampler serves epsilon = 1 but not this epsilon (the exact integer ranges end near
        1e-11 for l1 and 3e-11 for l_inf, and polytopes end sooner on both sides) is
        refused instead, with a ValueError naming 'epsilon' and the bound served: a silent
        change of sampler would be a change of guarantee; 'continuous' asks for it.
    lattice_spacing : float or array_like, optional
        The spacings gamma_j of the lattice (positive powers of two). By default they
        are chosen from the ball and Delta alone, so that the rounding costs at most 1/2 %
        of the budget (:func:`knorm.mechanisms.lattice.choose_spacing`).
    on_lattice : bool, default False
        Declared: the statistic lies in ``lattice_spacing`` Z^m on every dataset (counts,
        with spacing 1). It is then released without rounding and without rounding
        slack (the discrete Laplace / geometric mechanism for l1); a value off the
        lattice is refused. Needs ``lattice_spacing``.
    computation_error : float, default 0.0
        A certified bound, in the norm of ``ball``, on how far the *computation* of the
        statistic can move a difference of neighbours beyond S_T (for example the
        per-record rounding of the fixed-point sums of :mod:`knorm.stats`). The noise
        then covers Delta + computation_error (Casacuberta et al. 2022 show float
        computations that exceed the declared sensitivity); ``sensitivity`` stays the
        certified Delta of the statistic.
    unsafe_allow_estimated_sensitivity : bool, default False
        Accept a sampled (uncertified) sensitivity. The guarantee may then fail.

    Attributes
    ----------
    noise : KNormNoise
        The continuous noise law, scale Delta / eps (its density, entropy and volume
        rank mechanisms; the continuous sampler draws from it).

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> mech = KNormMechanism(LpBall(2, p=float("inf")), sensitivity=2.0, epsilon=1.0)
    >>> mech.privacy_loss([1.0, -2.0])
    1.0
    >>> mech.release([10.0, 20.0], rng=7).value.shape
    (2,)
    """

    def __init__(
        self,
        ball,
        sensitivity,
        epsilon,
        *,
        sampler="auto",
        lattice_spacing=None,
        on_lattice=False,
        computation_error=0.0,
        unsafe_allow_estimated_sensitivity=False,
    ):
        if not isinstance(ball, NormBall):
            raise TypeError(
                f"The 'ball' parameter of KNormMechanism must be a NormBall. Got {type(ball).__name__} instead."
            )
        if ball.estimated and not unsafe_allow_estimated_sensitivity:
            raise UnsafeSensitivityError(
                f"The 'ball' parameter of KNormMechanism must not be estimated from samples. Got {ball!r}, "
                "built from sampled points of the sensitivity space, instead. Such a ball can miss parts "
                "of S_T, so its sensitivity is not certified; use a certified outer hull "
                "(SensitivitySpace.outer_hull) or pass unsafe_allow_estimated_sensitivity=True."
            )
        self.ball = ball
        self._unsafe = bool(unsafe_allow_estimated_sensitivity)
        self.epsilon = check_positive(epsilon, "epsilon", "KNormMechanism")
        self.sensitivity = as_certified(
            sensitivity, "KNormMechanism", unsafe_allow_estimated_sensitivity=unsafe_allow_estimated_sensitivity
        )
        err = check_positive(computation_error, "computation_error", "KNormMechanism") if computation_error else 0.0
        self.computation_error = err
        # The noise covers Delta plus the computation's certified error (rounded up).
        self._covered = math.nextafter(self.sensitivity.value + err, math.inf) if err else self.sensitivity.value
        self.noise = KNormNoise(ball, self._covered / self.epsilon)
        if sampler not in _SAMPLERS:
            raise param_error("sampler", "KNormMechanism", f"one of {_SAMPLERS}", sampler)
        self.sampler = sampler
        if lattice_spacing is not None and sampler == "continuous":
            raise ValueError(
                "The 'lattice_spacing' parameter of KNormMechanism must be None with sampler='continuous' (there is "
                f"no lattice). Got {lattice_spacing!r} instead."
            )
        self.lattice_spacing = None if lattice_spacing is None else check_spacing(lattice_spacing, ball.dim)
        if on_lattice and self.lattice_spacing is None:
            raise ValueError(
                "The 'on_lattice' parameter of KNormMechanism needs lattice_spacing (the lattice the statistic lies "
                "on). Got on_lattice=True with lattice_spacing=None instead."
            )
        self.on_lattice = bool(on_lattice)
        self._lattice = None  # built on first use (a pilot run), then cached
        self._lattice_reason = ""
        if sampler == "lattice":
            self._lattice = build_lattice_law(
                ball, self._covered, self.epsilon, spacing=self.lattice_spacing, on_lattice=self.on_lattice
            )

    @property
    def lattice(self):
        """The :class:`~knorm.mechanisms.lattice.LatticeLaw` of the releases, or None when continuous."""
        if self._lattice is None and self.sampler == "auto" and not self._lattice_reason:
            try:
                self._lattice = build_lattice_law(
                    self.ball, self._covered, self.epsilon, spacing=self.lattice_spacing, on_lattice=self.on_lattice
                )
            except LatticeUnavailable as err:
                self._lattice_reason = str(err)
        return self._lattice

    @property
    def dim(self):
        """Dimension m of the released statistic."""
        return self.ball.dim

    def sample_noise(self, size=None, *, rng=None):
        """Draw noise vectors of this mechanism's law (see :meth:`KNormNoise.sample`).

        Parameters
        ----------
        size : None, int or tuple of int, default None
            Number (or array shape) of vectors; None draws a single vector.
        rng : None, int, SeedSequence or Generator
            Source of the noise. None draws fresh entropy from the operating system.

        Returns
        -------
        ndarray
            Shape (dim,) if ``size`` is None, else (size, dim) (``size + (dim,)`` for a
            tuple): draws with density proportional to exp(-eps ||v||_K / Delta). They
            are noise only; values are published through :meth:`release`, which charges
            the budget.
        """
        return self.noise.sample(size, rng=check_rng(rng, "KNormMechanism.sample_noise"))

    def release(
        self,
        value,
        *,
        rng=None,
        accountant=None,
        label="K-norm release",
        ball_name=None,
        gain=math.nan,
        names=(),
        note="",
    ):
        """Release ``value`` plus K-norm noise: the one additive release path.

        Parameters
        ----------
        value : array_like of shape (m,) or (k, m), or ExactSums
            The statistic T(X); each row gets independent noise. An
            :class:`~knorm._exact.ExactSums` (the exact sums of
            :mod:`knorm.stats` and :mod:`knorm.models`) is rounded here: on a lattice
            release to the lattice, exactly, and the noise then also covers its certified
            computation error (Casacuberta et al. 2022); else to binary64.
        rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
            Source of the noise. None draws fresh entropy from the operating system:
            use it to publish. Anything else is a fixed seed, identified by the state of
            the bit generator it gives, read before anything is drawn: ``7``, ``[7]``,
            ``(7,)``, ``np.array([7])``, ``SeedSequence(7)`` and ``default_rng(7)`` or
            ``Generator(PCG64(7))`` not yet advanced are one seed; a Generator that has
            advanced is a new one. ``True`` and ``False`` are refused (TypeError).
        accountant : PrivacyAccountant, optional
            Charged epsilon (once per row) before any noise is drawn; nothing is
            released if the charge is refused. It refuses a second release from a seed
            (state) it has recorded (:class:`~knorm.accounting.SeedReuseError`). Without
            an accountant, a release from an explicit seed warns every time, and one
            from a Generator warns when its state was already drawn from in this process
            (``PrivacyWarning``).
        label : str, default "K-norm release"
            What is released, for the ledger and the record.
        ball_name : str, optional
            The name of the ball in the record (default: from the ball itself).
        gain : float, default nan
            The gain over Laplace to record (:func:`~knorm.mechanisms.choose_mechanism`
            computes it).
        names : tuple of str, default ()
            Names of the coordinates of the value.
        note : str, default ""
            Appended to the record's ``sampler``: how the ball was chosen, when that is
            worth stating (a switch of ball and its cost).

        Returns
        -------
        Release
            The published value with its privacy terms; ``np.asarray(release)`` is the value.
        """
        owner = "KNormMechanism.release"
        mechanism, value, notes = self._resolve(value, note, owner)
        value = check_vectors(value, self.dim, "value", owner)
        rows = 1 if value.ndim == 1 else int(np.prod(value.shape[:-1]))
        size = None if value.ndim == 1 else value.shape[:-1]
        law = mechanism._law()
        return mechanism._publish(
            (lambda gen: law.perturb(value, size, gen))
            if isinstance(law, LatticeLaw)
            else (lambda gen: value + law.sample(size, rng=gen)),
            epsilon=self.epsilon * rows,
            rng=rng,
            accountant=accountant,
            label=label,
            owner=owner,
            record=dict(ball_name=ball_name, gain=gain, names=tuple(names), notes=notes),
        )

    def _law(self):
        """The noise law of the releases: the one place where the non-private mode is decided.

        Inside :func:`nonprivate` it is the zero law (no noise, scale 0); else the exact
        lattice law where there is one, else the continuous law (with its caveat).
        """
        if nonprivate_active():
            return ZeroNoise(self.dim)
        return self.lattice or self.noise

    def _resolve(self, value, note, owner):
        """(the mechanism that releases, the value as an array, the notes for the record).

        An :class:`ExactSums` is rounded on this mechanism's lattice in exact arithmetic; its
        certified computation error e is then covered by a mechanism of the same ball,
        lattice and epsilon whose noise covers Delta + e (the sensitivity stays Delta).
        """
        notes = (note,) if note else ()
        if not isinstance(value, ExactSums):
            return self, value, notes
        law = self._law()
        if not isinstance(law, LatticeLaw):  # continuous or non-private: the value rounded once to binary64
            return self, value.resolve(), notes
        rounded, error = value.on_lattice(law.spacing, self.ball)
        notes = (value.note, *notes)
        if not error:
            return self, rounded, notes
        covering = KNormMechanism(
            self.ball,
            self.sensitivity,
            self.epsilon,
            sampler="lattice",  # never a silent change of sampler
            lattice_spacing=law.spacing,
            computation_error=self.computation_error + error,
            unsafe_allow_estimated_sensitivity=self._unsafe,
        )
        return covering, rounded, notes

    def release_objective(
        self,
        minimise,
        *,
        epsilon,
        strong_convexity,
        gradient_tolerance=GRADIENT_TOLERANCE,
        output_share=OUTPUT_SHARE,
        rng=None,
        accountant=None,
        label="objective perturbation",
    ):
        """Publish the minimiser of an objective perturbed by this mechanism's noise.

        Objective perturbation (paper Algorithm "Extended Objective Perturbation") made
        exact in what it publishes, by approximate minima perturbation (Iyengar, Near,
        Song, Thakkar, Thakurta & Wang 2019). V is drawn from this mechanism's law and
        ``minimise(V)`` returns theta with its gradient norm ||grad F(theta)||_2, F the
        perturbed objective. The proof of paper Theorem "Extended Objective Perturbation"
        (with gamma as in errata item 1) holds for the exact minimiser theta*; here:

        1. theta is published only if ||grad F(theta)||_2 <= tau (``gradient_tolerance``),
           else :class:`~knorm.exceptions.ConvergenceError` is raised and nothing is
           published. F is ``strong_convexity``-strongly convex (its Hessian is at least
           gamma I), so ||theta - theta*||_2 <= tau / gamma = r.
        2. theta + W is published, W with density proportional to
           exp(-eps_W ||w||_2 / (2 r)) and eps_W = ``output_share`` x epsilon.

        Why this is epsilon-DP: write theta = theta* + d(X, V) with ||d||_2 <= r. For any
        output y, the triangle inequality gives p_W(y - theta* - d) <= exp(eps_W / 2)
        p_W(y - theta*) for every such d. theta* + W is a post-processing of theta*, so its
        density ratio on neighbours is at most exp(eps_op) (the objective-perturbation
        budget). Chaining the two bounds, on X and on its neighbour, bounds the density
        ratio of theta + W by exp(eps_op + eps_W) <= exp(epsilon), as
        eps_op <= (1 - output_share) epsilon is checked here.

        Parameters
        ----------
        minimise : callable
            V -> (theta, gradient_norm): the minimiser found and ||grad F(theta)||_2.
        epsilon : float
            The whole budget of the release.
        strong_convexity : float
            A gamma > 0 with grad^2 F >= gamma I (the ridge term of objective perturbation).
        gradient_tolerance : float, default 1e-8
            The certified tolerance tau on ||grad F(theta)||_2 (sum form).
        output_share : float, default 0.01
            Share of epsilon spent on the output noise W.
        rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
            Source of the noise; a fixed seed is identified by its state, as in
            :meth:`release`.
        accountant : PrivacyAccountant, optional
            Charged ``epsilon`` before the noise is drawn; it refuses a seed (state) it
            has recorded.
        label : str, default "objective perturbation"
            What is released.

        Returns
        -------
        Release
            The published theta + W (``value``), with ``method='objective perturbation'``
            and the whole ``epsilon`` as its budget.

        Raises
        ------
        ConvergenceError
            If the optimiser stopped above the certified tolerance (the charge stands).
        """
        return release_objective(
            self,
            minimise,
            epsilon=epsilon,
            strong_convexity=strong_convexity,
            gradient_tolerance=gradient_tolerance,
            output_share=output_share,
            rng=rng,
            accountant=accountant,
            label=label,
        )

    def _record(
        self,
        value,
        *,
        epsilon,
        label,
        entry,
        method,
        noiseless=False,
        describe=None,
        ball_name=None,
        gain=math.nan,
        names=(),
        notes=(),
    ):
        """Build the one Release of a draw: nothing downstream edits it."""
        lattice = None if noiseless or method != "K-norm" else self._lattice
        caveats: tuple[str, ...]
        spacing = None if lattice is None else lattice.spacing
        if noiseless:
            sampler, caveats = "none (non-private)", (_NONPRIVATE_CAVEAT,)
        elif describe is not None:  # (sampler, caveats[, lattice spacing of the published value])
            sampler, caveats = describe[0], describe[1]
            spacing = describe[2] if len(describe) > 2 else None
        elif lattice is not None:
            sampler, caveats = lattice.sampler, ()
        else:
            why = f" ({self._lattice_reason})" if self._lattice_reason else ""
            sampler, caveats = f"continuous, binary64 ({self.noise.sampler})", (FLOAT_CAVEAT + why,)
        if notes and not noiseless:
            sampler = "; ".join((sampler, *notes))
        return Release(
            value=value,
            epsilon=epsilon,
            ball=self.ball,
            ball_name=ball_name or _ball_name(self.ball),
            sensitivity=self.sensitivity,
            noise_scale=0.0 if noiseless else (lattice.sensitivity if lattice else self._covered) / self.epsilon,
            label=str(label),
            ledger_entry=entry,
            method=method,
            sampler=sampler,
            caveats=caveats,
            gain=gain,
            names=tuple(names),
            lattice_spacing=spacing,
            # The public law of the additive noise, for conf_int; none for objective perturbation.
            noise_law=None if method != "K-norm" else ZeroNoise(self.dim) if noiseless else lattice or self.noise,
        )

    def privacy_loss(self, u):
        """Return the privacy loss eps ||u||_K / Delta of a change ``u`` of the statistic.

        Parameters
        ----------
        u : array_like of shape (m,) or (..., m)
            Differences T(X) - T(X') of the statistic on neighbouring datasets.

        Returns
        -------
        float or ndarray of shape (...)
            The worst-case privacy loss of each difference.

        Notes
        -----
        This is the supremum over outputs z of log f(z - T(X)) / f(z - T(X')) for
        T(X) - T(X') = u, by the triangle inequality, attained on a ray. It is
        <= eps exactly when u lies in Delta K (paper Proposition "K-Norm Mechanism").
        """
        u = check_vectors(u, self.dim, "u", "KNormMechanism.privacy_loss")
        loss = self.epsilon * self.ball._gauge(u) / self._covered
        return float(loss) if np.ndim(loss) == 0 else loss

    def log_density_ratio(self, z, value, neighbour):
        """Return log f(z | value) - log f(z | neighbour), the realised privacy loss at output z.

        Parameters
        ----------
        z : array_like of shape (m,) or (..., m)
            Outputs of the mechanism.
        value : array_like of shape (m,)
            The statistic T(X).
        neighbour : array_like of shape (m,)
            The statistic T(X') of a neighbouring dataset.

        Returns
        -------
        float or ndarray of shape (...)
            (||z - T(X')||_K - ||z - T(X)||_K) eps / Delta; its absolute value is at
            most :meth:`privacy_loss` of T(X) - T(X').
        """
        return self.noise.logpdf(np.asarray(z, float) - np.asarray(value, float)) - self.noise.logpdf(
            np.asarray(z, float) - np.asarray(neighbour, float)
        )

    def log_volume(self):
        """Return log vol(Delta K), the key of the volume order.

        Returns
        -------
        Volume
            The sum m log(Delta) + log vol(K), exact or a labelled Monte Carlo
            estimate as :meth:`KNormNoise.log_volume` is.

        References
        ----------
        Paper Definition "Containment and Volume Orders".
        """
        lv = self.noise.log_volume()
        return type(lv)(
            float(lv) + self.dim * math.log(self.sensitivity.value), exact=lv.exact, stderr=lv.stderr, method=lv.method
        )

    def entropy(self):
        """Return the differential entropy of the noise, in nats.

        Returns
        -------
        float
            The entropy m + log(m!) + log vol(K) + m log(Delta / eps) (see
            :meth:`KNormNoise.entropy`).

        References
        ----------
        Paper Proposition "Entropy of K-mech".
        """
        return self.noise.entropy()

    def __repr__(self):
        extra = "" if self.sampler == "auto" else f", sampler={self.sampler!r}"
        return f"KNormMechanism({self.ball!r}, sensitivity={self.sensitivity.value:g}, epsilon={self.epsilon:g}{extra})"
