"""Exact output laws of the exact samplers, by enumerating their random inputs (a test helper).

A sampler here draws its randomness only through ``rng.integers``. :class:`EnumRng` is a
Generator whose ``integers`` replays a prefix of forced choices and, at the first draw
past the prefix, stops the run and reports the ways that draw can come out.
:func:`enumerate_law` walks that tree depth first (each run replays its path from the
root), gives each path its exact probability as a Fraction, and collects the outputs:
the law of the sampler, exactly, up to the mass of the paths it pruned (those below a
probability threshold, and the rare classes a rule marks as pruned).

A uniform of at most :data:`SMALL` values is enumerated value by value. Larger uniforms,
64-bit words above all, are enumerated by *classes*: sets of values on which the
sampler's behaviour is constant, each weighted by its exact count over the range and
run with one representative. The classes come from a rule for the function that draws
(found on the call stack), which reads the sampler's own state (its thresholds, block
width, ...) from that function's frame; :func:`spot_check` re-runs an enumeration with a
random member (or the top) of every class in place of the lowest and asserts the same
law, so a dishonest partition shows.

The targets are irrational (powers of exp(-rate)); :func:`check_law` compares each
enumerated atom with the target computed to 60 significant digits: the target must lie
in [p_enum(x), p_enum(x) + pruned] at every atom (up to 1e-40), the atoms' total plus
the pruned mass must be exactly 1, and the pruned mass must be below a stated bound.
A bias at one atom larger than the pruned mass (or any excess at all) fails.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import random
import sys
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from knorm.noise import discrete, linf

# Uniforms with at most this many values are enumerated value by value.
SMALL = 1 << 12
_WORD = 1 << 64
_PREC = 60


class Branch(BaseException):
    """Raised by :class:`EnumRng` at the first draw past its prefix (BaseException: no sampler catches it)."""

    def __init__(self, classes, size):
        super().__init__()
        self.classes, self.size = classes, size


class Prune(BaseException):
    """Raised where a rule declines to enumerate (the rest of the path goes to the pruned mass)."""


# -- classes ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A bit field of the drawn value: ``width`` bits at ``shift``, cut into intervals [cuts[i], cuts[i + 1]).

    ``holes`` (sorted) are values taken out of their intervals and put together in one
    last class (Lemire's rejected words, which all lead to the same redraw).
    """

    shift: int
    width: int
    cuts: tuple
    pruned: frozenset = frozenset()  # indices of intervals whose values are pruned, not run
    holes: tuple = ()

    @property
    def n(self):
        return len(self.cuts) - 1 + (1 if self.holes else 0)

    def _inside(self, i):
        lo, hi = self.cuts[i], self.cuts[i + 1]
        return bisect.bisect_left(self.holes, lo), bisect.bisect_left(self.holes, hi)

    def size(self, i):
        if i == len(self.cuts) - 1:
            return len(self.holes)
        a, b = self._inside(i)
        return self.cuts[i + 1] - self.cuts[i] - (b - a)

    def pick(self, i, mode, rnd):
        if i == len(self.cuts) - 1:
            return self.holes[0] if mode == "low" else self.holes[-1] if mode == "high" else rnd.choice(self.holes)
        lo, hi = self.cuts[i], self.cuts[i + 1]
        holes = set(self.holes[slice(*self._inside(i))])
        if mode == "low":
            x = lo
            while x in holes:
                x += 1
        elif mode == "high":
            x = hi - 1
            while x in holes:
                x -= 1
        else:
            x = rnd.randrange(lo, hi)
            while x in holes:
                x = rnd.randrange(lo, hi)
        return x


