"""Certified exact leaves of shuffled binary RR by a short discrete Fourier sum (``O(1)`` per dataset).

Internal module of :mod:`~shuffle_accounting.shuffled_krr.worst_case` (``k = 2``). Its one entry
point, :func:`leaf_bounds`, gives certified ``(log upper, log lower)`` values of
``h_c(eps) = H_E(P_c || Q_c)`` (notation of that module's docstring) for many datasets ``c`` at
once, with work independent of ``n`` per dataset. The windowed convolutions of
:meth:`~shuffle_accounting.shuffled_krr.worst_case.WorstCaseProblem.block_many` cost ``O(sqrt n)``
per dataset (20-40 us at ``n = 1e7``), which makes the *flat band* (deltas just below
``delta(0)``, where every one of the ``n`` datasets must be evaluated exactly) cost minutes at
``n = 1e7``; this costs about 1 us per dataset.

Mathematics. ``Y_c = Bin(c, pbar) + Bin(N - c, p)``, ``N = n - 1``, has the probability
generating function ``G_c(z) = (p + pbar z)^c (pbar + p z)^(N - c)``.

(S1) *Wrapped law, exactly.* For an odd ``M >= 3`` and ``th_j = 2 pi j / M``, the discrete
Fourier inversion of the ``M``-periodic sequence ``Yw(s) = sum_k Y(s + k M)`` is exact:
``Yw(s) = (1/M) sum_{j=0}^{M-1} G(e^{i th_j}) e^{-i s th_j}``; since ``Y`` is real and ``M`` odd,

    Yw(s) = (1/M) [1 + 2 sum_{j=1}^{(M-1)/2} Re(G(e^{i th_j}) e^{-i s th_j})].

On the unit circle ``pbar + p e^{i th} = e^{i th} conj(p + pbar e^{i th})``, so with
``rho(th)^2 = |p + pbar e^{i th}|^2 = 1 - 4 p pbar sin^2(th / 2)`` and
``alpha(th) = arg(p + pbar e^{i th}) = atan2(pbar sin th, p + pbar cos th)``:

    G_c(e^{i th}) e^{-i s th} = rho^N exp(i phi),   phi = (N - c - s) th - (N - 2c) alpha(th).

The modulus does not depend on ``c``: only the phase does, and it is one line of arithmetic.

(S2) *Short sum.* ``rho`` decreases on ``[0, pi]``, so the terms ``j > J`` add at most
``(2/M) ((M-1)/2) rho(th_{J+1})^N <= rho(th_{J+1})^N`` in absolute value. ``J`` is the first
index where that (and (S3)'s analogue) is below ``e^-lev``; ``lev = max(30, 30 - log_level)``,
so the truncation is ``e^-30`` below the level of interest. ``J`` is about 25 whatever ``n``
where the threshold is within a few standard deviations of the mean (it grows with their
number; beyond :data:`J_MAX` terms every value is ``nan``, see there).

(S3) *CDF by a window sum.* For ``1 <= L < M`` the wrapped mass of the window ``[t - L + 1, t]``
is ``Ww(t) = (1/M) [L + 2 sum_j Re(G e^{-i t th_j} g(th_j))]``, ``g(th) = sum_{m<L} e^{i m th}
= e^{i (L-1) th / 2} sin(L th / 2) / sin(th / 2)``, ``|g| <= 1 / sin(th / 2)`` (so the dropped
terms add at most ``rho(th_{J+1})^N / sin(th_{J+1} / 2)``).

(S4) *Unwrapping (Bernstein).* ``Y - E Y`` is a sum of ``N`` independent centred variables
bounded by 1 with variance ``sigma^2 = N p pbar`` (the same for every ``c``), so
``P(|Y - E Y| >= x) `` is at most ``Bern(x) = exp(-x^2 / (2 (sigma^2 + x / 3)))`` on each side.
Every point ``s`` used is within ``x0`` of ``E Y_c`` (the threshold guess is at the same offset
for every ``c``). Hence ``Y(s) <= Yw(s) <= Y(s) + 2 Bern(M - x0)`` (the aliases are
non-negative), and with ``F(t) = P(Y <= t) = P(t - L < Y <= t) + P(Y <= t - L)``:
``Ww(t) - Bern(M - L + 1 - x0) - Bern(M - x0) <= F(t) <= Ww(t) + Bern(L - x0)``. ``L`` and ``M``
are chosen so that each ``Bern`` is ``<= e^-lev``.

(S5) *Rounding (all outward; ``u = 2^-52`` here).* Each kept term carries a relative error
``rel_j`` of ``rho^N = exp((N/2) log1p(-4 p pbar sin^2(th/2)))`` (the exponent's error,
including the rounding of ``p``, plus ``exp``'s) and an absolute error ``e_j`` of its phase
factor (``|e^{ia} - e^{ib}| <= |a - b|``). That factor is computed as
``e^{2 pi i r / M} e^{-i (N - 2c) alpha_j}`` with ``r = (N - c - s) j mod M`` an exact integer
(a table of the ``M``-th roots of unity: a few ``u`` whatever ``r``) and the second factor from
two tables over ``|N - 2c| = q base + r'`` (conjugated where ``N - 2c < 0``), whose arguments err
by at most ``N (u |alpha_j| + d_j)``, ``d_j <= 3u |alpha_j| + 3u th_j / rho_j^2`` the error of
``alpha_j`` (``atan2``'s, and its change under the rounding of ``th_j``, ``p`` and ``pbar``);
with ``cos``/``sin`` of ``k th_j``, ``k < K``, the budget is
``e_j = 16u (N (|alpha_j| + 3 th_j / rho_j^2) + (K + 2) th_j + 16)``. The sums of ``2J`` products
add at most ``2J u`` times the sum of magnitudes (``2J + K + 8`` counted, with the final
operations). ``g``'s computed value carries the absolute error
``8u (L th_j + 2) / sin(th_j / 2) + 8u |g_j|``. The libm functions are taken to be accurate
to a few ulps, as everywhere in the package; every budget has at least a 4x margin over that.
The truncation ``drop`` and the ``Bern`` terms are computed in floating point too; their own
relative rounding (~1e-15) is covered by the factor ``(2J + 1) / M`` that ``drop`` leaves out
(it bounds ``(M - 1 - 2J) / M`` times the largest dropped term) and, for ``Bern`` (terms below
``e^-30``), by the margins of the other budgets.

*Reproducibility.* A dataset's bounds are a function of the dataset alone, bit for bit: every
phase comes from the tables (no recurrence along a run of datasets) and the sums are taken term
by term in a fixed order (no matrix product: BLAS rounds a row differently depending on the
rows computed with it). :func:`~shuffle_accounting.shuffled_krr.worst_case.verify` recomputes
each Fourier piece of a cover in other chunks than the search did; rounding differences of
``~u`` times the magnitudes (``~ a Y_max``) are large against ``h_c`` where ``h_c`` is far below
``a Y_max`` (measured: ``3e-10`` in log at ``eps0 = 10 - 15``, ``h_c ~ e^-12``; ``5e-7`` at
``h_c ~ e^-23``), far above the ``1e-12`` slack of a recorded piece, which made
``verify`` reject sound certificates (e.g. ``certify(10.0, 30001, eps=2.0)`` with every leaf
by this module).

(S6) *The hockey stick.* As in the module (F2): ``h_c = max_t D(t)``,
``D(t) = a Y(t) - b F(t - 1)``, ``a = -p expm1(eps - eps0)``, ``b = expm1(eps)``; the increments
``Delta(t) = a Y(t) - a' Y(t - 1)`` (``a' = p E - pbar``) are positive exactly for
``t <= t*``. ``a'`` is computed as ``p expm1(eps) + tanh(eps0 / 2)`` (``p - pbar =
tanh(eps0 / 2)``): a sum of positive terms, relative error a few ``u`` like ``a`` and ``b``,
which the ``8u`` margins below need. (``p E - pbar`` cancels: its relative error is about
``u / eps0``, e.g. ``4e-8`` at ``eps0 = 1e-8``, and an increment within that of zero was then
certified with the wrong sign, which moved the bracket off ``t*``: upper values below ``h_c``
by up to ``5e-8`` relative.) On a window of ``K`` points around the normal-approximation guess
of ``t*``, the last point with a *certainly* positive increment ``t_a`` and the first with a
certainly negative one ``t_b > t_a`` bracket ``t*``, so
``h_c <= max_{t_a <= t < t_b} (a Y_up(t) - b F_lo(t - 1))`` (plus an ``8u`` margin on the
magnitudes); any ``t`` gives a lower bound ``a Y_lo(t) - b F_up(t - 1)``. Where no bracket is
proved the value is ``nan`` (the caller evaluates that dataset by the windowed convolution);
also where the lower value exceeds the upper one, which the bounds exclude (a self-check: it
would expose a wrong bracket rather than hide it).

The bounds hold for every ``c``; their width (about ``1e-11`` relative at ``delta ~ 1e-4``)
is absolute in nature (``~ u / sigma``), so they are tight only where ``h_c`` is not tiny: the
caller uses them in the flat band.
"""

