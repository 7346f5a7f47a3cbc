"""The record of one private release: what was published and under which privacy terms."""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from knorm._validation import check_count, check_probability, check_rng, param_error
from knorm.geometry import NormBall
from knorm.noise.law import MC_DRAWS, NoiseLaw
from knorm.sensitivity import Sensitivity

__all__ = ["Intervals", "Release", "SamplingModel"]

# Draws of the public noise law for Monte Carlo intervals (their fixed seed is the law's: MC_SEED).
_MC_DRAWS = MC_DRAWS

#: What an interval covers: this dataset's statistic (the privacy noise only), or the population
#: parameter behind it (sampling error and privacy noise together).
KINDS = ("noise", "population")
_COVERS = {
    "noise": "this dataset's statistic (noise only)",
    "population": "the population parameter (sampling and noise)",
}
ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class Intervals:
    """Confidence intervals, one per released coordinate, with how they were computed: a small table.

    ``np.asarray(intervals)`` is the array of shape (k, 2) of lower and upper ends, as
    before; ``intervals[j]`` is its row j and ``intervals["name"]`` the row of a named
    coordinate, ``len`` and iteration go over the rows. It prints as a table (and as HTML
    in notebooks). It is returned by :meth:`Release.conf_int` and by the estimators'
    ``conf_int`` (:meth:`knorm.models.LinearRegression.conf_int`,
    :meth:`knorm.models.LogisticRegression.conf_int`, the intercept first).

    Parameters
    ----------
    lower, upper : ndarray of shape (k,)
        The ends of the intervals.
    alpha : float
        1 - the coverage probability of each interval.
    method : str
        How they were computed: 'closed form' (exact marginal quantiles of the noise law),
        'Monte Carlo', or an estimator's method (a parametric bootstrap).
    mc_error : float
        For Monte Carlo intervals, the standard error of the tail probability of each end
        (binomial, from the number of draws); 0 for closed forms.
    names : tuple of str, default ()
        The names of the coordinates, in order ('intercept' first for an estimator's
        intervals with an intercept); empty when the release named none.
    kind : {'noise', 'population'} or None, default None
        What each interval covers: 'noise', the statistic of this dataset (the privacy
        noise only); 'population', the population parameter behind it (the sampling error
        of the dataset and the privacy noise together), see :meth:`Release.conf_int`,
        which always says which; None when the maker did not say (an estimator's
        intervals).

    Examples
    --------
    >>> iv = Intervals(np.array([0.5, 1.5]), np.array([1.0, 2.5]), 0.05, "closed form", names=("a", "b"))
    >>> print(iv)
    95% intervals (alpha = 0.05), closed form
    name  lower  upper
    a       0.5      1
    b       1.5    2.5
    >>> np.asarray(iv).shape, iv["b"].tolist(), iv[0].tolist()
    ((2, 2), [1.5, 2.5], [0.5, 1.0])
    """

    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    method: str
    mc_error: float = 0.0
    names: tuple = field(default=())
    kind: str | None = None

    def __array__(self, dtype=None, copy=None):
        return np.column_stack([self.lower, self.upper]).astype(dtype or float)

    @property
    def shape(self):
        """The shape of ``np.asarray(intervals)``: (k, 2)."""
        return np.shape(np.asarray(self))

    def __len__(self):
        return len(np.asarray(self))

    def __iter__(self):
        return iter(np.asarray(self))

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"{key!r} is not the name of an interval; the names are {list(self.names)}.")
            j = self.names.index(key)
            return np.stack([np.asarray(self.lower)[..., j], np.asarray(self.upper)[..., j]], axis=-1).astype(float)
        return np.asarray(self)[key]

    def _title(self):
        text = f"{1 - self.alpha:.0%} intervals (alpha = {self.alpha:g}), {self.method}"
        kind = getattr(self, "kind", None)  # what the intervals cover, where the record says it
        if kind:
            text += f", covering {_COVERS.get(kind, kind)}"
        if self.mc_error:
            text += f", Monte Carlo s.e. of each tail {self.mc_error:.2g}"
        return text

    def _rows(self):
        lower, upper = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        if lower.ndim != 1:  # a batch release: one interval per entry, shown as arrays
            return None
        names = _coordinate_names(self.names, lower.size)
        return [(n, _number(a), _number(b)) for n, a, b in zip(names, lower, upper)]

    def __repr__(self):
        rows = self._rows()
        if rows is None:
            return f"{self._title()}\nlower:\n{_array_text(self.lower)}\nupper:\n{_array_text(self.upper)}"
        return self._title() + "\n" + _text_table(("name", "lower", "upper"), _truncate(rows))

    def _repr_html_(self):
        rows = self._rows()
        if rows is None:
            return f"<pre>{html.escape(repr(self))}</pre>"
        return _html_table(("name", "lower", "upper"), _truncate(rows), caption=self._title())