class Classes:
    """The classes of one draw of range ``size``: the product of the fields' intervals, other bits free.

    Indexed lazily (mixed radix), so a word with 10^4 classes costs nothing to replay.
    """

    def __init__(self, size, fields):
        self.size = size
        self.fields = tuple(fields)
        bits = size.bit_length() - 1
        used = 0
        for f in self.fields:
            used |= ((1 << f.width) - 1) << f.shift
        if size & (size - 1) or used >> bits:
            raise AssertionError("bit fields need a power-of-two range that holds them")
        self.free = [b for b in range(bits) if not used >> b & 1]
        self._radix = [f.n for f in self.fields]
        self._len = math.prod(self._radix)

    def __len__(self):
        return self._len

    def _parts(self, idx):
        out = []
        for f, r in zip(self.fields, self._radix):
            idx, i = divmod(idx, r)
            out.append((f, i))
        return out

    def count(self, idx):
        """Number of values in class ``idx`` and whether it is pruned."""
        c, pruned = 1 << len(self.free), False
        for f, i in self._parts(idx):
            c *= f.size(i)
            pruned |= i in f.pruned
        return c, pruned

    def value(self, idx, mode, rnd):
        """A member of class ``idx``: the lowest ('low'), the highest ('high') or a random one ('random')."""
        v = 0
        for f, i in self._parts(idx):
            v |= f.pick(i, mode, rnd) << f.shift
        for b in self.free:
            if mode == "high" or (mode == "random" and rnd.getrandbits(1)):
                v |= 1 << b
        return v


def intervals(size, cuts, pruned=()):
    """Classes of a plain uniform on {0, ..., size - 1}: the intervals between the sorted ``cuts``."""
    pts = sorted({0, size, *(c for c in cuts if 0 < c < size)})
    bad = frozenset(i for i in range(len(pts) - 1) if (pts[i], pts[i + 1]) in set(pruned))
    return _Plain(size, tuple(pts), bad)


class _Plain(Classes):
    def __init__(self, size, pts, bad=frozenset()):
        self.size, self.pts, self.bad = size, pts, bad
        self._len = len(pts) - 1

    def count(self, idx):
        return self.pts[idx + 1] - self.pts[idx], idx in self.bad

    def value(self, idx, mode, rnd):
        lo, hi = self.pts[idx], self.pts[idx + 1]
        return lo if mode == "low" else hi - 1 if mode == "high" else rnd.randrange(lo, hi)


class _Union(Classes):
    """Classes that are unions of intervals: ``groups[i]`` lists the (lo, hi) of class i."""

    def __init__(self, size, groups):
        self.size, self.groups = size, [tuple(g) for g in groups if sum(hi - lo for lo, hi in g)]
        self._len = len(self.groups)
        assert sum(hi - lo for g in self.groups for lo, hi in g) == size

    def count(self, idx):
        return sum(hi - lo for lo, hi in self.groups[idx]), False

    def value(self, idx, mode, rnd):
        g = [iv for iv in self.groups[idx] if iv[1] > iv[0]]
        if mode == "low":
            return g[0][0]
        if mode == "high":
            return g[-1][1] - 1
        x = rnd.randrange(sum(hi - lo for lo, hi in g))
        for lo, hi in g:
            if x < hi - lo:
                return lo + x
            x -= hi - lo
        raise AssertionError("unreachable")


def values(size):
    """Every value of a small uniform is its own class."""
    return _Plain(size, tuple(range(size + 1)))


# -- the fake generator --------------------------------------------------------------------
RULES: dict = {}


def rule(func):
    """Register ``make(frame, size, i, n)`` as the class rule of draws made directly by ``func``."""

    def register(make):
        code = getattr(func, "__code__", None) or func.__func__.__code__
        RULES[code] = make
        return make

    return register


class EnumRng(np.random.Generator):
    """A Generator whose ``integers`` follows a forced path of classes (see the module docstring).

    Every other method raises: the exact samplers may call ``integers`` only.
    """

    def __init__(self, prefix, mode="low", rnd=None):
        super().__init__(np.random.PCG64(0))
        self.prefix, self.mode, self.rnd = prefix, mode, rnd or random.Random(0)
        self.pos = 0

    def _classes(self, size, i, n):
        frame = sys._getframe(2)  # the function that called integers (rules never apply further up)
        make = RULES.get(frame.f_code)
        if make is not None:
            classes = make(frame, size, i, n)
            if classes is not None:
                return classes
        if size <= SMALL:
            return values(size)
        where = sys._getframe(2).f_code.co_name
        raise AssertionError(f"no class rule for a uniform of {size} values drawn in {where}")

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if endpoint:
            raise AssertionError("endpoint=True is not used by the samplers")
        if high is None:
            low, high = 0, low
        if size is None and np.ndim(low) == 0 and np.ndim(high) == 0:
            shape: tuple = ()
            lows, highs = [low], [high]
        else:
            shape = np.broadcast_shapes(np.shape(low), np.shape(high)) if size is None else np.shape(np.empty(size))
            lows = np.broadcast_to(np.asarray(low, dtype=object), shape).ravel()
            highs = np.broadcast_to(np.asarray(high, dtype=object), shape).ravel()
        n = len(lows)
        out = []
        for i in range(n):
            lo, span = int(lows[i]), int(highs[i]) - int(lows[i])
            if span < 1:
                raise ValueError("high <= low")
            if span == 1:
                out.append(lo)
                continue
            classes = self._classes(span, i, n)
            if self.pos == len(self.prefix):
                raise Branch(classes, span)
            out.append(lo + classes.value(self.prefix[self.pos], self.mode, self.rnd))
            self.pos += 1
        arr = np.array(out, dtype=dtype).reshape(shape)
        return arr[()] if size is None and arr.ndim == 0 else arr