from __future__ import annotations

import math

import numpy as np

from .._logmath import UNIT_ROUNDOFF

__all__ = ["leaf_bounds", "HALF_WINDOW", "CHUNK", "J_MAX"]

_U = 2.0 * UNIT_ROUNDOFF

#: Points of the threshold window on each side of the guess (``K = 2 HALF_WINDOW + 3`` values).
HALF_WINDOW: int = 4

#: Datasets per vectorised pass (fewer where ``J`` is large: the ``chunk x J`` work arrays hold at
#: most ``2^21`` complex values; the values do not depend on the chunks).
CHUNK: int = 8192

#: Most terms kept. More are needed only where the threshold guess lies far beyond the point mass
#: (``|off|`` hundreds of standard deviations: ``eps`` a good fraction of ``eps0`` at large ``n``,
#: ``J`` ~ 1600 at ``n = 1e6``, 13000 at ``n = 1e7``, tables and work arrays of gigabytes), where
#: ``h_c`` is far below the absolute error of these bounds and no bracket is ever proved; there
#: every value is ``nan`` at once (the caller's windowed leaves). Measured: proved brackets up to
#: ``J = 200`` (26000 random cases, ``n`` up to ``1e7``, ``eps0`` 1e-6 to 300).
J_MAX: int = 1024