class SamplingModel:
    """How a released statistic varies around a population parameter: public inputs only.

    :mod:`knorm.stats` attaches one to each release whose population parameter it can
    infer (:attr:`Release.population`): :meth:`Release.conf_int` with ``kind='population'``
    and :meth:`Release.test` hand the release to it. A model keeps public inputs only (n
    under replace-one neighbours, the declared bounds, the constants of the
    post-processing) and reads the released values and the public noise law, so what it
    computes is a post-processing of the release (paper Proposition "Postprocessing").

    Subclasses override :meth:`conf_int` and, where a test is defined, :meth:`test`; the
    defaults refuse. A model made by :meth:`refused` refuses both, with its reason.

    Attributes
    ----------
    refusal : str or None
        Why this release supports no population inference (None: it does).
    """

    refusal: str | None = None

    @classmethod
    def refused(cls, reason):
        """Return a model that refuses population intervals and tests, naming ``reason``.

        Parameters
        ----------
        reason : str
            The public reason, a sentence.

        Returns
        -------
        SamplingModel
            Its ``refusal`` is ``reason``.
        """
        model = cls()
        model.refusal = str(reason)
        return model

    def conf_int(self, release, alpha, n_draws):
        """Return population intervals of ``release`` (``Intervals`` with ``kind='population'``).

        Parameters
        ----------
        release : Release
            The release this model belongs to.
        alpha : float
            1 - the coverage of each interval (checked).
        n_draws : int
            Draws of the public noise law (checked).

        Returns
        -------
        Intervals
            One interval per coordinate of the release.
        """
        raise ValueError(self.refusal or "No population intervals are defined for this release.")

    def test(self, release, value, alternative, rng):
        """Return the p-value of a test of the population parameter against ``value``.

        Parameters
        ----------
        release : Release
            The release this model belongs to.
        value : float
            The parameter's value under the null hypothesis.
        alternative : {'two-sided', 'greater', 'less'}
            The alternative hypothesis (checked).
        rng : numpy.random.Generator
            Public randomness, for randomised tests.

        Returns
        -------
        float
            The p-value.
        """
        raise ValueError(
            self.refusal
            or "Tests are defined for the mean or the sum of one column and for a count of one 0/1 column "
            "(knorm.stats); this release has population intervals (conf_int(kind='population')) but no test."
        )