def _forbid(name):
    def method(self, *args, **kwargs):
        raise AssertionError(f"Generator.{name} was called; only integers() may be")

    return method


for _name in dir(np.random.Generator):
    if not _name.startswith("_") and _name != "integers" and callable(getattr(np.random.Generator, _name)):
        setattr(EnumRng, _name, _forbid(_name))


# -- the enumeration -----------------------------------------------------------------------
@dataclass
class Law:
    """An enumerated law: exact atoms (output -> Fraction), the pruned mass, and the paths run."""

    atoms: dict
    pruned: Fraction
    paths: int
    restart: Fraction = Fraction(0)

    def total(self):
        return sum(self.atoms.values(), Fraction(0))

    def bounds(self, x):
        """Exact bounds on P(x) for the sampler with its restarts (see :func:`restarting`).

        A run ends in x with probability P_1(x) in [p(x), p(x) + pruned] and restarts with
        probability P_r in [restart, restart + pruned], so P(x) = P_1(x) / (1 - P_r).
        """
        p = self.atoms.get(x, Fraction(0))
        return p / (1 - self.restart), (p + self.pruned) / (1 - self.restart - self.pruned)


def enumerate_law(run, *, threshold=Fraction(1, 10**9), mode="low", seed=0, max_paths=400_000, restart=None):
    """The law of ``run(rng)`` (a hashable output) over every path of probability >= ``threshold``.

    Parameters
    ----------
    run : callable
        Draws one output from the generator it is given.
    threshold : Fraction
        Paths (and classes) below this probability are pruned: their mass is added to
        ``pruned`` instead of being run.
    mode : {'low', 'high', 'random'}
        Which member of each class represents it (see :func:`spot_check`).
    """
    rnd = random.Random(seed)
    # Path probabilities as unreduced pairs (num, den): den is the product of the draws' ranges.
    sums: dict = defaultdict(lambda: defaultdict(int))  # output -> den -> sum of nums
    pruned: dict = defaultdict(int)
    t_num, t_den = Fraction(threshold).numerator, Fraction(threshold).denominator
    stack = [((), 1, 1)]
    paths = 0
    while stack:
        prefix, num, den = stack.pop()
        paths += 1
        if paths > max_paths:
            raise AssertionError(f"more than {max_paths} paths: raise the threshold")
        rng = EnumRng(prefix, mode, rnd)
        try:
            out = run(rng)
        except Prune:
            pruned[den] += num
            continue
        except Branch as b:
            den2 = den * b.size
            # A class of count c is kept iff num c / den2 >= threshold, i.e. c >= cmin.
            cmin = -(-(t_num * den2) // (t_den * num))
            cut = 0
            for idx in range(len(b.classes)):
                c, bad = b.classes.count(idx)
                if bad or c < cmin:
                    cut += c
                else:
                    stack.append(((*prefix, idx), num * c, den2))
            if cut:
                pruned[den2] += num * cut
            continue
        sums[out][den] += num
    atoms = {x: sum((Fraction(v, d) for d, v in by.items()), Fraction(0)) for x, by in sums.items()}
    law = Law(atoms, sum((Fraction(v, d) for d, v in pruned.items()), Fraction(0)), paths)
    assert law.total() + law.pruned == 1, "the paths' probabilities do not add up to 1"
    if restart is not None:
        for key in restart if isinstance(restart, (tuple, list, set)) else [restart]:
            law.restart += law.atoms.pop(key, Fraction(0))
    return law


class restarting:
    """Within this context, a call of ``module.name`` made inside another one returns ``sentinel``s.

    A sampler that rejects and calls itself afresh (the fast path's negative zeros) restarts:
    its output law P satisfies P(x) = P_1(x) + P_r P(x), with P_1 the law of the outputs of one
    run that does not restart and P_r the probability that it does. The nested call returns
    the sentinel, which flows through the sampler's own code; an output equal to the sentinel
    is a restart (:meth:`Law.bounds`), anything else it turned into would show as an atom
    outside the support. The nested call must have the outer call's parameters and n = 1.

    With ``sequential=True`` every call after the first returns sentinels (a rejection loop
    that calls the sampler afresh for the rejected entries, e.g. the CKS discrete Laplace).
    """

    def __init__(self, module, name, sentinel, same=lambda outer, inner: outer == inner, sequential=False):
        self.module, self.name, self.sentinel, self.same = module, name, sentinel, same
        self.sequential = sequential
        self.real = getattr(module, name)

    def __enter__(self):
        depth: list = []
        first: list = []

        def wrapper(*args):
            run = next(a for a in args if isinstance(a, np.random.Generator))  # one EnumRng per run
            if self.sequential and first and first[0][0] is run and not depth:
                depth.append(first[0][1])
                try:
                    return wrapper(*args)
                finally:
                    depth.pop()
            if not depth:
                first[:] = [(run, args)]
            if depth:
                assert self.same(depth[0], args), f"{self.name} restarted with other parameters: {args}"
                n = args[2]
                assert n == 1, "a restart of more than one draw"
                return np.full(n, self.sentinel, dtype=np.int64)
            depth.append(args)
            try:
                return self.real(*args)
            finally:
                depth.pop()

        setattr(self.module, self.name, wrapper)
        return self

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.real)