def _bern(x: float, var: float) -> float:
    """Bernstein's bound ``exp(-x^2 / (2 (var + x/3)))`` on one tail at distance ``x`` (1 if ``x <= 0``)."""
    if x <= 0.0:
        return 1.0
    return math.exp(-(x * x) / (2.0 * (var + x / 3.0)))


def _reach(lev: float, var: float) -> float:
    """The distance ``x`` with ``Bern(x) = e^-lev``: the root of ``x^2 = 2 lev (var + x / 3)``."""
    return lev / 3.0 + math.sqrt((lev / 3.0) ** 2 + 2.0 * lev * var)


def leaf_bounds(
    n: int, eps0: float, p: float, pbar: float, cs: np.ndarray, eps: float, log_level: float
) -> np.ndarray:
    """Certified ``(log upper, log lower)`` of ``h_c(eps)`` for every ``c`` of ``cs``: ``(2, len(cs))``.

    See the module docstring ((S1)-(S6)). ``nan`` (both rows) where the window holds no proved
    bracket of the threshold; ``-inf`` for ``eps >= eps0`` (``h_c = 0``).

    Args:
        n: Number of users (``N = n - 1`` others).
        eps0: Local privacy parameter.
        p: ``e^eps0 / (e^eps0 + 1)`` as computed by the caller (its rounding is in (S5)).
        pbar: ``1 - p``, likewise.
        cs: Integer datasets ``0 <= c <= n - 1``.
        eps: ``eps >= 0``.
        log_level: The level of interest (sets the truncation ``e^-30`` below it).

    Returns:
        A ``(2, len(cs))`` float array.

    Example:
        >>> import math, numpy as np
        >>> p = 1 / (1 + math.exp(-1.0)); r = leaf_bounds(101, 1.0, p, 1 - p, np.array([50]), 0.01, -3.0)
        >>> bool(r[1, 0] <= r[0, 0] < r[1, 0] + 1e-9)
        True
    """
    cs = np.asarray(cs, dtype=np.int64)
    out = np.full((2, cs.size), -math.inf)
    if eps >= eps0 or cs.size == 0:
        return out
    N = n - 1
    var = N * p * pbar
    a = -p * math.expm1(eps - eps0)
    a2 = p * math.expm1(eps) + math.tanh(0.5 * eps0)  # p E - pbar without its cancellation (S6)
    b = math.expm1(eps)
    h = HALF_WINDOW
    K = 2 * h + 3
    # the guess of t* relative to E Y_c is the same for every c: mean + 1/2 - var log(a'/a)
    off = 0.5 - var * math.log(a2 / a)
    x0 = abs(off) + h + 4.0  # every point used is within x0 of its law's mean
    lev = max(30.0, 30.0 - log_level)
    X = _reach(lev, var)
    L = int(math.ceil(x0 + X))
    M = L + int(math.ceil(x0 + X)) + 1
    M += 1 - M % 2  # odd
    half = (M - 1) // 2
    # (S2)/(S3): J, the first index whose dropped terms are below e^-lev (or every term)
    jj = np.arange(1, min(half, J_MAX + 1) + 1, dtype=float)
    th_all = 2.0 * math.pi * jj / M
    s2 = np.sin(0.5 * th_all)
    log_rho_n = 0.5 * N * np.log1p(-4.0 * p * pbar * s2 * s2)
    drop_w = log_rho_n - np.log(s2)  # log of rho^N / sin(th/2) >= log rho^N
    below = np.flatnonzero(drop_w <= -lev)
    if not below.size and half > J_MAX:
        return np.full((2, cs.size), np.nan)  # beyond J_MAX terms: never a proved bracket
    J = int(below[0]) if below.size else half  # terms 1..J kept; j = J + 1 is the first dropped
    drop = math.exp(float(drop_w[J])) if J < half else 0.0
    th, sh = th_all[:J], s2[:J]
    rho2 = 1.0 - 4.0 * p * pbar * sh * sh
    rn = np.exp(log_rho_n[:J])
    # (S5): relative error of rho^N (exponent's rounding, with p's, then exp)
    y4 = 4.0 * p * pbar * sh * sh
    rel_rho = 8.0 * _U * (np.abs(log_rho_n[:J]) + 0.5 * N * y4 * 4.0 / rho2 + 2.0)
    alpha = np.arctan2(pbar * np.sin(th), p + pbar * np.cos(th))
    kk = np.arange(K, dtype=float)
    ck = np.cos(np.outer(th, kk)) * rn[:, None]  # (J, K)
    sk = np.sin(np.outer(th, kk)) * rn[:, None]
    # g(th) e^{i th}, for Ww at s_0 - 1 (phase phi + th)
    gm = np.sin(0.5 * L * th) / sh
    gph = 0.5 * (L - 1) * th + th
    gre, gim = gm * np.cos(gph), gm * np.sin(gph)
    g_err = 8.0 * _U * (L * th + 2.0) / sh + 8.0 * _U * np.abs(gm)
    mat = np.empty((2 * J, K + 1))
    mat[:J, :K], mat[J:, :K] = ck, sk
    mat[:J, K], mat[J:, K] = rn * gre, -rn * gim
    alias_y = 2.0 * _bern(M - x0, var)
    f_lo_tail = _bern(M - L + 1 - x0, var) + _bern(M - x0, var)
    f_up_tail = _bern(L - x0, var)
    nsum = 2 * J + K + 8
    # (S5) error budgets, from N alone: a dataset's bounds are the same bits whichever datasets
    # are evaluated with it (its phase from the tables, the sums term by term in a fixed order),
    # so that verify, which recomputes a piece of the cover in other chunks, finds the same values
    e_ph = 16.0 * _U * (N * (np.abs(alpha) + 3.0 * th / rho2) + (K + 2.0) * th + 16.0)
    ey = (2.0 / M) * (float(np.sum(rn * (rel_rho + e_ph))) + nsum * _U * (0.5 + float(np.sum(rn))))
    ey = ey * (1.0 + 8.0 * _U) + drop
    ag = np.abs(gm)
    ew = (2.0 / M) * (
        float(np.sum(rn * (ag * (rel_rho + e_ph) + g_err))) + nsum * _U * (0.5 * L + float(np.sum(rn * ag)))
    )
    ew = ew * (1.0 + 8.0 * _U) + drop
    # phases, (S5): e^{i phi} = e^{2 pi i ((N - c - s0) j mod M) / M} e^{-i (N - 2c) alpha_j}; the
    # first factor from its exact integer residue (a table of the M-th roots of unity), the second
    # from two tables over |N - 2c| = q base + r (conjugated where N - 2c < 0)
    jint = np.arange(1, J + 1, dtype=np.int64)
    roots = np.exp(2j * math.pi * np.arange(M) / M)
    base = int(math.isqrt(N)) + 1
    t_hi = np.exp(-1j * np.outer(np.arange(N // base + 1, dtype=float) * base, alpha))
    t_lo = np.exp(-1j * np.outer(np.arange(base, dtype=float), alpha))

    step = max(1, min(CHUNK, 2**21 // max(J, 1)))
    for i0 in range(0, cs.size, step):
        c = cs[i0 : i0 + step]
        mean = c * pbar + (N - c) * p
        # window t0 - 1 .. t0 + K - 2 around the guess, clipped to [0, N] where t* lies (D(t) < 0
        # above N; D(0) = a Y(0) > 0): clipping moves it towards the mean, so x0 still holds
        t0 = np.clip(np.floor(mean + off), 0.0, float(N)).astype(np.int64) - h
        s0 = t0 - 1
        A = N - c - s0
        Bw = N - 2 * c
        ab = np.abs(Bw)
        z = t_hi[ab // base] * t_lo[ab % base]
        z = np.where((Bw < 0)[:, None], np.conj(z), z)
        z = roots[(A[:, None] * jint[None, :]) % M] * z
        # (C, K + 1): the sums for Yw(s_0 + k) and for Ww(s_0 - 1), term by term (not a matrix
        # product: BLAS rounds a row differently with other rows, by ~u times the magnitudes,
        # which is large against h_c where h_c is small)
        zr, zi = np.ascontiguousarray(z.real.T), np.ascontiguousarray(z.imag.T)
        acc = np.zeros((K + 1, c.size))
        tmp = np.empty_like(acc)
        for j in range(J):
            np.multiply(mat[j][:, None], zr[j][None, :], out=tmp)
            acc += tmp
            np.multiply(mat[J + j][:, None], zi[j][None, :], out=tmp)
            acc += tmp
        vals = acc.T
        yhat = (1.0 + 2.0 * vals[:, :K]) / M
        what = (L + 2.0 * vals[:, K]) / M
        y_up = yhat + ey
        y_lo = np.maximum(yhat - ey - alias_y, 0.0)
        f0_lo = np.clip(what - ew - f_lo_tail, 0.0, 1.0)  # F(s_0 - 1)
        f0_up = np.clip(what + ew + f_up_tail, 0.0, 1.0)
        # F(s_k - 1) = F(s_0 - 1) + sum_{i<k} Y(s_i)
        f_lo = np.empty_like(yhat)
        f_up = np.empty_like(yhat)
        f_lo[:, 0], f_up[:, 0] = f0_lo, f0_up
        f_lo[:, 1:] = f0_lo[:, None] + np.cumsum(y_lo[:, :-1], axis=1) * (1.0 - (K + 2) * _U)
        f_up[:, 1:] = f0_up[:, None] + np.cumsum(y_up[:, :-1], axis=1) * (1.0 + (K + 2) * _U)
        f_lo, f_up = np.clip(f_lo, 0.0, 1.0), np.minimum(f_up, 1.0)
        # (S6) increments Delta(s_k) = a Y(s_k) - a' Y(s_{k-1}), k = 1 .. K-1
        mg = 8.0 * _U * (a * y_up[:, 1:] + a2 * y_up[:, :-1])
        pos = a * y_lo[:, 1:] - a2 * y_up[:, :-1] > mg
        neg = a * y_up[:, 1:] - a2 * y_lo[:, :-1] < -mg
        kidx = np.arange(1, K)
        ka = np.max(np.where(pos, kidx, -1), axis=1)  # last certainly positive
        kb = np.min(np.where(neg & (kidx > ka[:, None]), kidx, K), axis=1)  # first negative after
        d_up = a * y_up - b * f_lo
        d_up = d_up + 8.0 * _U * (a * y_up + b * f_up)
        kall = np.arange(K)
        inside = (kall[None, :] >= ka[:, None]) & (kall[None, :] < kb[:, None])
        up = np.max(np.where(inside, d_up, -np.inf), axis=1)
        d_lo = a * y_lo - b * f_up - 8.0 * _U * (a * y_up + b * f_up)
        low = np.max(d_lo, axis=1)
        ok = (ka >= 1) & (kb < K) & (low <= up)  # a lower value above the upper one: a wrong bracket
        with np.errstate(divide="ignore"):
            lu = np.where(up > 0.0, np.log(np.where(up > 0.0, up, 1.0)), -np.inf)
            ll = np.where(low > 0.0, np.log(np.where(low > 0.0, low, 1.0)), -np.inf)
        fu, fl = np.isfinite(lu), np.isfinite(ll)
        lu[fu] += 4.0 * _U * np.abs(lu[fu])  # the logarithm's rounding, outward
        ll[fl] -= 4.0 * _U * np.abs(ll[fl])
        lu = np.minimum(lu, 0.0)
        ll = np.minimum(ll, lu)
        out[0, i0 : i0 + c.size] = np.where(ok, lu, np.nan)
        out[1, i0 : i0 + c.size] = np.where(ok, ll, np.nan)
    return out
