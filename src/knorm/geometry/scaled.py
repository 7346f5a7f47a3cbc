"""A ball scaled by a positive constant: c K."""

from __future__ import annotations

import math

from knorm.geometry.base import NormBall, Volume, check_factor

__all__ = ["ScaledBall"]


class ScaledBall(NormBall):
    """The ball factor * base, with ||u||_{cK} = ||u||_K / c.

    Parameters
    ----------
    base : NormBall
        The ball to scale.
    factor : float
        Positive, finite scale c.

    Notes
    -----
    vol(cK) = c^m vol(K) (change of variables, as in the proof of the paper's
    Lemma on Lebesgue measure under linear maps) and h_{cK}(u) = c h_K(u); uniform
    sampling maps through u -> c u, so it is as exact as the base sampler.
    """

    def __init__(self, base, factor):
        if not isinstance(base, NormBall):
            raise TypeError(
                f"The 'base' parameter of ScaledBall must be a NormBall. Got {type(base).__name__} instead."
            )
        c = check_factor(factor, "ScaledBall")
        if isinstance(base, ScaledBall):  # flatten nested scalings
            base, c = base.base, c * base.factor
        super().__init__(base.dim)
        self.base = base
        self.factor = c
        self.sampler_stats = base.sampler_stats

    def _gauge(self, u):
        return self.base._gauge(u / self.factor)

    def _contains(self, u):
        return self.base._contains(u / self.factor)

    def _support(self, c):
        return self.factor * self.base._support(c)

    @property
    def has_support(self):
        return self.base.has_support

    def _bounding_box(self):
        return self.factor * self.base.bounding_box()

    def _log_volume(self, rng, n_samples):
        lv = self.base._log_volume(rng, n_samples)
        return Volume(lv + self.dim * math.log(self.factor), exact=lv.exact, stderr=lv.stderr, method=lv.method)

    def _volume(self, rng, n_samples):
        v = self.base._volume(rng, n_samples)
        s = self.factor**self.dim
        return Volume(v * s, exact=v.exact, stderr=v.stderr * s, method=v.method)

    def _sample_uniform(self, n, rng):
        return self.factor * self.base._sample_uniform(n, rng)

    def __repr__(self):
        return f"{self.factor:g} * {self.base!r}"