def spot_check(run, **kwargs):
    """Assert that the class partition is honest: the top and a random member of each class give the same law.

    Returns the law (from the lowest members).
    """
    law = enumerate_law(run, **kwargs)
    for mode in ("high", "random"):
        other = enumerate_law(run, mode=mode, **kwargs)
        assert other.atoms == law.atoms and other.pruned == law.pruned, f"classes not constant ({mode} members)"
    return law


# -- targets -------------------------------------------------------------------------------
def dec(x):
    """A Fraction (or int) as a Decimal at the working precision."""
    x = Fraction(x)
    with localcontext() as ctx:
        ctx.prec = _PREC
        return Decimal(x.numerator) / Decimal(x.denominator)


def exp_neg(x):
    """exp(-x) for a rational x >= 0, to 60 significant digits (decimal; independent of knorm)."""
    with localcontext() as ctx:
        ctx.prec = _PREC
        return (-dec(x)).exp()


def check_law(law, target, *, max_pruned, tol=Decimal("1e-40")):
    """Assert target(x) in [p(x), p(x) + pruned] for every enumerated atom x, and pruned <= max_pruned.

    ``target`` returns a Decimal (or Fraction); every enumerated atom must have positive target.
    """
    assert law.pruned <= max_pruned, f"pruned mass {float(law.pruned):.3g} above {float(max_pruned):.3g}"
    with localcontext() as ctx:
        ctx.prec = _PREC
        for x in law.atoms:
            t = target(x)
            t = dec(t) if isinstance(t, (Fraction, int)) else t
            lo, hi = (dec(v) for v in law.bounds(x))
            assert t > 0, f"atom {x!r} is outside the support"
            assert lo - tol <= t, (
                f"atom {x!r}: enumerated at least {float(lo)!r} > target {float(t)!r} (ratio {lo / t})"
            )
            assert t <= hi + tol, f"atom {x!r}: enumerated at most {float(hi)!r} < target {float(t)!r}"


# -- class rules of the samplers' draws ------------------------------------------------------
def _inv_field(thresholds, width, shift):
    """W field cut at the inversion thresholds: open intervals between them, and the ties W = T.

    At 40 bits a tie has probability 2^-40: ties are pruned. With fewer bits (tests of the
    tie path) they are run, and their further bits enumerated by _rule_resolve_tie.
    """
    ts = sorted(set(int(t) for t in thresholds if 0 < t < 1 << width))
    cuts = sorted({0, 1 << width, *ts, *(t + 1 for t in ts)})
    ties = frozenset(i for i in range(len(cuts) - 1) if cuts[i] in ts and width >= 32)
    return Field(shift, width, tuple(cuts), ties)


