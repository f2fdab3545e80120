"""Certified upper bound on the privacy curve of shuffled k-RR: the exact privacy-blanket divergence.

Setting (Balle, Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle Model*, CRYPTO 2019,
Sec. 3 and 4.1): ``n`` users each apply k-RR with local privacy ``eps0``; the target user holds
``x0`` in ``D`` and ``x1`` in the neighbouring ``D'``; the other ``n - 1`` users are arbitrary.
k-RR decomposes as ``R(x) = (1 - gamma) delta_x + gamma Uniform([k])`` with
``gamma = k pbar``, ``pbar = 1 / (e^eps0 + k - 1)``, ``p = e^eps0 pbar``, ``c = p - pbar = 1 - gamma``.

The adversary is additionally told which of the others drew from the blanket and what the others
hold (giving information to the adversary can only increase the divergence, so the result is an
upper bound for every dataset; it is the optimal-decomposition bound discussed by Su, Cheng, Wang,
*Bayesian Advantage of Re-Identification Attack in the Shuffle Model*). What remains is the multiset
of the blanket outputs plus the target's output, with sufficient statistic ``(h0, h1, S)``: ``h0``
(``h1``) outputs equal to ``x0`` (``x1``), ``S`` outputs in total. The likelihood ratio is

    L(h0, h1, S) = (pbar S + c h0) / (pbar S + c h1).

Generative form used for the computation (every other user independently):
``A`` = blanket draws landing in ``{x0, x1}`` ~ Bin(n-1, 2 pbar); given ``A = a``,
``B`` = blanket draws landing elsewhere ~ Bin(n-1-a, (k-2) pbar / (1 - 2 pbar)); given ``A = a``
the number of them at ``x0`` is Bin(a, 1/2). The target outputs ``x0`` w.p. ``p``, ``x1`` w.p.
``pbar`` and a third value w.p. ``(k-2) pbar`` (under ``D``; ``p`` and ``pbar`` swap under ``D'``).
With ``T = h0 + h1``, the event ``L > e^eps`` is ``S < sigma(h0, T)`` with

    sigma(h0, T) = (e^eps0 - 1) (h0 - e^eps h1) / (e^eps - 1),   h1 = T - h0,

so for each ``(T, h0)`` the sum over ``S`` is a binomial CDF of ``B``:

    P_D(h0, T, S <= s) = P(A=T-1) F_{T-1}(s-T) [p b_{T-1}(h0-1) + pbar b_{T-1}(h0)]
                         + (k-2) pbar P(A=T) b_T(h0) F_T(s-T-1),

``b_m`` the Bin(m, 1/2) pmf and ``F_a`` the CDF of ``B | A = a``. The divergence is
``delta(eps) = sum_{T, h0} P_D(h0, T, S <= s_max) - e^eps P_D'(h0, T, S <= s_max)``; for ``h0``
whose ``sigma`` lies above the bulk of ``S`` the ``h0``-sum collapses to binomial tails.

Rigour (every step rounds outward):

* ``T`` and ``S`` are restricted to windows around their means. Every dropped term of the
  hockey-stick sum is at most its ``P_D`` mass and is non-zero only where ``L > e^eps``; the
  dropped part is bounded by the smaller of the exact binomial tail mass (under ``D``) of leaving
  the window and a joint Chernoff bound on leaving it *and* having ``L > e^eps`` (the event is
  linear in the per-user counts), and that bound is added to delta. Windows widen until it is
  below ``1e-10`` of the result, so tiny deltas (far below ``1e-300``) stay accurate in log space.
  A work budget (:data:`MAX_PAIRS`) stops the widening; past it the value is still certified but
  may be looser (this needs deltas far below ``1e-300`` at ``n >= 1e6``).
* A boundary ``S = sigma`` whose side is uncertain in floating point (a provable error band,
  relative to ``|sigma|``: see ``BlanketEvaluator._sigma_band``) is left out of the sum and charged to
  the error budget with its full bound ``min(1, |log L - eps|) P_D``; every budget is always
  added, also when no outcome lies certainly inside the region.
* Close to ``eps0`` the value is also bounded by the chord of the convex curve ``E -> delta``
  between a point where the direct evaluation is accurate and ``delta(e^eps0) = 0``
  (``BlanketEvaluator.certified``); every value is capped at 1.
* When even the narrowest window exceeds the work budget (``n`` around ``1e7`` and more) the
  bound is evaluated at fewer users, which is sound because the blanket divergence is
  non-increasing in ``n`` (``BlanketEvaluator._within_budget``); memory stays bounded.
* Supported parameters (:func:`check_krr_parameters`): ``eps0`` in ``[EPS0_MIN, EPS0_MAX] =
  [1e-250, 700]``, ``k <= 2^53``, ``n <= 1e15``.
* Positive and negative parts are accumulated separately in log space (log-pmfs by Loader's
  saddle-point method, accurate to ~1e-13 relative for any ``n``; CDFs by the regularised
  incomplete beta function or, in underflowing tails, by a bounded series) and the result is
  inflated by ``1e-9 (Pos + Neg)``, far above the accumulated floating-point error.

The returned value is therefore never below the exact blanket divergence, and within about
``1e-6`` relative of it.
"""

from __future__ import annotations

import math

import numpy as np

from .._binomial import log_binom_cdf as _log_binom_cdf
from .._binomial import log_binom_pmf as _log_binom_pmf
from .._binomial import log_binom_sf as _log_binom_sf
from .._binomial import logsumexp
from .._validation import check_int, check_real, check_real_array
from ..randomizers import KRR

__all__ = [
    "MAX_PAIRS",
    "EPS0_MIN",
    "EPS0_MAX",
    "K_MAX",
    "N_MAX",
    "SoundnessError",
    "check_krr_parameters",
    "certified_log_delta",
    "certified_log_delta_grid",
    "blanket_degenerate",
    "blanket_log_delta_bruteforce",
]

#: Supported range of the local privacy parameter. Above ``EPS0_MAX`` the blanket probability
#: ``pbar = 1 / (e^eps0 + k - 1)`` approaches the subnormal range (``e^-708``) and ``e^eps0``
#: overflows at 709.78; below ``EPS0_MIN`` ``e^eps0 - 1`` is subnormal. Shuffled k-RR with such an
#: ``eps0`` is rejected rather than accounted with lost precision.
EPS0_MAX: float = 700.0
EPS0_MIN: float = 1e-250
#: Largest number of categories and of users: counts are carried exactly as doubles, and the
#: threshold band of the blanket sum stays narrower than one step in ``h0`` (see ``_sigma_band``).
K_MAX: int = 2**53
N_MAX: int = 10**15


class SoundnessError(RuntimeError):
    """Internal error: a certified value failed a soundness check (NaN, or below an exhibited value).

    Never raised for valid input unless the library has a bug; raised instead of returning a
    number that could under-state the privacy loss.
    """


def check_krr_parameters(k, eps0, n) -> tuple[int, float, int]:
    """Validate and normalise the ``(k, eps0, n)`` of shuffled k-RR (shared by every entry point).

    Args:
        k: Number of categories, an integer in ``[2, K_MAX]``.
        eps0: Local privacy parameter, finite, in ``[EPS0_MIN, EPS0_MAX]``.
        n: Number of users, an integer in ``[1, N_MAX]``.

    Returns:
        ``(k, eps0, n)`` as ``(int, float, int)``.

    Raises:
        ParameterError: Naming the parameter, the allowed range and the value.

    Example:
        >>> check_krr_parameters(3, 1, 10.0)
        (3, 1.0, 10)
    """
    k = check_int("k", k, minimum=2, maximum=K_MAX)
    eps0 = check_real("eps0", eps0, low=EPS0_MIN, high=EPS0_MAX)
    n = check_int("n", n, minimum=1, maximum=N_MAX)
    return k, eps0, n


