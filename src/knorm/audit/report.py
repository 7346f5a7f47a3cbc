"""The audit page (docs/audit.md): prose with the table of one stored suite run.

``python -m knorm.audit --report docs/audit.md`` runs the suite, stores its rows in
``docs/audit/suite.csv`` and ``docs/audit/run.json``, and renders the page from those files;
:func:`render_audit_page` renders it again from the stored files alone.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

__all__ = ["render_audit_page", "store_atom_run", "store_suite_run"]

_FIELDS = (
    "mechanism",
    "claimed eps",
    "true eps",
    "eps lower bound",
    "verdict",
    "expected",
    "test outputs/side",
    "seconds",
)

_RUN_LINE = (
    "One run of `{command}`: {samples:,} outputs per side and pair (a quarter for selection), confidence "
    "{confidence:g}, seed {seed}, on {machine} ({seconds:.0f} s in all). Expensive rows use fewer outputs "
    '(`sample_factor`). The "true eps" column is the worst-case loss known from theory. For the estimators\' '
    "coefficients only the upper bound (the claim) is known, since they are a post-processing of the release."
)

_ATOM_FIELDS = (
    "law",
    "atoms A vs B",
    "draws in A",
    "draws in B",
    "exact log P(A)/P(B)",
    "realised",
    "excess",
    "z",
    "verdict",
    "expected",
)

_ATOM_RUN_LINE = (
    "One run of `{command}`, seed {seed}, on {machine} ({seconds:.0f} s in all). "
    '"excess" is exp(realised - exact): 1 under the exact law; |z| > 4.5 is a finding (about 7e-6 per row).'
)

_TEMPLATE = """# Empirical privacy audit (`knorm.audit`)

The privacy of every mechanism in knorm rests on a proof (the paper's
Proposition "K-Norm Mechanism", Hardt & Talwar 2010) and on code that is
supposed to implement it: a sampler, a sensitivity, a noise scale. A bug in
the code breaks the guarantee silently, since the outputs still look like noise. `knorm.audit` tests
the code against the guarantee. It draws outputs of a mechanism on two
neighbouring inputs and computes a **lower confidence bound** on its privacy
loss eps. If the bound exceeds the claimed epsilon, the mechanism is shown,
at the stated confidence, **not** to be epsilon-DP. The audit can therefore
fail, and the test suite shows that it does on deliberately broken mechanisms.

## What it computes

