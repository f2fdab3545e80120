"""Certified worst case of shuffled k-RR for ``k = 3`` by branch and bound over boxes of datasets.

Setting. ``n`` users apply 3-ary randomized response with local privacy ``eps0``: a user holding
``x`` reports ``x`` with probability ``p = e^eps0 / (e^eps0 + 2)`` and each other value with
probability ``pbar = 1 / (e^eps0 + 2)``; equivalently it reports a uniform value with probability
``gamma = 3 pbar`` and its own value otherwise (``(1 - gamma) + gamma / 3 = p``). The shuffled
release is the histogram ``h = (h0, h1, h2)``. The target holds ``0`` in ``D`` and ``1`` in ``D'``;
the other ``n - 1`` users hold counts ``c = (c0, c1, c2)``. With ``E = e^eps``, ``P_c`` / ``Q_c`` the
laws of ``h`` under ``D`` / ``D'`` and ``H_E(P || Q) = sum_h (P(h) - E Q(h))_+``:

    delta_c(eps) = max(h_c, h'_c),   h_c = H_E(P_c || Q_c),   h'_c = H_E(Q_c || P_c).

Facts used (each proved here):

(K1) *Sufficiency and symmetry.* Users are exchangeable, so the histogram is a sufficient
statistic of the shuffled reports for both ``D`` and ``D'`` (the shuffled sequence given ``h`` is
uniform over its orderings under both), and ``H_E`` of the releases equals ``H_E`` of the
histograms. Relabelling the values ``0 <-> 1`` is a bijection of histograms that maps dataset
``(c0, c1, c2)`` with the target moving ``1 -> 0`` to dataset ``(c1, c0, c2)`` with the target moving
``0 -> 1``, so ``h'_c = h_{(c1, c0, c2)}`` and **sup_c delta_c = max_c h_c** over every ``c`` with
``c0 + c1 <= n - 1``. The branch and bound covers that triangle with bounds on ``h_c`` alone.
For ``k = 3``, ``(h0, h1)`` *is* the histogram (``h2 = n - h0 - h1``). (For ``k >= 4`` the
likelihood ratio of the target's two values is not a function of ``(h0, h1)`` in general: e.g.
with others at ``x2`` and ``x3`` it also depends on ``h2`` and ``h3`` — one reason ``k >= 4`` is
not covered here; with all others at one value ``v >= 2`` plus uniform users it depends on
``(h0, h1, number of reports != v)`` only, see
:func:`~shuffle_accounting.shuffled_krr._krr_grid.single_class_log_hockey`.)

(K2) *Box bound ("reveal the coins").* A box is a set of datasets
``{c : a0 <= c0 <= b0, a1 <= c1 <= b1, c0 + c1 <= n - 1}``. All of them have at least
``L = (a0, a1, max(0, n - 1 - b0 - b1))`` users at the values ``(0, 1, 2)`` in common ("fixed");
the other ``m = n - 1 - |L|`` ("free") hold arbitrary values. Give the adversary, for each free
user, its coin (uniform or not) and, when not uniform, its report. That view ``V`` contains the
histogram, so ``h_c <= H_E(P_V || Q_V)`` (post-processing). The coins and revealed reports ``W``
have the same law under ``D`` and ``D'`` (they do not involve the target), hence
``H_E(P_V || Q_V) = E_W H_E(P_{h|W} || Q_{h|W})`` (the hockey-stick sum splits over the values of
``W``: the equality case of joint convexity). Given ``W`` with ``B`` uniform coins, ``h`` is the
target's report + the fixed users' reports + ``B`` uniform reports + a known vector, and ``H_E`` is
invariant under a common known shift, so with ``B ~ Bin(m, gamma)``:

    h_c <= U(L, m) = E_B g_L(B),   g_L(b) = H_E(T + F_L + Mult(b, 1/3) || T' + F_L + Mult(b, 1/3)),

for every ``c`` in the box, independently of ``c`` (``T`` / ``T'`` the target's report under ``D``
/ ``D'``, ``F_L`` the fixed users' reports). The same argument with some *fixed* users' coins
also revealed shows ``U(L, m) <= U(L', m + |L - L'|)`` for ``L' <= L``: revealing is always
allowed, and it is used where a class of fixed users is too large to convolve (below). For a
single dataset (``m = 0``, nothing revealed) ``U = g_L(0) = h_c`` exactly: an *exact leaf*.

(K2') *Partial hiding* (:meth:`BoxProblem.hidden`). The proof of (K2) never uses that the
free users' values vary over the box, only that every revealed user's coin is uniform with
probability ``gamma`` independently of everything else and that its non-uniform report is a
function of the dataset. So for any ``L' <= L`` (componentwise), revealing the coins of the
``m`` free users *and* of ``|L - L'|`` fixed ones gives, step by step: (i) the view (coins,
revealed non-uniform reports, histogram) contains the histogram, so ``h_c <= H_E`` of the view
(post-processing); (ii) the coins and revealed reports do not involve the target and have the
same law under ``D`` and ``D'``, so ``H_E`` of the view is their expectation of the conditional
``H_E``; (iii) given ``B`` uniform coins among the ``m' = m + |L - L'|`` revealed users, ``h`` is
the target's report + ``F_{L'}`` + ``Mult(B, 1/3)`` + a known shift, and ``H_E`` is shift
invariant; ``B ~ Bin(m', gamma)``. Hence ``h_c <= U(L', m')`` for every ``c`` in the box. Where
every fixed user cannot be hidden (three classes of thousands of users: the one-at-a-time work
``users x cells`` exceeds :data:`~._krr_grid.MAX_SEQUENTIAL_WORK`), the pivot class (the
largest) stays hidden with ``h = max(64, 4.5 sd)`` users of the two smaller classes (``sd`` the
standard deviation of ``B`` with both revealed; about half the work of the sweep over ``B``),
and the rest is revealed. Revealing both smaller classes entirely (the rule before) left a bound
that depends on the pivot class alone, above the worst corner at ``n = 1e4``, so the search
could not split below it. Measured at ``n = 1e4``, ``eps0 = 0.5``, ``delta = 1e-12``, at ``eps``
``1e-4`` above the corner's epsilon (where ``log h`` of the corner "all others at x2" is
``-27.63102`` at its epsilon and a cover must reach ``log delta = -27.63102``): the dataset
``(2499, 3749, 3751)`` with both smaller classes revealed ``-27.63070`` (every dataset with a
pivot class of 3751 users has that bound); with 4 / 16 / 64 / 256 users of each smaller class
hidden ``-27.6348`` / ``-27.6471`` / ``-27.6962`` / ``-27.8928`` for about 1.0 / 1.0 / 1.3 /
2.1 times the work of one evaluation; the default (68 of each) ``-27.7003``.

(K3) *Monotone in B.* ``g_L(b + 1)`` is ``g_L(b)`` after adding one more independent uniform
report to both laws, a Markov kernel applied to both: by the data-processing inequality of
``H_E``, ``g_L`` is non-increasing. For cells ``s_0 < s_1 < ... < s_J`` covering the window
``[lo, hi]`` of ``B``, ``E_B g_L(B) <= sum_j P(s_j <= B < s_{j+1}) g_L(s_j) + P(B < lo) +
P(B > hi)`` (``g <= 1`` on the two tails), with no truncation error. Every value of ``B`` in
``[mean - 5 sd, mean + 4 sd]`` is its own cell (the expectation is exact there); below, one cell
``[lo, mean - 5 sd)`` bounded by ``g(lo)`` (mass about ``3e-7``), above, one cell
``[mean + 4 sd, hi]`` bounded by ``g`` at its left end (mass about ``3e-5``, where ``g`` is
smallest); a tail cell spanning at most 64 values is cut into unit cells instead. The left-end
slack of the two wide cells is at most their mass times ``g`` there (measured: ``4e-6`` in
``log U`` at ``n = 1000``), below the default ``tol``. None of this affects soundness.

(K4) *Computing g.* The fixed users' law ``F_L`` is exact up to bounded, added truncation
(:func:`~shuffle_accounting.shuffled_krr._krr_grid.fixed_law_k3`): the value ``v`` with the most
fixed users is the *pivot*; a pivot user reports ``v`` with probability ``p`` and each other
value with ``pbar``, so the count ``N_o`` of their reports different from ``v`` is
``Bin(c_v, 2 pbar)`` and, given ``N_o``, those reports split ``Bin(N_o, 1/2)`` between the two
other values: a closed-form 2-D law in coordinates ``(N, j)`` (reports different from ``v``;
reports of the *designated* other value). The other two fixed classes are added by direct
convolution of their windowed trinomials or one user at a time, whichever is cheaper; if both
are over budget, most of their coins are revealed ((K2'): sound, looser). Then ``g_L(b)`` for
every cell end ``b`` comes from one pass that adds uniform users one at a time
(:func:`~shuffle_accounting.shuffled_krr._krr_grid.sweep_users`: each user moves ``(N, j)`` by
``(0, 0)``, ``(1, 1)`` or ``(1, 0)`` with probability ``1/3`` each). The target's report
shifts the law by ``(0, 0)``, ``(1, 1)`` or ``(1, 0)``, and ``H_E`` is summed cell by cell
(:class:`~shuffle_accounting.shuffled_krr._krr_grid.Hockey` for exact leaves, with both ends;
:func:`~shuffle_accounting.shuffled_krr._krr_grid.hockey_upper`, the same upper end in one
pass, inside boxes). For ``eps >= eps0``, ``H_E = 0``
exactly (the release is a post-processing of ``eps0``-LDP reports).

Computation and rounding (all outward; :mod:`~shuffle_accounting.shuffled_krr._krr_grid`):
binomial windows ``mean +- z sd`` widened until their dropped mass is below ``e^-25`` of the level
of interest; grids built one user at a time are trimmed only where the trimmed (computed,
rounded-up) mass stays below that budget, and that measured mass is added; dropped mass always
added (upper bounds) or subtracted times ``E`` (lower bounds); Loader log-pmfs counted at
``1e-10`` relative; direct (never FFT) sums of non-negative terms with their relative error
counted per operation; cell weights of ``B`` inflated by ``1e-9``.

Why this converges where the first version did not (measured at ``n = 1000``, ``eps0 = 1``,
``delta = 1e-6``): the worst dataset is the corner "every other user at x2" and ``h_c`` falls
by about ``3e-3`` in log per user moved away from it; datasets with all three classes large sit
far below (``(223, 370, 406)``: ``log h = -16.6`` against ``-13.82``). The first version hid
only classes whose direct convolution fitted 3e6 operations and used 10 coarse cells of ``B``:
middle datasets then had most coins revealed, which throws away the noise of those users'
non-uniform reports, so their bounds sat above the corner's value (``-13.66``) and the search
drilled into single inexact datasets. Revealing is costly even in part: hiding at most 128 users
per non-pivot class (tried) gives ``-12.75`` for the box ``c0 <= 249, 250 <= c1 <= 499`` against
``-15.17`` with every fixed user hidden. Hiding every fixed user (one user at a time costs
``users x cells``) and exact cells near the mean make a box's bound about ``h_L`` plus a small
term growing with its free users.

Branch and bound. Boxes sit in a priority queue by their bound; the worst is split at the midpoint
of its longer side; single datasets computed exactly are leaves (bound ``h_c`` rounded up,
exhibited value ``h_c`` rounded down). A single dataset whose fixed classes are too large to
convolve (three classes of thousands of users) stays a (sound, inexact) box ((K2')). For
``delta(eps)`` the search stops when the largest bound is within ``(1 + tol)`` of the best
exhibited leaf; for ``epsilon(delta)`` it keeps ``eps_up = (1 + tol) eps_low`` and splits until
every box's bound at some ``eps' <= eps_up`` is ``<= delta`` (``h_c`` is non-increasing in
``eps``).

Truncation level. The epsilon query truncates at ``log delta``; a delta query at the best
corner's exhibited ``log delta`` (all others at one value; first tried at ``e^-30``, then at
``e^-60`` where every corner is below that), so the windows drop at most ``e^-25`` of the
answer. Where every corner is below ``e^-60`` the answer is certified as at most about the
windows' dropped mass (``16 e^-85``) and the query stops there. Any level is sound: the dropped
mass is always added.

Tolerance and budget (:func:`default_tol`, :func:`certify_k`). The default tolerance is ``1e-5``
up to 1000 users and grows in proportion to ``n`` to the target gap ``1e-4``, reached at
``n = 1e4``: one bound evaluation costs about ``n^1.5`` cell operations (at ``n = 1e4``, 2-3 s),
and the default budget (about a minute) must also cover ``delta = 1e-12`` there. (Before
partial hiding (K2'),
boxes of datasets with three large classes had two classes' coins revealed, which left their
bounds about ``2e-5`` in epsilon above the worst case at ``n = 1e4``, ``delta = 1e-6``, and
above it at ``delta = 1e-12``; measured, benchmarks/README.md.) A delta query's gap ``t`` in
delta is a gap of only about ``t / (2 log(1/delta))`` in epsilon; beyond 1000 users the default
delta query therefore also stops once its certified delta at ``eps`` is at most the witness's
exhibited delta at ``eps / (1 + default_tol(n))`` (the same gap as the epsilon query's,
measured along eps; the exhibited value there is a lower bound on the worst case at that eps,
so the certified curve lies within that factor in eps of the true worst-case curve). The search
also stops when its budget is spent: ``max_evals`` bound evaluations or ``max_cells`` grid
cells touched (a deterministic count, proportional to the time at every ``n``). *A stopped
search is still sound:* (i) at every moment the open boxes and the finished ones partition the
triangle (splitting replaces a box by two boxes that partition it; :func:`clip_box` drops only
pairs outside the triangle), and each box's bound dominates every ``h_c`` in it ((K2)), so for
``delta(eps)`` the largest bound of the current cover is an upper bound; (ii) for
``epsilon(delta)`` the finished boxes are certified at eps values ``<= eps_up``, and each open
box is evaluated at increasing eps until its own bound is ``<= delta``. Every ``h_c`` is
non-increasing in eps (``sum_h (P(h) - E Q(h))_+`` decreases as ``E = e^eps`` grows), so at the
largest eps recorded in the cover, ``eps*``, each dataset ``c`` of a box recorded at ``e <= eps*``
has ``h_c(eps*) <= h_c(e) <= U_box(e) <= delta``; at ``eps0`` every bound is 0 (the release is
``eps0``-DP), so the step up ends. ``eps*`` is the certified epsilon; its gap to the witness is
reported (``converged=False``). For ``delta(eps)``, where the split cover's largest bound exceeds the
root box's (the privacy-blanket bound; not expected: a sub-box's bound is mathematically at most
its parent's, by the revealing argument of (K2)), the root box alone is returned.

Scope: ``k = 3`` only. For ``k >= 4`` nothing here is claimed (``certify_k`` raises); the blanket
bound remains the certified value there.

Example:
    >>> cert = certify_k(3, 1.0, 30, eps=0.5)
    >>> bool(cert.exhibited_log_delta <= cert.log_delta <= cert.exhibited_log_delta + 1e-4)
    True
    >>> verify(cert)
    True
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._binomial import binom_window_range as _binom_window_range
from .._binomial import logsumexp
from .._logmath import UNIT_ROUNDOFF, bisect_bracket, exp_up
from .._validation import ParameterError, WorkBudgetExceeded, check_bool, check_delta, check_int, check_real
from . import _krr_grid as G
from ._bound_memo import BoundMemo, MemoInfo, canonical_level

__all__ = [
    "DEFAULT_MAX_CELLS",
    "DEFAULT_TOL_SMALL",
    "DEFAULT_TOL_SMALL_N",
    "DEFAULT_TOL_TARGET",
    "default_tol",
    "CoverBox",
    "WorstCaseKCertificate",
    "certify_k",
    "verify",
    "box_log_bound",
    "BOUND_MEMO_SIZE",
    "bound_memo_info",
    "clear_bound_memo",
]

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52 (the budgets below are in units of 2u)
#: Windows are widened until the dropped mass is below ``e^-_DROP_MARGIN`` times the level.
_DROP_MARGIN = 25.0
#: Tail cells of ``B`` spanning at most this many values are cut into unit cells.
_UNIT_SPAN = 64
#: Truncation level at which :func:`certify_k` estimates the root box's work (up-front refusal).
_ESTIMATE_LOG_LEVEL = -20.0
#: First truncation level of a delta query (then the best corner's exhibited log delta).
_FIRST_LOG_LEVEL = -30.0
#: Deepest truncation level a ``deep=False`` delta query tries when every corner is below the
#: current one (deeper windows cost more everywhere; below it the answer is "at most the dropped
#: mass", about e^-88, where the blanket is tighter).
_LAST_LOG_LEVEL = -60.0
#: Deepest truncation level of a ``deep=True`` delta query (delta ~ e^-1920, far below what
#: ``ShuffledKRR.log_delta`` reports; the windows there already span most of the support).
_DEEPEST_LOG_LEVEL = -1920.0
#: Largest converged epsilon cover that :func:`certify_k` tries once to certify at a smaller eps.
_TIGHTEN_MAX_BOXES = 8
#: Default tolerance of :func:`certify_k` up to :data:`DEFAULT_TOL_SMALL_N` users (:func:`default_tol`).
DEFAULT_TOL_SMALL: float = 1e-5
#: The issue's target gap (certified / exhibited - 1 in epsilon): the default tolerance from
#: ``10 x`` :data:`DEFAULT_TOL_SMALL_N` users on (:func:`default_tol`).
DEFAULT_TOL_TARGET: float = 1e-4
#: Largest ``n`` at which the default tolerance is :data:`DEFAULT_TOL_SMALL`.
DEFAULT_TOL_SMALL_N: int = 1000
#: Default work budget of :func:`certify_k`, in grid cells touched (:attr:`BoxProblem.work`):
#: about a minute of one core. With partial hiding ((K2')) the hardest measured points of the
#: issue-11 range, n = 1e4, eps0 = 0.5 / 1, delta = 1e-12, converge at gap 8.5e-5 / 9.5e-5 after
#: 7.0e9 / 7.1e9 cells (before it, 1.2e10 cells stopped them at 1.1e-4 / 1.3e-4).
DEFAULT_MAX_CELLS: float = 1.2e10
#: Partial hiding ((K2'), :meth:`BoxProblem.hidden`): where the fixed users cannot all be hidden,
#: the two smaller classes keep ``max(_HIDE_MIN, _HIDE_SDS sd)`` users hidden between them
#: (``sd`` that of the uniform count ``B`` when both are revealed), about half the sweep's work.
_HIDE_MIN = 64
_HIDE_SDS = 4.5
#: Box bounds kept by the memo shared by the searches of :func:`certify_k` (least recently used
#: dropped; see :data:`_MEMO`).
BOUND_MEMO_SIZE: int = 8192
#: A placeholder in :class:`BoxProblem`'s caches of laws: the entry whose work a memo hit charged
#: (built, without charging again, when an evaluation needs it).
_CHARGED = object()
#: The memo of box bounds shared by the epsilon and delta queries of :func:`certify_k` (the round
#: trip of ``ShuffledKRR.epsilon``): key ``(eps0, n, level, hide_cap, L, m, eps, tunables)`` ->
#: ``(bound, trace)``. The key holds every input of one evaluation of :meth:`BoxProblem.bound`
#: (the corner ``(L, m)`` of the box, on which the bound depends alone, the truncation level, the
#: hiding cap and the module's and :mod:`~._krr_grid`'s tunables); the evaluation is a
#: deterministic function of it, so a hit returns exactly the value the evaluation computes. The
#: ``trace`` is the evaluation's work charges in order (laws built, with the keys under which
#: the problem caches them, and the per-call sums); a hit replays them on the problem's caches, so
#: :attr:`BoxProblem.work`, the budget stop, and with them the whole certificate (a test checks:
#: field for field) are the same with the memo full or empty. :func:`verify` never reads it.
_MEMO = BoundMemo(lambda: BOUND_MEMO_SIZE)


def bound_memo_info() -> MemoInfo:
    """Hits, misses and size of the memo of box bounds shared by :func:`certify_k`'s searches.

    Returns:
        A :class:`~shuffle_accounting.shuffled_krr._bound_memo.MemoInfo`.

    Example:
        >>> clear_bound_memo()
        >>> c = certify_k(3, 1.0, 30, delta=1e-6)
        >>> info = bound_memo_info()
        >>> info.size > 0, info.misses >= info.size
        (True, True)
        >>> _ = certify_k(3, 1.0, 30, eps=c.epsilon)  # the round trip's delta query
        >>> bound_memo_info().hits > info.hits
        True
    """
    return _MEMO.info()


def clear_bound_memo() -> None:
    """Empty the memo of box bounds shared by the searches of :func:`certify_k`.

    Only the cost of later calls changes, never a certificate (see :data:`BOUND_MEMO_SIZE`).

    Example:
        >>> clear_bound_memo()
        >>> c1 = certify_k(3, 1.0, 12, delta=1e-3)
        >>> clear_bound_memo()
        >>> c1 == certify_k(3, 1.0, 12, delta=1e-3)
        True
    """
    _MEMO.clear()


def _tunables() -> tuple:
    """Every numeric constant of this module and of :mod:`~._krr_grid` (part of a memo key)."""
    out: list[tuple[str, float]] = []
    for mod in (globals(), vars(G)):
        out.extend(
            (k, v)
            for k, v in sorted(mod.items())
            if k.lstrip("_").isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)
        )
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# the k = 3 problem
# ---------------------------------------------------------------------------------------------


class BoxProblem:
    """Constants and caches for one ``(eps0, n)`` and one truncation level."""

    def __init__(
        self, eps0: float, n: int, log_level: float, *, hide_cap: int | None = None, memo: bool = False
    ) -> None:
        self.eps0, self.n = eps0, n
        #: Whether :meth:`bound` reads and fills the shared memo (:data:`_MEMO`; the searches of
        #: :func:`certify_k` only, never :func:`verify`).
        self.memo = memo
        self._memo_head = (eps0, n, log_level, hide_cap) if memo else None
        self._memo_tail = _tunables() if memo else None
        self._trace: list | None = None  # the work charges of the evaluation being memoised
        if hide_cap is not None:
            hide_cap = check_int("hide_cap", hide_cap, minimum=0)
        #: Largest number of users of the two smaller fixed classes kept hidden where they cannot
        #: all be (``None``: :meth:`hidden`'s default); also caps full hiding when set (tests).
        self.hide_cap = hide_cap
        self._hidden_cache: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        self.lp, self.lq = G.k3_rows(eps0)  # log p, log pbar
        self.log_g = math.log(3.0) + self.lq  # log gamma
        self.log_1mg = self.lp + math.log(-math.expm1(-eps0))  # log(1 - gamma) = log(p - pbar)
        self.log_level = log_level
        self.log_tol = log_level - _DROP_MARGIN
        #: About the windows' dropped mass (``16 e^log_tol``): no box's bound gets below it, so a
        #: bound down there says the answer is below this level's resolution.
        self.log_floor = self.log_tol + math.log(16.0)
        self._fixed_cache: dict[tuple, Any] = {}  # key -> (v, law, revealed, work), or a placeholder
        self._fits_cache: dict[tuple[int, int, int], bool] = {}
        self._leaf_cache: dict[tuple[int, int, int], Any] = {}  # L -> (Hockey, work of fixed(L))
        self._value_cache: dict[tuple, tuple[float, float]] = {}
        self.evaluations = 0
        #: Work spent, in grid cells touched (:func:`certify_k`'s ``max_cells``): each law built
        #: counts its cells times (one + the users added one at a time), each sweep step and
        #: each hockey-stick sum its grid's cells.
        self.work = 0.0

    def fixed(
        self, L: tuple[int, int, int], uniform: int = 0, reveal: bool = False
    ) -> tuple[int, G.Grid, int]:
        """``(pivot v, law of the hidden fixed users + uniform ones, fixed users revealed)`` (cached).

        Every fixed user stays hidden when :func:`~._krr_grid.fixed_law_k3` is within budget
        (and ``reveal`` is false); otherwise the coins of the two smaller classes are revealed
        ((K2)) and only the pivot class stays hidden. ``uniform`` users reporting uniformly are
        included.
        """
        key = (L, uniform, reveal)
        got = self._fixed_cache.get(key)
        if got is None or got[1] is _CHARGED:
            charged = got is not None  # a memo hit charged its work already (see _replay)
            if not charged and len(self._fixed_cache) > 32:
                self._fixed_cache.pop(next(iter(self._fixed_cache)))
            got = self._build_fixed(key)
            self._fixed_cache[key] = got
            if not charged:
                self.work += got[3]
        if self._trace is not None:
            self._trace.append((0, key, got[3]))
        return got[0], got[1], got[2]

    def _build_fixed(self, key: tuple) -> tuple[int, G.Grid, int, float]:
        """:meth:`fixed`'s law for ``key = (L, uniform, reveal)``, built, and its work (no cache)."""
        L, uniform, reveal = key
        t = self.log_tol - math.log(4.0)
        res = None if reveal else G.fixed_law_k3(self.eps0, L, t, uniform)
        revealed = 0
        if res is None:
            v = max((2, 0, 1), key=lambda x: L[x])
            only = (L[0] if v == 0 else 0, L[1] if v == 1 else 0, L[2] if v == 2 else 0)
            res = G.fixed_law_k3(self.eps0, only, t, uniform)
            revealed = sum(L) - L[v]
            if res is None:  # pragma: no cover - a single class always fits
                raise RuntimeError("internal: the pivot class alone is over budget")
        return res[0], res[1], revealed, float(res[1].arr.size) * (1 + sum(L) - max(L) - revealed)

    def _fixed_uncharged(self, key: tuple) -> tuple[int, G.Grid, int, float]:
        """The law of ``key`` without charging work or changing the order of the cache.

        For a leaf whose work a memo hit charged (:data:`_CHARGED`): in the evaluation order
        being reproduced, its law was built (and charged) at that hit.
        """
        got = self._fixed_cache.get(key)
        if got is not None and got[1] is not _CHARGED:
            return got
        built = self._build_fixed(key)
        if got is not None:  # a placeholder: fill it in place (same key, same position)
            self._fixed_cache[key] = built
        return built

    def hidden(self, L: tuple[int, int, int]) -> tuple[int, int, int]:
        """The fixed users kept hidden, ``L' <= L`` (cached): all of ``L`` when they fit, else part.

        Where :func:`~._krr_grid.fixed_law_k3` cannot hide every fixed user (three large
        classes), the pivot class (the largest) stays hidden with ``h`` users of the two other
        classes, ``h = max(_HIDE_MIN, _HIDE_SDS sd)`` (``sd`` the standard deviation of the
        uniform count when those classes are revealed; split evenly, a class's unused share going
        to the other), halved until the law fits; the other ``|L - L'|`` fixed users have their
        coins revealed, which (K2) allows: ``U(L, m) <= U(L', m + |L - L'|)``. Revealing both
        classes entirely (``h = 0``, the rule before) leaves a bound that depends on the pivot
        class alone, above the worst corner at ``n = 1e4`` (module docstring, (K2')).
        With :attr:`hide_cap` set, at most that many users of the two smaller classes are hidden.
        """
        got = self._hidden_cache.get(L)
        if got is not None:
            return got
        v = max((2, 0, 1), key=lambda x: L[x])
        d, o = G.PIVOT_COORDS[v]
        rest = L[d] + L[o]
        cap = self.hide_cap
        if (cap is None or rest <= cap) and self.fits(L):
            got = L
        else:
            g = math.exp(self.log_g)
            m_all = self.n - 1 - L[v]
            h = max(_HIDE_MIN, math.ceil(_HIDE_SDS * math.sqrt(m_all * g * (1.0 - g))))
            if cap is not None:
                h = min(h, cap)
            h = min(h, rest)
            while True:
                hd = min(L[d], h - min(L[o], h // 2))
                ho = min(L[o], h - hd)
                got_l = [0, 0, 0]
                got_l[v], got_l[d], got_l[o] = L[v], hd, ho
                got = (got_l[0], got_l[1], got_l[2])
                if h == 0 or self.fits(got):
                    break
                h //= 2  # pragma: no cover - the default h is far below the sequential budget
        self._hidden_cache[L] = got
        return got

    def fits(self, L: tuple[int, int, int]) -> bool:
        """Whether every fixed user of ``L`` can be hidden (:func:`~._krr_grid.fixed_law_k3`'s budget)."""
        got = self._fits_cache.get(L)
        if got is None:
            t = self.log_tol - math.log(4.0)
            # nothing built where the sequential work estimate of add_classes (users x cells of a
            # grid at most (c_v + 1)^2 grown by 2 z sqrt(users / 4) + 4 per side) is surely within
            # its budget: add_classes then always accepts (direct or sequential)
            rest = sum(L) - max(L)
            z = G.window_z(t - math.log(8.0))
            side = max(L) + 1.0 + 2.0 * z * math.sqrt(0.25 * rest) + 4.0
            if rest * side * side <= 0.5 * G.MAX_SEQUENTIAL_WORK:
                got = True
            else:
                got = G.fixed_law_k3(self.eps0, L, t, check_only=True) is not None
            self._fits_cache[L] = got
        return got

    def root_work(self) -> float:
        """Estimated cells touched by one bound evaluation of the root box (nothing is built).

        The root box's law is the closed form of ``b = s1`` uniform users
        (:func:`~._krr_grid.pivot_grid`: ``N_o ~ Bin(s1, 2/3)`` on its window, ``j`` on
        ``[N/2 - z sd, N/2 + z sd]`` over that window), swept and summed at every unit cell of
        ``B`` (:meth:`cells`); the sweep's measured trims keep about half of that rectangle
        (``0.45`` at ``n = 1e4``), counted as one half. Within a factor 2 of the :attr:`work`
        measured on the root at ``n = 1e3 .. 1e4`` (far below it at ``n ~ 100``, where the
        fixed costs dominate; the estimate only decides refusals at large ``n``).
        """
        _, starts, _, _, _ = self.cells(self.n - 1)
        s1, s2 = starts[0], starts[-1]
        t = self.log_tol - math.log(4.0) - math.log(8.0)
        if s1 > 0:
            n_lo, n_hi, _ = _binom_window_range(s1, -math.log(3.0), math.log(2.0 / 3.0), t)
            n_lo, n_hi = s1 - n_hi, s1 - n_lo  # N_o ~ Bin(s1, 2/3) = s1 - Bin(s1, 1/3)
        else:
            n_lo = n_hi = 0
        z = G.window_z(t)
        sdr = math.sqrt(max(n_hi, 1) * 0.25)
        cols = (
            min(n_hi, math.ceil(0.5 * n_hi + z * sdr) + 2) - max(0, math.floor(0.5 * n_lo - z * sdr) - 2) + 1
        )
        rows = n_hi - n_lo + 1
        return 0.5 * float(rows) * float(cols) * (2.0 * (s2 - s1) + len(starts) + 1)

    # -- cells of B ------------------------------------------------------------------------
    def cells(self, m: int) -> tuple[int, list[int], list[float], float, float]:
        """Cells of ``B ~ Bin(m, gamma)`` (module docstring (K3)).

        Returns ``(lo, starts, log masses, log tails, log low-cell mass)``: the window ``[lo, hi]`` of ``B`` is cut
        into a low cell ``[lo, s1)`` (left end ``lo``; absent when ``s1 = lo``), unit cells for
        every ``b`` in ``[s1, s2)`` and a top cell ``[s2, hi]``, with ``s1 = mean - 5 sd`` and
        ``s2 = mean + 4 sd`` (clipped to the window; a tail cell spanning at most
        :data:`_UNIT_SPAN` values is cut into unit cells instead); ``starts`` are the unit and top cells'
        left ends (from ``s1``). Masses are the window's log-pmfs summed and inflated by
        ``1e-9``; the window's two tails (mass ``<= e^tails``) are bounded with ``g <= 1``.
        """
        lo, lpw, ltail = G.binom_window(m, self.log_g, self.log_1mg, self.log_tol - math.log(4.0))
        hi = lo + lpw.size - 1
        g = math.exp(self.log_g)
        mean, sd = m * g, math.sqrt(m * g * (1.0 - g))
        s1 = min(max(lo, int(math.floor(mean - 5.0 * sd))), hi)
        s2 = min(max(s1, int(math.ceil(mean + 4.0 * sd))), hi)
        if s1 - lo <= _UNIT_SPAN:  # short tails: every value its own cell (exact there too)
            s1 = lo
        if hi - s2 <= _UNIT_SPAN:
            s2 = hi
        infl = math.log1p(1e-9)
        starts = list(range(s1, s2 + 1))
        lw = [float(lpw[b - lo]) + infl for b in range(s1, s2)]
        lw.append(float(logsumexp(lpw[s2 - lo :])) + infl)
        low = float(logsumexp(lpw[: s1 - lo])) + infl if s1 > lo else -math.inf
        return lo, starts, lw, ltail, low

    # -- boxes -----------------------------------------------------------------------------
    def corner(self, box: tuple[int, int, int, int]) -> tuple[tuple[int, int, int], int]:
        a0, b0, a1, b1 = box
        L = (a0, a1, max(0, self.n - 1 - b0 - b1))
        return L, self.n - 1 - sum(L)

    def is_exact(self, box: tuple[int, int, int, int]) -> bool:
        L, m = self.corner(box)
        return m == 0 and self.hidden(L) == L and self.fixed(L)[2] == 0

    def bound(self, box: tuple[int, int, int, int], eps: float) -> tuple[float, float]:
        """``(log U, log lower)``: the box bound (K2)-(K4); the lower value only for an exact leaf."""
        self.evaluations += 1
        if eps >= self.eps0:
            return -math.inf, -math.inf
        L, m = self.corner(box)
        key = (L, m, eps)
        got = self._value_cache.get(key)
        if got is not None:
            return got
        mkey = None if self._memo_head is None else (*self._memo_head, L, m, eps, self._memo_tail)
        if mkey is not None:
            hit = _MEMO.get(mkey)
            if hit is not None:
                got, trace = hit
                self._replay(trace)
            else:
                self._trace = []
                try:
                    got = self._bound(L, m, eps)
                    _MEMO.put(mkey, (got, tuple(self._trace)))
                finally:
                    self._trace = None
        else:
            got = self._bound(L, m, eps)
        if len(self._value_cache) > 100_000:
            self._value_cache.clear()
        self._value_cache[key] = got
        return got

    def _charge(self, w: float) -> None:
        """Add ``w`` cells to :attr:`work` (recorded in the trace of a memoised evaluation)."""
        self.work += w
        if self._trace is not None:
            self._trace.append((2, None, w))

    def _replay(self, trace: tuple) -> None:
        """Charge a memo hit's work as the evaluation would have, in the same order.

        ``(0, key, cost)``: the law of :meth:`fixed` under ``key``; ``(1, L, (size, cost))``: the
        leaf :class:`~._krr_grid.Hockey` of ``L`` (built from ``fixed(L)``, of work ``cost``) --
        charged, with a placeholder entry (:data:`_CHARGED`), only where the cache lacks it, the
        oldest entry dropped as the evaluation's insertion would; ``(2, None, w)``: a per-call
        charge. :attr:`work` and the caches' keys then end as
        after the evaluation itself (the laws are built later, uncharged, if needed).
        """
        for kind, key, w in trace:
            if kind == 0:
                if key not in self._fixed_cache:
                    if len(self._fixed_cache) > 32:
                        self._fixed_cache.pop(next(iter(self._fixed_cache)))
                    self._fixed_cache[key] = (None, _CHARGED, None, w)
                    self.work += w
            elif kind == 1:
                if key not in self._leaf_cache:  # the evaluation would call fixed(L), then build
                    size, fcost = w
                    self._replay(((0, (key, 0, False), fcost),))
                    if len(self._leaf_cache) > 64:
                        self._leaf_cache.pop(next(iter(self._leaf_cache)))
                    self._leaf_cache[key] = _CHARGED
                    self.work += size
            else:
                self.work += w

    def _bound(self, L: tuple[int, int, int], m: int, eps: float) -> tuple[float, float]:
        """:meth:`bound` of the corner ``(L, m)`` at ``eps < eps0``, without the caches of values."""
        got = None
        H = self.hidden(L)
        if H != L:  # part of the two smaller classes revealed (K2): they join the free users
            L, m = H, m + sum(L) - sum(H)
        reveal = False
        if m == 0:
            leaf = self._leaf_cache.get(L)
            h = None
            fkey = (L, 0, False)  # the key of fixed(L)
            if leaf is None:
                tr, self._trace = self._trace, None  # recorded below, with the leaf's own charge
                try:
                    v, F, rev = self.fixed(L)
                finally:
                    self._trace = tr
                fcost = self._fixed_cache[fkey][3]
                if rev == 0:
                    if len(self._leaf_cache) > 64:
                        self._leaf_cache.pop(next(iter(self._leaf_cache)))
                    h = G.Hockey(F, *G.target_rows_k3(self.eps0, v))
                    self._leaf_cache[L] = (h, fcost)
                    self.work += h.size
                else:  # a single dataset too large to hide: a (sound, inexact) box
                    if tr is not None:
                        tr.append((0, fkey, fcost))
                    m, reveal = rev, True
            elif leaf is _CHARGED:  # charged by a memo hit: build, uncharged
                v, F, _, fcost = self._fixed_uncharged(fkey)
                h = G.Hockey(F, *G.target_rows_k3(self.eps0, v))
                self._leaf_cache[L] = (h, fcost)
            else:
                h, fcost = leaf
            if h is not None:
                if self._trace is not None:
                    self._trace.append((1, L, (h.size, fcost)))
                got = h.bounds(eps)
                self._charge(h.size)
        if m > 0:
            if not reveal and not self.fits(L):
                m, reveal = m + sum(L) - max(L), True
            lo, starts, lw, ltail, lmass = self.cells(m)
            # the first unit cell's uniform users enter the pivot's closed form; the others are
            # added one at a time; the low cell [lo, s1) is bounded by g(lo) (K3)
            # where many non-pivot users are hidden, rebuilding the law at lo costs more than
            # stepping from lo to s1: build once at lo and sweep through
            through = lmass > -math.inf and sum(L) - max(L) > starts[0] - lo
            base = lo if through else starts[0]
            v, F, rev = self.fixed(L, base, reveal)
            if rev > 0 and not reveal:  # hiding failed with these uniform users: reveal, redo
                m, reveal = m + rev, True
                lo, starts, lw, ltail, lmass = self.cells(m)
                through = False
                base = starts[0]
                v, F, rev = self.fixed(L, base, reveal)
            pi_p, pi_q = G.target_rows_k3(self.eps0, v)
            terms = [ltail]  # the window's tails, with g <= 1
            if lmass > -math.inf and not through:
                v0, F0, rev0 = self.fixed(L, lo, reveal)
                if rev0 == rev:
                    terms.append(lmass + G.hockey_upper(F0, *G.target_rows_k3(self.eps0, v0), eps))
                    self._charge(F0.arr.size)
                else:  # pragma: no cover - a smaller law fits whenever a larger one does
                    terms.append(lmass)  # g <= 1
            third = -math.log(3.0)
            stops = [b - base for b in starts]
            wts = list(lw)
            if through:  # the low cell's bound g(lo) is the sweep's first stop
                stops, wts = [0, *stops], [lmass, *wts]
            last = 0
            ws = G.Workspace()
            sweep = G.sweep_users(F, stops, (third, third, third), self.log_tol - 2.0, fresh=False)
            for j, (b, grid) in enumerate(sweep):  # each grid used at once
                terms.append(wts[j] + G.hockey_upper(grid, pi_p, pi_q, eps, ws))
                self._charge(float(grid.arr.size) * (b - last + 1))  # the sweep steps and the sum
                last = b
            got = (min(float(logsumexp(terms)) + 4.0 * len(terms) * _U, 0.0), -math.inf)
        if got is None:  # pragma: no cover - every branch above sets it
            raise RuntimeError("internal: box bound not computed")
        return got

    def leaf_epsilon(self, box: tuple[int, int, int, int], log_delta: float, upper: bool) -> float:
        """Bisection on eps: exhibited (``upper=False``, rounded down) or certified (``True``) eps."""
        idx = 0 if upper else 1

        def above(e: float) -> bool:
            return self.bound(box, e)[idx] > log_delta

        if not above(0.0):
            return 0.0
        lo, hi = bisect_bracket(above, 0.0, self.eps0, rtol=1e-13, max_iter=200)
        return hi if upper else lo


def _count(box: tuple[int, int, int, int], n: int) -> int:
    """Number of datasets ``(c0, c1)`` with ``c0 + c1 <= n - 1`` in a box."""
    a0, b0, a1, b1 = box
    c0 = np.arange(a0, b0 + 1)
    return int(np.sum(np.maximum(0, np.minimum(b1, n - 1 - c0) - a1 + 1)))


def clip_box(box: tuple[int, int, int, int], n: int) -> tuple[int, int, int, int] | None:
    """The box ``(a0, b0, a1, b1)`` with its upper ends cut to the simplex ``c0 + c1 <= n - 1``.

    ``None`` when no dataset with ``c0 + c1 <= n - 1`` lies in it.
    """
    a0, b0, a1, b1 = box
    b0, b1 = min(b0, n - 1 - a1), min(b1, n - 1 - a0)
    if a0 > b0 or a1 > b1:
        return None
    return (a0, b0, a1, b1)


def _split(box: tuple[int, int, int, int], n: int) -> list[tuple[int, int, int, int]]:
    a0, b0, a1, b1 = box
    if b0 - a0 >= b1 - a1:
        mid = (a0 + b0) // 2
        kids = [(a0, mid, a1, b1), (mid + 1, b0, a1, b1)]
    else:
        mid = (a1 + b1) // 2
        kids = [(a0, b0, a1, mid), (a0, b0, mid + 1, b1)]
    return [c for c in (clip_box(x, n) for x in kids) if c is not None]


def _seeds(n: int) -> list[tuple[int, int, int, int]]:
    """Datasets near the corners and along the edges, as point boxes (exhibited candidates).

    Fewer for ``n > 100`` (each costs a full law there); the search finds every other leaf.
    """
    pts = set()
    for j in (0, 1, 2, 3, 5, 8, 13) if n <= 100 else (0, 1, 2):
        if j > n - 1:
            continue
        r = n - 1 - j
        for c in ((r, j, 0), (r, 0, j), (j, r, 0), (0, r, j), (j, 0, r), (0, j, r)):
            pts.add((c[0], c[1]))
    return sorted((c0, c0, c1, c1) for c0, c1 in pts)


# ---------------------------------------------------------------------------------------------
# certificate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverBox:
    """One cell of the cover: ``h_c(eps) <= exp(log_bound)`` for every dataset in the box.

    Attributes:
        c0_lo: Smallest count of other users at value 0.
        c0_hi: Largest (inclusive).
        c1_lo: Smallest count of other users at value 1.
        c1_hi: Largest (inclusive); datasets with ``c0 + c1 > n - 1`` are not in the box.
        eps: The eps at which the bound was evaluated (it also holds at every larger eps).
        log_bound: Natural log of the certified bound ``U`` (module docstring (K2)) at ``eps``.
    """

    c0_lo: int
    c0_hi: int
    c1_lo: int
    c1_hi: int
    eps: float
    log_bound: float

    @property
    def box(self) -> tuple[int, int, int, int]:
        return (self.c0_lo, self.c0_hi, self.c1_lo, self.c1_hi)


def certificate_gap(
    query: str, log_delta: float, exhibited_log_delta: float, epsilon: float, epsilon_lower: float
) -> float:
    """``certified / exhibited - 1`` of a worst-case certificate, in the query's own units.

    ``query="delta"``: ``e^(log_delta - exhibited_log_delta) - 1`` (0 when both deltas are 0, inf
    when only the exhibited one is); ``"epsilon"``: ``epsilon / epsilon_lower - 1`` (0 when both
    are 0, inf when only the exhibited one is). Shared by the k = 3 and k >= 4 certificates.
    """
    if query == "delta":
        if exhibited_log_delta == -math.inf:
            return 0.0 if log_delta == -math.inf else math.inf
        return math.expm1(log_delta - exhibited_log_delta)
    if epsilon_lower <= 0.0:
        return 0.0 if epsilon == 0.0 else math.inf
    return epsilon / epsilon_lower - 1.0


@dataclass(frozen=True)
class WorstCaseKCertificate:
    """A re-checkable certificate of the worst-case privacy curve of shuffled 3-RR.

    The cover partitions the triangle ``{(c0, c1) : c0 + c1 <= n - 1}`` of datasets;
    ``sup_{D ~ D'} delta_D(eps) = max_c h_c(eps)`` (module docstring (K1)) is at most the max of
    the cover's bounds. :func:`verify` recomputes every bound and the exhibited value.

    Attributes:
        k: Always 3.
        eps0: Local privacy parameter.
        n: Number of users.
        query: ``"delta"`` (certify ``delta(eps)``) or ``"epsilon"`` (certify ``epsilon(delta)``).
        eps: The eps certified (``"delta"``: the input; ``"epsilon"``: the certified epsilon).
        delta: The target delta (``"epsilon"``) or the certified delta (``"delta"``).
        log_delta: Natural log of the certified delta at ``eps``.
        epsilon: Certified epsilon (``"epsilon"``) or ``eps`` (``"delta"``).
        epsilon_lower: Exhibited epsilon of the witness at ``delta`` (``"epsilon"``), else 0.0.
        worst_others: The witness dataset: counts of the other users at values ``(0, 1, 2)``
            (the target moves ``0 -> 1``).
        exhibited_log_delta: Exhibited (lower) log delta of the witness at ``eps`` (``"delta"``)
            or at ``epsilon_lower`` (``"epsilon"``, then ``> log delta``).
        cover: The boxes with their bounds.
        log_level: Truncation level (reproduces the windows in :func:`verify`).
        evaluations: Number of bound evaluations spent.
        converged: Whether the gap target ``tol`` was reached (else the budget ran out or some
            single dataset could not be computed exactly; the certificate is sound either way).
        work: Grid cells touched (:attr:`BoxProblem.work`, the unit of ``max_cells``).
    """

    k: int
    eps0: float
    n: int
    query: str
    eps: float
    delta: float
    log_delta: float
    epsilon: float
    epsilon_lower: float
    worst_others: tuple[int, ...]
    exhibited_log_delta: float
    cover: tuple[CoverBox, ...]
    log_level: float
    evaluations: int
    converged: bool
    work: float = 0.0

    @property
    def gap(self) -> float:
        """``certified / exhibited - 1`` in delta (``"delta"``) or epsilon (``"epsilon"``)."""
        return certificate_gap(
            self.query, self.log_delta, self.exhibited_log_delta, self.epsilon, self.epsilon_lower
        )


def _others(box: tuple[int, int, int, int], n: int) -> tuple[int, int, int]:
    return (box[0], box[2], n - 1 - box[0] - box[2])


def _certify_delta(
    pr: BoxProblem, eps: float, tol: float, max_evals: int, max_cells: float, eps_tol: float | None
):
    """Branch and bound for ``delta(eps)``: ``(cover, best log delta, witness box, converged)``.

    Stops when the largest bound is at most the *stop level*: ``(1 + tol)`` times the best
    exhibited delta, or (``eps_tol`` given) the witness's exhibited delta at
    ``eps / (1 + eps_tol)`` where that is larger (a gap of ``eps_tol`` in epsilon), when the
    budget (``max_evals`` evaluations, ``max_cells`` cells) is spent, or when the largest bound is
    down to about the windows' dropped mass (``16 e^(level - 25)``: splitting cannot lower it);
    the cover is sound either way.
    """
    best, best_box = -math.inf, None
    for sb in _seeds(pr.n):
        if pr.is_exact(sb):
            lo = pr.bound(sb, eps)[1]
            if lo > best or best_box is None:
                best, best_box = lo, sb
    ltol = math.log1p(tol)

    def stop_level() -> float:
        level = best + ltol
        if eps_tol is not None and best_box is not None and eps > 0.0:
            level = max(level, pr.bound(best_box, eps / (1.0 + eps_tol))[1])
        return level

    level = stop_level()
    root = (0, pr.n - 1, 0, pr.n - 1)
    u_root = pr.bound(root, eps)[0]
    heap = [(-u_root, root)]
    done: list[CoverBox] = []
    converged = True
    start, wstart = pr.evaluations, pr.work
    while heap:
        neg, box = heap[0]
        if -neg <= level:
            break
        if -neg <= pr.log_floor:  # the answer is below this level's resolution; certified as it is
            converged = False
            break
        if pr.evaluations - start > max_evals or pr.work - wstart > max_cells:
            converged = False
            break
        heapq.heappop(heap)
        if box[0] == box[1] and box[2] == box[3]:  # a single dataset: nothing left to split
            if not pr.is_exact(box):
                converged = False
            done.append(CoverBox(box[0], box[1], box[2], box[3], eps, -neg))
            continue
        for kid in _split(box, pr.n):
            u, lo = pr.bound(kid, eps)
            if lo > best:
                best, best_box = lo, kid
                level = stop_level()
            heapq.heappush(heap, (-u, kid))
    done.extend(CoverBox(box[0], box[1], box[2], box[3], eps, -neg) for neg, box in heap)
    top = max(c.log_bound for c in done)
    if top > level:
        converged = False
    if top > u_root:  # the split cover is looser than the root box (the blanket): keep the root
        done = [CoverBox(*root, eps, u_root)]
    return done, best, best_box, converged


def _target(eps0: float, eps_low: float, tol: float) -> float:
    """The eps to certify: ``(1 + tol) eps_low``, but at most half-way from ``eps_low`` to ``eps0``."""
    return min(eps_low * (1.0 + tol), eps_low + 0.5 * (eps0 - eps_low))


def _finish_open_boxes(pr: BoxProblem, rest: list, eps_up: float, log_delta: float, slope: float):
    """Certify the boxes left open by a budget stop at a larger eps: ``(cover boxes, eps)``.

    ``rest`` holds ``(log bound at eps_up, box)``. Every box's bound is non-increasing in eps
    ((K2): each ``g_L(b)`` is a hockey-stick divergence at ``e^eps``), so a box whose bound is
    ``<= log_delta`` at some ``e`` is certified at every larger eps. The first trial eps is the
    largest excess over ``log_delta`` divided by ``slope`` (an estimate of ``-d log U / d eps``,
    only a guess: soundness does not depend on it), times 1.25; boxes still above are retried
    with the step doubled (at ``eps0`` every bound is 0: the release is ``eps0``-DP). Each box
    costs one or two evaluations instead of a bisection.
    """
    out = [CoverBox(b[0], b[1], b[2], b[3], eps_up, u) for u, b in rest if u <= log_delta]
    pending = [(u, b) for u, b in rest if u > log_delta]
    if not pending:
        return out, eps_up
    excess = max(u - log_delta for u, _ in pending)
    step = max(1.25 * excess / slope if slope > 0 else 0.0, 1e-6 * max(eps_up, 1e-3 * pr.eps0))
    e = eps_up
    while pending:
        e = min(pr.eps0, eps_up + step)
        still = []
        for _, b in pending:
            u = pr.bound(b, e)[0]
            if u <= log_delta:
                out.append(CoverBox(b[0], b[1], b[2], b[3], e, u))
            else:
                still.append((u, b))
        if still and e >= pr.eps0:  # pragma: no cover - every bound is -inf at eps0
            raise RuntimeError("internal: a box is not certified at eps0")
        pending = still
        step *= 2.0
    return out, e


def _certify_epsilon(pr: BoxProblem, log_delta: float, tol: float, max_evals: int, max_cells: float):
    eps_low, best_box = 0.0, None
    for sb in _seeds(pr.n):
        if pr.is_exact(sb):
            # bisect only a seed that beats the current witness (one evaluation otherwise)
            if best_box is not None and pr.bound(sb, eps_low)[1] <= log_delta:
                continue
            e = pr.leaf_epsilon(sb, log_delta, upper=False)
            if e > eps_low or best_box is None:
                eps_low, best_box = e, sb
    eps_up = _target(pr.eps0, eps_low, tol) if eps_low > 0 else 0.0
    root = (0, pr.n - 1, 0, pr.n - 1)
    heap: list = [(0.0, root, -1.0)]  # (-bound, box, eps at which the bound was computed)
    done: list[CoverBox] = []
    converged = True
    start, wstart = pr.evaluations, pr.work
    while heap:
        neg, box, e_at = heapq.heappop(heap)
        if pr.evaluations - start > max_evals or pr.work - wstart > max_cells:
            heapq.heappush(heap, (neg, box, e_at))
            converged = False
            break
        if e_at < eps_up:
            u, _ = pr.bound(box, eps_up)
            e_at = eps_up
        else:
            u = -neg
        if u <= log_delta:
            done.append(CoverBox(box[0], box[1], box[2], box[3], e_at, u))
            continue
        if box[0] == box[1] and box[2] == box[3]:
            if pr.is_exact(box):
                e = pr.leaf_epsilon(box, log_delta, upper=False)
                if e > eps_low:
                    eps_low, best_box = e, box
                    eps_up = max(eps_up, _target(pr.eps0, eps_low, tol))
            else:
                converged = False
            u, _ = pr.bound(box, eps_up)
            if u > log_delta:  # rounding band of this leaf, or an inexact point: move eps_up past it
                eps_up = max(eps_up, pr.leaf_epsilon(box, log_delta, upper=True))
                u, _ = pr.bound(box, eps_up)
            if u > log_delta:  # pragma: no cover - eps0 itself always certifies (H = 0)
                eps_up, u = pr.eps0, -math.inf
            done.append(CoverBox(box[0], box[1], box[2], box[3], eps_up, u))
            continue
        for kid in _split(box, pr.n):
            ua, _ = pr.bound(kid, eps_up)
            heapq.heappush(heap, (-ua, kid, eps_up))
    # slope guess from the witness: log h falls by about (log h(eps_low) - log h(eps_up)) over
    # [eps_low, eps_up]; where that is not measurable, the Gaussian-regime 2 |log h| / eps. Only
    # a guess for the next trial eps: every value kept below is checked by a bound evaluation.
    slope = 0.0
    if best_box is not None and eps_up > eps_low > 0:
        slope = (pr.bound(best_box, eps_low)[1] - pr.bound(best_box, eps_up)[1]) / (eps_up - eps_low)
    if not slope > 0 and eps_up > 0:
        slope = 2.0 * abs(log_delta) / eps_up
    if heap:  # budget spent: certify the open boxes at a larger eps, by their own bounds
        rest = [(pr.bound(b, eps_up)[0], b) for _, b, _ in heap]
        boxes, eps_up = _finish_open_boxes(pr, rest, eps_up, log_delta, slope)
        done.extend(boxes)
    elif 0 < len(done) <= _TIGHTEN_MAX_BOXES and eps_low > 0 and slope > 0:
        # a small cover (the root box alone, typically, at large n) often holds below eps_up:
        # one trial at the eps its bounds' slack predicts, kept only if every bound holds there
        e_try = eps_low
        for cb in done:
            if cb.log_bound == -math.inf:  # a zero bound: certified at any eps
                continue
            e_star = cb.eps - (log_delta - cb.log_bound) / slope
            e_try = max(e_try, e_star + 0.1 * (cb.eps - e_star))
        if e_try < eps_up:
            trial = [CoverBox(*cb.box, e_try, pr.bound(cb.box, e_try)[0]) for cb in done]
            if all(cb.log_bound <= log_delta for cb in trial):
                done, eps_up = trial, e_try
    if best_box is None:  # pragma: no cover - the corners are always exact
        raise RuntimeError("no exact seed dataset")
    ex = pr.bound(best_box, eps_low)[1] if eps_low > 0 else -math.inf
    if eps_low > 0 and eps_up > eps_low * (1.0 + tol):
        converged = False
    return done, eps_up, eps_low, best_box, ex, converged


def _check(k, eps0, n):
    k = check_int("k", k, minimum=2)
    if k != 3:
        raise ParameterError(
            f"k must be 3 for the k >= 3 branch and bound (k = 2: worst_case.certify; k >= 4 is not "
            f"implemented), got {k}"
        )
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True, high=700.0)
    n = check_int("n", n, minimum=2)
    return k, eps0, n


def default_tol(n: int) -> float:
    """The default stopping tolerance of :func:`certify_k` at ``n`` users (relative gap in epsilon).

    ``1e-5`` up to :data:`DEFAULT_TOL_SMALL_N` users, then growing in proportion to ``n`` up to
    the issue's target gap :data:`DEFAULT_TOL_TARGET` (``1e-4``), reached at ``10 x``
    :data:`DEFAULT_TOL_SMALL_N` users and kept beyond. Why: a bound evaluation costs about
    ``n^1.5`` (grids of ``~n`` cells, ``~9 sd ~ sqrt(n)`` uniform users swept one at a time; 2-3 s
    at ``n = 1e4``), and a smaller gap needs more of them, while the default budget (about a
    minute) must also cover ``delta = 1e-12``. Measured at ``eps0 = 1``, ``delta = 1e-6`` (load ~2),
    before partial hiding ((K2') of the module docstring; datasets with three large classes then
    had two classes' coins revealed, their bounds ``~2e-5`` in epsilon above the worst case at
    ``n = 1e4``): ``1e-5`` converges at ``n = 3000`` in 11 s and ``n = 5000`` in 19 s; at
    ``n = 1e4``, ``5e-5`` in 38 s, ``1e-4`` in ~6 s, ``3e-5`` not in 150 s. With partial hiding
    every measured point at ``n = 1e4`` down to ``delta = 1e-12`` converges at ``1e-4`` within the
    default budget (benchmarks/README.md); at ``eps0 = 1``, ``3e-5`` converges at ``delta = 1e-6``
    in 31 s of CPU (gap ``2.2e-5``, 8.5e9 cells) and ``5e-5`` at ``delta = 1e-12`` in 53 s
    (1.15e10 cells, just within the default budget); the default was not re-tuned.

    Args:
        n: Number of users (``>= 1``).

    Returns:
        ``min(1e-4, 1e-5 max(1, n / 1000))``.

    Raises:
        ParameterError: If ``n`` is not an integer ``>= 1``.

    Example:
        >>> default_tol(100), default_tol(5000), default_tol(10**6)
        (1e-05, 5e-05, 0.0001)
    """
    n = check_int("n", n, minimum=1)
    return min(DEFAULT_TOL_TARGET, DEFAULT_TOL_SMALL * max(1.0, n / DEFAULT_TOL_SMALL_N))


def certify_k(
    k,
    eps0,
    n,
    *,
    eps=None,
    delta=None,
    tol: float | None = None,
    max_evals: int = 20000,
    max_cells: float = DEFAULT_MAX_CELLS,
    deep: bool = True,
) -> WorstCaseKCertificate:
    """Certify the worst case of shuffled k-RR (``k = 3``) by branch and bound over boxes of datasets.

    Exactly one of ``eps`` (certify ``delta(eps)``) and ``delta`` (certify ``epsilon(delta)``) is
    given. The certified value is an upper bound on ``sup_{D ~ D'} delta_D(eps)`` (resp. an eps at
    which that sup is ``<= delta``); the witness dataset gives a lower bound. Proof and rounding:
    module docstring ((K1)-(K4)).

    Args:
        k: Number of categories; only ``3`` is implemented.
        eps0: Local privacy parameter, finite, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0``, to certify ``delta(eps)`` (keyword only).
        delta: ``0 < delta < 1``, to certify ``epsilon(delta)`` (keyword only).
        tol: Stopping tolerance (keyword only), ``0 < tol <= 1``: relative gap between the
            certified and the exhibited value, in epsilon (``delta=``) or in delta (``eps=``).
            Default (``None``): :func:`default_tol` ``(n)`` for the epsilon query; for the delta
            query ``1e-5`` in delta, and from :data:`DEFAULT_TOL_SMALL_N` users on also
            stopping once the certified delta at ``eps`` is at most the witness's exhibited
            delta at ``eps / (1 + default_tol(n))`` (the same gap measured in epsilon: a gap
            ``t`` in epsilon is about ``2 log(1/delta) t`` in delta, out of reach there).
        max_evals: Budget in box-bound evaluations of the branch and bound (keyword only; the
            seed datasets' evaluations are not counted).
        max_cells: Budget in grid cells touched by the branch and bound (keyword only; see
            :attr:`BoxProblem.work`; the default :data:`DEFAULT_MAX_CELLS` is about a minute
            of one core here; ``math.inf``: none). Unlike ``max_evals`` it bounds the
            time at every ``n``.
            When either budget runs out the search stops with a sound certificate
            (``converged=False``, its gap in :attr:`WorstCaseKCertificate.gap`): for ``eps=``
            the cover as it is; for ``delta=`` the open boxes are certified at a larger eps by
            their own bounds (one or two more evaluations each). The root box and the seed
            datasets are always evaluated: where the root box alone is estimated
            (:meth:`BoxProblem.root_work`) above ``max(max_cells, DEFAULT_MAX_CELLS)`` (from
            about ``n = 6e4`` at ``eps0 <= 1`` and the default; memory grows with ``n`` too), the
            call is refused before any work.
        deep: Delta query only (keyword only). The truncation level starts at ``e^-30`` and
            follows the best corner dataset's exhibited delta; where every corner is below a
            level's resolution it is doubled, down to ``e^-1920`` (``True``, the default) or
            to ``e^-60`` (``False``: cheaper, but where the answer is below about ``e^-85``
            the certificate is only the windows' dropped mass, about ``e^-88``; ``ShuffledKRR``'s
            ``auto`` curve uses it and keeps the blanket there). Sound either way.

    Returns:
        A :class:`WorstCaseKCertificate`.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), ``k != 3``, or if both or
            neither of ``eps`` and ``delta`` are given.
        WorkBudgetExceeded: If one evaluation of the root box is estimated above
            ``max(max_cells, DEFAULT_MAX_CELLS)`` (a ``ParameterError``; nothing is computed).

    Example:
        >>> c = certify_k(3, 2.0, 20, delta=1e-3)
        >>> bool(c.epsilon_lower <= c.epsilon <= c.epsilon_lower * (1 + 1e-4)), c.converged
        (True, True)
    """
    k, eps0, n = _check(k, eps0, n)
    if (eps is None) == (delta is None):
        raise ParameterError(f"give exactly one of eps= and delta=, got eps={eps!r}, delta={delta!r}")
    max_evals = check_int("max_evals", max_evals, minimum=1)
    max_cells = check_real("max_cells", max_cells, low=0.0, low_open=True, allow_inf=True)
    deep = check_bool("deep", deep)
    eps_tol = None
    if tol is None:
        tol = default_tol(n) if eps is None else DEFAULT_TOL_SMALL
        if eps is not None and n > DEFAULT_TOL_SMALL_N:
            eps_tol = default_tol(n)
    else:
        tol = check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    if eps is not None:
        eps = check_real("eps", eps, low=0.0)
    else:
        delta = check_delta("delta", delta)
    # refused up front where the root box alone (always evaluated) is beyond the budget; the
    # estimate at one truncation level (delta ~ 2e-9) for both queries, so that the round trip
    # epsilon -> delta of ShuffledKRR is refused or accepted as a whole
    est = BoxProblem(eps0, n, _ESTIMATE_LOG_LEVEL).root_work()
    cap = max(max_cells, DEFAULT_MAX_CELLS)
    if not est <= cap:
        raise WorkBudgetExceeded(
            f"certify_k(3, eps0={eps0!r}, n={n}): one bound evaluation of the root box (always "
            f"evaluated) needs about {est:.2g} grid cells, above max(max_cells, DEFAULT_MAX_CELLS) "
            f"= {cap:.2g}; use the blanket bound (method='blanket'), or raise max_cells"
        )
    if eps is not None:
        # truncation level: the best corner's exhibited log delta (all others at one value), as
        # the epsilon query uses log(delta); windows then drop at most e^-25 of the answer. (It
        # was kept at -60 above e^-60: windows to e^-85, a root box 2.5x dearer at n = 1e4.)
        # Any level is sound (the dropped mass is added); the other seeds are evaluated once,
        # at the final level (each is a full law at large n)
        # The level is put on the grid of canonical_level (rounded up by < 1/8: the truncation
        # stays below e^-24.875 of the answer), as the epsilon query's log(delta) is, so that the
        # round trip's delta query at the certified epsilon builds the same problem and reads
        # the epsilon query's bounds from the memo (_MEMO)
        corners = [(0, 0, 0, 0), (n - 1, n - 1, 0, 0), (0, 0, n - 1, n - 1)]
        root = (0, n - 1, 0, n - 1)
        level = _FIRST_LOG_LEVEL
        for _ in range(10):
            pr = BoxProblem(eps0, n, level, memo=True)
            vals = [pr.bound(s, eps)[1] for s in corners if pr.is_exact(s)]
            top = max(vals) if vals else -math.inf
            if top == -math.inf:  # below this level's resolution: twice as deep (see deep)
                deepest = _DEEPEST_LOG_LEVEL if deep else _LAST_LOG_LEVEL
                if level <= deepest or eps >= eps0:
                    break
                # only where the root box's bound is down at the windows' dropped mass: corners
                # can also be -inf by rounding just below eps0 (eps0 - 4e-10 at n = 119: the
                # root's bound there is e^-68 at the e^-60 level, and the e^-1920 windows cost
                # 148 s for the same certificate); the root's bound is read from the memo later
                if pr.bound(root, eps)[0] > pr.log_floor:
                    break
                level = max(2.0 * level, deepest)
                continue
            if canonical_level(top) == level:
                break
            level = canonical_level(top)
        else:
            pr = BoxProblem(eps0, n, level, memo=True)
        cover, best, best_box, conv = _certify_delta(pr, eps, tol, max_evals, max_cells, eps_tol)
        ld = max(c.log_bound for c in cover)
        return WorstCaseKCertificate(
            3, eps0, n, "delta", eps, exp_up(ld), ld, eps, 0.0, _others(best_box, n), best,
            tuple(sorted(cover, key=lambda c: c.box)), level, pr.evaluations, conv, pr.work,
        )  # fmt: skip
    pr = BoxProblem(eps0, n, canonical_level(math.log(delta)), memo=True)
    cover, eps_up, eps_low, best_box, ex, conv = _certify_epsilon(
        pr, math.log(delta), tol, max_evals, max_cells
    )
    ld = max(c.log_bound for c in cover)
    return WorstCaseKCertificate(
        3, eps0, n, "epsilon", eps_up, delta, ld, eps_up, eps_low, _others(best_box, n), ex,
        tuple(sorted(cover, key=lambda c: c.box)), pr.log_level, pr.evaluations, conv, pr.work,
    )  # fmt: skip


def _partition_ok(cover: tuple[CoverBox, ...], n: int) -> bool:
    """Boxes inside the triangle, pairwise disjoint, and as many datasets as the triangle."""
    if not cover:
        return False
    arr = np.array([c.box for c in cover], dtype=np.int64)
    a0, b0, a1, b1 = arr.T
    if np.any(a0 > b0) or np.any(a1 > b1) or np.any(a0 < 0) or np.any(a1 < 0) or np.any(a0 + a1 > n - 1):
        return False
    if np.any(b0 > n - 1) or np.any(b1 > n - 1):
        return False
    total = sum(_count((int(r[0]), int(r[1]), int(r[2]), int(r[3])), n) for r in arr.tolist())
    if total != n * (n + 1) // 2:
        return False
    for i in range(0, len(arr), 512):  # pairwise disjointness (as rectangles), in blocks
        blk = arr[i : i + 512]
        ov = (
            (blk[:, None, 0] <= arr[None, :, 1])
            & (arr[None, :, 0] <= blk[:, None, 1])
            & (blk[:, None, 2] <= arr[None, :, 3])
            & (arr[None, :, 2] <= blk[:, None, 3])
        )
        ov[np.arange(blk.shape[0]), np.arange(i, i + blk.shape[0])] = False
        if np.any(ov):
            return False
    return True


def verify(cert: WorstCaseKCertificate) -> bool:
    """Re-check a :class:`WorstCaseKCertificate` from scratch.

    Checks that the cover partitions the triangle of datasets; recomputes every box's bound at its
    ``eps`` (which must be ``<= cert.eps``) and that it does not exceed the recorded one; that the
    recorded certified value is the max of the cover (``"epsilon"``: ``<= log delta``); and
    recomputes the witness's exact lower value.

    Args:
        cert: The certificate.

    Returns:
        ``True`` if every check passes, else ``False``.

    Raises:
        ParameterError: If ``cert`` is not a :class:`WorstCaseKCertificate`.

    Example:
        >>> verify(certify_k(3, 1.0, 12, delta=1e-3))
        True
    """
    if not isinstance(cert, WorstCaseKCertificate):
        raise ParameterError(f"cert must be a WorstCaseKCertificate, got {type(cert).__name__}")
    n = cert.n
    if not _partition_ok(cert.cover, n):
        return False
    pr = BoxProblem(cert.eps0, n, cert.log_level)
    top = -math.inf
    for cb in cert.cover:
        if cb.eps > cert.eps:
            return False
        if pr.bound(cb.box, cb.eps)[0] > cb.log_bound:
            return False
        top = max(top, cb.log_bound)
    c0, c1, c2 = cert.worst_others
    wbox = (c0, c0, c1, c1)
    if c0 + c1 + c2 != n - 1 or min(c0, c1, c2) < 0 or not pr.is_exact(wbox):
        return False
    if cert.query == "delta":
        if top > cert.log_delta:
            return False
        ex = pr.bound(wbox, cert.eps)[1]
        return bool(ex >= cert.exhibited_log_delta and ex <= cert.log_delta)
    if top > math.log(cert.delta):
        return False
    if cert.epsilon_lower > 0:
        ex = pr.bound(wbox, cert.epsilon_lower)[1]
        return bool(ex >= cert.exhibited_log_delta > math.log(cert.delta) and cert.epsilon_lower <= cert.eps)
    return True


def box_log_bound(eps, eps0, n, box, *, log_level: float = -60.0) -> float:
    """Certified ``log U`` of one box: an upper bound on ``log h_c(eps)`` for every dataset in it.

    ``box = (c0_lo, c0_hi, c1_lo, c1_hi)``; ``h_c = H_{e^eps}(P_c || Q_c)`` with ``c0`` / ``c1`` /
    ``n - 1 - c0 - c1`` other users at values 0 / 1 / 2 and the target moving ``0 -> 1``
    (module docstring (K2)-(K4)); ``k = 3``.

    Args:
        eps: ``eps >= 0``.
        eps0: Local privacy parameter, ``0 < eps0 <= 700``.
        n: Number of users (``>= 2``).
        box: Four integers ``0 <= c0_lo <= c0_hi <= n - 1``, ``0 <= c1_lo <= c1_hi <= n - 1``,
            ``c0_lo + c1_lo <= n - 1``.
        log_level: Truncation level (keyword only): windows drop at most ``e^(log_level - 25)``.

    Returns:
        The log bound (``-inf`` for 0).

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> bool(box_log_bound(0.3, 2.0, 10, (0, 9, 0, 9)) >= box_log_bound(0.3, 2.0, 10, (0, 0, 0, 0)))
        True
    """
    _, eps0, n = _check(3, eps0, n)
    eps = check_real("eps", eps, low=0.0)
    if not isinstance(box, (tuple, list)) or len(box) != 4:
        raise ParameterError(f"box must be 4 integers (c0_lo, c0_hi, c1_lo, c1_hi), got {box!r}")
    a0 = check_int("box[0]", box[0], minimum=0, maximum=n - 1)
    b0 = check_int("box[1]", box[1], minimum=a0, maximum=n - 1)
    a1 = check_int("box[2]", box[2], minimum=0, maximum=n - 1 - a0)
    b1 = check_int("box[3]", box[3], minimum=a1, maximum=n - 1)
    log_level = check_real("log_level", log_level, high=0.0)
    return BoxProblem(eps0, n, log_level).bound((a0, b0, a1, b1), eps)[0]