@functools.lru_cache(maxsize=64)
def _dyadic_word(table, j, signed):
    fields = [_inv_field(table._T_int[1:], discrete._W_BITS, discrete._W_SHIFT)]
    if j:
        fields.append(Field(discrete._W_SHIFT - j, j, tuple(range((1 << j) + 1))))  # R: every value
        fields.append(Field(1, discrete._BLOCK_RATE_BITS, (0, 1, 1 << discrete._BLOCK_RATE_BITS)))  # A-top: 0 or not
    if signed:
        fields.append(Field(0, 1, (0, 1, 2)))  # the sign bit
    return Classes(_WORD, fields)


@rule(discrete._fast_dyadic)
def _rule_fast_dyadic(frame, size, i, n):
    loc = frame.f_locals
    if size != _WORD:  # A's other bits, compared with s R
        return intervals(size, [int(loc["sr"][i])])
    return _dyadic_word(loc["table"], loc["j"], bool(loc["signed"]))


@functools.lru_cache(maxsize=64)
def _table_word(table):
    return Classes(_WORD, [_inv_field(table._T_int[1:], table.w_bits, 64 - table.w_bits)])


@rule(discrete._GeometricTable.sample)
def _rule_table_sample(frame, size, i, n):
    return _table_word(frame.f_locals["self"])


@rule(discrete._GeometricTable._resolve_tie)
def _rule_resolve_tie(frame, size, i, n):
    """A tie's further bits V (64 at a time), compared with the next digit of exp(-beta q) for every
    tied q (the same bits serve them all): cut at each digit; V equal to one (2^-64) is pruned."""
    loc = frame.f_locals
    self, k = loc["self"], loc["k"]
    digits = [discrete._exp_neg_floor(self.beta * q, self.w_bits + 64 * (k + 1)) & (_WORD - 1) for q in loc["tied"]]
    return intervals(_WORD, [c for d in digits for c in (d, d + 1)], pruned=[(d, d + 1) for d in digits])


@rule(discrete._later_rounds)
def _rule_later_rounds(frame, size, i, n):
    """Rounds j >= 2 of CKS Algorithm 1: [uniform < a] for a uniform on {0, ..., b j - 1} (or b)."""
    loc = frame.f_locals
    if size == loc["j"] != int(loc["b"]) * loc["j"]:
        return None  # the Bernoulli(1 / j) factor of the split form: value by value
    return intervals(size, [int(loc["a"][i])])


@rule(discrete._bernoulli_exp_frac)
def _rule_exp_frac(frame, size, i, n):
    """The batched first m rounds: only the comparisons with the thresholds thr_k matter."""
    loc = frame.f_locals
    a, b, m = int(loc["a"][i]), int(loc["b"] if np.ndim(loc["b"]) == 0 else loc["b"][i]), loc["m"]
    return intervals(size, _frac_thresholds(a, b, m))