A mechanism M is (eps, delta)-DP if, for the output laws P_a = M(X) and
P_b = M(X') on any neighbouring inputs and for every event E,

    P_a(E) <= exp(eps) P_b(E) + delta      and      P_b(E) <= exp(eps) P_a(E) + delta.

So every event gives eps >= log((P_a(E) - delta) / P_b(E)). The audit estimates
the two probabilities from independent samples and replaces them with
confidence bounds:

    eps_lower = log( (CP_lower(P_a(E)) - delta) / CP_upper(P_b(E)) ),

where CP are one-sided **Clopper-Pearson** bounds (exact binomial bounds from
`scipy.stats.beta` quantiles). If M is (eps, delta)-DP and E is fixed before
the counts are drawn, then eps_lower <= eps except with probability at most the
total error of the two bounds.

The events are thresholds of scalar test statistics f(z): {{f >= tau}} and
{{f < tau}}, in both ratio directions (P_a/P_b and P_b/P_a). The procedure is:

1. **Selection split.** A quarter of the outputs (`select_fraction=0.25`) of each
   candidate neighbour pair is used to search events. Thresholds tau are sample
   quantiles on a grid that is dense in both tails. Each event is scored by its
   bound computed on the selection split itself. This penalises rare events that
   a few lucky counts make look extreme. The best event of each
   (pair, statistic) group is kept, and the `n_final=3` best groups go forward.
2. **Test split.** Fresh, independent outputs are drawn for the pairs that go
   forward. The k <= 3 chosen events are now fixed, and each gets two one-sided
   Clopper-Pearson bounds of error alpha / (2k), where alpha = 1 - confidence.
3. **Union bound.** eps_lower = max(0, max over the k events). By Bonferroni over
   the 2k intervals, P(eps_lower > true eps) <= alpha for every
   (eps, delta)-DP mechanism. This alpha is the **false-alarm rate** of
   `AuditResult.violates(epsilon)`, which is `eps_lower > epsilon`.

The events are chosen on data that the bound never sees. This is what makes
searching hundreds of thresholds, several statistics and several neighbour pairs
safe: the search costs selection samples but no confidence. An engine test
(`tests/audit/test_engine.py`) checks the calibration. Over 300 audits of the
exactly-1-DP Laplace mechanism at confidence 0.8, violations of eps = 1 must not
be significantly more frequent than 20%. The observed rate is about 3-5%,
because Clopper-Pearson and Bonferroni are conservative.

### Statistics and neighbours for K-norm mechanisms

For noise with density proportional to exp(-||v||_K / s), the log-likelihood
ratio of an output z between inputs t and t' is (||z - t'||_K - ||z - t||_K) / s.
Its level sets do not depend on the scale s. So thresholding the scale-free
score

    llr(z) = (||z - t'||_K - ||z - t||_K) / ||t - t'||_K   in [-1, 1]

gives the Neyman-Pearson (most powerful) events against every noise scale at
once. This covers exactly the bugs that matter: halved noise, a wrong
sensitivity, noise that ignores epsilon. `knorm_statistics` also adds two
density-free 1-D projections: on u = t - t', and on the outer normal of K at
u / ||u||_K, the direction in which u attains the support function.

The loss eps ||t - t'||_K / Delta is largest for neighbours whose difference
u = t - t' is a point of the sensitivity space S_T with the largest K-norm.
`adversarial_neighbours(ball, space)` computes the extreme points of S_T
(`SensitivitySpace.extreme_points`) in the coordinate and sign directions, in
the facet normals of the ball (and of the sub-balls of an intersection), and in
random directions. It keeps those with the largest K-norm, spread apart.
Without a space, it puts u at K-norm Delta, on the vertices of K when they are
known, then on e_1, the all-ones vector and the alternating-sign vector.
`audit_knorm` gives up to 4 such pairs to the selection split, which picks the
most revealing one.

* Audit **with the data domain's space** (`audit_knorm(mech, space)`) to catch a
  sensitivity that is too small for the domain, such as the l_inf sensitivity
  used with the l1 ball.
* Audit **against the mechanism's own claim** (`audit_knorm(mech)`) to catch a
  sampler or a noise scale that does not match (Delta, eps).

### Estimators

`audit_estimator(est, X, y, X', y')` draws each output as one private fit with a
fresh `random_state`. It audits the released vector: by default `coef_` then
`intercept_`, using 1-D projections (on the mean difference fitted on the
selection split, and on each coordinate). Fits are expensive (about 0.4 ms for
linear regression and 1 ms for logistic regression), so estimator audits use
thousands of outputs, not millions. They run on small datasets, where one record
weighs most. `adversarial_records(statistic, ball)` picks the replaced record
for the regression statistic, so that the change of the statistic is an extreme
point of S_T with K-norm equal to the sensitivity.

## API

| name | what it does |
|---|---|
| `audit_samplers(sample_a, sample_b, *, statistics=None, claimed_epsilon=None, delta=0, n_samples=100_000, select_fraction=0.25, confidence=0.95, n_final=3, n_thresholds=128, rng=None)` | audit from two samplers `sample(n, rng) -> (n,) or (n, m)` of outputs on neighbouring inputs |
| `audit_pairs(pairs, ...)` | the engine: several candidate `NeighbourPair(sample_a, sample_b, statistics, label)`; the selection split chooses among them |
| `audit_mechanism(mechanism, value, neighbour, ...)` | any object with `release(values, rng=...)`; K-norm statistics if it has a `ball` |
| `audit_knorm(mechanism, space=None, *, sensitivity=None, n_pairs=4, ...)` | K-norm mechanism on adversarial neighbours |
| `adversarial_neighbours(ball, space=None, *, sensitivity=None, n=4)` | the differences u = T(X) - T(X') used above |
| `audit_estimator(est, X, y, X2, y2, *, output=coefficients, context=None, ...)`, `estimator_sampler`, `adversarial_records` | private estimators (scikit-learn style, with `random_state`) |
| `clopper_pearson(k, n, beta)`, `eps_lower_bound(k_num, n_num, k_den, n_den, beta, delta=0)` | the statistics |
| `AuditResult` | `eps_lower`, `confidence`, `claimed_epsilon`, `event` (the best `EventBound`: statistic, tail, threshold, counts, the two CP bounds), `events` (the Bonferroni family), `n_select`, `n_test`, `n_searched`, `seconds`; `violates(epsilon)`, `passed`, `verdict` |

Every function takes one keyword `rng` (None, an int, a SeedSequence or a
Generator) and uses no global random state.

```python
from knorm.audit import audit_knorm
from knorm.mechanisms import KNormMechanism
from knorm.geometry import LpBall
from knorm.sensitivity import squared_statistic_space

space = squared_statistic_space()  # paper Example 2.1
mech = KNormMechanism(LpBall(2, 1), sensitivity=2.0, epsilon=1.0)  # Delta_inf, not Delta_1!
res = audit_knorm(mech, space, n_samples=200_000, confidence=0.999, rng=1)
print(res)  # eps >= 1.526 -> VIOLATION (the true loss is 3.125 / 2 = 1.5625)
```

## Running it

```bash
python -m knorm.audit                       # the standard suite, 10^6 outputs per side and pair
python -m knorm.audit --samples 200000 --seed 7 --confidence 0.99
python -m knorm.audit --only regression     # rows whose name contains the text
python -m knorm.audit --report docs/audit.md  # this page, with its data in docs/audit/
```

The command prints the table below and exits with status 1 if any verdict is
not the expected one. The suite is one table (`knorm.audit.suite.standard_cases`).
`tests/audit` runs the same rows at test sizes (10^5 outputs, half for the
regression balls; 3000-4000 fits for the estimators), with confidence
1 - 10^-3 and fixed seeds. It takes about 25-35 s on the 2-core reference
machine.

## Results

{run_line}

{table}

Reading the table:

* The sound K-norm mechanisms reach 93-99% of their epsilon. The audit is
  nearly tight for them, so a pass is informative and not a trivial bound of 0.
  l2 and l3 are a little below: their balls are strictly convex, so the
  worst-case ratio is attained only on a ray and not on a cone of positive
  probability.
* The broken rows are the bugs of the issue: (a) noise of half the scale, both
  as a sampler bug and as a declared Delta/2; (b) paper Example 2.1's
  Delta_inf = 2 used with the l1 ball, whose sensitivity is 3.125; (c) noise that
  ignores epsilon. The printed-gamma row injects the paper's objective-
  perturbation gamma = lambda / (exp(eps (q - 1)) - 1) (errata item 1). This
  gamma is negative for q < 1. Here the objective is then non-convex and the
  release is a data-dependent linear image of the noise, so its loss is
  unbounded. The corrected gamma passes on the same datasets.
* The two rows on **seed reuse** publish two monthly releases of Example 2.1
  (l_inf, eps = 1) where one record changes in month 2. With fresh seeds the pair
  is 1-DP and passes. With the same seed for both months, R2 - R1 = T2 - T1
  exactly, the change is revealed and the bound is limited only by the sample
  size. knorm refuses this in the release path: an accountant records a salted
  fingerprint (HMAC-SHA256 under a secret key kept in the ledger) of the state the
  noise starts from, for every form of a seed (an int, a sequence of ints, a
  SeedSequence, a Generator or BitGenerator, an estimator's RandomState), and raises
  `SeedReuseError` on its second use; without an accountant every release from a
  fixed seed, and every reuse of a Generator's state, emits a `PrivacyWarning`
  (tests/mechanisms/test_seeds.py).
* Objective perturbation's real loss on these datasets is far below its
  guarantee. Its proof bounds the noise and Jacobian factors separately. So a
  lower bound near 0.1 is expected there. It is not a lack of power.

## Polytope balls before the triangulation fix

Until the fix of issue 12, `Polytope.from_points` triangulated the hull with the
simplices qhull reports, which overlap when many points are coplanar and keep points
that are not vertices. The volume was then too large and the "uniform" sampler was
not uniform, so the K-norm noise did not have the law the proof assumes. Measured on
the balls knorm releases with (volume before, after; sampler):

| ball | volume before | volume after | sampler before |
|---|---|---|---|
| K_3 (`k3_ball`), regression p = 1 | 160/3 | 160/3 | uniform: not affected |
| cautionary rectangle and diamond | 400, 2420 | 400, 2420 | uniform: not affected |
| outer and inner hulls of Example 2.1 and (sum x, sum y, sum xy) | exact | exact | uniform: not affected |
| outer hull of the regression space, p = 1 (1,500 cuts) | 165.68 +- 0.27 (Monte Carlo; qhull's error swallowed) | 165.2796 (exact) | box rejection: not affected |
| Borda vote polytope, k = 6, from all difference points | 51036.23 (+23%) | 41472 | **not uniform** (up to 7 overlapping cones; KS p = 5e-15) |
| cube, m = 5, given with redundant points | 33.87 (+5.8%) | 32 | **not uniform** (KS p = 3.5e-7) |

The balls of the paper's experiments and of the estimators were not affected: their
hulls are simplicial or given by facets. Polytopes built by users from points with
many coplanar points (vote, count and permutation polytopes, boxes from redundant
corners) were. The triangulation is now a cone decomposition over the exact facets
(`knorm.geometry.triangulation`), checked for closure, with exact volumes (relative
error below 1e-9) and uniformity tests on those degenerate families; a qhull failure
is recorded in `Polytope.qhull_error`, never swallowed.

## What an audit cannot prove

* **Lower bounds only.** An audit proves that a mechanism is *not* eps-DP (at
  the stated confidence). It never proves that it is. A pass means that no
  violation was found among the neighbours, the statistics and the thresholds
  tried, at the sample size used. It is evidence, not a proof. The proofs are
  in the paper and in the docstrings' Notes.
* **Only the inputs tried.** The bound concerns the neighbour pairs audited. A
  failure that only shows on other inputs (another region of the data domain, a
  dataset size, an add/remove neighbour) is invisible. The K-norm audits mitigate
  this through the extreme points of S_T. Translation-equivariance then makes
  the value of T irrelevant.
* **Only events of non-negligible probability.** With n outputs, events of
  probability much below 1/n are never seen. A bug that leaks only on such a set
  is missed. Examples are a delta-type failure with delta < 1/n, or a
  floating-point artefact (next section).
* **Resolution.** With 10^6 outputs the bound falls 1-7% short of the true loss
  of a sound mechanism. A bug that inflates eps by less than that is not
  detectable at that size.
* **Outputs, not side channels.** Timing, memory and the other attributes of
  estimators are not audited (for example `n_iter_`, which the estimators
  document as not private).
* **False alarms.** At confidence 0.999, a sound mechanism is flagged with
  probability at most 10^-3 per audit. Over many audits some false alarms are
  expected. The test suite uses fixed seeds, so it is deterministic.

## Floating-point noise

Mironov (2012), "On significance of the least significant bits for differential
privacy" (ACM CCS 2012), showed that textbook floating-point samplers break
differential privacy. A Laplace sample is computed as Y = -lambda sign(U) log(1 - 2|U|)
from a uniform double U, and f(x) + Y is then rounded. Only a sparse, irregular
subset of the doubles can be produced this way, and which doubles can appear
depends on f(x). So many outputs are possible under one input and impossible
under its neighbour, which is an infinite privacy loss. The paper demonstrated
attacks on the samplers of several DP systems of the time. Later work extended
such attacks to Gaussian samplers and added timing channels (Jin, McMurtry,
Rubinstein & Ohrimenko, "Are we there yet? Timing and floating-point attacks on
differential privacy systems", IEEE S&P 2022). Floating-point arithmetic can
also raise the sensitivity of the statistic itself, for example sums of many
rounded terms (Casacuberta, Shoemate, Vadhan & Wagaman, CCS 2022).

**What knorm does.** By default (`sampler='auto'`) a release is drawn **exactly on a
lattice, in integer arithmetic** (`knorm.mechanisms.lattice`, `knorm.noise.LatticeKNormNoise`):

* the statistic is rounded to a lattice gamma Z^m of power-of-two spacings,
  R(T) = gamma round(T / gamma), and the release is gamma (round(T / gamma) + k) with
  k drawn from the integer law P(k) proportional to exp(-eps ||gamma k||_K / Delta~);
* the rounding moves a difference of neighbours by at most the slack s(gamma) =
  max over the lattice ball of ||gamma (round(a) - round(b))||_K - ||gamma (a - b)||_K,
  computed exactly on a rational outer polytope of K; the spacing is chosen so that
  s(gamma) <= 1/2 % of Delta, and the law uses Delta~ = Delta + s(gamma), so the
  guarantee eps holds for the mechanism that runs, bit for bit;
* k is drawn with integer and rational arithmetic only: discrete Laplace
  coordinates for l1, for l_inf a radius drawn by exact inversion of its tabulated law
  (integer thresholds; finer exact brackets on the rare ties) and a uniform lattice point
  of its box, and exact rejection from a box for
  polytopes (Polytope, K_2, K_3, LinearImage, intersections of those, the
  regression K_T, cut and split balls, and Joseph & Yu's count and vote balls, made
  exact rational polytopes at spacing 1 where they have at most 2^14 rows), and for the histogram
  ball of replace-one counts d discrete Laplaces conditioned on a zero sum (d - 1 drawn,
  kept with probability exp(-rate |sum|), exactly), so the set of possible outputs does not
  depend on T beyond the lattice point round(T / gamma);
* the released doubles are exact multiples of gamma (|value / gamma| < 2^52 is checked).

`Release.sampler`, `Release.lattice_spacing` and `Release.caveats` state which
sampler ran. The test suite runs Mironov's attack (tests/mechanisms/test_lattice.py):
on the continuous l1 mechanism more than 1% of the outputs are impossible under the
neighbour; on the lattice none is, and the exact pmf ratios stay below exp(eps).

**What is still continuous, with a caveat on the release.** Balls without an exact
rational outer polytope (l2 and other l_p with 1 < p < inf in two or more dimensions,
membership-oracle balls, the induced sum ball of Joseph & Yu) fall back to the
binary64 sampler below, and so does `sampler='continuous'`. Objective perturbation
(logistic regression) draws its linear term V in binary64 and feeds it to a numerical
optimiser; the published theta is rounded to a lattice and given exact lattice noise,
whose share of epsilon covers the optimiser's tolerance, but the guarantee of V's
part is that of the real-valued mechanism. The binary64 sampler is a
`numpy.random.Generator` (PCG64, not cryptographically secure; `rng=None` seeds it
from the operating system) giving Laplace coordinates, Gamma radii times uniform
points of K, and `T + V` in binary64: its support as a set of doubles depends on T,
so Mironov-type attacks are not excluded there. The audit above cannot detect this
kind of leak (its events have probabilities of order 1/n and more; the leak sits in
individual doubles). Because the noise is drawn independently of T, the running time
of the rejection samplers depends only on the public ball, not on the data.

**The edges of epsilon (issue 21, item 5).** The exact samplers serve per-lattice-unit
rates from 2^-46 to 2^62 with bounded memory (a discrete Laplace at rate 2^-37 used to
build a 2.4 GB inversion table; the table now always has a rate in (2^-6, 2^-5] and the
rest of the block is drawn apart). One-dimensional balls (box hulls of means and sums,
count balls) are intervals sampled by the exact discrete Laplace at every epsilon, and
the fixed-point sums are added in two int64 halves, so they stay exact at epsilon = 1e9.
Where a ball's lattice law serves epsilon = 1 but not the epsilon asked for (l1 below
about 7e-12, l_inf below 3e-11, polytopes such as var's hull below 2^-23 or above 2^16),
the default sampler refuses with a ValueError naming 'epsilon' and the bound served,
instead of the silent switch to binary64 it used to make; `sampler='continuous'` asks
for that switch. Tests: `tests/mechanisms/test_edges.py` (every statistic at epsilon
1e-12 to 1e9: exact with no caveat, or refused naming epsilon; bounded memory; the law of
the wide-block path by chi-square over every atom) and the edge rows of
`docs/bad_inputs.md` (bounds of 1e300 and 1e-300, complex data).

**Counts are integers, drawn exactly (issue 21).** `count`, `histogram`, `histogramdd`
and `vote` release int64 values with exact integer noise, never continuous noise: the best
ball in the volume order whose lattice law at spacing 1 exists (the count and vote balls
up to 2^14 polytope rows, the histogram ball), else the next (l1, the geometric mechanism,
always has one), and `sampler` states the switch and its epsilon cost. A rate
epsilon / Delta above 64 is rounded down to 64 (only more noise); below 2^-46 the
release is refused with an error naming epsilon (the exact tables grow like Delta /
epsilon). Tests: tests/stats/test_integer_counts.py (0 impossible outputs of
`count(np.zeros(50))` against its neighbour, where continuous noise gave 43%; exact pmf
ratios of neighbours; histograms of 700, 10^4 and (slow) 10^5 bins and epsilon 10^9 within
20 s).

**Remaining work.** Exact lattice laws for the induced sum ball, and for the count and
vote balls at large d (so they join the lattice path, as histograms have), and a cryptographically secure
generator for production releases. (The sums of `knorm.stats`, including the generic
`knorm.stats.release`, are exact on a lattice release: records are rounded to the grid
gamma 2^-20 and added in int64, so order and blocking cannot change them, Casacuberta et
al. 2022, and the noise covers that rounding.)

## Exactness: attacks on the exact samplers, and their tests

The lattice release closed Mironov's attack, and the event audit above finds
nothing at its power. Tried as an adversary would, with tests that have power
against small biases, the guarantee still broke in the ways below (issue 21).
Each attack has a test that fails on the code it broke.

| attack | what it broke | the test that catches it |
|---|---|---|
| P(0) of the fast discrete Laplace | a negative zero was rejected on the first proposed low part only; redrawn to 0 under a minus sign, it was kept: P(0) 1.2 % too heavy at rate 1/128 (every default l1 release), a realised loss of 1.0097 at eps = 1 | the atom table below (z = 11 at 3e8 draws before the fix); `tests/noise/test_enumeration.py` and `test_enumeration_lattice.py`: the exact law of every exact sampler as fractions, by enumerating its random input (discrete Laplace, geometric, Bernoulli(exp(-x)), the l_inf tables, the polytope rejection, the block and histogram laws) |
| every form of a fixed seed | with an accountant `rng=7` twice was refused, but `[7]`, `(7,)`, `np.array([7])`, `default_rng(7)` or `Generator(PCG64(7))` built twice, and an estimator's `RandomState(7)` twice were accepted: on neighbouring data the two releases differed by exactly the difference of the statistics; `True` was a seed; without an accountant only the first reuse warned | `tests/mechanisms/test_seeds.py`: a seed is identified by the state of the bit generator it gives, read before any draw; every form is refused the second time (nothing charged), bools are refused, every reuse without an accountant warns |
| the published seed fingerprint | `Release.ledger_entry.seed_fingerprint` was an unsalted hash: the seed 271828 came back from a published release in 2.3 s, and with it the exact mean | `test_a_release_carries_nothing_from_its_seed` (seeds 0 to 10^5 tried against a Release, its pickle, its JSON and the ledger's repr: no hash-like string is left to match) and `test_fingerprints_are_salted_per_ledger`: HMAC-SHA256 under a secret salt that stays in the ledger; a Release says only `fixed_seed` |
| continuous counts | `count` added binary64 noise: 43 % of `count(np.zeros(50))` outputs were impossible under the neighbouring count 1 | `tests/stats/test_integer_counts.py`: counts, histograms and votes are int64 with exact integer noise (0 impossible outputs), exact pmf ratios of neighbours at most e^eps |
| the edges of the parameter space | l1 at eps = 1e-9 took 2.4 GB (MemoryError at 3e-10); l1, l_inf, mean, var, count, sum, LinearRegression fell back silently to binary64 at extreme eps; `mean` at 1e-9 and histograms of 700 bins raised OverflowError; 10^5 bins ran over 120 s; bounds of 1e300 and complex data gave errors that named no parameter | `tests/mechanisms/test_edges.py` (every statistic at eps from 1e-12 to 1e9: exact with no caveat, or a ValueError naming epsilon and the bound served; bounded memory) and the edge rows of `docs/bad_inputs.md` |
| data in messages | errors printed data: `non-numeric value 'secret-id-42'`, `Got 987654321` for an undeclared label, the gradient norm in `ConvergenceError`, scikit-learn's whole array for a 1-D X | `tests/bad_input/test_no_data_in_messages.py`: canary values in every public entry point (stats, estimators, the CLI on CSV files) never reach a message, a chained exception or a warning |
| ledger files | a ledger truncated to 0 bytes or deleted, opened again with a total, became a fresh full budget; `knorm budget show` on a directory or a read-only ledger said "internal error" | `tests/accounting/test_sqlite.py` (`create` refuses an existing path, `open` never creates and refuses a missing, empty, truncated or foreign file) and `tests/cli/test_budget.py` (one line, exit status 2) |

### Targeted atom tests

For two sets of lattice points A and B an exact law fixes P(A) / P(B), so given
the draws that fall in A or B the count in A is binomial with a known p. The
standardised count z has the power a confidence-interval audit lacks: with 6e8
draws a 0.5 % bias at 0 is 6 standard errors at rate 1/128. `python -m knorm.audit
--atoms` runs the table (`knorm.audit.atoms.standard_atom_cases`), CI runs it at
full size beside the slow tests, and `tests/audit/test_atoms.py` at 1/100 of it
(where a 20 % excess at 0 must be flagged). The broken row is a discrete Laplace
with a 1 % excess at 0, the size of the bug above.

{atoms}

## Files

* `src/knorm/audit/`: `stats.py` (Clopper-Pearson), `core.py` (engine, result),
  `mechanisms.py` (K-norm statistics, adversarial neighbours), `estimators.py`,
  `suite.py` (the table and the deliberately broken mechanisms), `__main__.py`.
* `tests/audit/`: the suite's verdicts, the calibration of the engine, estimator
  audits.
* `tests/property/`: hypothesis property tests of every ball kind (the gauge is a
  norm; membership, support, sampler and volume agree with it; scaling) and of
  the privacy map (the loss is at most eps on Delta K; realised log-density
  ratios never exceed it).
"""


def store_suite_run(rows, folder, *, command, samples, confidence, seed, machine, seconds):
    """Write the rows of one suite run and its settings into ``folder``.

    Parameters
    ----------
    rows : list of (AuditCase, AuditResult)
        The output of :func:`knorm.audit.suite.run_suite`.
    folder : str or pathlib.Path
        Where ``suite.csv`` and ``run.json`` go.
    command : str
        The command line that produced them.
    samples : int
        Outputs per side and pair.
    confidence : float
        Confidence of each lower bound.
    seed : int
        Seed of the suite.
    machine : str
        A description of the machine.
    seconds : float
        Wall time of the run.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    from knorm.audit.suite import table_rows

    meta = dict(command=command, samples=samples, confidence=confidence, seed=seed, machine=machine, seconds=seconds)
    return _store(folder, "suite.csv", "run.json", _FIELDS, table_rows(rows), meta)


def _store(folder, table_name, meta_name, fields, rows, meta):
    """Write one run's rows (CSV) and settings (JSON) into ``folder``; return the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / table_name, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(fields)
        writer.writerows(rows)
    (folder / meta_name).write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def store_atom_run(rows, folder, *, command, seed, machine, seconds):
    """Write the rows of one atom-suite run (``python -m knorm.audit --atoms``) into ``folder``.

    Parameters
    ----------
    rows : list of (AtomCase, list of AtomResult)
        The output of :func:`knorm.audit.atoms.run_atom_suite`.
    folder : str or pathlib.Path
        Where ``atoms.csv`` and ``atoms.json`` go.
    command : str
        The command line that produced them.
    seed : int
        Seed of the suite.
    machine : str
        A description of the machine.
    seconds : float
        Wall time of the run.

    Returns
    -------
    pathlib.Path
        The folder.
    """
    table = [
        [case.name, r.name, r.count_a, r.count_b, f"{r.log_ratio:.6f}", f"{r.estimate:.6f}", f"{r.excess:.4f}",
         f"{r.z:+.2f}", "pass" if r.passed() else "BIAS", "pass" if case.sound else "BIAS"]
        for case, results in rows
        for r in results
    ]  # fmt: skip
    meta = dict(command=command, seed=seed, machine=machine, seconds=seconds)
    return _store(folder, "atoms.csv", "atoms.json", _ATOM_FIELDS, table, meta)


def _table(rows):
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" for _ in rows[0]) + "|"]
    return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows[1:]])


def render_audit_page(folder):
    """Return the markdown audit page for the suite run stored in ``folder``.

    Parameters
    ----------
    folder : str or pathlib.Path
        A folder written by :func:`store_suite_run`.

    Returns
    -------
    str
        The page.
    """
    folder = Path(folder)
    run_line, table = "(no stored run: `python -m knorm.audit --report docs/audit.md` writes one)", ""
    if (folder / "run.json").exists():
        with open(folder / "suite.csv", newline="") as fh:
            run_line = _RUN_LINE.format(**json.loads((folder / "run.json").read_text()))
            table = _table(list(csv.reader(fh)))
    atoms = "(no stored run: `python -m knorm.audit --atoms --report docs/audit.md` writes one)"
    if (folder / "atoms.csv").exists():
        atom_meta = json.loads((folder / "atoms.json").read_text())
        with open(folder / "atoms.csv", newline="") as fh:
            atoms = _ATOM_RUN_LINE.format(**atom_meta) + "\n\n" + _table(list(csv.reader(fh)))
    return _TEMPLATE.format(run_line=run_line, table=table, atoms=atoms)