@dataclass(frozen=True)
class Release:
    """One published value with the terms of its privacy guarantee.

    Every value the library publishes comes back as a ``Release`` from
    :meth:`KNormMechanism.release` or :meth:`KNormMechanism.release_objective`; the
    estimators keep theirs as ``release_``. It holds only the released value and public
    inputs, so it may be published whole. ``np.asarray(release)`` gives the value, and for a
    value of one coordinate ``float(release)`` (and ``int(release)`` for a count) its number.
    A post-processed value (a mean from a released sum) is a Release too, with the raw one
    as its ``parent`` and the map from the parent's value as its ``transform``: it carries
    the same privacy terms, since post-processing is free (paper Proposition
    "Postprocessing").

    Parameters
    ----------
    value : array_like
        The released vector: the statistic plus K-norm noise, the minimiser of the
        perturbed objective, or a post-processing of a parent release. Kept read-only.
    epsilon : float or None
        The pure epsilon-DP budget this release spent (charged to ``ledger_entry``, if
        any); None for a rho-zCDP release (see ``rho``).
    ball : NormBall
        The unit ball K of the noise.
    ball_name : str
        Its name, for reports.
    sensitivity : Sensitivity
        The certified K-norm sensitivity (value and kind).
    noise_scale : float
        Delta_K / epsilon of the noise (for objective perturbation, Delta_K / (q epsilon));
        for Gaussian noise its largest marginal standard deviation.
    label : str
        What was released.
    ledger_entry : LedgerEntry or None, default None
        The accountant's entry for this release, when one was charged.
    method : str, default 'K-norm'
        How the value was made: 'K-norm' (the statistic plus noise, paper Proposition
        "K-Norm Mechanism"), 'objective perturbation' (paper Algorithm "Extended
        Objective Perturbation") or 'exponential mechanism' (a public candidate chosen by
        score, McSherry & Talwar 2007: the medians and quantiles of :mod:`knorm.stats`,
        released as :class:`~knorm.mechanisms.exponential.ExponentialRelease`).
    sampler : str, default ''
        How the noise was drawn.
    caveats : tuple of str, default ()
        Known limits of the guarantee for this release (for example floating point).
    gain : float, default nan
        How many times more epsilon Laplace (the l1 mechanism) would need for the same
        entropy, from the volume order (paper Theorem "Entropy Ordering"); nan when not
        computed.
    names : tuple of str, default ()
        Names of the coordinates of ``value``.
    parent : Release or None, default None
        For a post-processed value: the release it is computed from.
    transform : callable or None, default None
        For a post-processed value: the map from the parent's value (rows) to this value.
    lattice_spacing : ndarray or None, default None
        For a lattice release (:mod:`knorm.mechanisms.lattice`), the spacings gamma_j: the
        value is gamma times an integer vector, exactly; None for continuous noise and
        for post-processed values (the parent records the spacing of its release).
    noise_law : NoiseLaw or None, default None
        The public law of the noise V of an additive release R = T + V
        (:class:`~knorm.noise.KNormNoise`, a lattice law, or
        :class:`~knorm.noise.law.ZeroNoise` inside ``nonprivate()``), from which
        :meth:`conf_int` takes its half-widths; None when the value is not the statistic
        plus noise (objective perturbation) and for post-processed values (the parent
        keeps it). A law holds no data; it is left out of ``repr`` and of comparisons.
    rho : float or None, default None
        For a rho-zCDP release (:class:`~knorm.mechanisms.GaussianMechanism`), the rho it
        spent (charged to a rho ledger); None for a pure epsilon-DP release.
    population : SamplingModel or None, default None
        How the released statistic varies around a population parameter, for
        ``conf_int(kind='population')`` and :meth:`test`: set by :mod:`knorm.stats` from
        public inputs only (n where it is public, the declared bounds), or a model that
        says why no such inference is possible; None for a release that has none. Not
        carried to post-processed values (:meth:`postprocess`); left out of ``repr`` and
        of comparisons.

    Examples
    --------
    >>> from knorm.geometry import LpBall
    >>> from knorm.mechanisms import KNormMechanism
    >>> release = KNormMechanism(LpBall(2, 1), sensitivity=1.0, epsilon=0.5).release([3.0, 4.0], rng=5)
    >>> np.asarray(release).shape, release.epsilon, release.ball_name
    ((2,), 0.5, 'l1')
    >>> np.asarray(release.conf_int(0.05)).shape  # exact Laplace quantiles
    (2, 2)
    """

    value: np.ndarray
    epsilon: float | None
    ball: NormBall
    ball_name: str
    sensitivity: Sensitivity
    noise_scale: float
    label: str
    ledger_entry: object = None
    method: str = "K-norm"
    sampler: str = ""
    caveats: tuple = field(default=())
    gain: float = math.nan
    names: tuple = field(default=())
    parent: Release | None = None
    transform: Callable | None = None
    lattice_spacing: np.ndarray | None = None
    noise_law: NoiseLaw | None = field(default=None, repr=False, compare=False)
    rho: float | None = None
    population: SamplingModel | None = field(default=None, repr=False, compare=False)

    @property
    def budget(self):
        """Which budget the release spent: 'rho' (rho-zCDP) or 'epsilon' (pure epsilon-DP)."""
        return "rho" if self.rho is not None else "epsilon"

    def __post_init__(self):
        value = np.asarray(self.value)
        # Integer statistics (counts, votes) are released as int64 on Z^m; everything else as binary64.
        value = np.array(value, dtype=np.int64 if np.issubdtype(value.dtype, np.integer) else float)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.value, dtype=dtype, copy=True if copy is None else copy)

    def _scalar(self, kind):
        value = np.asarray(self.value)
        if value.size != 1:
            raise TypeError(
                f"{kind}() of a Release needs a value of one coordinate. Got a value of shape {value.shape} "
                "instead; use np.asarray(release) or release.value."
            )
        return value.reshape(())

    def __float__(self):
        # float(release) for a scalar statistic (a mean, a count): the released value, nothing else.
        return float(self._scalar("float"))

    def __int__(self):
        # int(release) for an integer statistic (a count); a float value is refused, not truncated.
        value = self._scalar("int")
        if not np.issubdtype(value.dtype, np.integer):
            raise TypeError(
                f"int() of a Release needs an integer value (a count). Got a value of dtype {value.dtype} "
                "instead; use float(release)."
            )
        return int(value)

    def postprocess(self, transform, *, label=None, names=()):
        """Return the release of ``transform(value)``: free in privacy, intervals carried through.

        Parameters
        ----------
        transform : callable
            Maps rows of this release's value (shape (..., m)) to rows of the new value; it
            must use only the released value and public inputs.
        label : str, optional
            What the new value is (default: this label).
        names : tuple of str, default ()
            Names of the new coordinates.

        Returns
        -------
        Release
            Same privacy terms, ``parent=self``.
        """
        if self.parent is None or self.transform is None:
            root, chain = self, transform
        else:
            root, chain = self.parent, _Compose(self.transform, transform)
        return replace(
            self,
            value=transform(self.value),
            label=self.label if label is None else str(label),
            names=tuple(names),
            parent=root,
            transform=chain,
            lattice_spacing=None,  # g(value) is not on the parent's lattice in general
            noise_law=None,  # g(R) - g(T) does not follow the parent's law: intervals go through the parent
            population=None,  # a sampling model describes the value it was made for, not g of it
        )

    def conf_int(self, alpha=0.05, *, kind="noise", n_draws=_MC_DRAWS):
        """Return per-coordinate confidence intervals: for this dataset's statistic, or for the population.

        Parameters
        ----------
        alpha : float, default 0.05
            Each interval covers its target with probability 1 - alpha.
        kind : {'noise', 'population'}, default 'noise'
            'noise': the intervals cover the statistic of this dataset, T(X); only the
            privacy noise is random. 'population': they cover the population parameter
            behind it (the mean of the law the records were drawn from, its variance, a
            cell's proportion, ...), counting the sampling error of the dataset and the
            privacy noise together; available where :mod:`knorm.stats` attached a
            sampling model (``population``), refused with the reason otherwise.
        n_draws : int, default 40000
            Draws of the public noise law when the intervals are Monte Carlo.

        Returns
        -------
        Intervals
            ``np.asarray`` gives shape (k, 2); ``kind`` says what they cover.

        Raises
        ------
        ValueError
            For ``kind='population'`` on a release without a sampling model, or whose model
            refuses (the message gives the public reason).

        Notes
        -----
        **kind='noise'.** The released value is R = T + V with V drawn from the public noise
        law, independent of the data, so T = R - V and, V being symmetric, T_j lies in
        [R_j - t_j, R_j + t_j] with probability 1 - alpha when t_j is the (1 - alpha)-quantile
        of |V_j|. These intervals cover the dataset's statistic T, not a population
        parameter: the sampling error is not in them.

        * t comes from the release's ``noise_law``
          (:meth:`~knorm.noise.law.NoiseLaw.marginal_half_width`): exact where the law's
          marginals have a closed form (Laplace coordinates of l1 balls; l_inf balls, paper
          appendix l_inf sampler and errata item 4; discrete Laplace coordinates on a
          lattice, conservative), else Monte Carlo quantiles of public draws of the law at a
          fixed seed (so the intervals are a deterministic function of the release), whose
          tail probability has standard error sqrt(alpha (1 - alpha) / n_draws).
        * post-processed values g(T): for a positive coordinatewise scaling g (a transform
          with a ``coordinate_scale``, such as a mean from a sum over a public n), the
          parent's intervals scaled (and, for a ``coordinate_affine`` transform, one
          coordinate of the parent scaled and shifted: a mean from the moments of one
          column); otherwise the public law pushed through g, the equal-tailed quantiles of
          g(R - V*) over draws V* (exact coverage for linear g, a plug-in otherwise).

        **kind='population'.** The records are taken as n independent draws from a
        population, so R - theta = (T - theta) + V: the sampling error of T, estimated from
        released values only, plus the noise, whose law is public. How each statistic does
        it (a t-law for a mean with the variance from the same release, a bound on the
        fourth moment from the declared bounds for a variance, a binomial law for a
        proportion) is in the ``population`` model's documentation
        (:mod:`knorm.stats._population`).
        """
        alpha = check_probability(alpha, "alpha", "Release.conf_int")
        if kind not in KINDS:
            raise param_error("kind", "Release.conf_int", "'noise' or 'population'", kind)
        root = self if self.parent is None else self.parent
        if root.noise_law is None:
            raise ValueError(
                f"Release.conf_int covers additive K-norm releases only; this one is {root.method!r}, whose "
                "output is not the statistic plus the noise. Use the estimator's conf_int (for example "
                "LogisticRegression.conf_int)."
            )
        n_draws = check_count(n_draws, "n_draws", "Release.conf_int")
        if n_draws < 1:
            raise param_error("n_draws", "Release.conf_int", "an int >= 1", n_draws)
        if kind == "population":
            return self._model("conf_int(kind='population')").conf_int(self, alpha, n_draws)
        if self.parent is not None:
            return self._pushed_intervals(alpha, n_draws)
        half = root.noise_law.marginal_half_width(alpha, n_draws=n_draws)
        t = np.asarray(half)  # shape (m,): broadcast over the rows of a batch release
        return Intervals(
            self.value - t, self.value + t, alpha, half.method, half.mc_error, names=self.names, kind="noise"
        )

    def test(self, value, alternative="two-sided", *, rng=None):
        """Return the p-value of a test of the population parameter behind this release against ``value``.

        Parameters
        ----------
        value : float
            The parameter under the null hypothesis: a population mean (or total, for a
            sum), or a proportion in [0, 1] for a count.
        alternative : {'two-sided', 'greater', 'less'}, default 'two-sided'
            'greater': the parameter exceeds ``value`` under the alternative; 'less': it is
            below; 'two-sided': either.
        rng : None, int, sequence of int, SeedSequence, BitGenerator or Generator
            Public randomness for a randomised test (a count's exact test adds a
            Uniform(-1/2, 1/2) to the released count); unused otherwise.

        Returns
        -------
        float
            The p-value: reject the null hypothesis at level alpha when it is <= alpha.

        Raises
        ------
        ValueError
            On a release whose sampling model defines no test (the message says why).

        Notes
        -----
        A test reads the released values, public inputs and public randomness only: it is
        a post-processing, free in privacy. A mean (or a sum with n public) is tested with
        the law of its population interval (the two agree: the two-sided p-value is at most
        alpha exactly when ``value`` lies outside the (1 - alpha) interval); a count of one
        0/1 column under replace-one neighbours with the exact DP-UMP test of Awan &
        Slavkovic (2018) (:mod:`knorm.noise.tulap`).
        """
        owner = "Release.test"
        if alternative not in ALTERNATIVES:
            raise param_error("alternative", owner, "'two-sided', 'greater' or 'less'", alternative)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise param_error("value", owner, "a finite real number", value, TypeError)
        if not math.isfinite(value):
            raise param_error("value", owner, "a finite real number", value)
        gen = check_rng(rng, owner)
        return float(self._model("test").test(self, float(value), alternative, gen))

    def _model(self, what):
        """The release's sampling model, or a ValueError that says why there is none."""
        model = self.population
        if model is None:
            raise ValueError(
                f"Release.{what} needs a sampling model of the released statistic (what the population parameter "
                f"is and how this dataset's statistic varies around it); this release ({self.label!r}) has none. "
                "knorm.stats attaches one to the mean and the sum of one column, variances and standard "
                "deviations, covariances, histograms and counts under replace-one neighbours; "
                "conf_int(kind='noise') covers this dataset's statistic."
            )
        if model.refusal:
            raise ValueError(f"Release.{what} is refused for this release ({self.label!r}): {model.refusal}")
        return model

    def _pushed_intervals(self, alpha, n_draws):
        parent, transform = self.parent, self.transform
        assert parent is not None and transform is not None
        scale = getattr(transform, "coordinate_scale", None)
        if scale is not None:  # g(T) = s * T coordinatewise (s > 0): the parent's intervals, scaled
            base = parent.conf_int(alpha, n_draws=n_draws)
            return replace(base, lower=base.lower * scale, upper=base.upper * scale, names=self.names)
        affine = getattr(transform, "coordinate_affine", None)
        if affine is not None:  # g(T)_i = b_i + s_i T_{j_i} (s_i > 0): coordinates of the parent's intervals
            index, scale, offset = (np.asarray(a) for a in affine)
            base = parent.conf_int(alpha, n_draws=n_draws)
            lower, upper = base.lower[..., index], base.upper[..., index]
            return replace(base, lower=offset + scale * lower, upper=offset + scale * upper, names=self.names)
        assert parent.noise_law is not None  # checked in conf_int
        draws = parent.noise_law.public_draws(n_draws)
        base = np.asarray(parent.value)
        pushed = np.asarray(transform(base.reshape(-1)[None, :] - draws.reshape(n_draws, -1)))
        lower, upper = np.quantile(pushed, [alpha / 2, 1 - alpha / 2], axis=0)
        shape = np.shape(self.value)
        return Intervals(
            lower.reshape(shape),
            upper.reshape(shape),
            alpha,
            "Monte Carlo (pushed through)",
            math.sqrt(alpha * (1 - alpha) / n_draws),
            names=self.names,
            kind="noise",
        )

    def _terms(self):
        """(name, text) of the public terms shown above the values."""
        if self.rho is not None:
            spent = f"rho={self.rho:g} (rho-zCDP)"
        elif self.epsilon is not None and math.isinf(self.epsilon):
            spent = "epsilon=inf: NON-PRIVATE (no noise added, nothing charged)"
        else:
            spent = f"epsilon={self.epsilon:g} (pure epsilon-DP)"
        terms = [("budget", spent)]
        if self.parent is not None:
            terms.append(("post-processed from", f"{self.parent.label!r} (free: the same privacy terms)"))
        noise = f"{self.method}, ball {self.ball_name}"
        if self.parent is None:
            noise += f", noise scale {_number(self.noise_scale)}"
        if self.noise_law is not None:
            noise += f" ({type(self.noise_law).__name__})"
        terms.append(("noise", noise))
        terms.append(("sensitivity", f"{_number(self.sensitivity.value)} ({self.sensitivity.kind})"))
        if self.sampler:
            terms.append(("sampler", _cut(self.sampler, 90)))
        terms += [("caveat", _cut(c, 90)) for c in self.caveats]
        if self.ledger_entry is not None:
            terms.append(("ledger", f"entry {getattr(self.ledger_entry, 'position', '?')}"))
        return terms

    def _rows(self):
        value = np.asarray(self.value)
        if value.ndim != 1:  # a batch release (one row per dataset) or a scalar
            return None
        return [(n, _number(v)) for n, v in zip(_coordinate_names(self.names, value.size), value)]

    def __repr__(self):
        # Only the released value and public inputs: what a Release may publish (the noise law stays out).
        width = max(len(k) for k, _ in self._terms())
        lines = [f"Release {self.label!r}"] + [f"  {k + ':':<{width + 1}} {v}" for k, v in self._terms()]
        rows = self._rows()
        if rows is None:
            lines.append(f"value of shape {np.shape(self.value)}:")
            lines.append(_array_text(self.value))
        else:
            lines.append(_text_table(("coordinate", "value"), _truncate(rows)))
        return "\n".join(lines)

    def _repr_html_(self):
        head = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self._terms()
        )
        rows = self._rows()
        body = (
            f"<pre>{html.escape(_array_text(self.value))}</pre>"
            if rows is None
            else _html_table(("coordinate", "value"), _truncate(rows))
        )
        return f"<div><strong>Release {html.escape(repr(self.label))}</strong><table>{head}</table>{body}</div>"