#: Relative inflation of the positive and negative parts (covers floating-point error).
_REL_INFLATION = 1e-10
#: Windows are widened until the dropped mass is below this fraction of the result.
_TAIL_FRACTION = 1e-10
#: Default work budget: (T, h0) pairs evaluated per eps (about 2 s). Above it, windows stop
#: widening and the (still certified) bound may be looser than the exact divergence; this only
#: happens for deltas far below 1e-100.
MAX_PAIRS = 1.5e6
#: Below this many pairs the full sum is taken directly (no windows).
_SMALL_PAIRS = 3e4
#: Largest CDF table (entries) that a window shares between the eps of a grid (32 MB per array).
_CDF_TABLE_MAX = 4_000_000
#: eps evaluated together by one ``log_delta_many`` call (their pair arrays stay cache-sized).
_GRID_BATCH = 2
#: Smallest number of eps for which a window's CDF table is worth building.
_TABLE_MIN_EPS = 16
#: First window half-width in standard deviations (widened when the dropped-mass bound is too big).
_Z_START = 6.0
#: Widest window in standard deviations (where the blanket is extremely thin, e.g. eps0 = 300,
#: the windows never cover the whole range; the dropped mass beyond it is bounded and added).
_Z_MAX = 1e6


# ---------------------------------------------------------------------------------------------
# The blanket divergence
# ---------------------------------------------------------------------------------------------


def _cat(parts: list, dtype=float) -> np.ndarray:
    """``np.concatenate`` that also accepts an empty list (an empty array)."""
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _groups(g: np.ndarray, m: int) -> list[np.ndarray]:
    """For group labels ``g`` in ``[0, m)``: the index array of each group (stable order)."""
    order = np.argsort(g, kind="stable")
    edges = np.searchsorted(g[order], np.arange(m + 1))
    return [order[edges[i] : edges[i + 1]] for i in range(m)]