@rule(discrete._bernoulli_exp1)
def _rule_exp1(frame, size, i, n):
    """Rounds 2..k of Algorithm 1 with gamma = 1 succeed iff w < span / k!: the intervals between those
    thresholds with an even (odd) number of successes give the same output and are one class; the
    last (all rounds succeed) goes on."""
    span, rounds = frame.f_locals["span"], frame.f_locals["rounds"]
    cuts = [span // math.factorial(k) for k in range(1, rounds + 1)]  # successes k on [cuts[k], cuts[k - 1])
    groups: list = [[], [], [(0, cuts[-1])]]
    for k in range(1, rounds):
        groups[k % 2].append((cuts[k], cuts[k - 1]))
    return _Union(size, groups)


@rule(discrete._random_bits)
def _rule_random_bits(frame, size, i, n):
    """Bits of a word, taken as np.unpackbits of its little-endian bytes: bit 7 - b % 8 of byte b // 8."""
    used = min(64, frame.f_locals["n"] - 64 * i)
    fields = [Field(8 * (b // 8) + 7 - b % 8, 1, (0, 1, 2)) for b in range(used)]
    return Classes(_WORD, fields)


@functools.lru_cache(maxsize=4096)
def _lemire_field(h, shift, values=None):
    """32-bit x at ``shift`` for Lemire's uniform below h: x h >> 32 is constant on
    [ceil(v 2^32 / h), ceil((v + 1) 2^32 / h)); the one word per value v that is rejected
    (x h mod 2^32 < 2^32 mod h) is a hole. Cut at every value, or only at ``values``
    (a consumer that compares the uniform with those values alone)."""
    thresh = (1 << 32) % h
    if thresh > 1 << 20:
        raise AssertionError(f"too many rejected words for an enumeration (h = {h})")
    holes = []
    for v in range(h):
        x0 = -(-(v << 32) // h)
        if (x0 * h) % (1 << 32) < thresh:
            holes.append(x0)
    vs = range(h + 1) if values is None else {0, h, *(v for v in values if 0 < v < h)}
    cuts = sorted({min(-(-(v << 32) // h), 1 << 32) for v in vs})
    return Field(shift, 32, tuple(cuts), holes=tuple(holes))


def _lemire_word(hs, values=None):
    """A word feeding two (or one) Lemire uniforms, its low half first (little-endian uint32 view)."""
    if sys.byteorder != "little":  # pragma: no cover
        raise AssertionError("the Lemire rules assume a little-endian machine")
    vals = values or [None] * len(hs)
    fields = [_lemire_field(int(h), 32 * k, vals[k]) for k, h in enumerate(hs) if h > 1]
    return Classes(_WORD, fields)


def _frac_thresholds(a, b, m):
    return [a**k * b ** (m - k) * (math.factorial(m) // math.factorial(k)) for k in range(1, m + 1)]


@rule(discrete._uniform_below)
def _rule_uniform_below(frame, size, i, n):
    """Lemire words; a consumer that only compares the uniform (Bernoulli ratios, the batched
    rounds) lumps the values between its comparison points."""
    if size != _WORD:
        return None  # numpy's own bounded integers for large bounds: value by value if small
    h = [int(v) for v in frame.f_locals["h"][2 * i : 2 * i + 2]]
    caller = frame.f_back
    loc = caller.f_locals
    elems = range(2 * i, 2 * i + len(h))
    if caller.f_code is discrete._bernoulli_ratio.__code__:
        values = [(int(loc["a"].ravel()[e]),) for e in elems]
    elif caller.f_code is discrete._bernoulli_exp_frac.__code__:
        b = np.broadcast_to(loc["b"], loc["a"].shape)
        values = [tuple(_frac_thresholds(int(loc["a"][e]), int(b[e]), loc["m"])) for e in elems]
    else:
        values = None
    return _lemire_word(h, values)


@rule(linf.uniform_rows)
def _rule_uniform_rows(frame, size, i, n):
    if size != _WORD:
        return None  # rejected words are redrawn with numpy's bounded integers, value by value
    loc = frame.f_locals
    full = np.ascontiguousarray(loc["full"]).ravel()
    return _lemire_word([int(v) for v in full[2 * i : 2 * i + 2]])


@rule(linf.InversionTable.sample)
def _rule_inversion_table(frame, size, i, n):
    """The top ``bits`` bits W, cut at every lo_x and hi_x; W in [lo_x, hi_x) for some x (undecided
    by the table: the lazy path, probability about 2^-60) and W beyond the table are pruned."""
    return _inversion_word(frame.f_locals["self"])


@functools.lru_cache(maxsize=64)
def _inversion_word(table):
    bits = table.bits
    lo, hi = [int(v) for v in table.lo], [int(v) for v in table.hi]
    cuts = sorted({0, 1 << bits, *lo, *hi})
    bad = set()
    for k in range(len(cuts) - 1):
        w = cuts[k]
        if w >= lo[-1] or any(a <= w < b for a, b in zip(lo, hi)):
            bad.add(k)
    return Classes(_WORD, [Field(64 - bits, bits, tuple(cuts), frozenset(bad))])


@rule(linf.InversionTable._invert_lazy)
def _rule_invert_lazy(frame, size, i, n):
    raise Prune


def product_law(*laws):
    """The law of the tuple of independent draws (a helper for targets)."""
    out: dict = defaultdict(Fraction)
    for combo in itertools.product(*(law.items() for law in laws)):
        key = tuple(k for k, _ in combo)
        out[key] += math.prod((p for _, p in combo), start=Fraction(1))
    return dict(out)