# -- the tables of the reprs -----------------------------------------------------------------------------
_HEAD, _TAIL = 8, 2  # rows shown at each end of a long vector


def _number(x):
    """One number, 6 significant digits (an integer as is)."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{float(x):.6g}"


def _cut(text, width):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _coordinate_names(names, size):
    names = [str(n) for n in names]
    return names if len(names) == size else [f"[{j}]" for j in range(size)]


def _truncate(rows):
    """The rows of a long vector cut to its first and last ones, with a row saying how many are hidden."""
    if len(rows) <= _HEAD + _TAIL + 2:
        return rows
    gap = ("\u2026",) + (f"({len(rows) - _HEAD - _TAIL} more)",) + ("",) * (len(rows[0]) - 2)
    return [*rows[:_HEAD], gap, *rows[-_TAIL:]]


def _text_table(head, rows):
    """Columns: the first left-aligned, the numbers right-aligned, two spaces apart."""
    table = [tuple(head), *rows]
    widths = [max(len(r[j]) for r in table) for j in range(len(head))]
    return "\n".join(
        "  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in table
    )


def _html_table(head, rows, caption=None):
    cap = "" if caption is None else f"<caption>{html.escape(caption)}</caption>"
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td style='text-align:{'left' if j == 0 else 'right'}'>{html.escape(c)}</td>" for j, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _array_text(a):
    return np.array2string(np.asarray(a), precision=6, threshold=20, edgeitems=3)


@dataclass(frozen=True)
class _Compose:
    """g(f(x)), picklable when f and g are."""

    first: Callable
    second: Callable

    def __call__(self, x):
        return self.second(self.first(x))


def ball_name(ball):
    """Return a short name for a ball: its ``name``, 'l1' / 'l2' / 'linf' for unit l_p balls, or its repr."""
    name = getattr(ball, "name", None)
    if name:
        return str(name)
    p = getattr(ball, "p", None)
    if p is not None and getattr(ball, "radius", None) == 1.0:
        return "linf" if np.isinf(p) else f"l{p:g}"
    return repr(ball)