class BlanketEvaluator:
    """Precomputed constants for one ``(k, eps0, n)``."""

    def __init__(self, k: int, eps0: float, n: int) -> None:
        self.k, self.eps0, self.n = k, eps0, n
        self.N1 = n - 1
        krr = KRR(k, eps0)
        self.log_p, self.log_pbar = krr.log_p, krr.log_pbar
        self.pbar = math.exp(self.log_pbar)
        self.em1 = math.expm1(eps0)  # c / pbar
        self.log_2pbar = math.log(2.0) + self.log_pbar
        self.log_1m2pbar = math.log1p(-2.0 * self.pbar)
        self.qB = krr.other_given_not_pair
        self.log_km2pbar = math.log(k - 2) + self.log_pbar if k > 2 else -math.inf
        self.gamma = k * self.pbar
        self._cache: dict[float, dict] = {}
        self._chernoff: dict[tuple[float, str, float], float] = {}
        self.last_z = 0.0  # window (in standard deviations) of the latest certified() call
        self._smaller: dict[int, BlanketEvaluator] = {}  # blankets of fewer users (see _within_budget)
        self._grid_z: float | None = None  # window of the latest certified_many call

    # -- windows ---------------------------------------------------------------------------
    def _bounds(self, z: float) -> tuple[int, int, int, int]:
        """``(t_lo, t_hi, s_lo, s_hi)``: the ``T`` and ``S`` windows at ``z`` standard deviations."""
        N1 = self.N1
        q2 = 2.0 * self.pbar
        mA, sA = N1 * q2, math.sqrt(N1 * q2 * (1 - q2))
        g = min(self.gamma, 1.0)
        mS, sS = N1 * g, math.sqrt(N1 * g * (1 - g))
        t_lo = max(1, int(math.floor(mA - z * sA - 1)))
        t_hi = min(self.n, int(math.ceil(mA + z * sA + 2)))
        s_lo = max(1, int(math.floor(1 + mS - z * sS - 1)))
        s_hi = min(self.n, int(math.ceil(1 + mS + z * sS + 1)))
        return t_lo, t_hi, s_lo, s_hi

    def _log_joint_chernoff(self, eps: float, which: str, thr: float) -> float:
        """Chernoff upper bound on ``log P_D(L > e^eps and C)`` for one linear constraint ``C``.

        ``L > e^eps`` is exactly ``Z = h0 - e^eps h1 - r S > 0`` with ``r = (e^eps - 1)/(e^eps0 - 1)``
        (multiply out ``(pbar S + c h0) > e^eps (pbar S + c h1)``; ``c / pbar = e^eps0 - 1``).
        ``C`` is ``S >= thr`` (``which="S>"``), ``S <= thr`` (``"S<"``), ``T >= thr`` (``"T>"``) or
        ``T <= thr`` (``"T<"``), ``T = h0 + h1``. Every user contributes independently to
        ``(Z, S, T)`` (the target: ``x0`` w.p. ``p``, ``x1`` w.p. ``pbar``, a third value w.p.
        ``(k-2) pbar``; each other user: blanket draw of each value w.p. ``pbar``, else nothing), so
        for all ``lam, mu >= 0``

            P(Z >= 0, C) <= E[exp(lam Z + mu (+-)(X - thr))] = m_target * m_user^(n-1) * e^(-+mu thr).

        Any ``(lam, mu)`` gives a valid bound; grid searches pick a good one, and
        ``1e-9 (1 + |value|)`` is added for rounding.
        """
        key = (eps, which, thr)
        if key not in self._chernoff:
            if len(self._chernoff) > 4096:
                self._chernoff.clear()
            self._chernoff[key] = self._joint_chernoff_uncached(eps, which, thr)
        return self._chernoff[key]

    def _joint_chernoff_uncached(self, eps: float, which: str, thr: float) -> float:
        E = math.exp(eps)
        r = math.expm1(eps) / self.em1
        sgn = 1.0 if which.endswith(">") else -1.0
        xs = (1.0, 1.0, 1.0) if which[0] == "S" else (1.0, 1.0, 0.0)  # increments of S or T
        zs = (1.0 - r, -E - r, -r)  # increments of Z for outputs x0, x1, third value
        lw_t = (self.log_p, self.log_pbar, self.log_km2pbar)
        lw_u = (self.log_pbar, self.log_pbar, self.log_km2pbar)
        l_nb = math.log1p(-self.gamma) if self.gamma < 1.0 else -math.inf
        N1 = self.N1

        def f(lam: np.ndarray, mu: np.ndarray) -> np.ndarray:
            e = [lam * zs[i] + sgn * mu * xs[i] for i in range(3)]
            tgt = np.logaddexp(np.logaddexp(lw_t[0] + e[0], lw_t[1] + e[1]), lw_t[2] + e[2])
            usr = np.logaddexp(
                np.logaddexp(l_nb, lw_u[0] + e[0]), np.logaddexp(lw_u[1] + e[1], lw_u[2] + e[2])
            )
            return tgt + N1 * usr - sgn * mu * thr

        # f is convex in (lam, mu). A log-spaced grid, then two finer grids around the best point;
        # any point gives a valid bound, so the search only affects tightness.
        base = np.concatenate([[0.0], np.geomspace(1e-7, 60.0, 47)])
        lam, mu = np.meshgrid(base, base, indexing="ij")
        with np.errstate(over="ignore", invalid="ignore"):
            vals = f(lam, mu)
            best = float(np.nanmin(vals))
            for _ in range(2):
                i, j = np.unravel_index(int(np.nanargmin(vals)), vals.shape)
                gl = lam[:, 0]
                gm = mu[0, :]
                l_lo, l_hi = gl[max(i - 1, 0)], gl[min(i + 1, gl.size - 1)]
                m_lo, m_hi = gm[max(j - 1, 0)], gm[min(j + 1, gm.size - 1)]
                lam, mu = np.meshgrid(np.linspace(l_lo, l_hi, 25), np.linspace(m_lo, m_hi, 25), indexing="ij")
                vals = f(lam, mu)
                best = min(best, float(np.nanmin(vals)))
        if not math.isfinite(best):  # pragma: no cover - defensive
            return 0.0
        return min(0.0, best + 1e-9 * (1.0 + abs(best)))

    def _log_drop(
        self, bounds: tuple[int, int, int, int], eps: float, good_enough: float = -math.inf
    ) -> float:
        """Upper bound on the log of the hockey-stick mass that the windows leave out.

        A dropped outcome contributes at most its ``P_D`` mass, and only if ``L > e^eps``. The
        dropped outcomes are covered by ``S > s_hi``, ``S < s_lo`` and ``T`` outside
        ``[t_lo, t_hi]``; each piece is bounded by the smaller of its exact binomial tail and the
        joint Chernoff bound of :meth:`_log_joint_chernoff` (which also uses ``L > e^eps``).
        """
        t_lo, t_hi, s_lo, s_hi = bounds
        N1 = self.N1
        q2 = 2.0 * self.pbar
        g = min(self.gamma, 1.0)
        t_up = float(_log_binom_sf(t_hi, N1, q2))  # rows T > t_hi need A >= t_hi
        t_dn = float(_log_binom_cdf(t_lo - 1, N1, q2)) if t_lo > 1 else -math.inf
        s_dn = s_up = -math.inf
        if g < 1.0:
            s_dn = float(_log_binom_cdf(s_lo - 2, N1, g))  # P(S <= s_lo - 1), S = 1 + Bin(N1, g)
            s_up = float(_log_binom_sf(s_hi, N1, g))  # P(S >= s_hi + 1)
        parts = [t_up, t_dn, s_dn, s_up]
        if eps > 0.0 and logsumexp(parts) > good_enough:
            pieces = [("T>", t_hi + 1.0), ("T<", t_lo - 1.0), ("S<", s_lo - 1.0), ("S>", s_hi + 1.0)]
            parts = [
                part if part == -math.inf else min(part, self._log_joint_chernoff(eps, w, thr))
                for part, (w, thr) in zip(parts, pieces)
            ]
        return float(logsumexp(parts))

    def _is_full(self, bounds: tuple[int, int, int, int]) -> bool:
        t_lo, t_hi, s_lo, s_hi = bounds
        return t_lo <= 1 and t_hi >= self.n and s_lo <= 1 and s_hi >= self.n

    def _pairs_estimate(self, eps: float, bounds: tuple[int, int, int, int]) -> float:
        """Approximate number of ``(T, h0)`` pairs :meth:`log_delta_at` evaluates (work estimate).

        O(1) memory and time: the per-row count ``H(T) - h_a(T)`` is a clipped linear function of
        ``T``, averaged over at most 2049 evenly spaced rows of the window.
        """
        t_lo, t_hi, s_lo, s_hi = bounds
        rows = float(t_hi - t_lo + 1)
        if self._tail_only(eps, float(s_hi), float(t_hi)):
            return rows
        u = self.em1
        v = math.expm1(eps)
        a, E = u / v, math.exp(eps)
        with np.errstate(over="ignore"):
            c1 = 1.0 / (a * (1.0 + E))
        r1 = E / (1.0 + E)
        T = np.linspace(float(t_lo), float(t_hi), int(min(rows, 2049.0)))
        H = np.clip(s_hi * c1 + T * r1 + 1.0, 0.0, T + 1.0)
        h_a = np.clip(s_lo * c1 + T * r1 - 2.0, 0.0, H)
        return float(np.mean(H - h_a)) * rows + rows

    def _z_for_drop(self, log_level: float, z_min: float, eps: float) -> float:
        """A ``z >= z_min`` whose dropped-mass bound is ``<= exp(log_level)`` (not much above the least).

        First the smallest such ``z`` (to 0.25) with the plain binomial tails only (cheap); if that
        window is much wider, the first of ``z_min + 0.5, + 1, + 2, ...`` that the joint Chernoff
        bound already accepts.
        """

        def ok(z: float, plain: bool) -> bool:
            b = self._bounds(z)
            if self._is_full(b):
                return True
            return self._log_drop(b, eps, math.inf if plain else log_level) <= log_level

        def search(lo: float, hi: float, plain: bool) -> float:
            while not ok(hi, plain):
                lo, hi = hi, hi * 2.0
                if hi > 1e4:  # pragma: no cover - windows are full long before this
                    return hi
            while hi - lo > 0.25:
                mid = 0.5 * (lo + hi)
                if ok(mid, plain):
                    hi = mid
                else:
                    lo = mid
            return hi

        z_plain = search(z_min, max(z_min, 8.0), True)
        if z_plain <= z_min + 1.0 or eps == 0.0:
            return z_plain
        step = 0.5
        while z_min + step < z_plain:  # a few geometric steps with the Chernoff bound
            if ok(z_min + step, False):
                return z_min + step
            step *= 2.0
        return z_plain

    def _z_for_budget(self, eps: float, max_pairs: float, z_min: float) -> float:
        """Largest ``z`` (to 0.05, at least ``z_min``) whose work estimate is ``<= max_pairs``."""
        if self._pairs_estimate(eps, self._bounds(z_min)) > max_pairs:
            return z_min
        lo, hi = z_min, z_min * 2.0
        while self._pairs_estimate(eps, self._bounds(hi)) <= max_pairs:
            if self._is_full(self._bounds(hi)) or hi >= _Z_MAX:
                return min(hi, _Z_MAX)
            lo, hi = hi, hi * 2.0
        while hi - lo > 0.05:
            mid = 0.5 * (lo + hi)
            if self._pairs_estimate(eps, self._bounds(mid)) <= max_pairs:
                lo = mid
            else:
                hi = mid
        return lo

    def window(self, z: float) -> dict:
        """Windows at ``z`` standard deviations, with the exact dropped mass (log)."""
        if z in self._cache:
            return self._cache[z]
        N1 = self.N1
        bounds = self._bounds(z)
        t_lo, t_hi, s_lo, s_hi = bounds
        T = np.arange(t_lo, t_hi + 1, dtype=float)
        w = {
            "T": T,
            "s_lo": s_lo,
            "s_hi": s_hi,
            "full": self._is_full(bounds),
            "bounds": bounds,
            "lA1": _log_binom_pmf(T - 1, N1, self.log_2pbar, self.log_1m2pbar),  # P(A = T-1)
            "lA0": _log_binom_pmf(T, N1, self.log_2pbar, self.log_1m2pbar),  # P(A = T)
            # CDF of B at the window top, for the tail group
            "lF1top": _log_binom_cdf(s_hi - T, N1 - (T - 1), self.qB),
            "lF0top": _log_binom_cdf(s_hi - T - 1, N1 - T, self.qB),
        }
        if len(self._cache) > 8:
            self._cache.clear()
        self._cache[z] = w
        return w

    def _cdf_pair(self, b: np.ndarray, nb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log F_N(b), log F_{N+1}(b+1))`` for ``B ~ Bin(N, qB)``, ``N = nb``.

        Uses ``F_{N+1}(b+1) = F_N(b) + (1 - qB) P(Bin(N, qB) = b + 1)`` (condition on the last
        trial), so one incomplete-beta evaluation serves both.
        """
        l0 = _log_binom_cdf(b, nb, self.qB)
        if self.qB <= 0.0:
            return l0, _log_binom_cdf(b + 1, nb + 1, self.qB)
        lpm = _log_binom_pmf(b + 1, nb, math.log(self.qB), math.log1p(-self.qB))
        return l0, np.logaddexp(l0, math.log1p(-self.qB) + lpm)

    # -- the threshold sigma and its floating-point band ------------------------------------
    def _sigma_band(self, a, E, h0: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(s_dn, s_up, lo, hi)``: certain and possible ends of the region ``S < sigma`` for each ``(T, h0)``.

        ``sigma = a (h0 - E h1)`` with ``h1 = T - h0`` (integers, exact in floating point up to
        2^53), ``a = u / v``, ``E = e^eps``: ``L > e^eps`` is ``S < sigma`` (module docstring).
        Computed as ``fl(a fl(h0 - fl(E h1)))`` with ``a``, ``E`` each within 2 ulp (libm ``exp``
        / ``expm1`` are within 1 ulp, one division): with unit roundoff ``r = 2^-53`` the result is
        within ``12 r a (h0 + E h1)`` of the exact ``sigma`` (first order: ``9 r`` from ``a``, ``5 r``
        from ``E h1``, ``r`` each from the subtraction and the product). Since ``a (h0 + E h1)
        <= |sigma| + 2 a h0``, ``err = 1e-14 (|sig| + 2 a h0)`` (seven times ``12 r``, also
        covering ``sig - err`` rounding) bounds the error, and the exact ``sigma`` lies in
        ``[lo, hi] = [sig - err, sig + err]``. Hence ``S <= s_dn = ceil(lo) - 1`` is certainly in
        the region and ``S > s_up = ceil(hi) - 1`` certainly not. There is no cancellation: the
        error is relative to ``|sigma| + 2 a h0``, not to ``E T`` as in the expanded form
        ``a ((1 + E) h0 - E T)``.

        An overflowing ``E h1`` (only when ``E h1 > 1e308 > n``) makes ``sig = -inf``, which is
        the correct side (``sigma < -1e300``): the band is then empty. A NaN (``a`` overflowing on
        ``h0 = E h1``) gives the widest band ``(-1, n + 1)``, the conservative choice. Both ends
        are clipped to ``[-1, n + 1]`` (``S`` is in ``[1, n]``).
        """
        h1 = T - h0
        with np.errstate(over="ignore", invalid="ignore"):
            sig = a * (h0 - E * h1)
            err = 1e-14 * (np.abs(sig) + 2.0 * a * h0)
            inf = np.isinf(sig)
            lo = np.where(inf, sig, sig - err)
            hi = np.where(inf, sig, sig + err)
            s_dn = np.ceil(lo) - 1.0
            s_up = np.ceil(hi) - 1.0
        top = float(self.n + 1)
        s_dn = np.where(np.isnan(s_dn), -1.0, np.clip(s_dn, -1.0, top))
        s_up = np.where(np.isnan(s_up), top, np.clip(s_up, -1.0, top))
        lo = np.where(np.isnan(lo), -math.inf, lo)
        hi = np.where(np.isnan(hi), math.inf, hi)
        return s_dn, s_up, lo, hi

    def _first_h0(self, a, E, T: np.ndarray, s: float, which: str, guess: np.ndarray):
        """Smallest ``h0`` in ``[1, T + 1]`` with ``s_dn(h0) >= s`` (``which="dn"``) or ``s_up(h0) >= s``.

        Both ends of the band are non-decreasing in ``h0`` (``sigma`` grows by ``a (1 + E) >= 2``
        per step while ``err`` grows by at most ``1e-14 (a (1 + E) + 2 a)``), so the predicate is
        monotone. A few steps from the closed-form ``guess``, then a vectorised bisection for any
        row where the answer is not certified by checking both ``h0`` and ``h0 - 1``.
        """

        def ok(h: np.ndarray, Tv: np.ndarray) -> np.ndarray:
            s_dn, s_up, _, _ = self._sigma_band(a, E, h, Tv)
            return ((s_dn if which == "dn" else s_up) >= s) | (h > Tv)

        top = T + 1.0
        h = np.clip(np.where(np.isfinite(guess), guess, 1.0), 1.0, top)
        for _ in range(6):
            h = np.where(ok(h, T), h, np.minimum(h + 1.0, top))
        # certify: ok(h) and (h == 1 or not ok(h - 1)); otherwise bisect on [1, T + 1]
        bad = ~ok(h, T) | ((h > 1.0) & ok(np.maximum(h - 1.0, 1.0), T))
        if np.any(bad):
            Tb = T[bad]
            a = a[bad] if np.ndim(a) else a  # per-row constants (a grid of eps) follow the rows
            E = E[bad] if np.ndim(E) else E
            lo = np.zeros(Tb.shape)  # predicate false (h = 0 is below the range)
            hi = Tb + 1.0  # predicate true
            while True:
                act = hi - lo > 1.0
                if not np.any(act):
                    break
                mid = np.floor(0.5 * (lo + hi))
                good = ok(np.maximum(mid, 1.0), Tb)
                hi = np.where(act & good, mid, hi)
                lo = np.where(act & ~good, mid, lo)
            h = h.copy()
            h[bad] = np.maximum(hi, 1.0)
        return h

    # -- one eps ---------------------------------------------------------------------------
    def _tail_only(self, eps: float, s_hi: float, t_hi: float) -> bool:
        """True if ``v (2 s_hi + u t_hi) < u / 2`` (then the whole region is in the tail group).

        Evaluated in log space (no overflow for any supported ``eps0``).
        """
        if eps == 0.0:
            return True
        lhs = math.log(math.expm1(eps)) + float(
            np.logaddexp(math.log(2.0 * max(s_hi, 1.0)), math.log(self.em1) + math.log(max(t_hi, 1.0)))
        )
        return lhs < math.log(self.em1) - math.log(2.0)

    def log_delta_at(self, eps: float, w: dict) -> tuple[float, float, float, float]:
        """One ``0 <= eps < eps0`` on window ``w``.

        Each ``(T, h0)`` term ``P_D - e^eps P_D'`` is formed as ``X - Y`` with the common factors
        pulled out, so the large cancellation between ``P_D`` and ``e^eps P_D'`` happens inside
        exactly computed coefficients (``u = e^eps0 - 1``, ``v = e^eps - 1``, ``h1 = T - h0``):

            P(A=T-1) F1 pbar b_{T-1}(h0-1) [u (h0 - h1) - v T - h1 u v] / h0
              - v (k-2) pbar P(A=T) b_T(h0) F0.

        The coefficient is evaluated scaled by ``u max(1, v)`` (no overflow up to
        :data:`EPS0_MAX`) with a rounding bound ``16 eps_m`` times the sum of the magnitudes of
        its terms. Outcomes whose side of ``S = sigma`` is uncertain in floating point (see
        :meth:`_sigma_band`) are left out of the core and charged to the error budget: for such
        an ``S``, ``|S - sigma| <= hi - lo = 2 err`` and ``|d log L / dS'| = u |h0 - h1| /
        ((S' + u h0)(S' + u h1)) <= min(1, u T / S') / S'`` for every ``S'`` between ``S`` and
        ``sigma`` (``|h0 - h1| <= T``; ``u h / (S' + u h) <= 1``), ``S' >= min(max(1, T), lo)``;
        so ``|log L - eps| <= errL`` and the term ``P_D (1 - e^eps / L)_+`` is at most
        ``min(1, errL) P_D``. Every budget (band, coefficient rounding, relative inflation,
        dropped mass) is **always** added, also when no term lies certainly inside the region.
        The computation itself is :meth:`log_delta_many` (vectorised over a grid of ``eps``).

        Returns:
            ``(log core, log error budget, log e^eps Q(region), log dropped mass)``; the certified
            bound is ``core + error budget + dropped mass``.
        """
        core_a, budget_a, neg_a = self.log_delta_many(np.array([float(eps)]), w)
        core, l_budget, lneg = float(core_a[0]), float(budget_a[0]), float(neg_a[0])
        good = max(core, l_budget) + math.log(_TAIL_FRACTION)  # plain tails below this suffice
        return core, l_budget, lneg, self._log_drop(w["bounds"], eps, good)

    def _cdf_table(self, w: dict) -> dict | None:
        """``_cdf_pair`` for every ``(T, s)`` of window ``w`` (shared by every eps of a grid).

        The threshold ``s_dn`` of a pair depends on ``eps``, but it lies in the ``S`` window, so
        one table of ``(log F_{N1-T}(s - T - 1), log F_{N1-T+1}(s - T))`` over ``T`` in the window
        and ``s`` in ``[s_lo - 2, s_hi + 2]`` serves the whole grid (the same elementwise function,
        so the values are identical); pairs outside it are computed directly. Built only where
        it is small (at most :data:`_CDF_TABLE_MAX` entries) and many eps share it.
        """
        if "cdf" in w:
            return w["cdf"]
        T = w["T"]
        s0 = w["s_lo"] - 2
        width = w["s_hi"] + 2 - s0 + 1
        table = None
        if T.size * width <= _CDF_TABLE_MAX:
            s = np.arange(s0, s0 + width, dtype=float)
            b = s[None, :] - T[:, None] - 1.0
            nb = np.broadcast_to(self.N1 - T[:, None], b.shape)
            l0, l1 = self._cdf_pair(b.ravel(), np.ascontiguousarray(nb).ravel())
            table = {"s0": s0, "width": width, "l0": l0.reshape(b.shape), "l1": l1.reshape(b.shape)}
        w["cdf"] = table
        return table

    def _cdf_pair_rows(self, w: dict, row: np.ndarray, s: np.ndarray, Tm: np.ndarray, nb: np.ndarray):
        """``_cdf_pair(s - T - 1, nb)`` for pairs on rows ``row`` of ``w`` (table lookup where possible)."""
        table = w.get("cdf")  # built by certified_many for a grid; one eps computes directly
        if table is None:
            return self._cdf_pair(s - Tm - 1.0, nb)
        j = s - table["s0"]
        inside = (j >= 0) & (j < table["width"])
        ji = np.where(inside, j, 0).astype(np.int64)
        l0 = table["l0"][row, ji]
        l1 = table["l1"][row, ji]
        if not np.all(inside):
            out = ~inside
            d0, d1 = self._cdf_pair(s[out] - Tm[out] - 1.0, nb[out])
            l0 = l0.copy()
            l1 = l1.copy()
            l0[out] = d0
            l1[out] = d1
        return l0, l1

    def log_delta_many(self, eps: np.ndarray, w: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`log_delta_at` (without the dropped mass) for every ``eps`` of an array, in one pass.

        The ``(eps, T, h0)`` terms of all ``eps`` are formed together (vectorised over eps x
        counts) on the shared window ``w``: its binomial rows ``P(A = T)``, ``P(A = T - 1)`` and the
        CDF table of ``B`` (:meth:`_cdf_table`) are computed once. Per-eps constants (``e^eps``,
        ``expm1(eps)``, their logs) are computed with the ``math`` module exactly as for one eps,
        and every per-eps sum is reduced on its own, so each value is the one eps computation.

        Args:
            eps: 1-d array of ``0 <= eps < eps0``.
            w: A window from :meth:`window`.

        Returns:
            ``(log core, log error budget, log e^eps Q(region))``, three arrays of ``eps``'s size.
        """
        eps = np.asarray(eps, dtype=float).ravel()
        m = eps.size
        T = w["T"]
        nT = T.size
        s_lo, s_hi = w["s_lo"], w["s_hi"]
        u = self.em1
        lu = math.log(u)
        lp, lpb = self.log_p, self.log_pbar
        lh = math.log(0.5)
        eps_m = 2.3e-16
        # per-eps constants with libm, exactly as the one-eps evaluation
        E_l = [math.exp(e) for e in eps.tolist()]
        v_l = [math.expm1(e) for e in eps.tolist()]
        Ev = np.asarray(E_l)
        vv = np.asarray(v_l)
        lvv = np.asarray([math.log(v) if v > 0 else -math.inf for v in v_l])
        sc_l = [max(1.0, v) for v in v_l]
        scv = np.asarray(sc_l)
        lscv = np.asarray([math.log(s) for s in sc_l])
        vscv = np.asarray([v / s for v, s in zip(v_l, sc_l)])
        wvv = np.asarray([v / u for v in v_l])
        t_last = float(T[-1])
        tail_only = [self._tail_only(e, float(s_hi), t_last) for e in eps.tolist()]
        # l_umv: log(u - v), direct when v <= u/2 (no cancellation); else v > u/2 forces
        # eps > eps0/2, so eps0 - eps is exact (Sterbenz) and u - v = e^eps expm1(eps0 - eps)
        l_umv = np.asarray(
            [
                math.log(u - v) if v <= 0.5 * u else e + math.log(math.expm1(self.eps0 - e))
                for e, v in zip(eps.tolist(), v_l)
            ]
        )
        # H (first h0 of the tail group) and h_a for every (eps, row), eps-major
        Hs = np.empty((m, nT))
        Ha = np.empty((m, nT))
        for i in range(m):
            if tail_only[i]:
                # for eps this small sigma(h0) >= u/v - u T/2 >= s_hi for every h0 > T/2 (h0 - h1 >= 1,
                # so sigma >= a (1 - v h1) >= u/v - u T / 2), and L <= 1 for h0 <= T/2: all of the
                # region is in the tail group
                Hs[i] = np.floor(T / 2.0) + 1.0
                Ha[i] = Hs[i]
        act = np.asarray([not t for t in tail_only])
        xs, ys, errs, negs, sx = [], [], [], [], []  # log-magnitudes; xs carry signs separately
        gx, gy, ge, gn = [], [], [], []  # the eps index of every entry
        if np.any(act):
            ia = np.nonzero(act)[0]
            a_l = np.asarray([u / v_l[i] for i in ia])  # <= 4 s_hi + 2 u T, finite (tail-only failed)
            E_a = Ev[ia]
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                c1 = 1.0 / (a_l * (1.0 + E_a))
                r1 = E_a / (1.0 + E_a)
            # sigma(h0) = s at h0 = s / (a (1 + E)) + T E / (1 + E), for every (eps, row)
            ar = np.repeat(a_l, nT)
            Er = np.repeat(E_a, nT)
            Tr = np.tile(T, ia.size)
            c1r = np.repeat(c1, nT)
            r1r = np.repeat(r1, nT)
            H = self._first_h0(ar, Er, Tr, float(s_hi), "dn", np.floor(s_hi * c1r + Tr * r1r) - 1.0)
            h_a = self._first_h0(ar, Er, Tr, float(s_lo), "up", np.floor(s_lo * c1r + Tr * r1r) - 2.0)
            h_a = np.minimum(h_a, H)
            Hs[ia] = H.reshape(ia.size, nT)
            Ha[ia] = h_a.reshape(ia.size, nT)
        Hf = Hs.ravel()
        cnt = (Hf - Ha.ravel()).astype(np.int64)
        if cnt.sum() > 0:
            inst = np.repeat(np.arange(m * nT), cnt)  # (eps, row) instance of every pair
            starts = np.repeat(np.cumsum(cnt) - cnt, cnt)
            h0 = Ha.ravel()[inst] + (np.arange(inst.size) - starts)
            g = inst // nT
            rows = inst - g * nT
            Tm = T[rows]
            h1 = Tm - h0
            a_p = u / vv[g]
            E_p = Ev[g]
            s_dn, s_up, lo, hi = self._sigma_band(a_p, E_p, h0, Tm)
            # b_{T-1}(h0) = b_{T-1}(h0-1) (T-h0)/h0 and b_T(h0) = b_{T-1}(h0-1) T/(2 h0), h0 >= 1
            lb1m = _log_binom_pmf(h0 - 1, Tm - 1, lh, lh)
            with np.errstate(divide="ignore"):
                lb1 = lb1m + np.log(h1 / h0)
            lb0 = lb1m + np.log(Tm / (2.0 * h0))
            lA1, lA0 = w["lA1"][rows], w["lA0"][rows]
            nB0 = self.N1 - Tm
            # S <= s_dn is certainly inside the region {L > e^eps}
            lF0, lF1 = self._cdf_pair_rows(w, rows, s_dn, Tm, nB0)
            third = self.log_km2pbar + lA0 + lb0
            # coefficient / (u sc): (h0 - h1) / sc - (v/u) T / sc - h1 (v / sc), sc = max(1, v)
            sc = scv[g]
            wv = wvv[g]
            vsc = vscv[g]
            coef = (h0 - h1) / sc - wv * Tm / sc - h1 * vsc
            cmag = (np.abs(h0 - h1) + wv * Tm) / sc + h1 * vsc
            t1 = lA1 + lF1 + lpb + lb1m + lu + lscv[g] - np.log(h0)
            t3 = third + lF0 + lvv[g]
            with np.errstate(divide="ignore"):
                xs.append(t1 + np.log(np.abs(coef)))
                errs.append(t1 + np.log(16 * eps_m * cmag))
            gx.append(g)
            ge.append(g)
            sx.append(np.sign(coef))
            ys.append(t3)
            gy.append(g)
            negs.append(np.logaddexp(lA1 + lF1 + np.logaddexp(lpb + lb1m, lp + lb1), third + lF0) + eps[g])
            gn.append(g)
            d = s_up > s_dn
            if np.any(d):
                lF0u, lF1u = self._cdf_pair_rows(w, rows[d], s_up[d], Tm[d], nB0[d])
                pos_u = np.logaddexp(
                    lA1[d] + lF1u + np.logaddexp(lp + lb1m[d], lpb + lb1[d]), third[d] + lF0u
                )
                pos_d = np.logaddexp(
                    lA1[d] + lF1[d] + np.logaddexp(lp + lb1m[d], lpb + lb1[d]), third[d] + lF0[d]
                )
                # P_D(s_dn < S <= s_up) (the CDFs are within 1e-13 relative: 1e-11 covers it)
                with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
                    mass = np.maximum(np.exp(pos_u) - np.exp(pos_d), 0.0) + 1e-11 * np.exp(pos_u)
                    lmass = np.where(mass > 0, np.log(mass), pos_u)  # pos_u if underflow
                # |log L - eps| <= errL on the band (see log_delta_at)
                Td = Tm[d]
                with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                    s_min = np.minimum(np.maximum(Td, 1.0), lo[d])
                    err_l = (hi[d] - lo[d]) * np.minimum(1.0, u * Td / s_min) / s_min
                    err_l = np.where((s_min > 0) & np.isfinite(err_l), err_l, 1.0)
                errs.append(lmass + np.log(np.minimum(err_l, 1.0)))
                ge.append(g[d])
        # tail group: h0 >= H and S <= s_hi for all of them:
        # pbar (u - v) b_{T-1}(H-1) P(A=T-1) F1 - v [(p + pbar) P(A=T-1) F1 Tail_{T-1}(H)
        #                                            + (k-2) pbar P(A=T) F0 Tail_T(H)]
        Tall = np.tile(T, m)
        mt = Hf <= Tall
        if np.any(mt):
            it = np.nonzero(mt)[0]
            g = it // nT
            rows = it - g * nT
            Tt, Ht = Tall[it], Hf[it]
            lA1, lA0 = w["lA1"][rows], w["lA0"][rows]
            lF1, lF0 = w["lF1top"][rows], w["lF0top"][rows]
            lbH = _log_binom_pmf(Ht - 1, Tt - 1, lh, lh)
            t1 = _log_binom_sf(Ht, Tt - 1, 0.5)
            t0 = _log_binom_sf(Ht, Tt, 0.5)
            l_ppb = float(np.logaddexp(lp, lpb))
            lv = lvv[g]
            with np.errstate(divide="ignore"):
                xpart = lA1 + lF1 + lpb + lbH + l_umv[g]
                ypart = np.logaddexp(lA1 + lF1 + l_ppb + t1, self.log_km2pbar + lA0 + lF0 + t0) + lv
            xs.append(xpart)
            sx.append(np.ones(xpart.shape))
            gx.append(g)
            ys.append(ypart)
            gy.append(g)
            errs.append(xpart + math.log(8 * eps_m))
            ge.append(g)
            t1m = _log_binom_sf(Ht - 1, Tt - 1, 0.5)
            negs.append(
                np.logaddexp(lA1 + lF1 + np.logaddexp(lpb + t1m, lp + t1), self.log_km2pbar + lA0 + lF0 + t0)
                + eps[g]
            )
            gn.append(g)
        X, GX = _cat(xs), _cat(gx, int)
        SX = _cat(sx)
        Y, GY = _cat(ys, float), _cat(gy, int)
        ERR, GE = _cat(errs), _cat(ge, int)
        NEG, GN = _cat(negs), _cat(gn, int)
        xg, yg, eg, ng = _groups(GX, m), _groups(GY, m), _groups(GE, m), _groups(GN, m)
        core = np.full(m, -np.inf)
        budget = np.full(m, -np.inf)
        lneg = np.full(m, -np.inf)
        for i in range(m):
            ei = ERR[eg[i]]
            l_budget = float(logsumexp(ei)) if ei.size else -math.inf
            c = -math.inf
            Xi, SXi, Yi = X[xg[i]], SX[xg[i]], Y[yg[i]]
            if Xi.size or Yi.size:
                M = float(max(np.max(Xi) if Xi.size else -math.inf, np.max(Yi) if Yi.size else -math.inf))
                if M > -math.inf:
                    with np.errstate(under="ignore"):
                        total = float(np.sum(SXi * np.exp(Xi - M)) - np.sum(np.exp(Yi - M)))
                    c = math.log(total) + M if total > 0 else -math.inf
                    # relative _REL_INFLATION on every |X|, |Y| (log-term and special-function
                    # errors) and 1e-300 per term for underflow in the scaled sum
                    l_budget = float(
                        logsumexp(
                            [
                                l_budget,
                                math.log(_REL_INFLATION) + float(logsumexp(np.concatenate([Xi, Yi]))),
                                M + math.log(1e-300 * (Xi.size + Yi.size)),
                            ]
                        )
                    )
            if math.isnan(c) or math.isnan(l_budget):
                raise SoundnessError(
                    f"internal: NaN in the blanket sum at k={self.k}, eps0={self.eps0}, n={self.n}, "
                    f"eps={float(eps[i])}"
                )
            ni = NEG[ng[i]]
            core[i], budget[i] = c, l_budget
            lneg[i] = float(logsumexp(ni)) if ni.size else -math.inf
        return core, budget, lneg

    def certified(
        self, eps: float, log_floor: float = -math.inf, max_pairs: float = 0.0, z_hint: float = 0.0
    ) -> tuple[float, float]:
        """Certified upper bound on log delta(eps) for ``0 <= eps < eps0``, and d log delta / d eps.

        The smaller of the direct evaluation (:meth:`_certified_direct`) and, for ``eps`` close to
        ``eps0``, the chord bound below; capped at ``log 1 = 0`` (every delta is at most 1).

        Chord bound. Write ``B(E)`` for the blanket divergence at ``E = e^eps``. For one pair of
        distributions ``B(E) = sum_x (P(x) - E Q(x))_+`` is a sum of convex functions of ``E``,
        hence convex, and non-increasing; ``B(E0) = 0`` at ``E0 = e^eps0`` because every
        likelihood ratio ``L = (S + u h0) / (S + u h1) <= (S + u S) / S = E0`` (``h0 <= S``). So
        for ``E1 <= E <= E0`` convexity gives ``B(E) <= B(E1) (E0 - E) / (E0 - E1)``, i.e.

            delta(eps) <= delta_c(eps1) * expm1(eps - eps0) / expm1(eps1 - eps0),

        with ``delta_c(eps1) >= B(E1)`` the certified direct value at ``eps1``. Near ``eps0`` the
        direct evaluation loses its relative accuracy (its coefficients ``u - v`` and the
        threshold band cancel), while the chord from ``eps1 = eps0 + log(1 - g)``,
        ``g = min(1e-4, (1 - e^(-eps0/2)) / 2)``, uses an ``eps1`` where it is accurate. Both
        ``eps``, ``eps1 >= eps0 / 2`` here, so ``eps - eps0`` and ``eps1 - eps0`` are exact
        (Sterbenz); the two ``expm1`` and the division are within 3 ulp, covered by the factor
        ``1 + 1e-12``.
        """
        budget = max_pairs if max_pairs > 0 else MAX_PAIRS
        smaller = self._within_budget(eps, budget)
        if smaller is not self:
            return smaller.certified(eps, log_floor, max_pairs, z_hint)
        direct, slope = self._certified_direct(eps, log_floor, max_pairs, z_hint)
        g = min(1e-4, -0.5 * math.expm1(-0.5 * self.eps0))
        eps1 = self.eps0 + math.log1p(-g)
        if eps1 < eps and eps1 >= 0.5 * self.eps0:
            d1, _ = self._certified_direct(eps1, log_floor, max_pairs, z_hint)
            ratio = math.expm1(eps - self.eps0) / math.expm1(eps1 - self.eps0)
            chord = d1 + math.log(ratio) + math.log1p(1e-12)
            if chord < direct:
                # d log(chord) / d eps = -e^(eps - eps0) / (1 - e^(eps - eps0))
                direct, slope = chord, -1.0 / math.expm1(self.eps0 - eps)
        if math.isnan(direct):
            raise SoundnessError(
                f"internal: NaN certified log delta at k={self.k}, eps0={self.eps0}, n={self.n}, eps={eps}"
            )
        return min(direct, 0.0), slope

    def _many_batched(self, eps: np.ndarray, w: dict) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`log_delta_many` in small batches of eps (keeps the pair arrays cache-sized)."""
        core = np.empty(eps.size)
        bud = np.empty(eps.size)
        for s in range(0, eps.size, _GRID_BATCH):
            c, b, _ = self.log_delta_many(eps[s : s + _GRID_BATCH], w)
            core[s : s + _GRID_BATCH] = c
            bud[s : s + _GRID_BATCH] = b
        return core, bud

    def certified_many(self, eps: np.ndarray, log_floor: float = -math.inf) -> np.ndarray:
        """:meth:`certified` (the value only) for an ascending array of ``0 <= eps < eps0``, in one pass.

        One window serves every eps: the one that the one-eps evaluation chooses at the
        *largest* eps (:meth:`_certified_direct`, which also yields that eps's value), or the
        previous call's window if that is at most 25 % wider (its CDF table is reused); every eps
        is evaluated on it (:meth:`log_delta_many`, sharing its binomial rows and CDF table). The
        dropped mass is bounded at an eps and reused for the following (larger) ones: every piece
        of :meth:`_log_drop` is either an eps-free binomial tail or a bound on
        ``P_D(L > e^eps and C)``, an event that shrinks as ``eps`` grows, so a bound at ``eps``
        holds for every larger eps; it is always added, and renewed at the first eps where it
        is not below ``1e-10`` of ``max(value, e^log_floor)`` (the one-eps criterion). Where
        even the renewed bound is not small enough, where the chord
        bound near ``eps0`` applies, or where the work budget calls for fewer users
        (:meth:`_within_budget`), that eps is evaluated alone by :meth:`certified`. Every value is
        therefore a certified upper bound of the same quality as :meth:`certified`'s.
        """
        eps = np.asarray(eps, dtype=float)
        out = np.full(eps.shape, np.nan)
        g = min(1e-4, -0.5 * math.expm1(-0.5 * self.eps0))
        eps1 = self.eps0 + math.log1p(-g)
        alone = np.zeros(eps.shape, dtype=bool)
        full = np.zeros(eps.shape, dtype=bool)
        for i, e in enumerate(eps.tolist()):
            if (eps1 < e and eps1 >= 0.5 * self.eps0) or self._within_budget(e, MAX_PAIRS) is not self:
                alone[i] = True
            elif self._pairs_estimate(e, (1, self.n, 1, self.n)) <= _SMALL_PAIRS:
                full[i] = True
        if np.any(full):  # the full (exact) sum, nothing dropped
            idx = np.nonzero(full)[0]
            core, bud = self._many_batched(eps[idx], self.window(1e6))
            for j, i in enumerate(idx.tolist()):
                out[i] = float(logsumexp([core[j], bud[j]]))
        rest = np.nonzero(~alone & ~full)[0]
        tol = math.log(_TAIL_FRACTION)
        if rest.size:
            # one window for all: the one the one-eps evaluation picks at the largest eps
            last = int(rest[-1])
            out[last], _ = self._certified_direct(float(eps[last]), log_floor, MAX_PAIRS)
            rest = rest[:-1]
            z = self.last_z
            prev = self._grid_z
            if prev is not None and z <= prev <= 1.25 * z and prev in self._cache:
                z = prev  # a later grid on the same object: the (slightly) wider window and its table
            w = self.window(z)
            self._grid_z = z
            if rest.size >= _TABLE_MIN_EPS:
                self._cdf_table(w)
            core, bud = self._many_batched(eps[rest], w)
            ldrop = -math.inf
            if not w["full"] and rest.size:
                ldrop = self._log_drop(w["bounds"], float(eps[rest[0]]))
            for j, i in enumerate(rest.tolist()):
                total = float(logsumexp([core[j], bud[j], ldrop]))
                if not ldrop <= tol + max(total, log_floor):
                    # a bound at this eps holds for every larger eps too: renew it here
                    ldrop = self._log_drop(w["bounds"], float(eps[i]))
                    total = float(logsumexp([core[j], bud[j], ldrop]))
                if ldrop <= tol + max(total, log_floor):
                    out[i] = total
                else:
                    alone[i] = True
        for i in np.nonzero(alone)[0].tolist():
            out[i] = self.certified(float(eps[i]), log_floor)[0]
        if np.any(np.isnan(out)):
            raise SoundnessError(
                f"internal: NaN certified log delta at k={self.k}, eps0={self.eps0}, n={self.n}"
            )
        return np.minimum(out, 0.0)

    def _within_budget(self, eps: float, budget: float) -> BlanketEvaluator:
        """``self``, or the blanket of the largest ``n' < n`` whose narrowest window fits the budget.

        The work (and memory) of one evaluation grows about linearly in ``n``; when even the
        narrowest window (``z = 4``) would need more than ``budget`` pairs (``n`` around
        ``1e7`` and more, depending on ``eps``), the bound is evaluated at a smaller ``n'``
        instead. That is sound because the blanket divergence is non-increasing in ``n``: the
        sufficient statistic ``(h0, h1, S)`` of ``n + 1`` users is that of ``n`` users plus an
        independent increment whose law does not depend on the dataset pair (the extra user's
        blanket draw, or nothing), a common Markov kernel applied to both ``P_D`` and ``P_D'``,
        so the data-processing inequality gives ``B_{n+1}(E) <= B_n(E)``. The value is then
        certified but looser than the exact divergence at ``n``; memory stays bounded.
        """
        limit = budget
        if self.n <= 2 or self._pairs_estimate(eps, self._bounds(4.0)) <= limit:
            return self
        n_small = self.n
        while n_small > 2:
            n_small = max(2, n_small // 2)
            bl = self._smaller.get(n_small)
            if bl is None:
                bl = BlanketEvaluator(self.k, self.eps0, n_small)
            if bl._pairs_estimate(eps, bl._bounds(4.0)) <= limit:
                if len(self._smaller) > 8:
                    self._smaller.clear()
                self._smaller[n_small] = bl
                return bl
        return BlanketEvaluator(self.k, self.eps0, 2)  # pragma: no cover - n = 2 is always small

    def _certified_direct(
        self, eps: float, log_floor: float = -math.inf, max_pairs: float = 0.0, z_hint: float = 0.0
    ) -> tuple[float, float]:
        """The direct certified evaluation at one ``eps`` (see :meth:`certified`).

        Windows widen until the dropped mass is below ``1e-10`` of ``max(result, exp(log_floor))``,
        or until the work estimate would exceed ``max_pairs`` (default :data:`MAX_PAIRS`); in the
        latter case the value is still a certified upper bound (the dropped mass is included) but
        may exceed the exact divergence. The derivative estimate ``-e^eps Q(L > e^eps) / delta``
        only steers root finding.
        """
        budget = max_pairs if max_pairs > 0 else MAX_PAIRS
        target = log_floor
        tol = math.log(_TAIL_FRACTION)
        if self._pairs_estimate(eps, (1, self.n, 1, self.n)) <= _SMALL_PAIRS:
            z = 1e6  # small problem: the full (exact) sum, nothing dropped
        else:
            # start narrow: the joint Chernoff bound on the dropped mass is usually tiny already
            z = round(min(max(_Z_START, z_hint), self._z_for_budget(eps, budget, 4.0)), 2)
        small = z == 1e6
        while True:
            if not small:  # a full-sum window is no hint for the next (larger) eps
                self.last_z = z
            w = self.window(z)
            core, lerr, lneg, ldrop = self.log_delta_at(eps, w)
            total = float(logsumexp([core, lerr, ldrop]))
            ref = max(total, target)
            slope = -math.exp(lneg - total) if total > -math.inf else -math.inf
            if ldrop == -math.inf or w["full"] or ldrop <= tol + ref:
                return total, slope
            # widen straight to the window whose dropped mass is small enough for the estimate
            # of the result (the core; a few orders deeper if the window has not reached it yet)
            est = max(core if core > -math.inf else total - 60.0, target)
            z_next = self._z_for_drop(est + tol, z + 0.05, eps)
            z_cap = self._z_for_budget(eps, budget, z)
            if z_cap <= z:
                return total, slope  # work budget reached: still a certified upper bound
            z = round(min(max(z_next, z * 1.05), z_cap), 2)


def blanket_degenerate(k: int, eps0: float) -> bool:
    """Whether the blanket sum of k-RR cannot be evaluated in floating point.

    ``True`` for ``k >= 3`` when the third-value fraction ``(k - 2) / (e^eps0 - 1 + k - 2)``
    (:attr:`~shuffle_accounting.randomizers.KRR.other_given_not_pair`) rounds to 1, i.e.
    ``e^eps0 - 1`` is below the rounding of ``k - 2`` (it raised a math domain error at ``k = 3``,
    ``eps0 = 1e-250``). Callers then use the local k-RR curve (see :func:`certified_log_delta`).

    Example:
        >>> blanket_degenerate(3, 1e-250), blanket_degenerate(3, 1e-10), blanket_degenerate(2, 1e-250)
        (True, False, False)
    """
    return k >= 3 and KRR(k, eps0).other_given_not_pair >= 1.0


def certified_log_delta(
    eps, k, eps0, n, *, log_delta_floor: float = -math.inf, max_pairs: float | None = None
) -> np.ndarray:
    """Certified upper bound on ``log sup_{D ~ D'} H_{e^eps}(P_D || P_D')`` for shuffled k-RR.

    The bound is the exact privacy-blanket divergence (Balle, Bell, Gascón, Nissim, *The Privacy
    Blanket of the Shuffle Model*, CRYPTO 2019, Sec. 4.1 decomposition; the adversary also learns
    who drew from the blanket), evaluated exactly on the sufficient statistic ``(h0, h1, S)`` with
    every truncation bounded and added, and rounded outward (see the module docstring). For
    ``n = 1`` it is the exact k-RR curve ``(p - e^eps pbar)_+``; for ``eps >= eps0`` it is exactly 0.
    Where the blanket sum cannot be evaluated in floating point (:func:`blanket_degenerate`:
    ``k >= 3`` and ``e^eps0 - 1`` below the rounding of ``k - 2``, e.g. ``eps0 = 1e-250``) the same
    local k-RR curve is returned for every ``n``: shuffling the others' reports is post-processing
    of the target's report and of data independent of it, so it is a certified upper bound (every
    such delta is below ``e^eps0 - 1 < 1e-15``).

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite).
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite > 0.
        n: Number of users, integer >= 1.
        log_delta_floor: Optional speed knob (keyword only). Values below ``exp(log_delta_floor)``
            are still certified upper bounds but only tight to about ``1e-10 exp(log_delta_floor)``
            in absolute terms (the truncation windows are not widened further). Default: tight
            everywhere.
        max_pairs: Optional work budget per eps (keyword only; default :data:`MAX_PAIRS`). When the
            windows needed for full tightness would exceed it (only for deltas far below
            ``1e-100`` at large ``n``), the result is still a certified upper bound but may be
            looser than the exact divergence.

    Returns:
        ``np.ndarray`` of the shape of ``eps`` (0-d for a scalar) with the certified log delta;
        ``-inf`` where the bound is exactly 0.

    Raises:
        ParameterError: If an argument is out of range, NaN, infinite, boolean or non-integer
            where an integer is required.

    Example:
        >>> float(np.exp(certified_log_delta(0.5, 4, 1.0, 7)))  # doctest: +ELLIPSIS
        0.020534...
        >>> certified_log_delta([1.0, 2.0], 3, 1.0, 100)
        array([-inf, -inf])
    """
    e = check_real_array("eps", eps, low=0.0)
    k, eps0, n = check_krr_parameters(k, eps0, n)
    floor = check_real("log_delta_floor", log_delta_floor, high=0.0, allow_inf=True)
    budget = MAX_PAIRS if max_pairs is None else check_real("max_pairs", max_pairs, low=1.0)
    flat = e.ravel()
    out = np.full(flat.shape, -np.inf)
    live = flat < eps0
    if n == 1 or blanket_degenerate(k, eps0):
        # exact k-RR: delta = p - e^eps pbar = pbar (e^eps0 - e^eps) (an upper bound for every n)
        log_pbar = KRR(k, eps0).log_pbar
        x = flat[live]
        val = log_pbar + eps0 + np.log(-np.expm1(x - eps0))
        # relative inflation for floating-point error, then the cap delta <= 1
        out[live] = np.minimum(val + math.log1p(_REL_INFLATION), 0.0)
        return out.reshape(e.shape)
    if np.any(live):
        bl = BlanketEvaluator(k, eps0, n)
        for i in np.nonzero(live)[0]:
            out[i] = bl.certified(float(flat[i]), floor, budget)[0]
    return out.reshape(e.shape)


def certified_log_delta_grid(eps, k, eps0, n, *, log_delta_floor: float = -math.inf) -> np.ndarray:
    """:func:`certified_log_delta` for a whole grid of eps in one pass (shared tables).

    Same quantity and guarantees as :func:`certified_log_delta` (the certified exact privacy-blanket
    divergence of Balle, Bell, Gascón, Nissim, CRYPTO 2019, every truncation bounded and added,
    rounded outward), but the eps are evaluated together: ascending chunks share one truncation
    window, its binomial rows and CDF table, and one dropped-mass bound (see
    ``BlanketEvaluator.certified_many``). Each value agrees with the one-eps evaluation to about
    ``1e-10`` (relative; only the truncation windows may differ) and is never below the exact
    blanket divergence.

    Args:
        eps: Scalar or array of ``eps >= 0`` (finite), in any order.
        k: Number of categories, integer >= 2.
        eps0: Local privacy parameter, finite > 0.
        n: Number of users, integer >= 1.
        log_delta_floor: As in :func:`certified_log_delta` (keyword only).

    Returns:
        ``np.ndarray`` of the shape of ``eps`` (0-d for a scalar) with the certified log delta;
        ``-inf`` where the bound is exactly 0.

    Raises:
        ParameterError: If an argument is out of range, NaN, infinite, boolean or non-integer
            where an integer is required.

    Example:
        >>> g = certified_log_delta_grid([0.0, 0.5, 1.0], 4, 1.0, 7)
        >>> bool(np.allclose(g, certified_log_delta([0.0, 0.5, 1.0], 4, 1.0, 7), rtol=1e-9))
        True
    """
    e = check_real_array("eps", eps, low=0.0)
    k, eps0, n = check_krr_parameters(k, eps0, n)
    floor = check_real("log_delta_floor", log_delta_floor, high=0.0, allow_inf=True)
    if n == 1 or blanket_degenerate(k, eps0):
        return certified_log_delta(e, k, eps0, n, log_delta_floor=floor)
    flat = e.ravel()
    out = np.full(flat.shape, -np.inf)
    live = np.nonzero(flat < eps0)[0]
    if live.size:
        order = live[np.argsort(flat[live], kind="stable")]
        out[order] = BlanketEvaluator(k, eps0, n).certified_many(flat[order], floor)
    return out.reshape(e.shape)


def blanket_atoms(k: int, eps0: float, n: int):
    """Every outcome ``(S, h0, h1)`` of the blanket pair with its masses ``(P_D, P_D')``.

    ``S = 1 + (blanket draws among the others)``, ``h0`` / ``h1`` = blanket reports equal to the
    target's two values. Plain double precision, O(n^3) outcomes: for brute-force references only.
    Yields ``(S, h0, h1, P, Q)``.
    """
    from math import comb

    krr = KRR(k, eps0)
    pbar, p, g = krr.pbar, krr.p, krr.gamma
    for m in range(n):  # blanket draws among the others
        wm = comb(n - 1, m) * g**m * (1 - g) ** (n - 1 - m)
        S = m + 1
        for h0 in range(S + 1):
            for h1 in range(S - h0 + 1):
                r = S - h0 - h1
                base = math.factorial(m) / (math.factorial(h0) * math.factorial(h1) * math.factorial(r))
                base *= (k - 2) ** r * k ** (-m) if (k > 2 or r == 0) else 0.0
                if base == 0.0:
                    continue
                w = wm * base
                yield S, h0, h1, w * (pbar * S + (p - pbar) * h0), w * (pbar * S + (p - pbar) * h1)


def blanket_log_delta_bruteforce(eps: float, k: int, eps0: float, n: int) -> float:
    """Reference value of the blanket divergence by direct summation over ``(h0, h1, S)``.

    Plain double precision, O(n^3): only for tests and small ``n``. Not certified.

    Example:
        >>> round(math.exp(blanket_log_delta_bruteforce(0.5, 4, 1.0, 7)), 8)
        0.02053451
    """
    k = check_int("k", k, minimum=2)
    n = check_int("n", n, minimum=1)
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True)
    eps = check_real("eps", eps, low=0.0)
    E = math.exp(eps)
    total = sum(max(P - E * Q, 0.0) for _, _, _, P, Q in blanket_atoms(k, eps0, n))
    return math.log(total) if total > 0 else -math.inf
