"""Objective perturbation made exact in what it publishes (approximate minima perturbation).

The procedure of :meth:`KNormMechanism.release_objective
<knorm.mechanisms.KNormMechanism.release_objective>`, whose docstring gives the proof:
paper Algorithm "Extended Objective Perturbation" (gamma as in errata item 1), with the
output noise of Iyengar, Near, Song, Thakkar, Thakurta & Wang (2019).
"""

from __future__ import annotations

import math

import numpy as np

from knorm._docs import fill_doc
from knorm._validation import check_positive, check_probability
from knorm.exceptions import ConvergenceError
from knorm.geometry import LpBall
from knorm.mechanisms.lattice import build_lattice_law, choose_spacing
from knorm.noise import KNormNoise
from knorm.noise.law import ZeroNoise

__all__ = ["GRADIENT_TOLERANCE", "OUTPUT_SHARE", "release_objective"]

#: Certified tolerance on ||grad F||_2 of a perturbed objective (sum form) before it is published.
GRADIENT_TOLERANCE = 1e-8
#: Share of epsilon that objective perturbation spends on the output noise covering that tolerance.
OUTPUT_SHARE = 0.01

FLOAT_CAVEAT = "continuous noise drawn in binary64: exposed to the least-significant-bit attack of Mironov (2012)"
_OBJECTIVE_CAVEAT = (
    "objective-perturbation noise V drawn in binary64; the published value lies on a lattice (its support does not "
    "depend on the data), but the proof of objective perturbation is for real-valued V"
)


_MIN_OUTPUT_RADIUS = 2.0**-26


def _output_lattice(dim, radius, epsilon):
    """The lattice law of approximate minima perturbation's output noise W (l_inf ball).

    With R the rounding to gamma Z^m, ||R(theta) - R(theta*)||_inf <= r + s where
    r = tau / gamma bounds ||theta - theta*||_2 >= ||.||_inf and s = max_j gamma_j is the
    rounding slack; the chain of release_objective's proof, once on each neighbour,
    needs rate (2 r + 2 s) <= eps_W, so the law is built with Delta = 2 r + s (to which
    the builder adds s once more).
    """
    ball = LpBall(dim, math.inf)
    # A larger radius is still a bound; the floor keeps the lattice coarse enough that any
    # |theta| up to about 2^14 (scaled coordinates) stays in the exact range |theta / gamma| < 2^52 (the noise, of
    # scale 2^-25 / eps_W, is negligible beside the coefficients').
    radius = max(radius, _MIN_OUTPUT_RADIUS)
    try:
        spacing = choose_spacing(ball, 2.0 * radius)
        delta = math.nextafter(2.0 * radius + float(np.max(spacing)), math.inf)
        return build_lattice_law(ball, delta, epsilon, spacing=spacing)
    except ValueError:  # LatticeUnavailable, or no lattice within the exact integer range: continuous
        return None


@fill_doc
def release_objective(
    mechanism, minimise, *, epsilon, strong_convexity, gradient_tolerance, output_share, rng, accountant, label
):
    """Publish the minimiser of the objective perturbed by ``mechanism``'s noise.

    The procedure and proof of :meth:`KNormMechanism.release_objective
    <knorm.mechanisms.KNormMechanism.release_objective>`, which validates nothing more and
    documents every parameter.

    Parameters
    ----------
    mechanism : KNormMechanism
        Its law draws V; its ``_publish`` applies the privacy rules.
    minimise : callable
        V -> (theta, gradient_norm).
    epsilon : float
        The whole budget of the release.
    strong_convexity : float
        The gamma with grad^2 F >= gamma I.
    gradient_tolerance : float
        The certified tolerance tau on ||grad F(theta)||_2.
    output_share : float
        Share of epsilon spent on the output noise W.
    %(rng)s
    accountant : PrivacyAccountant or None
        Charged ``epsilon`` before the noise is drawn.
    label : str
        What is released.

    Returns
    -------
    Release
        The published theta + W, with ``method="objective perturbation"``.
    """
    owner = "KNormMechanism.release_objective"
    epsilon = check_positive(epsilon, "epsilon", owner)
    if isinstance(mechanism._law(), ZeroNoise):  # the noise-free limit: V = 0, exact minimiser, no output noise
        return mechanism._publish(
            lambda gen: np.asarray(minimise(np.zeros(mechanism.dim))[0], dtype=float),
            epsilon=epsilon,
            rng=rng,
            accountant=accountant,
            label=label,
            owner=owner,
            method="objective perturbation",
        )
    gamma = check_positive(strong_convexity, "strong_convexity", owner)
    tau = check_positive(gradient_tolerance, "gradient_tolerance", owner)
    share = check_probability(output_share, "output_share", owner)
    if mechanism.epsilon >= (1.0 - share) * epsilon:
        raise ValueError(
            f"The 'epsilon' parameter of {owner} must exceed the noise's epsilon {mechanism.epsilon:g} divided by "
            f"1 - output_share = {1 - share:g} (the noise spends q (1 - output_share) epsilon). Got {epsilon!r} instead."
        )
    radius = tau / gamma
    lattice = None if mechanism.sampler == "continuous" else _output_lattice(mechanism.dim, radius, share * epsilon)
    describe: tuple
    if lattice is None:
        # Density proportional to exp(-eps_W ||w||_2 / (2 r)): the l2 K-norm law of scale 2 r / eps_W.
        output = KNormNoise(LpBall(mechanism.dim, 2), 2.0 * radius / (share * epsilon))
        describe = (
            f"objective perturbation: V continuous ({mechanism.noise.sampler}), output noise continuous (l2)",
            (FLOAT_CAVEAT,),
        )
    else:
        describe = (
            f"objective perturbation: V continuous ({mechanism.noise.sampler}); the published theta rounded to a "
            f"lattice plus exact lattice noise ({lattice.noise.sampler})",
            (_OBJECTIVE_CAVEAT,),
            lattice.spacing,
        )

    def draw(gen):
        theta, gradient_norm = minimise(mechanism.noise.sample(rng=gen))
        if not gradient_norm <= tau:
            # The norm reached is computed from the data: kept off the message, for the curator only.
            raise ConvergenceError(
                f"The perturbed objective was not minimised to the certified tolerance ||grad||_2 <= {tau:g}, "
                "so nothing was published; the epsilon charged stays spent. Raise max_iter or lower tol.",
                curator_only_gradient_norm=float(gradient_norm),
            )
        theta = np.asarray(theta, dtype=float)
        return theta + output.sample(rng=gen) if lattice is None else lattice.perturb(theta, None, gen)

    return mechanism._publish(
        draw,
        epsilon=epsilon,
        rng=rng,
        accountant=accountant,
        label=label,
        owner=owner,
        method="objective perturbation",
        describe=describe,
    )
