"""Certified exact worst case of shuffled binary randomized response (k = 2) by branch and bound.

Setting. ``n`` users apply binary randomized response with local privacy ``eps0``: a user reports
its bit with probability ``p = e^eps0 / (e^eps0 + 1)`` and the other bit with probability
``pbar = 1 - p``; equivalently it reports a uniform bit with probability ``gamma = 2 pbar`` and
its true bit otherwise. The shuffled release is ``S``, the number of reported ones (for ``k = 2``
the histogram is ``S``). The target holds 0 in ``D`` and 1 in ``D'``; the other ``n - 1`` users
are arbitrary, and by exchangeability a dataset is fixed by ``c`` = the number of them at value 0
(the rest, ``n - 1 - c``, at value 1). With ``E = e^eps``, ``P_c`` / ``Q_c`` the law of ``S`` under
``D`` / ``D'`` and ``H_E(P || Q) = sum_s (P(s) - E Q(s))_+``:

    delta_c(eps) = max(h_c, h'_c),   h_c = H_E(P_c || Q_c),   h'_c = H_E(Q_c || P_c).

Facts used (each proved here):

(F1) *Mirror.* Relabelling the bits 0 <-> 1 maps ``S -> n - S`` and dataset ``c`` with the target
at 0 (at 1) to dataset ``n - 1 - c`` with the target at 1 (at 0), so ``h'_c = h_{n-1-c}``, hence
``delta_c = delta_{n-1-c}`` and **sup_c delta_c = max_{0 <= c <= n-1} h_c**. The branch and bound
therefore covers ``c in [0, n - 1]`` with bounds on the single direction ``h_c``.

(F2) *Threshold form.* Write ``S = T + Y`` with ``T`` the target's report and ``Y`` the others'
count, ``Y ~ Bin(c, pbar) + Bin(n - 1 - c, p)`` (independent). Then
``P(s) = p Y(s) + pbar Y(s-1)``, ``Q(s) = pbar Y(s) + p Y(s-1)`` and
``P(s)/Q(s) = (p r + pbar)/(pbar r + p)`` with ``r = Y(s)/Y(s-1)``, increasing in ``r``
because ``p > pbar``. ``Y`` is a sum of independent Bernoulli variables, hence log-concave, so
``r`` (and ``P/Q``) is non-increasing in ``s``: ``{P > E Q}`` is a lower set ``{s <= t*}`` and

    H_E(P || Q) = max_t D(t),   D(t) = P(S <= t) - E Q(S <= t) = a Y(t) - b F(t - 1),

``a = p - E pbar = -p expm1(eps - eps0)``, ``b = E - 1 = expm1(eps)``, ``F`` the CDF of ``Y``
(and ``D(-1) = 0``). Every ``D(t)`` is a lower bound on ``H``; the max is ``H``. The same holds
for any ``Y`` that is a sum of independent Bernoullis, in particular for ``Y_B`` below.

(F3) *Interval bound.* Fix ``0 <= c1 <= c2 <= n - 1``, ``m = c2 - c1``. Every dataset
``c in [c1, c2]`` has ``c1`` users at 0 and ``n - 1 - c2`` at 1 in common ("fixed"); the other
``m`` ("free") hold ``c - c1`` zeros and ``c2 - c`` ones. Give the adversary, for each free user,
its coin (uniform or not) and, when not uniform, its report. This view ``V`` = (coins, revealed
reports, ``S``) contains ``S``, so by post-processing ``H_E(P_c || Q_c) <= H_E(P_V || Q_V)``. The
coins and the revealed reports do not depend on the target's value, so with ``W`` = (coins,
revealed reports) having the same law under ``D`` and ``D'``,
``H_E(P_V || Q_V) = E_W H_E(P_{S|W} || Q_{S|W})`` (the hockey-stick sum splits over the values
of ``W``; this is the equality case of joint convexity). Given ``W`` with ``B`` uniform coins,
``S = T + Bin(c1, pbar) + Bin(n-1-c2, p) + Bin(B, 1/2) + (known shift)``, and ``H_E`` is
invariant under a common known shift, so with ``B ~ Bin(m, gamma)`` and
``g(b) = H_E(T + Y_b)``, ``Y_b = Bin(c1, pbar) + Bin(n-1-c2, p) + Bin(b, 1/2)``:

    h_c <= U(c1, c2) = E_B g(B)   for every c in [c1, c2],

independently of ``c``. For ``c1 = c2`` (``m = 0``) this is ``g(0) = h_{c1}`` exactly; for
``[0, n-1]`` it is the privacy-blanket divergence (Balle, Bell, Gascón, Nissim, CRYPTO 2019)
for ``k = 2``. The two-direction bound ``max(U(c1, c2), U(n-1-c2, n-1-c1)) >= delta_c`` follows by
(F1).

(F4) *Monotone in B.* ``Y_{b+1} = Y_b + (independent fair bit)``: adding independent noise to
both ``P`` and ``Q`` is post-processing, so ``g`` is non-increasing. For cells
``0 = s_0 < s_1 < ... < s_J <= m`` (``s_{J+1} = m + 1``),
``E_B g(B) <= sum_j P(s_j <= B < s_{j+1}) g(s_j)`` with no truncation error: tails of ``B``
are cells of their own (the lowest cell ``[0, s_1)`` is bounded by ``g <= 1``).

(F5) *Total-variation worst case.* At ``eps = 0`` (``E = 1``, ``b = 0``) (F2) reads
``h_c(0) = a max_t Y_c(t)`` with ``a = p - pbar``: the total variation is ``a`` times the
largest point mass of ``Y_c`` (``N = n - 1`` independent bits, ``c`` of them
``Bernoulli(pbar)``, ``N - c`` of them ``Bernoulli(p)``). Its characteristic function is
``phi_c(th) = (p + pbar e^{i th})^c (pbar + p e^{i th})^(N - c)``, and
``|p + pbar e^{i th}| = |pbar + p e^{i th}| = r(th)`` (the first is ``e^{i th}`` times the
conjugate of the second), ``r^2 = 1 - 4 p pbar sin^2(th / 2) <= 1``. By Fourier inversion,
for every ``c`` and ``s``,

    Y_c(s) = (1 / 2 pi) int_{-pi}^{pi} phi_c(th) e^{-i s th} d th <= I(N) = (1 / 2 pi) int r^N d th.

*``N = 2m`` even (``n`` odd):* at ``c = m``, ``s = m`` the integrand is
``(p e^{-i th} + pbar)^m (pbar + p e^{i th})^m = r^(2m) >= 0``, so ``Y_m(m) = I(2m)``: the
bound is attained and ``max_c h_c(0) = h_m(0)``, the central leaf, whose certified upper value
is then a bound on every ``h_c(0)``. *``N`` odd (``n`` even):* by Cauchy-Schwarz on
``r^N = r^((N-1)/2) r^((N+1)/2)``, ``I(N) <= sqrt(I(N - 1) I(N + 1))``, and ``I(N -+ 1)`` are
attained as above by the central leaves of ``n - 1`` and ``n + 1`` users (the same ``a``), so
``log max_c h_c(0) <= (log h^(n-1)_{(n-2)/2}(0) + log h^(n+1)_{n/2}(0)) / 2`` (certified upper
values, plus ``4u`` relative for the sum and the halving). No dataset attains this for ``n``
even; measured against the brute force over every ``c`` (eps0 = 0.1, 1, 2) it is ``3e-5`` to
``1.4e-4`` above the true maximum at ``n = 100``, ``7e-7`` to ``2.3e-6`` at ``n = 1000`` and
``4e-8`` to ``4.4e-7`` at ``n = 4000``, and the maximising ``c`` is not central (e.g.
``n = 4000, eps0 = 0.1``: ``c = 1229``; the candidates of :func:`_tv_candidates` find it or a
dataset within ``5e-8`` of it). Finally, ``h_c(eps)`` is
non-increasing in ``eps``, so ``log TV`` (:meth:`WorstCaseProblem.tv_log_bound`) bounds
``h_c(eps)`` for every ``c`` and every ``eps >= 0``: every bound of the search is
``min(log U, log TV)`` (:meth:`WorstCaseProblem.capped`), which binds at and very near
``eps = 0``, where (F3)'s slack is what makes ``h_c`` look flat (see *Cost*).

Computation and rounding (all outward):

* Each binomial is held on a window ``mean +- z sd``. The window's values come from the exact
  ratio recurrence ``pmf(k+1)/pmf(k) = (N-k)/(k+1) * pi/(1-pi)`` started at the mode, whose value
  is Loader's log-pmf (from :mod:`~shuffle_accounting._binomial`, relative error ~1e-13, counted
  as ``1e-10``). That one value is a factor ``C`` *common* to the whole window
  (``|C - 1| <= crel``); each entry carries in addition ``j (3u + err(pi/(1-pi)))`` after ``j``
  recurrence steps (``rel``, per entry). The mass outside the window is bounded by Chernoff,
  ``P(X <= k) <= exp(-N KL(k/N || pi))`` (resp. ``>=``), with a rounding margin on the KL terms;
  entries below ``e^-700`` of the mode are flushed and bounded by ``e^-700`` each. The total is a
  *dropped mass* ``d`` carried with each distribution. Windows widen until ``d`` is below
  ``e^-25`` of the level of interest (a current delta), so the truncation only affects the bound
  at a relative few ``1e-11`` (one ``e^-25`` per law of a sum; measured ``5e-11`` at a leaf whose
  value is the level); it is always added. The window starts at the two Chernoff edges
  (``N KL(k/N || pi) = log 2 - log_tol``, solved by Newton steps: ``tight`` in
  :func:`~shuffle_accounting._binomial.binom_window_range`), about 17 % narrower than a
  ``mean +- z sd`` rule; whatever the start, the Chernoff bound is checked at the window taken.
  The level of a search is *canonical*: its ``log delta`` rounded up to a multiple of ``1/8``
  (:func:`~shuffle_accounting.shuffled_krr._bound_memo.canonical_level`; the truncation stays
  below ``e^-24.875`` of the level of interest).
* Bounds are pure functions of ``(eps0, n, level, c1, c2, eps)``: the searches of :func:`certify`
  keep their single-eps bounds in a bounded memo shared across calls (:data:`_MEMO`), so
  the round trip of ``ShuffledKRR.epsilon`` (the epsilon query at ``delta``, then the delta query
  at its answer ``eps_up``, whose canonical level and planned cover are the same) computes each
  bound once. A hit returns exactly the value the evaluation computes, so no certificate depends
  on earlier calls (tested field for field); :func:`verify` never reads the memo.
* Sums of independent laws are never convolved in full on the hot path: only the values
  ``Y~(t)`` and ``F~(t - 1)`` on a block of ``t`` around the threshold are computed, each a sum of
  non-negative products (``numpy.convolve`` in ``valid`` mode of one law with a slice of the
  other, never FFT, sums of more than :data:`BLAS_CHUNK` terms in chunks, which the bounds
  below allow since they hold for any summation order; ``F~`` at the block's first point by one
  dot product with the other law's
  prefix sums, then running sums of the block's ``Y~``): relative error ``<= L u`` for ``L``
  terms (for ``F~``, ``L`` counts the products and every addition of the running sums), so the
  budget ``rel_f`` grows with the block length; products below the normal range
  are bounded by ``2.3e-308`` each (counted for every product of the full sum) and added to
  ``d``; the dropped mass of a sum is at most the sum of the dropped masses; common factors
  multiply (``crel = c1 + c2 + c1 c2``).
* Threshold block. A normal-approximation guess of ``t*`` picks the block; a bracket
  ``t_a <= t* < t_b`` is then *proved* from the signs of the increments
  ``Delta(t) = D(t) - D(t-1) = a Y(t) - a' Y(t-1)`` (``a' = E p - pbar``), each evaluated with the
  bounds below and an ``8u`` rounding margin: ``Delta(t_a) > 0`` certainly and ``Delta(t_b) < 0``
  certainly. By (F2) ``Delta > 0`` exactly on ``{t <= t*}``, so ``H = max_{t_a <= t < t_b} D(t)``.
  Where the block holds no proved bracket it widens (x4); the full convolution is the last
  resort. Every ``eps`` of a grid and every cell of ``B`` of an interval is one row of the same
  vectorised pass.
* With ``Y~`` the computed window values (per-entry relative error ``rho``), ``F~`` their prefix
  sums and ``C`` the common factor: ``Y(t) <= C Y~(t)(1 + rho) + d``,
  ``F(t-1) >= C F~(t-1)(1 - rho')`` (dropping mass only lowers ``F``); for ``t`` below the window
  ``D(t) <= P(Y < lo) <= d`` and for ``t`` above it ``D(t) <= D(hi + 1) + P(Y > hi)``. So with
  ``V = max_bracket (a Y~(1+rho) - b F~ (1 - rho')) + 8u (magnitudes)``:
  ``H <= (1 + crel) max(V, 0) + a d + d``. Lower bounds (the exhibited values) use the opposite
  directions: ``H >= (1 - crel) W - b d`` with ``W = max_bracket (a Y~(1-rho) - b F~(1+rho'))``
  when ``W > 0``. Treating ``C`` as one factor (not per entry) matters: ``D = aY - bF`` is a
  difference of two larger terms, and per-entry errors would be amplified by that cancellation.
* Cell weights ``P(s_j <= B < s_{j+1})`` are Loader pmf sums inflated by ``1e-9``, and the
  binomial tails of :mod:`~shuffle_accounting._binomial` (relative error <= 1e-13) inflated by
  ``1e-9`` for the end cells.

Branch and bound. Intervals sit in a priority queue by their bound; the worst one is split
(into halves, or into more equal pieces when a slack model ``U ~ h + kappa m`` fitted on its
parent says halves would fail again: a speed heuristic, any partition is sound); one-point
intervals are exact leaves (bound ``h_c`` rounded up, exhibited value ``h_c`` rounded down).
Where the root ``[0, n - 1]`` fails, the queue starts from a *planned* partition instead
(:func:`_plan`, ``n >= 64``): ``log h_c`` interpolated between leaves at 17 evenly spaced
datasets and the seeds, the slack slope ``kappa`` measured on one probe interval, each piece
given :data:`_PLAN_SAFETY` of the width this model allows below the target, rounded down to
``j 2^e`` (``8 <= j <= 15``) so that pieces of equal width share their cells of ``B``. That
replaces the ``O(log n)`` levels of splitting from the root by one pass; pieces that fail are
split as above. The plan only chooses a partition, so it cannot affect soundness.
Each interval's bound is ``min(log U, log TV)`` by (F5) (what :func:`verify` recomputes); the
slack model uses ``U`` alone, which the cap would flatten. Where the cap is the root's bound (a
delta query at or very near ``eps = 0``) the seeds also hold the likely total-variation
witnesses (:func:`_tv_candidates`), so the root alone closes the gap when the cap is within
``tol`` of one of them.
For ``delta(eps)`` it stops when the largest bound is within ``(1 + tol)``
of the best exhibited leaf; for ``epsilon(delta)`` it keeps ``eps_up = (1 + tol) eps_low``
(``eps_low`` the largest exhibited leaf epsilon) and splits until every interval's bound at some
``eps' <= eps_up`` is ``<= delta`` (``h_c`` is non-increasing in ``eps``, so a bound proved at
``eps'`` holds at ``eps_up``). The final intervals with their bounds form a
:class:`WorstCaseCertificate` that :func:`verify` re-checks from scratch.
:func:`certified_log_delta_grid` runs one such search for a whole eps grid: every interval is
bounded at every grid point in one evaluation, and the cover is refined until each grid
point's maximum is within ``(1 + tol)`` of its best exhibited leaf.

Cost. For ``k = 2`` the variance of ``Y`` is the same for every dataset, so ``h_c`` is nearly
flat in ``c``: its log changes about linearly across ``[0, n - 1]``, by ``lam`` in all (measured at
``n = 1e6``, ``delta = 1e-6``: ``lam`` = 3e-4, 7e-3, 5e-2 at ``eps0`` = 0.05, 0.5, 2), while the
interval bound loses about ``kappa m / n`` for ``m`` free users (the revealed coins remove part of
the variance; ``kappa`` = 0.07, 0.9, 2.6 at those ``eps0``). With a slack ``tau`` in log delta at the
worst dataset (about ``2 log(1/delta) tol`` for ``epsilon(delta)``), a piece at distance ``x``
from the worst end can hold ``(tau n + lam x) / kappa`` datasets, so the cover needs about
``(kappa / lam) log(1 + lam / tau)`` pieces: ``O(log(1/tol))``, independent of ``n`` (150-450
at ``n = 1e6``, ``tol = 5e-5``), each evaluation ``O(sqrt n)`` work. Near ``eps = 0`` (``delta``
large, ``h_c`` flatter still) the count grows like ``n`` (``n = 1e6``, ``eps0 = 1``: 3900
pieces at ``eps = 1e-7``), except where the (F5) cap is within ``tol`` of a leaf: at
``eps = 0`` the root alone (for ``n`` odd, or ``n`` even from ``n`` of a few hundred), and at
``eps`` so small that ``h(eps)`` is within ``tol`` of ``h(0)`` (``n = 1e6``: ``eps <~ 1e-9``).
``kappa`` is the same all along ``[0, n - 1]`` (measured within 1 % from ``c = 1e3`` to
``n - 3e3`` at ``n = 1e6``), so the planned cover is close to the fewest pieces (F3) allows;
fewer pieces need a tighter interval bound (benchmarks/README.md, "k = 2 at scale (k2fast)").

Every leaf (the flat band). Where the planned cover would need about ``n`` pieces (just below
``delta(0)``, where the (F3) slack exceeds the stop for any piece wider than a few datasets) the
search evaluates every dataset's exact value instead: below :data:`SPECTRAL_MIN_N` users in
blocks of windowed convolutions (:meth:`WorstCaseProblem.block_many`, ``O(sqrt n)`` per dataset),
from there by the Fourier leaves of :mod:`~shuffle_accounting.shuffled_krr._spectral`
(:meth:`WorstCaseProblem.spectral_many`: the wrapped law of ``Y_c`` as a short exact discrete
Fourier sum whose modulus does not depend on ``c``, about 1 us per dataset whatever ``n``; the
proof is that module's docstring), recorded as runs of up to 4096 datasets
(``CoverInterval.spectral``), each bounded by the largest of its leaves. An epsilon query runs
over them in rounds (record the datasets at most delta, search the worst one above, re-evaluate
the rest). The Fourier leaves are also used wherever such a sweep costs fewer evaluations than
the planned cover at levels down to :data:`SPECTRAL_SWEEP_MIN_LEVEL` (their rounding is absolute,
so they are tight only where ``h_c`` is not tiny).

Example:
    >>> cert = certify(2.0, 1000, delta=1e-6)
    >>> round(cert.epsilon_lower, 8), cert.worst_c in (2, 997)
    (0.32332355, True)
    >>> bool(cert.epsilon_lower <= cert.epsilon <= cert.epsilon_lower * (1 + DEFAULT_TOL))
    True
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass
from typing import NamedTuple, NoReturn

import numpy as np

from .._binomial import binom_window_range as _binom_window_range
from .._binomial import log_binom_cdf as _log_binom_cdf
from .._binomial import log_binom_pmf as _log_binom_pmf
from .._binomial import log_binom_sf as _log_binom_sf
from .._binomial import logsumexp
from .._logmath import UNIT_ROUNDOFF, convolve_chunked, exp_up
from .._validation import (  # WorkBudgetExceeded: re-exported, see below
    ParameterError,
    WorkBudgetExceeded,
    check_delta,
    check_int,
    check_real,
    check_real_array,
)
from ._bound_memo import BoundMemo, MemoInfo, canonical_level
from ._spectral import leaf_bounds as spectral_leaf_bounds

__all__ = [
    "CoverInterval",
    "WorstCaseCertificate",
    "WorkBudgetExceeded",
    "certify",
    "certified_log_delta_grid",
    "verify",
    "interval_log_bound",
    "leaf_log_delta",
    "seed_datasets",
    "seed_log_delta_lower",
    "seed_epsilon_lower",
    "MAX_CONV_WORK",
    "DEFAULT_TOL",
    "BOUND_MEMO_SIZE",
    "LEAF_BLOCK",
    "MAX_LEAF_BLOCK",
    "SPECTRAL_MIN_N",
    "SPECTRAL_PER_EVAL",
    "SPECTRAL_SWEEP_MIN_LEVEL",
    "bound_memo_info",
    "clear_bound_memo",
]

_U = 2.0 * UNIT_ROUNDOFF  # machine epsilon 2^-52: the error budgets below are in units of 2u
#: Relative error counted for each Loader log-pmf / tail (measured ~1e-13).
_REL_PMF = 1e-10
#: Bound on one product that fell below the normal range (as in ``lower``).
_TINY = 2.3e-308
#: Entries below ``e^-700`` of a window's maximum are moved into the dropped mass.
_FLUSH = -700.0
#: Windows are widened until the dropped mass is below ``e^-_DROP_MARGIN`` times the level.
_DROP_MARGIN = 25.0
#: Up to this many free users, every value of ``B`` is its own cell (exact expectation).
_EXACT_CELLS = 32
#: Number of cells of ``B`` inside its window for wider intervals.
_CELLS = 12
#: Default stopping tolerance of :func:`certify` (relative gap certified / exhibited - 1).
DEFAULT_TOL = 5e-5
#: Above this many users a delta query with the default tolerance stops at the epsilon gap
#: ``DEFAULT_TOL`` (the certified delta at eps is at most the witness's delta at
#: ``eps / (1 + DEFAULT_TOL)``) when that comes before the delta gap: the round trip of
#: ``ShuffledKRR.epsilon`` is a delta query, and a delta gap of ``5e-5`` costs about 25 times the
#: epsilon gap's precision at ``delta ~ 1e-6``.
EPS_GAP_MIN_N: int = 1000
#: Smallest relative gap in delta a delta query stops at where the curve is flat and the epsilon
#: gap is the stop (:func:`_certify_delta`), unless twice the best leaf's own rounding bracket is
#: larger (measured 2-4e-10 at n = 1e4; the floor was 2e-7 until it was found to bind: at
#: n = 1e4, delta = 0.999 delta(0) the epsilon gap was 1.5-2.2e-4, above issue 11's 1e-4).
FLAT_DELTA_TOL = 2e-9
#: The floor where every leaf cannot be afforded (more than ``max_evals / 2`` evaluations:
#: ``n > 4.1e7`` by default with the Fourier leaves of :data:`SPECTRAL_PER_EVAL` datasets each,
#: ``n > 2.56e6`` with blocks of :data:`MAX_LEAF_BLOCK` when ``SPECTRAL_MIN_N`` is raised above
#: ``n``): there a stop below it exhausts the budget
#: (measured at ``n = 1e6`` before the blocks grew to 256, eps = 1e-10: 21 s for the (F5) cap's
#: own gap of 1.2e-7).
FLAT_DELTA_TOL_WIDE = 2e-7
#: Largest number of datasets bounded together as one block of exact leaves
#: (:meth:`WorstCaseProblem.block_many`): a failing interval of at most this many datasets whose
#: split would give pieces of at most :data:`_BLOCK_PIECE` datasets is resolved into its leaves
#: in one evaluation (where the curve is flat in ``c``, just below ``delta(0)``, the cover needs
#: about ``n`` leaves: one at a time they cost ~0.7 ms each at ``n = 1e5``, a block ~0.05 ms each).
LEAF_BLOCK: int = 64
#: Largest block when a search evaluates every leaf (:func:`_leaf_block`): blocks double from
#: :data:`LEAF_BLOCK` until they fit half the budget (measured per block, n = 1e5 and 1e6 alike:
#: 1.8 ms for 64 leaves, 2.5 ms for 128, 4.5 ms for 256).
MAX_LEAF_BLOCK: int = 256
#: From this many users a search that evaluates every leaf uses the Fourier leaves of
#: :mod:`~shuffle_accounting.shuffled_krr._spectral` (:meth:`WorstCaseProblem.spectral_many`,
#: about 1 us per dataset whatever ``n``) instead of blocks of windowed convolutions
#: (:meth:`WorstCaseProblem.block_many`: about 7 us per dataset at ``n = 1e5``, 20-40 us at
#: ``n = 1e7``, where every leaf no longer fits the budget in blocks). Speed only: both are
#: certified leaves.
SPECTRAL_MIN_N: int = 65536
#: Datasets per counted evaluation of the Fourier leaves (about the time of one block of 256).
SPECTRAL_PER_EVAL: int = 4096
#: Lowest truncation level (about ``log delta``) at which a search sweeps every leaf by the
#: Fourier leaves merely because that costs fewer evaluations than its planned cover (in the flat
#: band it always does): their rounding is absolute, about ``1e-11`` of the point mass, so
#: relative to ``h_c`` it grows as ``h_c`` falls (measured widths at ``e^-10``: ``2e-10`` to
#: ``4e-7`` in log, ``n = 1e5 .. 1e7``, eps0 = 0.5 .. 6; at ``e^-20``: ``2e-5`` to ``1e-2``).
SPECTRAL_SWEEP_MIN_LEVEL: float = -10.0
#: A Fourier piece of the cover holds at most this many consecutive datasets.
_SPECTRAL_PIECE: int = 4096
#: Relative slack added to a Fourier piece's recorded log bound (above its certified value, so
#: still sound; compared with a target after it is added, :func:`_spectral_padded`). :func:`verify`
#: recomputes the piece in other chunks of datasets, which gives the same bits (the values do not
#: depend on the chunks); the slack only absorbs last-bit differences of another platform's
#: ``exp``/``log``/``sin``, which the windowed leaves do not allow for either.
_SPECTRAL_SLACK = 1e-12
#: Widest split piece for which a small failing interval is resolved as a block of leaves.
_BLOCK_PIECE: int = 4
#: Largest mean width of a planned first cover for which a search evaluates every leaf instead
#: (:func:`_flat_plan`).
_LEAVES_PLAN_WIDTH: int = 16
#: Share of the model's width given to each piece of the planned first cover (:func:`_plan`).
_PLAN_SAFETY = 0.9
#: Up to this many multiply-adds the laws of a family are convolved in full (one eps at a time).
_DIRECT_WORK = 2e6
#: Largest multiply-add count of one convolution; above it :class:`WorkBudgetExceeded` is raised.
MAX_CONV_WORK = 4e8
#: Longest dot product handed to BLAS in one call. OpenBLAS runs ``ddot`` on several threads above
#: about 10000 terms, and on a loaded machine such a call can stall: measured on the shared 2-core
#: box under load 6-7, one ``valid`` convolution of 15786 x 33 terms took 0.08-0.15 ms on one
#: thread and up to 0.8-1.7 s on the default two (n = 1e7 windows are 16000-22000 long). Longer
#: sums are split into chunks of at most this many terms (:func:`conv_valid`, :func:`conv_full`,
#: :func:`chunked_dot`). The rounding bounds used here, ``(L - 1) u`` relative for a sum of ``L``
#: non-negative terms, hold for any summation order, so the chunks change no error term.
BLAS_CHUNK = 8192
#: Single-eps bounds kept by the memo shared by the searches of :func:`certify` (least recently
#: used dropped; see :data:`_MEMO`).
BOUND_MEMO_SIZE: int = 8192


def _copy_bounds(v: np.ndarray) -> np.ndarray:
    return np.array(v, dtype=float, copy=True)


#: The memo of single-eps bounds: ``key -> (2,) array``. A key holds every input of one
#: evaluation of :meth:`WorstCaseProblem.leaf_many` / :meth:`WorstCaseProblem.interval_many`
#: (``eps0``, ``n``, the truncation level, ``c1``, ``c2``, ``eps`` and the module's tunables), and
#: an evaluation is a deterministic function of them (its windows, cells and sums depend on nothing
#: else; a test checks that a certificate is the same, field for field, with the memo full or
#: empty). A hit therefore returns exactly the value the evaluation would compute: certificates do
#: not depend on earlier calls, only their cost does. :func:`verify` never reads it.
_MEMO = BoundMemo(lambda: BOUND_MEMO_SIZE, copy=_copy_bounds)


def bound_memo_info() -> MemoInfo:
    """Hits, misses and size of the memo of single-eps bounds shared by :func:`certify`'s searches.

    Returns:
        A :class:`~shuffle_accounting.shuffled_krr._bound_memo.MemoInfo` (hits, misses, size).

    Example:
        >>> clear_bound_memo()
        >>> c = certify(2.0, 1000, delta=1e-6)
        >>> info = bound_memo_info()
        >>> info.size > 0, info.misses >= info.size
        (True, True)
        >>> _ = certify(2.0, 1000, eps=c.epsilon)  # the round trip's delta query
        >>> bound_memo_info().hits > info.hits
        True
    """
    return _MEMO.info()


def clear_bound_memo() -> None:
    """Empty the memo of single-eps bounds shared by the searches of :func:`certify`.

    Only the cost of later calls changes (a hit returns exactly what the evaluation computes;
    see :data:`BOUND_MEMO_SIZE`), never a certified value.

    Example:
        >>> clear_bound_memo()
        >>> c1 = certify(2.0, 1000, delta=1e-6)
        >>> clear_bound_memo()
        >>> c1 == certify(2.0, 1000, delta=1e-6)
        True
    """
    _MEMO.clear()


# ---------------------------------------------------------------------------------------------
# windowed distributions with rigorous error terms
# ---------------------------------------------------------------------------------------------


def conv_valid(x: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """``np.convolve(x, seg, "valid")`` for ``len(x) <= len(seg)``, by chunks of ``x`` of at most
    :data:`BLAS_CHUNK` terms (the same products, summed in another order; see that constant).

    Output ``k`` is ``sum_j x[j] seg[k + len(x) - 1 - j]``; the chunk ``x[i0:i1]`` meets
    ``seg[len(x) - i1 : len(x) - i0 + K - 1]`` (``K = len(seg) - len(x) + 1`` outputs).
    """
    Lx = x.size
    if Lx <= BLAS_CHUNK:
        return np.convolve(x, seg, "valid")
    K = seg.size - Lx + 1
    out = np.zeros(K)
    for i0 in range(0, Lx, BLAS_CHUNK):
        i1 = min(i0 + BLAS_CHUNK, Lx)
        out += np.convolve(x[i0:i1], seg[Lx - i1 : Lx - i0 + K - 1], "valid")
    return out


def conv_full(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.convolve(a, b)`` (full), by chunks of the shorter input (see :data:`BLAS_CHUNK`;
    :func:`~shuffle_accounting._logmath.convolve_chunked`)."""
    return convolve_chunked(a, b, BLAS_CHUNK)


def chunked_dot(a: np.ndarray, b: np.ndarray) -> float:
    """``np.dot(a, b)`` of two 1-d arrays, by chunks (see :data:`BLAS_CHUNK`)."""
    if a.size <= BLAS_CHUNK:
        return float(np.dot(a, b))
    chunks = range(0, a.size, BLAS_CHUNK)
    return float(sum(float(np.dot(a[i : i + BLAS_CHUNK], b[i : i + BLAS_CHUNK])) for i in chunks))


class _Dist:
    """A lattice distribution on a window: ``true(lo + i) in [arr_i (1 - rel), arr_i (1 + rel) + d]``.

    ``arr`` is scaled by ``e^scale`` (true value = ``arr * e^scale``), entries non-negative;
    ``log_drop`` is the log of ``d`` (unscaled), an upper bound on the total mass the window
    misses (outside mass, flushed entries and flushed products).
    """

    __slots__ = ("lo", "arr", "scale", "log_drop", "rel", "mom", "crel")

    def __init__(
        self, lo: int, arr: np.ndarray, scale: float, log_drop: float, rel: float, mom=None, crel: float = 0.0
    ) -> None:
        self.lo, self.arr, self.scale, self.log_drop, self.rel = lo, arr, scale, log_drop, rel
        self.mom = mom  # (mean, variance) of the law when known (used for guesses only)
        # a relative error shared by every entry (true = C * arr-with-per-entry-errors,
        # |C - 1| <= crel): it scales H as a whole and is not amplified by its cancellation
        self.crel = crel


#: The point mass at 0, exact (stands for "no third law" in :class:`_Family`).
_POINT = _Dist(0, np.ones(1), 0.0, -math.inf, 0.0, (0.0, 0.0))


@functools.lru_cache(maxsize=4096)
def _binom_window(N: int, log_pi: float, log_1mpi: float, log_tol: float) -> tuple[int, int, int, float]:
    """Window ``[lo, hi]`` of ``Bin(N, pi)`` (``pi <= 1/2``, ``N >= 1``), its mode ``k0`` and the log
    of a Chernoff bound on the mass outside (:func:`~shuffle_accounting._binomial.binom_window_range`,
    its ``tight`` start). Memoised: a pure function, asked twice per law (:meth:`WorstCaseProblem.prefetch`
    for the mode, then :func:`binomial_dist`)."""
    lo, hi, ltail = _binom_window_range(N, log_pi, log_1mpi, log_tol, chernoff=True, tight=True)
    k0 = min(max(int(math.floor((N + 1) * math.exp(log_pi))), lo), hi)
    return lo, hi, k0, ltail


def binomial_dist(N: int, log_pi: float, log_1mpi: float, log_tol: float, mx: float | None = None) -> _Dist:
    """``Bin(N, pi)`` on a window whose dropped mass is at most about ``e^log_tol``.

    Given in logs (``pi`` may round to 0 or 1 in double precision, e.g. ``p`` at ``eps0 = 300``);
    for ``pi > 1/2`` the law is the reflection ``N - Bin(N, 1 - pi)``, so every computation
    works with the smaller probability. The mass outside the window is bounded by Chernoff
    (:func:`~shuffle_accounting._binomial.log_binom_chernoff`). ``mx``, when given, is Loader's log-pmf at the mode of the law with
    the smaller probability (computed in a batch by the caller; the same value as here).
    """
    if N == 0:
        return _Dist(0, np.ones(1), 0.0, -math.inf, 0.0, (0.0, 0.0))
    if log_pi > log_1mpi:
        d = binomial_dist(N, log_1mpi, log_pi, log_tol, mx)
        mean, var = d.mom
        return _Dist(
            N - (d.lo + d.arr.size - 1),
            d.arr[::-1].copy(),
            d.scale,
            d.log_drop,
            d.rel,
            (N - mean, var),
            d.crel,
        )
    pi = math.exp(log_pi)
    mean, sd = N * pi, math.sqrt(N * pi * (1.0 - pi))
    lo, hi, k0, ltail = _binom_window(N, log_pi, log_1mpi, log_tol)
    # pmf relative to the mode k0 by the exact recurrence pmf(k + 1) / pmf(k) = (N - k) / (k + 1) * rho,
    # rho = pi / (1 - pi): each ratio costs <= 2 roundings plus the relative error of rho, so after
    # j steps the relative error is <= j (3u + err_rho) (1 + 1e-6); the mode's value is Loader's
    rho = math.exp(log_pi - log_1mpi)
    err_rho = 2.0 * _U * (abs(log_pi) + abs(log_1mpi)) + 2.0 * _U
    up = np.arange(k0, hi, dtype=float)  # k = k0 .. hi - 1
    dn = np.arange(k0, lo, -1, dtype=float)  # k = k0 .. lo + 1
    with np.errstate(under="ignore"):
        arr = np.concatenate(
            (np.cumprod(dn / ((N - dn + 1.0) * rho))[::-1], [1.0], np.cumprod((N - up) / (up + 1.0) * rho))
        )
    if mx is None:
        mx = float(_log_binom_pmf(np.array([float(k0)]), float(N), log_pi, log_1mpi)[0])
    steps = max(hi - k0, k0 - lo)
    rel = steps * (3.0 * _U + err_rho) * (1.0 + 1e-6) + 4.0 * _U  # per entry
    crel = _REL_PMF  # the mode's Loader value: one factor common to the whole window
    small = arr < math.exp(_FLUSH)
    if np.any(small):
        flushed = math.log(float(np.count_nonzero(small))) + _FLUSH + mx + math.log1p(rel + 2.0 * crel)
        arr = np.where(small, 0.0, arr)
    else:
        flushed = -math.inf
    return _Dist(lo, arr, mx, float(np.logaddexp(ltail, flushed)), rel, (mean, sd * sd), crel)


def convolve_dists(a: _Dist, b: _Dist) -> _Dist:
    """Law of the sum of two independent windowed distributions (direct convolution)."""
    if a.arr.size == 1 and a.lo == 0 and a.log_drop == -math.inf and a.scale == 0.0 and a.arr[0] == 1.0:
        return b
    if b.arr.size == 1 and b.lo == 0 and b.log_drop == -math.inf and b.scale == 0.0 and b.arr[0] == 1.0:
        return a
    work = float(a.arr.size) * float(b.arr.size)
    if work > MAX_CONV_WORK:
        raise WorkBudgetExceeded(
            f"a convolution of {a.arr.size} x {b.arr.size} terms exceeds {MAX_CONV_WORK:.3g}"
        )
    arr = conv_full(a.arr, b.arr)
    L = min(a.arr.size, b.arr.size)
    scale = a.scale + b.scale
    # relative: both factors (a.rel + b.rel + their product) and the summation of L terms;
    # absolute: each input's dropped mass (the other is a probability law, total <= 1) and
    # flushed products
    rel = a.rel + b.rel + a.rel * b.rel + (L + 2) * _U
    log_drop = float(logsumexp([a.log_drop, b.log_drop, math.log(work * _TINY) + scale]))
    return _Dist(a.lo + b.lo, arr, scale, log_drop, rel, None, a.crel + b.crel + a.crel * b.crel)


def hockey_of_dist(Y: _Dist, eps: float, p: float, eps0: float) -> tuple[float, float]:
    """``(log upper, log lower)`` bounds on ``H_E(T + Y || T' + Y)`` by (F2) (module docstring).

    One point of :func:`hockey_of_dist_many` (the same arithmetic).
    """
    r = hockey_of_dist_many(Y, np.array([float(eps)]), p, eps0)
    return float(r[0, 0]), float(r[1, 0])


#: Entries of the ``(grid points) x (window)`` block that :func:`hockey_of_dist_many` forms at once.
_MANY_BLOCK = 1 << 20


def hockey_of_dist_many(Y: _Dist, eps: np.ndarray, p: float, eps0: float) -> np.ndarray:
    """``(log upper, log lower)`` bounds on ``H_E(T + Y || T' + Y)`` at every ``eps``: shape ``(2, len(eps))``.

    (F2) (module docstring): with ``a = p - E pbar``, ``b = E - 1``, ``y`` the windowed law and
    ``F~(t - 1)`` its prefix sums, ``H = max_t (a y(t) - b F(t - 1))`` over the window plus the
    dropped mass; each bracket end rounds outward exactly as a single-point evaluation does
    (per-entry relative errors ``rel_y``, ``rel_f``, an ``8 u`` rounding term on both
    products, the common factor ``crel``). The prefix sums and the padded window are shared by
    every grid point; points with ``eps >= eps0`` give ``-inf`` (``H = 0``).
    """
    e = np.asarray(eps, dtype=float).reshape(-1)
    out = np.full((2, e.size), -np.inf)
    live = np.flatnonzero(e < eps0)
    if live.size == 0:
        return out
    ys = np.append(Y.arr, 0.0)  # t = lo .. hi + 1
    fs = np.concatenate(([0.0], np.cumsum(Y.arr)))  # F~(t - 1)
    L = Y.arr.size
    rel_y = 2.0 * Y.rel + 4.0 * _U
    rel_f = rel_y + (L + 2) * _U
    ld = Y.log_drop - Y.scale
    d = math.exp(ld) if ld < 700.0 else math.inf
    y_up = ys * (1.0 + rel_y) + d
    y_lo = ys * (1.0 - rel_y)
    f_up = fs * (1.0 + rel_f) + d
    f_lo = fs * (1.0 - rel_f)
    cr = Y.crel
    step = max(1, _MANY_BLOCK // ys.size)
    for s0 in range(0, live.size, step):
        idx = live[s0 : s0 + step]
        ee = e[idx][:, None]
        a = -p * np.expm1(ee - eps0)  # p - E pbar > 0
        b = np.expm1(ee)  # E - 1
        mag_a = p * (1.0 + np.exp(ee - eps0))  # |p| + E pbar, for the rounding of a
        err = 8.0 * _U * (mag_a * y_up + (b + 2.0) * fs)
        with np.errstate(invalid="ignore", over="ignore"):
            up_t = a * y_up - b * f_lo + err
            low_t = a * y_lo - b * f_up - err
        # the common factor C (|C - 1| <= crel) scales the windowed part: D <= C V + a d with V the
        # per-entry bound without the dropped mass, D >= C W - b d likewise (module docstring)
        a1, b1 = a[:, 0], b[:, 0]
        with np.errstate(invalid="ignore", over="ignore"):
            v = np.max(up_t, axis=1) - a1 * d
            up = (1.0 + cr) * np.maximum(v, 0.0) + a1 * d
            w = np.max(low_t, axis=1) + b1 * d
            low = np.where(w > 0, (1.0 - cr) * w - b1 * d, -1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lu = np.where(up > 0, np.log(np.where(up > 0, up, 1.0)) + Y.scale, -np.inf)
            ll = np.where(
                (low > 0) & np.isfinite(low), np.log(np.where(low > 0, low, 1.0)) + Y.scale, -np.inf
            )
        lu = np.minimum(np.logaddexp(lu, Y.log_drop), 0.0)
        out[0, idx], out[1, idx] = lu, np.minimum(ll, lu)
    return out


def _pair_range(x: _Dist, y: _Dist, t0: int, t1: int, cum_y: np.ndarray | None = None) -> tuple:
    """Computed ``Y~(t)`` (and, with ``cum_y``, ``F~(t - 1)``) of the law of ``X + Y`` for ``t0 <= t <= t1``.

    ``Y(t) = sum_s x(s) y(t - s)`` for a contiguous range of ``t`` at once: one ``valid``
    convolution of ``x.arr`` with a zero-padded slice of ``y.arr``, ``O(len(x) (t1 - t0))`` work.
    ``F(t0 - 1) = sum_s x(s) F_y(t0 - 1 - s)`` is one dot product with the prefix sums of ``y``
    (0 below the window, the total above) and ``F(t - 1) = F(t0 - 1) + sum_{t0 <= u < t} Y(u)``.
    Every term is non-negative, so ``Y~`` is within ``(len(x) + 2) u`` relative of the exact
    windowed sums and ``F~`` within ``(len(x) + len(y) + (t1 - t0) + 4) u`` (any summation order).
    """
    lx, Lx, ly, Ly = x.lo, x.arr.size, y.lo, y.arr.size
    K = t1 - t0 + 1
    # entries j of y.arr used: j = t - ly - (s - lx) - lx for s - lx in [0, Lx)
    j0 = t0 - ly - lx - Lx + 1
    idx = np.arange(j0, j0 + Lx + K - 1)
    inside = (idx >= 0) & (idx < Ly)
    seg = np.zeros(idx.size)
    seg[inside] = y.arr[idx[inside]]
    yv = conv_valid(x.arr, seg)
    if cum_y is None:
        return yv, None
    # F_y(t - 1 - s): index j - 1 into cum_y, 0 below, total above
    jf = idx[:Lx] - 1
    segf = np.where(jf >= Ly - 1, cum_y[-1], 0.0)
    ok = (jf >= 0) & (jf < Ly - 1)
    segf[ok] = cum_y[jf[ok]]
    return yv, _prefix(chunked_dot(x.arr, segf[::-1]), yv)


def _prefix(f0: float, yv: np.ndarray) -> np.ndarray:
    """``F~(t - 1)`` on a block from ``F~(t0 - 1) = f0`` and the block's ``Y~(t)``: running sums."""
    fv = np.empty(yv.size)
    fv[0] = f0
    np.cumsum(yv[:-1], out=fv[1:])
    fv[1:] += f0
    return fv


class _Family:
    """Laws ``X + Y + C_d`` (``d = 0 .. D-1``; common ``X``, ``Y``; ``C_d`` a windowed law or none).

    Error terms of the computed values, per law (module docstring): ``rel[d]`` bounds the relative
    error of ``Y~``, ``F~`` against the exact windowed sums, doubled so that
    ``true <= computed (1 + rel) + d`` and ``true >= computed (1 - rel)``; ``rel_f`` adds the prefix
    summation of ``F~``; ``dd[d] = e^(log_drop - scale)`` (scaled units) bounds the mass the windows
    miss, including products flushed below the normal range (at most ``2.3e-308`` each, counted
    for every product of the full sum).
    """

    def __init__(self, x: _Dist, y: _Dist, cs: list) -> None:
        if x.arr.size > y.arr.size:
            x, y = y, x
        self.x, self.y, self.cs = x, y, cs
        # one vectorised pass over the laws (the per-law formulas as in :func:`convolve_dists`)
        rel0 = x.rel + y.rel + x.rel * y.rel + (x.arr.size + 2) * _U
        crel0 = x.crel + y.crel + x.crel * y.crel
        mean0, var0 = _moments(x, y)
        has = np.array([c is not None for c in cs])
        cz = [c if c is not None else _POINT for c in cs]  # the point mass at 0 adds nothing
        c_size = np.array([c.arr.size for c in cz], dtype=float)
        c_rel = np.array([c.rel for c in cz])
        c_crel = np.array([c.crel for c in cz])
        c_mom = np.array([_moments(c) if c is not None else (0.0, 0.0) for c in cs]).reshape(-1, 2)
        self.rel = 2.0 * (np.where(has, rel0 + c_rel + rel0 * c_rel + (c_size + 2.0) * _U, rel0) + 4.0 * _U)
        self.crel = np.where(has, crel0 + c_crel + crel0 * c_crel, crel0)
        self.scale = x.scale + y.scale + np.array([c.scale for c in cz])
        prods = float(x.arr.size) * y.arr.size * c_size
        drops = np.empty((len(cs), 4))
        drops[:, 0], drops[:, 1] = x.log_drop, y.log_drop
        drops[:, 2] = [c.log_drop for c in cz]
        drops[:, 3] = np.log(prods * _TINY) + self.scale
        self.log_drop = np.logaddexp.reduce(drops, axis=1)
        self.lo_t = x.lo + y.lo + np.array([c.lo for c in cz], dtype=np.int64)
        self.hi_t = self.lo_t + (x.arr.size + y.arr.size - 2) + (c_size.astype(np.int64) - 1)
        self.mean, self.var = mean0 + c_mom[:, 0], var0 + c_mom[:, 1]
        # F~ adds the prefix sums of y (<= len(y) terms); :meth:`values` adds its running sums
        self.rel_f = self.rel + 2.0 * (y.arr.size + 4) * _U
        ld = self.log_drop - self.scale
        with np.errstate(over="ignore"):
            self.dd = np.where(ld < 700.0, np.exp(np.minimum(ld, 700.0)), np.inf)
        self.cum = np.cumsum(y.arr)

    def values(self, t0: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
        """Computed ``Y~(t)``, ``F~(t - 1)`` for ``t = t0[d] - 1 .. t0[d] + K - 1``: ``(D, K + 1)``."""
        D = len(self.cs)
        yv, fv = np.empty((D, K + 1)), np.empty((D, K + 1))
        # one block of the law of X + Y covering every law's needs
        need_lo = [
            int(t0[i]) - 1 - ((c.lo + c.arr.size - 1) if c is not None else 0) for i, c in enumerate(self.cs)
        ]
        need_hi = [int(t0[i]) + K - 1 - (c.lo if c is not None else 0) for i, c in enumerate(self.cs)]
        B0, B1 = min(need_lo), max(need_hi)
        by, bf = _pair_range(self.x, self.y, B0, B1, self.cum)
        for i, c in enumerate(self.cs):
            sl = slice(need_lo[i] - B0, need_hi[i] - B0 + 1)
            if c is None:
                yv[i], fv[i] = by[sl], bf[sl]
            else:
                yv[i] = conv_valid(c.arr, by[sl])
                # F~(t0 - 1) of the law with C: one 'valid' output of c * F~_{X+Y}, then running sums
                fv[i] = _prefix(chunked_dot(c.arr, bf[sl][c.arr.size - 1 :: -1]), yv[i])
        # running sums: F~ carries the block's additions besides the products' (len(x) + 2) u
        self.rel_f = self.rel + 2.0 * (self.y.arr.size + (B1 - B0 + 1) + K + 16) * _U
        return yv, fv

    def full_work(self) -> float:
        """Multiply-adds of the full convolutions of every law."""
        base = float(self.x.arr.size) * self.y.arr.size
        L = self.x.arr.size + self.y.arr.size
        return base + sum(float(L) * c.arr.size for c in self.cs if c is not None)

    def full(self, i: int) -> _Dist:
        """The full convolution of law ``i`` (fallback path)."""
        dist = convolve_dists(self.x, self.y)
        return convolve_dists(dist, self.cs[i]) if self.cs[i] is not None else dist


def _moments(*ds: _Dist) -> tuple[float, float]:
    """Mean and variance of the sum of independent windowed laws (for guesses only)."""
    mean = var = 0.0
    for z in ds:
        if z.mom is not None:
            mean, var = mean + z.mom[0], var + z.mom[1]
            continue
        w = np.arange(z.arr.size, dtype=float)
        tot = float(np.sum(z.arr))
        mz = chunked_dot(z.arr, w) / tot
        mean += mz + z.lo
        var += chunked_dot(z.arr, (w - mz) ** 2) / tot
    return mean, var


def _rows_hockey(fam, yv, fv, t0, K, dix, eps, p, eps0) -> np.ndarray:
    """Certified ``(log upper, log lower)`` of ``H_E`` for rows ``(law dix[r], eps[r])``: ``(2, R)``.

    ``yv``, ``fv`` hold each law's computed values on its block (:meth:`_Family.values`). ``nan``
    where the block holds no proved bracket ``t_a <= t* < t_b``: a ``t_a`` with a certainly
    positive increment ``Delta(t_a) = a Y(t_a) - a' Y(t_a - 1)`` and a ``t_b > t_a`` with a
    certainly negative one (by log-concavity ``Delta > 0`` exactly on ``{t <= t*}``, so
    ``H = max_{t_a <= t < t_b} D(t)``). Candidates come from the computed ratio
    ``Y~(t) / Y~(t - 1)`` (a guess only; every bracket is checked with the rigorous bounds).
    """
    R = eps.size
    rel, dd = fam.rel[dix][:, None], fam.dd[dix][:, None]
    E = np.exp(eps)
    pbar = p * math.exp(-eps0)
    a = -p * np.expm1(eps - eps0)
    a2 = p * E - pbar
    b = np.expm1(eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(yv[:, :-1] > 0, yv[:, 1:] / np.where(yv[:, :-1] > 0, yv[:, :-1], 1.0), np.inf)
    env = np.minimum.accumulate(ratio, axis=1)[:, ::-1]  # non-decreasing rows
    v = a2 / a
    # K - 1 - (entries <= v of the law's non-decreasing row): its searchsorted(side="right"), all rows at once
    ihat = K - 1 - np.count_nonzero(env[dix] <= v[:, None], axis=1)
    out = np.full((2, R), np.nan)
    todo = np.arange(R)
    ferr = 8.0 * _U * (a + p * E + pbar)
    for j in (0, 1, 2, 4, 8, 16):
        if todo.size == 0:
            break
        dr = dix[todo]
        ia, ib = ihat[todo] - j, ihat[todo] + 1 + j
        ok = (ia >= 0) & (ib < K)
        ia_c, ib_c = np.clip(ia, 0, K - 1), np.clip(ib, 0, K - 1)
        r_, d_ = rel[todo, 0], dd[todo, 0]
        A, A2, FE = a[todo], a2[todo], ferr[todo]
        yA, yA1 = yv[dr, ia_c + 1], yv[dr, ia_c]  # Y~(t_a), Y~(t_a - 1)
        yB, yB1 = yv[dr, ib_c + 1], yv[dr, ib_c]
        uA, uA1 = yA * (1 + r_) + d_, yA1 * (1 + r_) + d_
        uB, uB1 = yB * (1 + r_) + d_, yB1 * (1 + r_) + d_
        pos = A * yA * (1 - r_) - A2 * uA1 > FE * np.maximum(uA, uA1)
        neg = A * uB - A2 * yB1 * (1 - r_) < -FE * np.maximum(uB, uB1)
        good = ok & pos & neg
        if np.any(good):
            g = todo[good]
            idx = ia_c[good][:, None] + 1 + np.arange(2 * j + 1)[None, :]  # t_a .. t_b - 1
            dg = dix[g][:, None]
            yy, ff = yv[dg, idx], fv[dg, idx]
            Eg, ag, bg = E[g][:, None], a[g][:, None], b[g][:, None]
            rg, rfg, dgd = rel[g], fam.rel_f[dix[g]][:, None], dd[g]
            y_up = yy * (1.0 + rg) + dgd
            e = 8.0 * _U * ((p + Eg * pbar) * y_up + (bg + 2.0) * ff)
            v = np.max(ag * y_up - bg * ff * (1.0 - rfg) + e, axis=1) - ag[:, 0] * dgd[:, 0]
            w = np.max(ag * yy * (1.0 - rg) - bg * ff * (1.0 + rfg) - e, axis=1)
            cr = fam.crel[dix[g]]
            # common factor C, |C - 1| <= crel: D <= C V + a d, D >= C W - b d (see hockey_of_dist)
            up = (1.0 + cr) * np.maximum(v, 0.0) + ag[:, 0] * dgd[:, 0]
            low = np.where(w > 0, (1.0 - cr) * w - bg[:, 0] * dgd[:, 0], -1.0)
            sc = fam.scale[dix[g]]
            with np.errstate(divide="ignore"):
                lu = np.where(up > 0, np.log(np.where(up > 0, up, 1.0)) + sc, -np.inf)
                ll = np.where(low > 0, np.log(np.where(low > 0, low, 1.0)) + sc, -np.inf)
            lu = np.minimum(np.logaddexp(lu, fam.log_drop[dix[g]]), 0.0)
            out[0, g], out[1, g] = lu, np.minimum(ll, lu)
            todo = todo[~good]
    return out


def _family_hockey(fam: _Family, eps: np.ndarray, p: float, eps0: float) -> np.ndarray:
    """Certified ``(log upper, log lower)`` of ``H_E(T + law_d || T' + law_d)``: ``(2, D, len(eps))``.

    Each law is evaluated on a block of ``t`` around its guessed thresholds (normal
    approximation, ``r(t) ~ exp(-(t - mean - 1/2) / var)``) for every ``eps`` at once; the block
    widens x4 where no bracket is proved, and :func:`hockey_of_dist` on the full convolution is the last
    resort. ``eps >= eps0`` gives ``-inf`` (``H = 0``).
    """
    eps = np.asarray(eps, dtype=float)
    D, N = len(fam.cs), eps.size
    out = np.full((2, D, N), -np.inf)
    live = np.flatnonzero(eps < eps0)
    if live.size == 0:
        return out
    if N == 1 and fam.full_work() <= _DIRECT_WORK:
        # small windows: the full convolution and one vector pass (:func:`hockey_of_dist`) are cheaper
        for i in range(D):
            out[:, i, 0] = hockey_of_dist(fam.full(i), float(eps[0]), p, eps0)
        return out
    e = eps[live]
    pbar = p * math.exp(-eps0)
    lr = np.log((p * np.exp(e) - pbar) / (-p * np.expm1(e - eps0)))
    gs = fam.mean[:, None] + 0.5 - np.maximum(fam.var, 0.25)[:, None] * lr[None, :]  # (D, n)
    gs = np.clip(gs, (fam.lo_t - 1)[:, None], (fam.hi_t + 1)[:, None])
    res = np.full((2, D, e.size), np.nan)
    pend = np.ones((D, e.size), dtype=bool)
    half = 16
    while np.any(pend):
        lawz = np.flatnonzero(pend.any(axis=1))
        g_lo = np.min(np.where(pend[lawz], gs[lawz], np.inf), axis=1)
        g_hi = np.max(np.where(pend[lawz], gs[lawz], -np.inf), axis=1)
        t0 = np.floor(g_lo).astype(np.int64) - half
        K = int(np.max(np.floor(g_hi) - np.floor(g_lo))) + 2 * half + 1
        t0 = np.maximum(np.minimum(t0, fam.hi_t[lawz] + 2 - K), fam.lo_t[lawz] - 1)  # near the support
        sub = _Family.__new__(_Family)
        sub.__dict__.update(fam.__dict__)
        for key in ("rel", "crel", "rel_f", "scale", "log_drop", "dd", "lo_t", "hi_t", "mean", "var"):
            setattr(sub, key, getattr(fam, key)[lawz])
        sub.cs = [fam.cs[i] for i in lawz]
        yv, fv = sub.values(t0, K)
        li, ei = np.nonzero(pend[lawz])
        r = _rows_hockey(sub, yv, fv, t0, K, li, e[ei], p, eps0)
        res[:, lawz[li], ei] = r
        pend[lawz[li], ei] = np.isnan(r[0])
        whole = K >= int(np.max(fam.hi_t[lawz] - fam.lo_t[lawz])) + 4
        if np.any(pend) and (whole or half > 4 * (int(np.max(fam.hi_t - fam.lo_t)) + 2)):
            for i in np.flatnonzero(pend.any(axis=1)).tolist():
                ks = np.flatnonzero(pend[i])
                res[:, i, ks] = hockey_of_dist_many(fam.full(i), e[ks], p, eps0)
            break
        half *= 4
    out[:, :, live] = res
    return out


def hockey_pair(x: _Dist, y: _Dist, eps: float, p: float, eps0: float) -> tuple[float, float]:
    """``(log upper, log lower)`` on ``H_E(T + X + Y || T' + X + Y)`` without the full convolution.

    Threshold-localised evaluation (:func:`_family_hockey`): ``O(len(x) * block)`` work.
    """
    r = _family_hockey(_Family(x, y, [None]), np.array([eps]), p, eps0)
    return float(r[0, 0, 0]), float(r[1, 0, 0])


# ---------------------------------------------------------------------------------------------
# the k = 2 problem
# ---------------------------------------------------------------------------------------------


class WorstCaseProblem:
    """Shared constants and caches for one ``(eps0, n)`` and one truncation level."""

    def __init__(self, eps0: float, n: int, log_level: float, *, memo: bool = False) -> None:
        self.eps0, self.n = eps0, n
        self.memo = memo  # read and fill the shared memo of single-eps bounds (:data:`_MEMO`)
        self.log_p = -math.log1p(math.exp(-eps0))
        self.log_pbar = self.log_p - eps0
        self.p = math.exp(self.log_p)
        self.pbar = math.exp(self.log_pbar)
        self.gamma = 2.0 * self.pbar
        self.log_g = math.log(2.0) + self.log_pbar
        self.log_1mg = math.log(math.tanh(0.5 * eps0))  # 1 - gamma = (e^eps0 - 1)/(e^eps0 + 1)
        self.log_level = log_level
        self.log_tol = log_level - _DROP_MARGIN
        self._leaf_cache: dict[int, _Family] = {}
        self._bin_cache: dict[tuple[int, bool, float], _Dist] = {}
        self._half_cache: dict[int, _Dist] = {}  # Bin(s, 1/2): siblings share their cells
        self._cell_cache: dict[int, list[tuple[int, float]]] = {}
        self._modes: dict[tuple[int, float], float] = {}  # (N, truncation) -> log-pmf at the mode
        self._block_cache: dict[int, list[_Dist | None]] = {}  # K -> the laws C_j of a block
        self._tv: float | None = None  # (F5): log upper bound on max_c h_c(0), computed once
        self.evaluations = 0

    def prefetch(self, pieces: list[tuple[int, int]]) -> None:
        """Loader's log-pmf at the mode of every fixed binomial of ``pieces`` in one vectorised call.

        ``Bin(c1, pbar)`` and ``Bin(n - 1 - c2, p)`` (reflected: ``Bin(n - 1 - c2, pbar)``) of each
        interval; :meth:`_bin` then builds their windows without a scalar Loader call each.
        """
        t = self.log_tol - math.log(3.0)
        Ns = sorted({c1 for c1, _ in pieces} | {self.n - 1 - c2 for _, c2 in pieces})
        Ns = [N for N in Ns if N > 0 and (N, t) not in self._modes]
        if not Ns:
            return
        k0 = [_binom_window(N, self.log_pbar, self.log_p, t)[2] for N in Ns]
        vals = _log_binom_pmf(np.array(k0, dtype=float), np.array(Ns, dtype=float), self.log_pbar, self.log_p)
        self._modes.update(zip(((N, t) for N in Ns), np.asarray(vals, dtype=float).tolist()))

    def _bin(self, N: int, one: bool, t: float) -> _Dist:
        """``Bin(N, p)`` (``one``: a user at 1) or ``Bin(N, pbar)`` at truncation ``t`` (cached:
        siblings share one end with their parent)."""
        key = (N, one, t)
        if key not in self._bin_cache:
            if len(self._bin_cache) > 256:
                self._bin_cache.pop(next(iter(self._bin_cache)))
            lp, lq = (self.log_p, self.log_pbar) if one else (self.log_pbar, self.log_p)
            self._bin_cache[key] = binomial_dist(N, lp, lq, t, self._modes.get((N, t)))
        return self._bin_cache[key]

    def leaf_dist(self, c: int) -> _Family:
        """``Y`` for dataset ``c`` as a one-law :class:`_Family` of its two binomials (cached)."""
        if c not in self._leaf_cache:
            if len(self._leaf_cache) > 256:
                self._leaf_cache.pop(next(iter(self._leaf_cache)))
            t = self.log_tol - math.log(2.0)
            self._leaf_cache[c] = _Family(self._bin(c, False, t), self._bin(self.n - 1 - c, True, t), [None])
        return self._leaf_cache[c]

    def _memo_key(self, c1: int, c2: int, eps: np.ndarray) -> tuple | None:
        """Key of a single-eps evaluation in the shared memo (``None``: not memoised)."""
        if not self.memo or eps.size != 1:
            return None
        tunables = (BLAS_CHUNK, _CELLS, _EXACT_CELLS, _DROP_MARGIN, _FLUSH, _DIRECT_WORK, _MANY_BLOCK)
        return (self.eps0, self.n, self.log_level, c1, c2, float(eps[0]), tunables)

    def leaf_many(self, c: int, eps: np.ndarray) -> np.ndarray:
        """``(2, len(eps))``: ``(log upper, log lower)`` on ``h_c`` at every ``eps``."""
        self.evaluations += 1  # a memo hit counts too: the budget and the certificate stay the same
        eps = np.asarray(eps, dtype=float)
        key = self._memo_key(c, c, eps)
        if key is not None and (hit := _MEMO.get(key)) is not None:
            return hit.reshape(2, 1)
        r = _family_hockey(self.leaf_dist(c), eps, self.p, self.eps0)[:, 0, :]
        if key is not None:
            _MEMO.put(key, r[:, 0])
        return r

    def leaf(self, c: int, eps: float) -> tuple[float, float]:
        """``(log upper, log lower)`` on ``h_c(eps)``."""
        r = self.leaf_many(c, np.array([eps]))
        return float(r[0, 0]), float(r[1, 0])

    def _block_laws(self, K: int) -> list[_Dist | None]:
        """``C_j = Bin(j, pbar) + Bin(K - j, p)``, ``j = 0 .. K`` (cached: every block of ``K + 1``
        datasets shares them)."""
        if K not in self._block_cache:
            t = self.log_tol - math.log(3.0)
            laws: list[_Dist | None] = []
            for j in range(K + 1):
                a = binomial_dist(j, self.log_pbar, self.log_p, t) if j > 0 else None
                b = binomial_dist(K - j, self.log_p, self.log_pbar, t) if j < K else None
                laws.append(b if a is None else a if b is None else convolve_dists(a, b))
            self._block_cache[K] = laws
        return self._block_cache[K]

    def block_many(self, c0: int, K: int, eps: np.ndarray) -> np.ndarray:
        """``(2, K + 1, len(eps))``: ``(log upper, log lower)`` on ``h_c``, ``c = c0 .. c0 + K``.

        The exact leaves of a block in one evaluation: ``Y_c = X + Y + C_j`` with ``X =
        Bin(c0, pbar)``, ``Y = Bin(n - 1 - c0 - K, p)`` common and ``C_j = Bin(j, pbar) +
        Bin(K - j, p)``, ``j = c - c0`` (the same law as the leaf's ``Bin(c, pbar) + Bin(n - 1 - c,
        p)``: a sum of the same independent Bernoullis), evaluated as one :class:`_Family` by
        (F2) with the same error terms; the mass every window drops (truncated at
        ``e^log_tol / 3`` each) is tracked and added, as for a leaf, so the truncation only sets
        the tightness. The brackets differ from :meth:`leaf_many`'s only in rounding and
        truncation (both are certified). Counts as one evaluation.
        """
        self.evaluations += 1
        eps = np.asarray(eps, dtype=float)
        mk = self._memo_key(c0, c0 + K, eps)
        key = None if mk is None else ("block", *mk)  # its own key: not the leaves' values
        if key is not None and (hit := _MEMO.get(key)) is not None:
            return hit.reshape(2, K + 1, 1)
        t = self.log_tol - math.log(3.0)
        fam = _Family(self._bin(c0, False, t), self._bin(self.n - 1 - c0 - K, True, t), self._block_laws(K))
        r = _family_hockey(fam, eps, self.p, self.eps0)
        if key is not None:
            _MEMO.put(key, r[:, :, 0].reshape(-1))
        return r

    def spectral_many(self, cs: np.ndarray, eps: float) -> np.ndarray:
        """``(2, len(cs))``: ``(log upper, log lower)`` on ``h_c(eps)`` for every dataset of ``cs``.

        The Fourier leaves of :func:`~shuffle_accounting.shuffled_krr._spectral.leaf_bounds`
        (their proof is that module's docstring), about 1 us per dataset whatever ``n``; a
        dataset whose threshold bracket is not proved there is evaluated by :meth:`leaf_many`.
        Counts one evaluation per :data:`SPECTRAL_PER_EVAL` datasets (and one per fallback).
        Not memoised.
        """
        cs = np.asarray(cs, dtype=np.int64)
        self.evaluations += _spectral_evals(cs.size)
        r = spectral_leaf_bounds(self.n, self.eps0, self.p, self.pbar, cs, float(eps), self.log_level)
        for i in np.flatnonzero(np.isnan(r[0])).tolist():
            r[:, i] = self.leaf_many(int(cs[i]), np.array([float(eps)]))[:, 0]
        return r

    def tv_log_bound(self) -> float:
        """Log of an upper bound on ``max_c h_c(0)`` (total variation), hence on every ``h_c(eps)``.

        (F5) in the module docstring: ``n`` odd, the certified upper value of the central leaf
        ``c = (n - 1) / 2`` at ``eps = 0`` (it attains the maximum); ``n`` even, the mean of the
        logs of the central leaves of ``n - 1`` and ``n + 1`` users (Cauchy-Schwarz), plus a
        rounding margin. Computed once per problem, uncounted and outside the memo (a fixed cost
        of one or two leaves; every interval bound of this problem depends on it the same way).
        """
        if self._tv is None:
            z = np.zeros(1)
            n = self.n
            if n % 2 == 1:
                v = float(_family_hockey(self.leaf_dist((n - 1) // 2), z, self.p, self.eps0)[0, 0, 0])
            else:
                # I(n - 2) and I(n): the central leaves of n - 1 and n + 1 users (the same a)
                ends = [
                    WorstCaseProblem(self.eps0, m, self.log_level).leaf_dist((m - 1) // 2)
                    for m in (n - 1, n + 1)
                ]
                lv = [float(_family_hockey(f, z, self.p, self.eps0)[0, 0, 0]) for f in ends]
                v = 0.5 * (lv[0] + lv[1])
                if math.isfinite(v):  # two roundings (sum, halving): 4u relative covers them
                    v = min(v + 4.0 * _U * abs(v), 0.0)
            self._tv = v
        return self._tv

    def _halves(self, ss: list[int], t: float) -> list[_Dist | None]:
        """``Bin(s, 1/2)`` for every ``s`` at truncation ``t`` (cached; pieces of one width share
        their cells), the modes of the new ones by one vectorised Loader call."""
        new = sorted({s for s in ss if s > 0 and s not in self._half_cache})
        if new:
            lh = -math.log(2.0)
            k0 = [_binom_window(s, lh, lh, t)[2] for s in new]
            vals = np.asarray(_log_binom_pmf(np.array(k0, dtype=float), np.array(new, dtype=float), lh, lh))
            keep = set(ss)
            for old in [k for k in self._half_cache if k not in keep][
                : max(0, len(self._half_cache) + len(new) - 512)
            ]:
                del self._half_cache[old]
            for s, v in zip(new, vals.tolist()):
                self._half_cache[s] = binomial_dist(s, lh, lh, t, v)
        return [self._half_cache[s] if s > 0 else None for s in ss]

    def cells(self, m: int) -> list[tuple[int, float]]:
        """Cached :meth:`_cells`."""
        if m not in self._cell_cache:
            if len(self._cell_cache) > 512:
                self._cell_cache.pop(next(iter(self._cell_cache)))
            self._cell_cache[m] = self._cells(m)
        return self._cell_cache[m]

    def _cells(self, m: int) -> list[tuple[int, float]]:
        """Cells of ``B ~ Bin(m, gamma)``: ``(left end, log upper bound on the cell's mass)``.

        A left end of ``-1`` marks the lowest tail cell, bounded by ``g <= 1``.
        """
        g, lg, l1g = self.gamma, self.log_g, self.log_1mg
        if m <= _EXACT_CELLS:
            b = np.arange(m + 1, dtype=float)
            lw = _log_binom_pmf(b, float(m), lg, l1g) + math.log1p(1e-9)
            return [(int(i), float(w)) for i, w in zip(b, lw)]
        if lg > l1g:  # gamma > 1/2 (eps0 < log 3): the window of the reflection, reflected back
            lo1, hi1, _, _ = _binom_window(m, l1g, lg, self.log_tol - math.log(4.0))
            lo, hi = m - hi1, m - lo1
        else:
            lo, hi, _, _ = _binom_window(m, lg, l1g, self.log_tol - math.log(4.0))
        out: list[tuple[int, float]] = []
        if lo > 0:
            out.append((-1, float(_log_binom_cdf(lo - 1, m, g)) + math.log1p(1e-9)))
        starts = sorted({int(round(x)) for x in np.linspace(lo, hi, _CELLS + 1)[:-1]})
        xs = np.arange(lo, hi + 1, dtype=float)
        lp = _log_binom_pmf(xs, float(m), lg, l1g)
        for j, s in enumerate(starts):
            if j + 1 < len(starts):
                e = starts[j + 1]
                w = float(logsumexp(lp[s - lo : e - lo])) + math.log1p(1e-9)
            else:
                w = float(_log_binom_sf(s, m, g)) + math.log1p(1e-9)  # top cell [s, m]: its tail
            out.append((s, w))
        return out

    def interval(self, c1: int, c2: int, eps: float, *, cap: bool = True) -> tuple[float, float]:
        """``(log bound, log lower)`` on ``[c1, c2]`` (:meth:`interval_many` at one ``eps``)."""
        r = self.interval_many(c1, c2, np.array([eps]), cap=cap)
        return float(r[0, 0]), float(r[1, 0])

    def interval_many(self, c1: int, c2: int, eps: np.ndarray, *, cap: bool = True) -> np.ndarray:
        """``(2, len(eps))``: the bound on ``h_c``, ``c1 <= c <= c2``, at every ``eps`` and the lower
        value (leaves only).

        The bound is ``min(log U(c1, c2), log TV)`` (:meth:`capped`; a leaf's upper value in place
        of ``U`` when ``c1 = c2``), or ``log U`` alone with ``cap=False``: the searches keep the
        uncapped value for their slack model (:func:`_plan`, :func:`_split`), which the cap would
        flatten, and cap it where they compare it with a target or record it.
        """
        if c1 == c2:
            out = self.leaf_many(c1, eps)
        else:
            self.evaluations += 1  # a memo hit counts too (see leaf_many)
            eps = np.asarray(eps, dtype=float)
            key = self._memo_key(c1, c2, eps)
            if key is not None and (hit := _MEMO.get(key)) is not None:
                out = hit.reshape(2, 1)
            else:
                out = self._interval_many(c1, c2, eps)
                if key is not None:
                    _MEMO.put(key, out[:, 0])
        if cap:
            out = out.copy()
            out[0] = self.capped(out[0])
        return out

    def capped(self, log_bound):
        """``min(log_bound, log TV)``: (F5) bounds every ``h_c(eps)`` by the total-variation
        worst case :meth:`tv_log_bound` (float or array in, the same out)."""
        return (
            np.minimum(log_bound, self.tv_log_bound())
            if isinstance(log_bound, np.ndarray)
            else min(log_bound, self.tv_log_bound())
        )

    def _interval_many(self, c1: int, c2: int, eps: np.ndarray) -> np.ndarray:
        """:meth:`interval_many` without the memo (``c1 < c2``)."""
        out = np.full((2, eps.size), -np.inf)
        if np.all(eps >= self.eps0):
            return out
        m = c2 - c1
        t = self.log_tol - math.log(3.0)
        a1, a2 = self._bin(c1, False, t), self._bin(self.n - 1 - c2, True, t)
        cells = self.cells(m)
        tail = [lw for s, lw in cells if s < 0]  # g <= 1 on the lowest tail cell
        live = [(s, lw) for s, lw in cells if s >= 0]
        fam = _Family(a1, a2, self._halves([s for s, _ in live], t))
        ups = _family_hockey(fam, eps, self.p, self.eps0)[0]  # (cells, len(eps))
        terms = np.array([lw for _, lw in live])[:, None] + ups
        if tail:
            terms = np.vstack([terms, np.full((1, eps.size), tail[0])])
        mx = np.max(terms, axis=0)
        fin = np.isfinite(mx)
        tot = np.full(eps.size, -np.inf)
        with np.errstate(under="ignore"):
            tot[fin] = mx[fin] + np.log(np.sum(np.exp(terms[:, fin] - mx[fin]), axis=0))
        out[0] = np.minimum(tot + 4.0 * terms.shape[0] * _U, 0.0)
        return out

    def leaf_epsilon(self, c: int, log_delta: float, upper: bool, floor: float = 0.0) -> float:
        """Search on ``eps`` for leaf ``c`` (16 points per round, every point a certified evaluation).

        ``upper=False``: an eps (rounded down) with lower ``h_c(eps) > delta`` (0.0 if none at
        ``eps = floor``): an exhibited epsilon, the largest found to ``1e-13`` relative.
        ``upper=True``: an eps with upper ``h_c(eps) <= delta``. Each round keeps ``lo`` (where the
        predicate "bound > delta" held) and ``hi`` (where it failed), so the returned side is
        always one at which the predicate was evaluated. With ``floor > 0`` the search starts at
        ``floor`` (a leaf that cannot beat it costs one evaluation).
        """
        idx = 0 if upper else 1
        if not self.leaf_many(c, np.array([floor]))[idx, 0] > log_delta:
            return 0.0
        lo, hi = floor, self.eps0  # h_c(eps0) = 0: the predicate fails at eps0
        for _ in range(40):
            if hi - lo <= 1e-13 * hi:
                break
            grid = np.linspace(lo, hi, 18)[1:-1]
            above = self.leaf_many(c, grid)[idx] > log_delta
            k = int(np.argmin(above)) if not np.all(above) else grid.size
            if k > 0:
                lo = float(grid[k - 1])
            if k < grid.size:
                hi = float(grid[k])
        return hi if upper else lo


# ---------------------------------------------------------------------------------------------
# certificate
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverInterval:
    """One cell of the cover: ``h_c(eps) <= exp(log_bound)`` for every ``c in [c_lo, c_hi]``.

    Attributes:
        c_lo: First dataset (number of other users at value 0).
        c_hi: Last dataset (inclusive).
        eps: The eps at which the bound was evaluated (it also holds at every larger eps).
        log_bound: Natural log of the certified bound ``U(c_lo, c_hi)`` at ``eps``.
        block: For a leaf bounded as part of a block of leaves, the block's first dataset and
            size ``(c0, K)`` (:meth:`WorstCaseProblem.block_many`; :func:`verify` recomputes it
            so), else ``None``.
        spectral: ``True`` for a run of datasets bounded one by one by the Fourier leaves
            (:meth:`WorstCaseProblem.spectral_many`): ``log_bound`` is the largest of their
            capped upper values plus a ``1e-12`` relative slack (:func:`verify` recomputes them).
    """

    c_lo: int
    c_hi: int
    eps: float
    log_bound: float
    block: tuple[int, int] | None = None
    spectral: bool = False


@dataclass(frozen=True)
class WorstCaseCertificate:
    """A re-checkable certificate of the worst-case privacy curve of shuffled binary RR.

    The cover partitions ``c in [0, n - 1]``; ``sup_{D ~ D'} delta_D(eps) = max_c h_c(eps)``
    (module docstring, (F1)) is at most ``max`` of the cover's bounds. :func:`verify` recomputes
    every bound and the exhibited value.

    Attributes:
        k: Always 2.
        eps0: Local privacy parameter.
        n: Number of users.
        query: ``"delta"`` (certify ``delta(eps)``) or ``"epsilon"`` (certify ``epsilon(delta)``).
        eps: The eps certified (``query="delta"``: the input; ``"epsilon"``: the certified epsilon).
        delta: The target delta (``query="epsilon"``) or the certified delta (``"delta"``).
        log_delta: Natural log of the certified delta at ``eps`` (for ``"epsilon"``: ``<= log delta``).
        epsilon: Certified epsilon (``"epsilon"``) or ``nan``-free ``eps`` (``"delta"``).
        epsilon_lower: Exhibited epsilon of the worst leaf at ``delta`` (``"epsilon"``), else 0.0.
        worst_c: The exhibited dataset: ``worst_c`` other users at value 0, the rest at 1.
        worst_others: Its counts ``(worst_c, n - 1 - worst_c)`` (target moves 0 -> 1).
        exhibited_log_delta: Exhibited (lower) log delta of ``worst_c`` at ``eps`` (``"delta"``)
            or at ``epsilon_lower`` (``"epsilon"``, then ``> log delta``).
        cover: The intervals with their bounds.
        log_level: Truncation level used (reproduces the windows in :func:`verify`).
        evaluations: Number of bound evaluations spent.
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
    worst_c: int
    worst_others: tuple[int, int]
    exhibited_log_delta: float
    cover: tuple[CoverInterval, ...]
    log_level: float
    evaluations: int


def _seeds(n: int) -> list[int]:
    pts = set(range(min(n, 4))) | {n - 1 - j for j in range(min(n, 4))}
    if n > 8:
        pts |= {int(round(x)) for x in np.linspace(0, n - 1, 7)}
    return sorted(c for c in pts if 0 <= c <= n - 1)


def _tv_candidates(n: int, eps0: float, count: int = 4) -> list[int]:
    """Datasets likely to be (near) the total-variation worst case ``argmax_c h_c(0)`` (F5).

    ``n`` odd: the centre ``(n - 1) / 2``, which attains the bound. ``n`` even (``N = n - 1``
    odd): no dataset is symmetric, and the point mass ``max_s P(Y_c = s)`` is largest where the
    mode of the normal approximation corrected for skewness, ``x_c = mu_c - kappa3_c / (2 sigma^2)``
    (``mu_c = N p - c (p - pbar)``, ``kappa3_c = p pbar (p - pbar) (2c - N)``,
    ``sigma^2 = N p pbar``, the same for every ``c``), is close to an integer and the skewness
    small: the ``count`` datasets ``c <= (N - 1) / 2`` (mirror (F1)) with the smallest
    ``frac(x_c)^2 + ((p - pbar)(2c - N) / N)^2``. A guess only (the exhibited values are the
    leaves' certified lower values, and the cover does not depend on it).

    Only a window of ``c`` below the centre is scored, widened (x4) until every ``c`` below it
    has a larger score than the ``count``-th best inside, by its second term alone: the same
    datasets as scoring every ``c``, in time ``O(sqrt(N / (p - pbar)))`` instead of ``O(N)``
    (which took about 2 minutes and gigabytes at ``n = 1e9``).
    """
    N = n - 1
    if N % 2 == 0:
        return [N // 2]
    p = 1.0 / (1.0 + math.exp(-eps0))
    d = math.tanh(0.5 * eps0)  # p - pbar
    c_hi = N // 2
    width = max(64 * count, int(4.0 * math.sqrt(N / d)) if d > 0 else c_hi + 1)
    while True:
        lo = max(0, c_hi - width)
        c = np.arange(lo, c_hi + 1, dtype=float)
        x = N * p - c * d - d * (2.0 * c - N) / (2.0 * N)
        score = (x - np.round(x)) ** 2 + (d * (2.0 * c - N) / N) ** 2
        best = np.argsort(score, kind="stable")[:count]
        # every c < lo scores more than its second term, (d (N - 2c) / N)^2 > this:
        outside = (d * (N - 2.0 * (lo - 1)) / N) ** 2
        if lo == 0 or outside > float(np.max(score[best])):
            return sorted(int(lo + i) for i in best)
        width *= 4


def _check(eps0, n):
    eps0 = check_real("eps0", eps0, low=0.0, low_open=True, high=700.0)
    n = check_int("n", n, minimum=2)
    return eps0, n


def _split(c1: int, c2: int, u: float, target: float, kappa: float) -> list[tuple[int, int]]:
    """Pieces of a failing interval (a partition of ``[c1, c2]``; any partition is sound).

    Halves, or more equal pieces when a slack model says halves will fail again: the bound of an
    interval of ``m`` datasets is about ``h + kappa m`` (``kappa`` estimated from its parent), so
    pieces of ``m' = (target - h) / kappa`` should pass. A heuristic for speed only.
    """
    m = c2 - c1 + 1
    k = 2
    if kappa > 0 and m >= 8:
        h_est = u - kappa * (m - 1)
        k = math.ceil(1.25 * (u - h_est) / (target - h_est)) if h_est < target else 4
        k = min(max(k, 2), 32, m)
    edges = [c1 + (m * i) // k for i in range(k + 1)]
    return [(edges[i], edges[i + 1] - 1) for i in range(k)]


def _as_block(c1: int, c2: int, pieces: list[tuple[int, int]]) -> bool:
    """Whether a failing interval is resolved into its exact leaves at once
    (:meth:`WorstCaseProblem.block_many`): at most :data:`MAX_LEAF_BLOCK` datasets, split into pieces
    of at most :data:`_BLOCK_PIECE` (the slack model expects the pieces to fail again down to
    leaves, or nearly). Speed only: the leaves are the exact values."""
    return c2 - c1 + 1 <= max(LEAF_BLOCK, MAX_LEAF_BLOCK) and (c2 - c1 + 1) <= _BLOCK_PIECE * len(pieces)


def _slope(c1: int, c2: int, u: float, a: int, b: int, ua: float, kappa: float) -> float:
    """Slack slope estimate of a child ``[a, b]`` of ``[c1, c2]`` (see :func:`_split`)."""
    dm = (c2 - c1) - (b - a)
    if dm > 0 and u > ua and math.isfinite(u) and math.isfinite(ua):
        return (u - ua) / dm
    return kappa


class _PlanModel(NamedTuple):
    """The model of :func:`_plan` at one or more points ``eps`` (see there): the knots ``cs``,
    the leaves' log values ``h`` there (knots x points), the measured slopes ``kappa``, the
    targets ``tg``, which points the model can serve (``ok``) and its predicted numbers of
    pieces (``pieces``)."""

    cs: np.ndarray
    h: np.ndarray
    kappa: np.ndarray
    tg: np.ndarray
    ok: np.ndarray
    pieces: np.ndarray


def _plan_model(pr: WorstCaseProblem, eps, target) -> _PlanModel | None:
    """Fit the model of :func:`_plan` (``None`` below 64 datasets, where none is used)."""
    n = pr.n
    if n < 64:
        return None
    ev = np.atleast_1d(np.asarray(eps, dtype=float))
    tg = np.broadcast_to(np.asarray(target, dtype=float), ev.shape)
    cs = np.array(sorted(set(_seeds(n)) | {int(x) for x in np.linspace(0, n - 1, 17)}))
    h = np.array([pr.leaf_many(int(c), ev)[0] for c in cs])  # (knots, points)
    m_p = max(2, n // 1000)
    c1 = n // 2 - m_p // 2
    u = pr.interval_many(c1, c1 + m_p, ev, cap=False)[0]  # the slack of (F3), not the (F5) cap
    with np.errstate(invalid="ignore"):
        ends = np.maximum(
            [np.interp(c1, cs, h[:, i]) for i in range(ev.size)],
            [np.interp(c1 + m_p, cs, h[:, i]) for i in range(ev.size)],
        )
        kappa = (u - ends) / m_p
        ok = np.isfinite(kappa) & (kappa > 0.0) & np.all(np.isfinite(h), axis=0) & np.isfinite(tg)
        # predicted pieces per point: each stretch between knots at the width of its worse end
        seg = np.maximum(h[1:], h[:-1])  # (segments, points)
        w = np.maximum(_PLAN_SAFETY * (tg[None, :] - seg) / np.where(ok, kappa, 1.0)[None, :], 1.0)
        count = np.sum(np.diff(cs)[:, None] / w, axis=0)
    return _PlanModel(cs, h, kappa, tg, ok, count)


def _plan_pieces(pr: WorstCaseProblem, model: _PlanModel, cap: int) -> list[tuple[int, int, float]] | None:
    """The partition :func:`_plan` builds from its model (``None`` if more than ``cap`` pieces)."""
    n = pr.n
    ok = model.ok & (model.pieces <= cap)
    if not np.any(ok):
        return None
    cs, h, tg, kappa = model.cs, model.h[:, ok], model.tg[ok], model.kappa[ok]
    out: list[tuple[int, int, float]] = []
    c = 0
    while c <= n - 1:
        m = 0
        for _ in range(3):
            j = int(min(np.searchsorted(cs, c + m, side="right") - 1, cs.size - 2))
            i0 = int(min(np.searchsorted(cs, c, side="right") - 1, cs.size - 2))
            # interpolated log h at both ends (linear on each knot stretch)
            h0 = h[i0] + (h[i0 + 1] - h[i0]) * ((c - cs[i0]) / (cs[i0 + 1] - cs[i0]))
            h1 = h[j] + (h[j + 1] - h[j]) * ((c + m - cs[j]) / (cs[j + 1] - cs[j]))
            room = float(np.min((tg - np.maximum(h0, h1)) / kappa))
            m = min(_quantize(max(int(_PLAN_SAFETY * room), 0)), n - 1 - c)
        out.append((c, c + m, float(np.min(kappa))))
        c += m + 1
        if len(out) > cap:
            return None
    pr.prefetch([(a, b) for a, b, _ in out])
    return out


def _plan(pr: WorstCaseProblem, eps, target, cap: int) -> list[tuple[int, int, float]] | None:
    """A first partition of ``[0, n - 1]`` predicted to pass at ``eps`` (a speed heuristic only).

    Model (:func:`_plan_model`): ``log h_c(eps)`` is interpolated linearly between leaves at 17
    evenly spaced datasets plus the seeds (it is nearly linear in ``c`` for ``k = 2``, see *Cost*
    in the module docstring), and ``log U(c1, c2) ~ max(h_c1, h_c2) + kappa (c2 - c1)`` with
    ``kappa`` measured on one probe interval. Each piece gets :data:`_PLAN_SAFETY` of the width
    the model allows below ``target`` (:func:`_plan_pieces`). Any partition is sound (every piece
    is bounded, and split further if it fails); this one replaces the ``O(log n)`` levels of
    halving from ``[0, n - 1]`` by one pass. ``eps`` and ``target`` may be arrays (a grid): the
    plan then serves every grid point whose own plan would have at most ``cap`` pieces (the
    others are left to the refinement). Returns ``(c1, c2, kappa)`` triples, or ``None`` when the
    model is unusable or predicts more than ``cap`` pieces (the caller then splits from the root).
    """
    model = _plan_model(pr, eps, target)
    return None if model is None else _plan_pieces(pr, model, cap)


def _leaf_block(n: int, cap: int) -> int | None:
    """Block size for evaluating every leaf within ``cap`` evaluations: :data:`LEAF_BLOCK` doubled
    until ``ceil(n / size) <= cap``, or ``None`` beyond :data:`MAX_LEAF_BLOCK`."""
    size = LEAF_BLOCK
    while -(-n // size) > cap:
        size *= 2
        if size > MAX_LEAF_BLOCK:
            return None
    return size


class _LeafSweep(NamedTuple):
    """How a search evaluates every leaf: by the Fourier leaves (``spectral``), else in blocks of
    ``block`` datasets."""

    spectral: bool
    block: int


def _leaf_sweep(n: int, cap: int) -> _LeafSweep | None:
    """How to evaluate every leaf within ``cap`` evaluations: the Fourier leaves from
    :data:`SPECTRAL_MIN_N` users (``ceil(n / SPECTRAL_PER_EVAL) <= cap``), else blocks
    (:func:`_leaf_block`); ``None`` if neither fits."""
    if n >= SPECTRAL_MIN_N and _spectral_evals(n) <= cap:
        return _LeafSweep(True, 0)
    size = _leaf_block(n, cap)
    return None if size is None else _LeafSweep(False, size)


def _flat_plan(pr: WorstCaseProblem, eps: float, target: float, max_evals: int):
    """The first cover of a search (:func:`_plan`, at most ``max_evals / 2`` pieces, else
    ``None``), or a :class:`_LeafSweep` (evaluate every leaf: :func:`_all_leaves`,
    :func:`_spectral_leaves`) where that fits in ``max_evals / 2`` evaluations (:func:`_leaf_sweep`)
    and the planned pieces average at most :data:`_LEAVES_PLAN_WIDTH` datasets, or are more than
    ``max_evals / 2``: there the bounds are flat in ``c`` (just below ``delta(0)``, where all
    datasets are within ~1e-5 of each other and the stop is ~1e-8), and the cover would end in
    about ``n`` single leaves, or run out of budget, anyway."""
    cap = max_evals // 2
    sweep = _leaf_sweep(pr.n, cap)
    model = _plan_model(pr, eps, target)
    if model is None:
        return None
    count = float(model.pieces[0])
    if sweep is not None and model.ok[0]:
        if count * _LEAVES_PLAN_WIDTH >= pr.n or count > cap:
            return sweep
        # the Fourier sweep costs fewer evaluations than the planned pieces (before any split),
        # at a level where its leaves are as tight as the windowed ones (their errors are absolute)
        if sweep.spectral and pr.log_level >= SPECTRAL_SWEEP_MIN_LEVEL and count >= _spectral_evals(pr.n):
            return sweep
    return _plan_pieces(pr, model, cap)


def _blocks(n: int, size: int) -> list[tuple[int, int]]:
    """``[0, n - 1]`` as blocks ``(c0, K)`` of ``size`` datasets (``K + 1``; the last may be shorter)."""
    return [(c0, min(size, n - c0) - 1) for c0 in range(0, n, size)]


def _block_bounds(pr: WorstCaseProblem, c0: int, K: int, eps: float) -> np.ndarray:
    """``(2, K + 1)``: the (F5)-capped log upper and the log lower values of block ``(c0, K)``."""
    r = pr.block_many(c0, K, np.array([eps]))[:, :, 0]
    return np.vstack((pr.capped(r[0]), r[1]))


def _block_leaf(c: int, c0: int, K: int, eps: float, up: np.ndarray) -> CoverInterval:
    """Leaf ``c`` of block ``(c0, K)`` as a cover piece (its capped upper value ``up[c - c0]``)."""
    return CoverInterval(c, c, eps, float(up[c - c0]), (c0, K))


def _all_leaves(
    pr: WorstCaseProblem, eps: float, blocks: list[tuple[int, int]], floor: float = -math.inf
) -> tuple[list[CoverInterval], float, int]:
    """Every leaf of ``blocks`` (``(c0, K)`` each) at ``eps``: ``(cover of single leaves, the
    witness's lower value, the witness)``. The witness (the block value with the largest lower
    bound) is re-evaluated as a leaf (what :func:`verify` recomputes), only if its block value
    exceeds ``floor`` (else ``(-inf, -1)``: no better witness)."""
    cover: list[CoverInterval] = []
    top, top_c = floor, -1
    for c0, K in blocks:
        r = _block_bounds(pr, c0, K, eps)
        cover.extend(_block_leaf(c, c0, K, eps, r[0]) for c in range(c0, c0 + K + 1))
        j = int(np.argmax(r[1]))
        if r[1, j] > top:
            top, top_c = float(r[1, j]), c0 + j
    return cover, (pr.leaf(top_c, eps)[1] if top_c >= 0 else -math.inf), top_c


def _spectral_evals(m: int) -> int:
    """Evaluations counted for ``m`` Fourier leaves: ``ceil(m / SPECTRAL_PER_EVAL)``."""
    return -(-m // SPECTRAL_PER_EVAL)


def _spectral_padded(up: np.ndarray) -> np.ndarray:
    """Capped upper values of Fourier leaves plus :data:`_SPECTRAL_SLACK` (relative, at most 0;
    ``-inf`` stays): what a piece records, hence what is compared with a target (a value at most
    the target whose slack took it above would make a piece above the target)."""
    pad = np.where(np.isfinite(up), _SPECTRAL_SLACK * np.maximum(1.0, np.abs(up)), 0.0)
    return np.minimum(up + pad, 0.0)


def _spectral_runs(cs: np.ndarray, up: np.ndarray, eps: float) -> list[CoverInterval]:
    """Cover pieces for the datasets ``cs`` (sorted) with their padded upper values ``up`` at
    ``eps`` (:func:`_spectral_padded`): each maximal run of consecutive datasets, cut every
    :data:`_SPECTRAL_PIECE`, is one piece whose bound is its largest value."""
    out: list[CoverInterval] = []
    if cs.size == 0:
        return out
    cuts = np.flatnonzero(np.diff(cs) != 1) + 1
    for seg_c, seg_u in zip(np.split(cs, cuts), np.split(up, cuts)):
        for i in range(0, seg_c.size, _SPECTRAL_PIECE):
            top = float(np.max(seg_u[i : i + _SPECTRAL_PIECE]))
            hi = min(i + _SPECTRAL_PIECE, seg_c.size) - 1
            out.append(CoverInterval(int(seg_c[i]), int(seg_c[hi]), eps, top, None, True))
    return out


def _record_spectral(
    pr: WorstCaseProblem, out: list[CoverInterval], cs: np.ndarray, eps: float, log_delta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bound the datasets ``cs`` (sorted) by the Fourier leaves at ``eps``; append those at most
    ``log_delta`` (padded, :func:`_spectral_padded`) to ``out`` as runs; return the others with
    their padded values."""
    up = _spectral_padded(pr.capped(pr.spectral_many(cs, eps)[0]))
    good = up <= log_delta
    out.extend(_spectral_runs(cs[good], up[good], eps))
    return cs[~good], up[~good]


def _spectral_leaves(pr: WorstCaseProblem, eps: float) -> tuple[list[CoverInterval], float, int]:
    """Every leaf of ``[0, n - 1]`` at ``eps`` by the Fourier leaves: ``(cover, the witness's lower
    value, the witness)`` as :func:`_all_leaves` (the witness re-evaluated as a leaf)."""
    cover: list[CoverInterval] = []
    top, top_c = -math.inf, -1
    step = _SPECTRAL_PIECE * 64
    for c0 in range(0, pr.n, step):
        cs = np.arange(c0, min(pr.n, c0 + step), dtype=np.int64)
        r = pr.spectral_many(cs, eps)
        cover.extend(_spectral_runs(cs, _spectral_padded(pr.capped(r[0])), eps))
        j = int(np.argmax(r[1]))
        if r[1, j] > top:
            top, top_c = float(r[1, j]), int(cs[j])
    return cover, (pr.leaf(top_c, eps)[1] if top_c >= 0 else -math.inf), top_c


def _quantize(m: int) -> int:
    """``m`` rounded down to ``j 2^e`` with ``8 <= j <= 15`` (at most 1/8 lower; exact below 16):
    pieces of equal width share their cells of ``B`` and their ``Bin(s, 1/2)`` laws."""
    if m < 16:
        return m
    e = m.bit_length() - 4
    return (m >> e) << e


def _certify_delta(
    pr: WorstCaseProblem,
    eps: float,
    tol: float,
    max_evals: int,
    eps_tol: float | None = None,
    *,
    eps_or: bool = True,
):
    """Cover for ``delta(eps)``: stop when every bound is within ``(1 + tol)`` of the best leaf.

    With ``eps_tol`` the stop is also measured in epsilon: every bound at most the best leaf's
    exhibited value at ``eps / (1 + eps_tol)`` (the certified delta is then no larger than a
    concrete dataset's delta at that smaller eps, i.e. the gap in epsilon is at most ``eps_tol``).
    Where the curve is flat (that value below ``(1 + tol)`` times the best leaf) the epsilon gap
    is the stop, floored at :data:`FLAT_DELTA_TOL` in delta (:data:`FLAT_DELTA_TOL_WIDE` where
    the blocks of every leaf exceed half the budget) or at twice the best leaf's own rounding
    bracket (``log upper - log lower``, ~4e-10), whichever is larger: a delta gap of ``tol``
    would be a gap of ``tol`` over the slope in epsilon (8e-3 at n = 1e4, eps0 = 0.5,
    delta = 2e-3: 0.6 %), and the round trip of ``ShuffledKRR.epsilon`` would carry it to the
    returned epsilon. Where it is steep the epsilon gap is the stop when
    ``eps_or`` (large n: a looser stop in delta), else the delta gap. Only tightness, never
    soundness, depends on the stop.

    Returns ``(cover, best, best_c, exhausted)``: ``exhausted`` when ``max_evals`` ran out first
    (the cover is then still a partition of ``[0, n - 1]`` with a certified bound on each piece,
    i.e. a sound but looser certificate).
    """
    best, best_c = -math.inf, 0
    # bounds are kept uncapped (the slack model of _plan / _split) and capped by (F5) where they
    # meet a target or enter the cover
    up, _ = pr.interval(0, pr.n - 1, eps, cap=False)
    seeds = _seeds(pr.n)
    if up >= pr.tv_log_bound():  # the total-variation bound (F5) binds: its likely witnesses too
        seeds = sorted(set(seeds) | set(_tv_candidates(pr.n, pr.eps0)))
    top_up = -math.inf  # the seeds' largest upper value
    for c in seeds:
        up_c, lo = pr.leaf(c, eps)
        top_up = max(top_up, up_c)
        if lo > best:
            best, best_c = lo, c
    ltol = math.log1p(tol)
    shrunk: dict[int, tuple[float, float]] = {}
    flat = math.log1p(FLAT_DELTA_TOL if _leaf_sweep(pr.n, max_evals // 2) else FLAT_DELTA_TOL_WIDE)

    def target() -> float:
        if best == -math.inf and top_up > -math.inf:
            # no leaf's lower value is resolved (within ~1e-13 of eps0, a = -p expm1(eps - eps0)
            # is a few u, below the rounding of a Y - b F): no gap can be measured, and the
            # search would only exhaust its budget (n = 1e6, eps0 = 10, eps = eps0 - 2e-15: 20000
            # evaluations, 32 s). Stop where every bound is within tol of the seeds' best upper
            # value: the certified value is then as tight as a leaf's own evaluation allows.
            return top_up + ltol
        t = best + ltol
        if eps_tol is not None and best > -math.inf:
            if best_c not in shrunk:
                # (the witness's value at the smaller eps, the floor: its own rounding bracket)
                bracket = pr.leaf(best_c, eps)
                floor = max(flat, 2.0 * (bracket[0] - bracket[1]))
                shrunk[best_c] = (pr.leaf(best_c, eps / (1.0 + eps_tol))[1], floor)
            t_eps = max(shrunk[best_c][0], best + shrunk[best_c][1])
            if t_eps < t or eps_or:
                t = t_eps
        return t

    heap = [(-up, 0, pr.n - 1, -1.0)]  # (-bound, c1, c2, slack slope estimate)
    done: list[CoverInterval] = []
    goal = target()
    plan = _flat_plan(pr, eps, goal, max_evals) if pr.capped(up) > goal else None
    if isinstance(plan, _LeafSweep):  # flat in c: every dataset's exact value (no slack left)
        if plan.spectral:
            done, lo, c = _spectral_leaves(pr, eps)
        else:
            done, lo, c = _all_leaves(pr, eps, _blocks(pr.n, plan.block))
        if lo > best:
            best, best_c = lo, c
        return done, best, best_c, False
    if plan is not None:
        heap = []
        for a, b, kappa in plan:
            u, lo = pr.interval(a, b, eps, cap=False)
            if lo > best:
                best, best_c = lo, a
            heap.append((-u, a, b, kappa))
        heapq.heapify(heap)
    exhausted = False
    while heap:
        neg, c1, c2, kappa = heap[0]
        goal = target()
        if pr.capped(-neg) <= goal:  # the heap's top is the largest bound, capped or not
            break
        if pr.evaluations > max_evals:  # the cover below is complete (sound), only looser
            exhausted = True
            break
        heapq.heappop(heap)
        if c1 == c2:  # an exact leaf: nothing left to split
            done.append(CoverInterval(c1, c2, eps, pr.capped(-neg)))
            continue
        pieces = _split(c1, c2, -neg, goal, kappa)
        if _as_block(c1, c2, pieces):  # its exact leaves in one evaluation
            leaves, lo, c = _all_leaves(pr, eps, [(c1, c2 - c1)], floor=best)
            done.extend(leaves)
            if lo > best:
                best, best_c = lo, c
            continue
        for a, b in pieces:
            u, lo = pr.interval(a, b, eps, cap=False)
            if lo > best:
                best, best_c = lo, a
            heapq.heappush(heap, (-u, a, b, _slope(c1, c2, -neg, a, b, u, kappa)))
    done.extend(CoverInterval(e[1], e[2], eps, pr.capped(-e[0])) for e in heap)
    return done, best, best_c, exhausted


def _seed_epsilon(pr: WorstCaseProblem, seeds: list[int], log_delta: float) -> tuple[float, int]:
    """The largest exhibited epsilon over ``seeds`` (:meth:`WorstCaseProblem.leaf_epsilon`) and its
    dataset, ``(0.0, -1)`` if none exceeds delta at ``eps = 0``. The seed with the largest lower
    value at a common eps (the first seed's epsilon) goes first, so the others mostly cost one
    evaluation each (they cannot beat its epsilon)."""
    eps_low, best_c = 0.0, -1
    probe = pr.leaf_epsilon(seeds[0], log_delta, upper=False)
    if probe > 0:
        eps_low, best_c = probe, seeds[0]
        vals = [pr.leaf(c, probe)[1] for c in seeds]
        seeds = [seeds[i] for i in np.argsort(vals)[::-1]]
    for c in seeds:
        e = pr.leaf_epsilon(c, log_delta, upper=False, floor=eps_low)
        if e > eps_low:
            eps_low, best_c = e, c
    return eps_low, best_c


def _certify_epsilon(pr: WorstCaseProblem, log_delta: float, tol: float, max_evals: int):
    eps_low, best_c = _seed_epsilon(pr, _seeds(pr.n), log_delta)
    best_c = max(best_c, 0)  # no witness: dataset 0 (its exhibited value is then -inf)
    eps_up = min(pr.eps0, max(eps_low * (1.0 + tol), 1e-300))
    if eps_low == 0.0:
        # nothing exhibited above delta: try to certify eps = 0 first
        eps_up = 0.0
    heap = [(0.0, 0, pr.n - 1, -1.0, -1.0)]  # (-bound, c1, c2, eps of the bound, slack slope)
    done: list[CoverInterval] = []

    def leaf_done(c: int) -> None:
        """Leaf ``c`` above delta at eps_up: search its exhibited epsilon (a new witness raises
        eps_low and eps_up), then record it certified at eps_up."""
        nonlocal eps_low, eps_up, best_c
        e = pr.leaf_epsilon(c, log_delta, upper=False, floor=eps_low)
        if e > eps_low:
            eps_low, best_c = e, c
            eps_up = max(eps_up, min(pr.eps0, eps_low * (1.0 + tol)))
        u = pr.capped(pr.leaf(c, eps_up)[0])
        if u > log_delta:  # rounding band of this leaf: move eps_up past its upper crossing
            eps_up = max(eps_up, pr.leaf_epsilon(c, log_delta, upper=True))
            u = pr.capped(pr.leaf(c, eps_up)[0])
        if u > log_delta:  # pragma: no cover - eps0 itself always certifies (h = 0)
            eps_up = pr.eps0
            u = -math.inf
        done.append(CoverInterval(c, c, eps_up, u))

    def resolve(blocks: list[tuple[int, int]]) -> list[int]:
        """Every leaf of ``blocks`` certified, in rounds: record each block whose leaves are all
        at most delta at eps_up, search the worst leaf above (its exhibited epsilon raises
        eps_low and eps_up), re-evaluate the blocks left. Returns the leaves left when the
        budget runs out (else none): the caller's loop settles them."""
        pending = {b: set(range(b[0], b[0] + b[1] + 1)) for b in blocks}
        while pending:
            worst, worst_b, worst_c = -math.inf, blocks[0], -1
            for (c0, K), left in pending.items():
                up = _block_bounds(pr, c0, K, eps_up)[0]
                over = [c for c in left if up[c - c0] > log_delta]
                if not over:
                    done.extend(_block_leaf(c, c0, K, eps_up, up) for c in sorted(left))
                    left.clear()
                for c in over:
                    if up[c - c0] > worst:
                        worst, worst_b, worst_c = float(up[c - c0]), (c0, K), c
            if worst_c >= 0:
                leaf_done(worst_c)
                pending[worst_b].discard(worst_c)
            pending = {b: left for b, left in pending.items() if left}
            if pr.evaluations > max_evals:
                return [c for left in pending.values() for c in left]
        return []

    def resolve_spectral() -> np.ndarray:
        """Every leaf certified by the Fourier leaves, in rounds as :func:`resolve`: record the
        datasets at most delta at eps_up (runs of them as pieces), search the worst one above,
        re-evaluate the others above. Returns the datasets left when the budget runs out."""
        pending = np.arange(pr.n, dtype=np.int64)
        while pending.size:
            over, u_over = _record_spectral(pr, done, pending, eps_up, log_delta)
            if over.size:
                worst = int(over[int(np.argmax(u_over))])
                leaf_done(worst)
                over = over[over != worst]
            pending = over
            if pending.size and pr.evaluations > max_evals:
                break
        return pending

    if eps_up > 0.0 and pr.interval(0, pr.n - 1, eps_up)[0] > log_delta:  # capped (F5)
        plan = _flat_plan(pr, eps_up, log_delta, max_evals)
        if isinstance(plan, _LeafSweep) and plan.spectral:  # every leaf, by the Fourier leaves
            left = resolve_spectral()
            if left.size:  # the budget ran out: settle the leaves left at larger eps
                eps_up = _settle_spectral(pr, done, left, eps_up, log_delta)
                ex = pr.leaf(best_c, eps_low)[1] if eps_low > 0 else -math.inf
                return done, eps_up, eps_low, best_c, ex, True
            heap = []
        elif isinstance(plan, _LeafSweep):  # every leaf, in blocks (leaves left: the loop settles)
            heap = [(0.0, c, c, -1.0, -1.0) for c in resolve(_blocks(pr.n, plan.block))]
        elif plan is not None:  # unevaluated pieces (bound key 0.0), bounded when popped
            heap = [(0.0, a, b, -1.0, kappa) for a, b, kappa in plan]
    while heap:
        neg, c1, c2, e_at, kappa = heapq.heappop(heap)
        if pr.evaluations > max_evals:
            # the pieces left are not certified at eps_up: settle them at a larger eps
            heapq.heappush(heap, (neg, c1, c2, e_at, kappa))
            done, eps_up = _settle(pr, done, [h[:3] for h in heap], eps_up, log_delta)
            ex = pr.leaf(best_c, eps_low)[1] if eps_low > 0 else -math.inf
            return done, eps_up, eps_low, best_c, ex, True
        if e_at < eps_up:
            u, _ = pr.interval(c1, c2, eps_up, cap=False)
            e_at = eps_up
        else:
            u = -neg
        if pr.capped(u) <= log_delta:
            done.append(CoverInterval(c1, c2, e_at, pr.capped(u)))
            continue
        if c1 == c2:
            leaf_done(c1)
            continue
        pieces = _split(c1, c2, u, log_delta, kappa)
        if _as_block(c1, c2, pieces):  # its exact leaves at once
            for c in resolve([(c1, c2 - c1)]):
                heapq.heappush(heap, (0.0, c, c, -1.0, -1.0))
            continue
        for a, b in pieces:
            ua, _ = pr.interval(a, b, eps_up, cap=False)
            heapq.heappush(heap, (-ua, a, b, eps_up, _slope(c1, c2, u, a, b, ua, kappa)))
    ex = pr.leaf(best_c, eps_low)[1] if eps_low > 0 else -math.inf
    return done, eps_up, eps_low, best_c, ex, False


#: Relative steps above the epsilon reached when an epsilon query's budget runs out, at which
#: :func:`_settle` bounds a piece that fails (four per decade, ``1e-6`` to ``1e3``; ``eps0`` last).
_SETTLE_STEPS = np.concatenate(([0.0], np.logspace(-6.0, 3.0, 37)))


def _settle(
    pr: WorstCaseProblem,
    done: list[CoverInterval],
    rest: list[tuple[float, int, int]],
    eps_up: float,
    log_delta: float,
) -> tuple[list[CoverInterval], float]:
    """Complete an epsilon query's cover when its budget ran out: ``(cover, certified epsilon)``.

    ``done`` holds pieces certified (bound ``<= log_delta``) at eps ``<= eps_up``; the pieces of
    ``rest`` (``(key, c1, c2)``, largest bound first by ``key``) are not. A bound at some eps
    holds at every larger eps (``h_c`` is non-increasing in eps), so the pieces are taken in
    turn at the current epsilon ``e``: one that passes is recorded at ``e``; one that fails is
    bounded on the grid ``eps_up (1 + r)``, ``r`` in :data:`_SETTLE_STEPS`, and ``eps0`` (one
    evaluation: the grid shares its threshold block), and ``e`` moves up to the first grid point
    above it where that piece passes (``eps0`` always does: ``h_c(eps0) = 0``, the mechanism is
    ``eps0``-DP), refined on 16 equal steps below that point. Every piece is then bounded by
    ``log_delta`` at an eps ``<= e``, so ``e`` is certified; the grids' resolution (about 4 % of
    the excess over ``eps_up``) only sets how loose it is. About one single-eps evaluation per
    piece, plus two grid evaluations per raise.
    """
    grid = np.unique(np.append(np.minimum(eps_up * (1.0 + _SETTLE_STEPS), pr.eps0), pr.eps0))
    e = eps_up
    out = list(done)
    rest = _settle_blocks(pr, out, rest, e, log_delta)
    for _, c1, c2 in sorted(rest):
        u = pr.capped(pr.interval(c1, c2, e, cap=False)[0])
        if u > log_delta:
            g = grid[grid > e]  # non-empty: e < eps0 here (every bound at eps0 is -inf)
            ug = pr.interval_many(c1, c2, g)[0]  # capped by (F5)
            i = int(np.argmax(ug <= log_delta))  # the last point, eps0, passes
            # 16 points between the last failing one and the first passing one (one more
            # evaluation): the excess r is resolved to about 4 %, not a factor 1.8
            fine = np.linspace(e if i == 0 else float(g[i - 1]), float(g[i]), 18)[1:-1]
            uf = pr.interval_many(c1, c2, fine)[0]
            j = int(np.argmax(uf <= log_delta)) if np.any(uf <= log_delta) else -1
            e, u = (float(fine[j]), float(uf[j])) if j >= 0 else (float(g[i]), float(ug[i]))
        out.append(CoverInterval(c1, c2, e, u))
    return out, e


def _settle_spectral(
    pr: WorstCaseProblem, out: list[CoverInterval], left: np.ndarray, eps_up: float, log_delta: float
) -> float:
    """Settle the datasets ``left`` of a Fourier sweep whose budget ran out (as :func:`_settle`):
    each is bounded by the Fourier leaves at ``eps_up (1 + r)``, ``r`` in :data:`_SETTLE_STEPS`,
    then ``eps0``, and recorded (as runs, appended to ``out``) at the first point where it is at
    most ``log_delta`` (``eps0`` always passes: ``h_c(eps0) = 0``). Returns the largest point used,
    the certified epsilon."""
    grid = np.unique(np.append(np.minimum(eps_up * (1.0 + _SETTLE_STEPS), pr.eps0), pr.eps0))
    e = eps_up
    for g in grid.tolist():
        if left.size == 0:
            break
        e = g
        left = _record_spectral(pr, out, left, g, log_delta)[0]
    return e


def _settle_blocks(
    pr: WorstCaseProblem,
    out: list[CoverInterval],
    rest: list[tuple[float, int, int]],
    e: float,
    log_delta: float,
) -> list[tuple[float, int, int]]:
    """Single leaves of ``rest`` bounded at ``e`` in blocks of consecutive datasets (at most
    :data:`MAX_LEAF_BLOCK`, :meth:`WorstCaseProblem.block_many`): those at most ``log_delta``
    are appended to ``out``; returns the pieces still to settle (the wider ones and the leaves
    above). Speed only (a budget often runs out with ~n single leaves left, one evaluation each)."""
    size = max(LEAF_BLOCK, MAX_LEAF_BLOCK)
    if size < 2:
        return rest
    leaves = sorted(c1 for _, c1, c2 in rest if c1 == c2)
    keep = [r for r in rest if r[1] != r[2]]
    i = 0
    while i < len(leaves):
        j = i + 1  # a run of consecutive datasets, at most `size` long
        while j < len(leaves) and leaves[j] == leaves[j - 1] + 1 and j - i < size:
            j += 1
        c0, K = leaves[i], j - i - 1
        up = _block_bounds(pr, c0, K, e)[0]
        out.extend(_block_leaf(c, c0, K, e, up) for c in range(c0, c0 + K + 1) if up[c - c0] <= log_delta)
        keep.extend((-float(up[c - c0]), c, c) for c in range(c0, c0 + K + 1) if up[c - c0] > log_delta)
        i = j
    return keep


def certify(
    eps0, n, *, eps=None, delta=None, tol: float | None = None, max_evals: int = 20000
) -> WorstCaseCertificate:
    """Certify the exact worst case of shuffled binary RR (k = 2) by branch and bound over datasets.

    Exactly one of ``eps`` (certify ``delta(eps)``) and ``delta`` (certify ``epsilon(delta)``)
    is given. The certified value is an upper bound on ``sup_{D ~ D'} delta_D(eps)`` (resp. an
    eps at which that sup is ``<= delta``); the exhibited dataset gives a lower bound. See the
    module docstring for the proof ((F1)-(F4)) and the rounding.

    Args:
        eps0: Local privacy parameter, finite, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        eps: ``eps >= 0``, to certify ``delta(eps)`` (keyword only).
        delta: ``0 < delta < 1``, to certify ``epsilon(delta)`` (keyword only).
        tol: Stopping tolerance (keyword only): relative gap in delta (``eps`` given) or in
            epsilon (``delta`` given) between the certified and the exhibited value; default
            :data:`DEFAULT_TOL` = ``5e-5`` (a delta query with the default also measures that
            gap in epsilon: where the curve is flat, just below ``delta(0)``, the epsilon gap is
            the stop, floored at :data:`FLAT_DELTA_TOL` in delta or twice the witness's rounding
            bracket; elsewhere, above :data:`EPS_GAP_MIN_N` users, whichever comes first), half
            the issue-11 target gap of ``1e-4`` (the cover needs about ``log(1/tol)`` times more
            pieces, so ``1e-7`` costs about 2-3 x more at ``n = 1e6``; any ``tol`` down to the
            leaves' rounding bracket is useful: measured 4e-10 relative up to ``n = 1e6`` and
            up to 8e-9 at ``n = 1e7``, eps0 = 0.05; wider, ~1e-5, within a few tenths of eps0).
        max_evals: Work budget in bound evaluations (keyword only).

    Returns:
        A :class:`WorstCaseCertificate`.

    Raises:
        ParameterError: On invalid inputs (naming the parameter), or if both or neither of
            ``eps`` and ``delta`` are given.
        WorkBudgetExceeded: If the work budget is exhausted before the gap closes (its
            ``partial`` is then the certificate reached so far: for ``eps=``, the current
            cover, certified and complete, only more than ``tol`` above the exhibited value;
            for ``delta=``, the witness found so far and the pieces left bounded at one larger
            epsilon by :func:`_settle`; :func:`verify` accepts both), or a single convolution exceeds
            :data:`MAX_CONV_WORK` (very large ``n``; ``partial`` is then ``None``).

    Example:
        >>> c = certify(2.0, 1000, eps=0.32332355)
        >>> bool(abs(c.exhibited_log_delta - math.log(1e-6)) < 1e-4), bool(c.log_delta >= c.exhibited_log_delta)
        (True, True)
    """
    eps0, n = _check(eps0, n)
    if (eps is None) == (delta is None):
        raise ParameterError(f"give exactly one of eps= and delta=, got eps={eps!r}, delta={delta!r}")
    max_evals = check_int("max_evals", max_evals, minimum=1)
    if eps is not None:
        eps = check_real("eps", eps, low=0.0)
        tol_given = tol
        tol = DEFAULT_TOL if tol is None else check_real("tol", tol, low=0.0, low_open=True, high=1.0)
        # truncation level: the largest leaf value among the seeds (windows reach e^-25 below it)
        # (when every seed's lower value is lost in the truncation, their upper values, about the
        # dropped mass, lower the level step by step until the values are resolved)
        level = -60.0
        for _ in range(8):
            pr = WorstCaseProblem(eps0, n, level)
            vals = [pr.leaf(c, eps) for c in _seeds(n)]
            top = max(v[1] for v in vals)
            if top == -math.inf:
                top = max(v[0] for v in vals)
                if top == -math.inf or top >= level - 1.0:
                    break
                level = max(top, -700.0)
                continue
            if top >= level - 1.0:
                # resolved: the windows need only reach e^-25 below the best seed's value (the
                # maximum is at least that); sizing them for e^-60 made them ~20 % wider at
                # delta ~ 1e-6 (a wider window is never needed for soundness: the dropped mass
                # is added, at most e^(top - 25), i.e. 1.4e-11 relative to the certified value)
                level = max(level, top)
                break
            level = top
        # the canonical level (rounded up to 1/8): the round trip's epsilon query at the same
        # point builds the same problem, so its bounds come from the memo
        level = canonical_level(level)
        pr = WorstCaseProblem(eps0, n, level, memo=True)
        # with the default tolerance the gap is also measured in epsilon (as for epsilon queries):
        # the stop where the curve is flat, and above EPS_GAP_MIN_N users wherever it comes first
        # (a delta gap of DEFAULT_TOL is ~25 x finer there at delta ~ 1e-6)
        eps_tol = DEFAULT_TOL if (tol_given is None and eps > 0.0) else None
        cover, best, best_c, exhausted = _certify_delta(
            pr, eps, tol, max_evals, eps_tol, eps_or=n > EPS_GAP_MIN_N
        )
        ld = max(c.log_bound for c in cover)
        cert = WorstCaseCertificate(
            2,
            eps0,
            n,
            "delta",
            eps,
            exp_up(ld),  # the headline rounded up: never below e^ld
            ld,
            eps,
            0.0,
            best_c,
            (best_c, n - 1 - best_c),
            best,
            tuple(sorted(cover, key=lambda c: c.c_lo)),
            level,
            pr.evaluations,
        )
        return _exhausted(cert, max_evals) if exhausted else cert
    delta = check_delta("delta", delta)
    tol = DEFAULT_TOL if tol is None else check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    pr = WorstCaseProblem(eps0, n, canonical_level(math.log(delta)), memo=True)
    cover, eps_up, eps_low, best_c, ex, exhausted = _certify_epsilon(pr, math.log(delta), tol, max_evals)
    ld = max(c.log_bound for c in cover)
    cert = WorstCaseCertificate(
        2,
        eps0,
        n,
        "epsilon",
        eps_up,
        delta,
        ld,
        eps_up,
        eps_low,
        best_c,
        (best_c, n - 1 - best_c),
        ex,
        tuple(sorted(cover, key=lambda c: c.c_lo)),
        pr.log_level,
        pr.evaluations,
    )
    return _exhausted(cert, max_evals) if exhausted else cert


def _exhausted(cert: WorstCaseCertificate, max_evals: int) -> NoReturn:
    """Raise :class:`WorkBudgetExceeded` carrying ``cert``, the sound partial certificate."""
    what = f"delta({cert.eps!r})" if cert.query == "delta" else f"epsilon({cert.delta!r})"
    raise WorkBudgetExceeded(
        f"branch and bound for {what} (eps0 = {cert.eps0!r}, n = {cert.n}) exceeded "
        f"{max_evals} evaluations before the gap closed; the exception's .partial is a sound, "
        "looser certificate (verify() re-checks it); raise max_evals for a tighter one",
        partial=cert,
    )


def certified_log_delta_grid(
    eps: np.ndarray, eps0: float, n: int, *, tol: float = 1e-4, max_evals: int = 3000
) -> np.ndarray:
    """Certified ``log delta(eps)`` of shuffled binary RR (k = 2) at every point of an eps grid, in one pass.

    One branch and bound over datasets serves the whole grid: every interval of the cover is
    bounded at every grid point at once (:meth:`WorstCaseProblem.interval_many`, one threshold block for
    all ``eps``), and the interval whose bound exceeds its grid point's best exhibited leaf by
    the most (relative ``tol`` in delta) is split next, until no grid point has such an excess.
    The first cover is planned as in :func:`certify` (module docstring), for the grid points
    whose own plan has at most ``max_evals / 3`` pieces; the others (``eps`` near 0, where the
    cover needs about ``n`` pieces) are left to the refinement and its budget.
    The result at ``eps_i`` is the max over the cover of the bounds at ``eps_i``, so by (F1)-(F4)
    (module docstring) it is ``>= sup_c delta_c(eps_i)`` whatever the stopping point;
    ``tol`` only decides the tightness. Grid points with ``eps >= eps0`` give ``-inf``
    (``delta = 0``: the mechanism is ``eps0``-DP).

    The windows are sized for the smallest exhibited delta on the grid (clipped at ``e^-200``;
    a point whose seeds' lower values are lost in the truncation lowers the level to their upper
    values, about the dropped mass, for up to five rounds): below that level the truncated mass,
    always added, dominates, so such points are certified but not tight.

    Args:
        eps: 1-d array of ``eps >= 0`` (finite; any order, ascending is typical).
        eps0: Local privacy parameter, ``0 < eps0 <= 700``.
        n: Number of users, integer ``>= 2``.
        tol: Relative tightness target in delta per grid point (keyword only), ``0 < tol <= 1``.
        max_evals: Work budget in bound evaluations (keyword only). When it is spent the search
            stops refining and returns the current cover's maxima: still certified upper bounds,
            but possibly more than ``tol`` above the exhibited values at some points (in practice
            at ``eps`` close to 0, where ``delta`` is large and ``h_c`` flat in ``c``).

    Returns:
        ``ndarray`` of certified ``log delta`` (upper bounds), same shape as ``eps``.

    Raises:
        ParameterError: On invalid inputs (naming the parameter).

    Example:
        >>> g = certified_log_delta_grid(np.array([0.2, 0.32332355, 0.5]), 2.0, 1000)
        >>> bool(abs(g[1] - math.log(1e-6)) < 1e-3), bool(np.all(np.diff(g) < 0))
        (True, True)
    """
    eps0, n = _check(eps0, n)
    arr = check_real_array("eps", eps, low=0.0)
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"eps must be a non-empty 1-d array, got shape {arr.shape}")
    tol = check_real("tol", tol, low=0.0, low_open=True, high=1.0)
    max_evals = check_int("max_evals", max_evals, minimum=1)
    order = np.argsort(arr, kind="stable")
    e = arr[order]
    out = np.full(e.size, -np.inf)
    live = e < eps0
    if not np.any(live):
        return out[np.argsort(order)]
    ev = e[live]
    seeds = seed_datasets(n, eps0)  # with the (F5) witnesses (eps near 0)
    # truncation level: the smallest exhibited seed value on the grid (windows reach e^-25 below)
    # (a point whose seeds' lower values are all lost in the truncation takes their upper value,
    # about the dropped mass e^(level - 25), so the level goes down step by step until it resolves)
    level = -60.0
    for _ in range(5):
        pr = WorstCaseProblem(eps0, n, level)
        r = np.array([pr.leaf_many(c, ev) for c in seeds])  # (seeds, 2, points)
        low, upv = np.max(r[:, 1], axis=0), np.max(r[:, 0], axis=0)
        val = np.where(np.isfinite(low), low, upv)
        fin = val[np.isfinite(val)]
        top = max(float(np.min(fin)) if fin.size else -200.0, -200.0)
        if top >= level - 1.0:
            break
        level = top
    pr = WorstCaseProblem(eps0, n, level)
    best = np.full(ev.size, -np.inf)
    for c in seeds:
        best = np.maximum(best, pr.leaf_many(c, ev)[1])
    ltol = math.log1p(tol)

    def key(u: np.ndarray) -> tuple[int, float]:
        """Heap key: the largest grid index whose bound exceeds its target (-1: none), then
        minus that excess. The budget goes to the small-delta end of the grid first."""
        with np.errstate(invalid="ignore"):
            x = u - (best + ltol)
        bad = np.flatnonzero(np.isfinite(u) & (x > 0.0))
        if bad.size == 0:
            return (1, 0.0)
        top = int(bad[-1])
        return (-top, -float(x[top]))

    # items hold the uncapped bounds (the slack model of _plan / _split); keys and the result
    # use them capped by (F5)
    root = pr.interval_many(0, n - 1, ev, cap=False)[0]
    items = {0: (0, n - 1, root, -1.0)}  # id -> (c1, c2, uncapped bounds, slack slope)
    heap = [(key(pr.capped(root)), 0)]
    nid = 1
    plan = _plan(pr, ev, best + ltol, max_evals // 3) if heap[0][0][0] != 1 else None
    if plan is not None:  # a planned first cover (speed only; any partition is sound)
        items, heap, nid = {}, [], 0
        for a, b, kappa in plan:
            r = pr.interval_many(a, b, ev, cap=False)
            if a == b:
                best = np.maximum(best, r[1])
            items[nid] = (a, b, r[0], kappa)
            heap.append((key(pr.capped(r[0])), nid))
            nid += 1
        heapq.heapify(heap)
    final: list[np.ndarray] = []
    while heap:
        kst, i = heap[0]
        c1, c2, u, kappa = items[i]
        k_now = key(pr.capped(u))
        if k_now > kst:  # stale key (the exhibited values rose since it was pushed): re-key
            heapq.heapreplace(heap, (k_now, i))
            continue
        if k_now[0] == 1:  # keys bound the current state from above: every interval passes
            break
        if pr.evaluations > max_evals:  # stop refining: the current cover is already certified
            break
        heapq.heappop(heap)
        del items[i]
        if c1 == c2:  # an exact leaf: its rounding band is all that is left
            final.append(pr.capped(u))
            continue
        k = -k_now[0]
        for a, b in _split(c1, c2, float(u[k]), float(best[k] + ltol), kappa):
            r = pr.interval_many(a, b, ev, cap=False)
            if a == b:
                best = np.maximum(best, r[1])
            items[nid] = (a, b, r[0], _slope(c1, c2, float(u[k]), a, b, float(r[0][k]), kappa))
            heapq.heappush(heap, (key(pr.capped(r[0])), nid))
            nid += 1
    final.extend(pr.capped(items[j][2]) for _, j in heap)
    out[live] = np.max(np.array(final), axis=0)
    return out[np.argsort(order)]


def verify(cert: WorstCaseCertificate) -> bool:
    """Re-check a :class:`WorstCaseCertificate` from scratch.

    Checks that the cover partitions ``[0, n - 1]``; recomputes every interval's bound at its
    ``eps`` (which must be ``<= cert.eps``) and that it does not exceed the recorded one; that the
    recorded certified value is at least the max of the cover (``query="epsilon"``: ``<= log
    delta``), with the stated ``delta`` (``query="delta"``) and ``epsilon`` no smaller than what
    the cover proves; and recomputes the exhibited leaf's lower value. Every comparison fails on
    ``nan`` (a ``nan`` bound or eps is rejected, not skipped).

    Args:
        cert: The certificate.

    Returns:
        ``True`` if every check passes, else ``False``.

    Example:
        >>> verify(certify(1.0, 50, delta=1e-3))
        True
    """
    if not isinstance(cert, WorstCaseCertificate):
        raise ParameterError(f"cert must be a WorstCaseCertificate, got {type(cert).__name__}")
    pr = WorstCaseProblem(cert.eps0, cert.n, cert.log_level)
    nxt = 0
    top = -math.inf
    blocks: dict[tuple[int, int, float], np.ndarray] = {}  # each block recomputed once
    for iv in cert.cover:
        if iv.c_lo != nxt or iv.c_hi < iv.c_lo or not 0.0 <= iv.eps <= cert.eps:
            return False
        nxt = iv.c_hi + 1
        if iv.spectral:
            if iv.block is not None:
                return False
            r = pr.spectral_many(np.arange(iv.c_lo, iv.c_hi + 1, dtype=np.int64), iv.eps)
            u = float(np.max(pr.capped(r[0])))
        elif iv.block is not None:
            c0, K = iv.block
            if iv.c_lo != iv.c_hi or not (0 <= c0 <= iv.c_lo <= c0 + K <= cert.n - 1):
                return False
            bk = (c0, K, iv.eps)
            if bk not in blocks:
                blocks[bk] = pr.capped(pr.block_many(c0, K, np.array([iv.eps]))[0, :, 0])
            u = float(blocks[bk][iv.c_lo - c0])
        else:
            u, _ = pr.interval(iv.c_lo, iv.c_hi, iv.eps)
        if not u <= iv.log_bound:
            return False
        top = max(top, iv.log_bound)
    if nxt != cert.n or not top <= cert.log_delta or not cert.epsilon >= cert.eps:
        return False
    if cert.query == "delta":
        if not cert.delta >= math.exp(cert.log_delta):
            return False
        ex = pr.leaf(cert.worst_c, cert.eps)[1]
        return bool(ex >= cert.exhibited_log_delta and ex <= cert.log_delta)
    if not 0.0 < cert.delta < 1.0 or not cert.log_delta <= math.log(cert.delta):
        return False
    if cert.epsilon_lower > 0:
        ex = pr.leaf(cert.worst_c, cert.epsilon_lower)[1]
        return bool(ex >= cert.exhibited_log_delta > math.log(cert.delta) and cert.epsilon_lower <= cert.eps)
    return True


def interval_log_bound(eps, eps0, n, c_lo, c_hi, *, log_level: float = -60.0) -> float:
    """Certified ``log U(c_lo, c_hi)``: an upper bound on ``log h_c(eps)`` for ``c_lo <= c <= c_hi``.

    ``h_c = H_{e^eps}(P_c || Q_c)``, ``c`` other users at value 0 and ``n - 1 - c`` at 1, the
    target moving from 0 to 1 (module docstring (F3), (F4)). The interval bound alone: the
    searches also cap it by the total-variation bound (F5), which does not depend on the interval.

    Args:
        eps: ``eps >= 0``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).
        c_lo: First dataset, ``0 <= c_lo <= c_hi``.
        c_hi: Last dataset, ``<= n - 1``.
        log_level: Truncation level (keyword only): windows drop at most ``e^(log_level - 25)``.

    Returns:
        The log bound (``-inf`` for 0).

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> bool(interval_log_bound(0.3, 2.0, 100, 0, 99) >= interval_log_bound(0.3, 2.0, 100, 3, 3))
        True
    """
    eps0, n = _check(eps0, n)
    eps = check_real("eps", eps, low=0.0)
    c_lo = check_int("c_lo", c_lo, minimum=0, maximum=n - 1)
    c_hi = check_int("c_hi", c_hi, minimum=c_lo, maximum=n - 1)
    log_level = check_real("log_level", log_level, high=0.0)
    return WorstCaseProblem(eps0, n, log_level).interval(c_lo, c_hi, eps, cap=False)[0]  # U alone


def leaf_log_delta(eps, eps0, n, c, *, log_level: float = -60.0) -> tuple[float, float]:
    """``(upper, lower)`` bounds on ``log h_c(eps)`` for one dataset (exact up to rounding).

    Args:
        eps: ``eps >= 0``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).
        c: Number of other users at value 0, ``0 <= c <= n - 1``.
        log_level: Truncation level (keyword only).

    Returns:
        ``(log upper, log lower)``.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> up, lo = leaf_log_delta(0.32332355, 2.0, 1000, 997)
        >>> round(math.exp(lo), 12), bool(0 <= up - lo < 1e-6)
        (1e-06, True)
    """
    eps0, n = _check(eps0, n)
    eps = check_real("eps", eps, low=0.0)
    c = check_int("c", c, minimum=0, maximum=n - 1)
    log_level = check_real("log_level", log_level, high=0.0)
    return WorstCaseProblem(eps0, n, log_level).leaf(c, eps)


def seed_datasets(n: int, eps0: float) -> list[int]:
    """The seed datasets of the k = 2 branch and bound: ``c`` in ``{0..3, n-4..n-1}``, 7 evenly
    spaced, and the total-variation candidates of (F5) (the ``c <= (n - 2) / 2`` whose
    skewness-corrected normal mode is nearest an integer; the centre when ``n`` is odd).

    Also what :func:`seed_log_delta_lower` and :func:`seed_epsilon_lower` evaluate. The
    candidates come from a window below the centre widened until it provably holds the best
    scores (``O(sqrt(n / tanh(eps0 / 2)))``: 9 ms at ``n = 1e9``).

    Args:
        n: Number of users (``>= 2``).
        eps0: Local privacy parameter.

    Returns:
        The sorted distinct ``c`` (how many of the other ``n - 1`` users hold the other value).

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> seed_datasets(8, 1.0)
        [0, 1, 2, 3, 4, 5, 6, 7]
        >>> seed_datasets(1001, 2.0)[-3:], 500 in seed_datasets(1001, 2.0)
        ([998, 999, 1000], True)
    """
    eps0, n = _check(eps0, n)
    return sorted(set(_seeds(n)) | set(_tv_candidates(n, eps0)))


def seed_log_delta_lower(eps, eps0, n) -> tuple[np.ndarray, np.ndarray]:
    """Exhibited ``log delta`` of shuffled binary RR at each ``eps`` from the search's seed datasets.

    The largest certified lower value of ``log h_c(eps)`` over the seeds of the branch and bound
    (``c`` in ``{0..3, n-4..n-1}``, 7 evenly spaced, and the total-variation candidates of (F5)):
    each is a concrete dataset's exact value rounded down (``h_c <= delta_c``, (F1)), so this is
    a lower bound on the worst-case ``delta(eps)``; where the search's certificate is not run
    (large ``n``) it is the exhibited value to the leaves' rounding (``~1e-10``), while a windowed
    statistic with a fixed width of standard deviations loses more (measured at ``n = 1e7``,
    eps0 = 2: 0.8 % of delta at ``delta(0)``, 2.5 % at ``1e-4 delta(0)``).

    Args:
        eps: Scalar or 1-d array of ``eps >= 0``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).

    Returns:
        ``(log lower, dataset)``: arrays of ``eps``'s size; ``dataset`` is the seed ``c`` attaining
        each value (the first in seed order on ties; ``-inf`` values give ``c`` of the first seed).

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> v, c = seed_log_delta_lower([0.32332355], 2.0, 1000)
        >>> bool(abs(v[0] - math.log(1e-6)) < 1e-6), int(c[0]) in (2, 997)
        (True, True)
    """
    eps0, n = _check(eps0, n)
    ev = np.atleast_1d(check_real_array("eps", eps, low=0.0)).astype(float).ravel()
    pr = WorstCaseProblem(eps0, n, -60.0)
    seeds = seed_datasets(n, eps0)
    vals = np.full((len(seeds), ev.size), -np.inf)  # (seeds, points)
    live = np.ones(ev.size, dtype=bool)
    for i, c in enumerate(seeds):
        # a value far below the truncation level proves no bracket on the windows, and the last
        # resort (the full convolution) exceeds MAX_CONV_WORK beyond a few million users (n = 1e7,
        # eps0 = 0.5, eps = 0.01 raised WorkBudgetExceeded): such a point is retried alone and
        # left at -inf (a valid lower bound: the value there is below about e^-60), and the
        # later seeds skip it (they are as deep: each failure costs about a second at n = 1e7)
        idx = np.flatnonzero(live)
        if idx.size == 0:
            break
        try:
            vals[i, idx] = pr.leaf_many(c, ev[idx])[1]
        except WorkBudgetExceeded:
            for j in idx.tolist():
                try:
                    vals[i, j] = pr.leaf(c, float(ev[j]))[1]
                except WorkBudgetExceeded:
                    live[j] = False
    i = np.argmax(vals, axis=0)
    return vals[i, np.arange(ev.size)], np.array(seeds, dtype=np.int64)[i]


def seed_epsilon_lower(delta, eps0, n) -> tuple[float, int]:
    """Exhibited ``epsilon(delta)`` of shuffled binary RR from the search's seed datasets.

    The largest ``eps`` (rounded down) at which some seed's certified lower value of ``h_c``
    exceeds ``delta`` (:meth:`WorstCaseProblem.leaf_epsilon`; seeds as in
    :func:`seed_log_delta_lower`): no mechanism-level ``(eps', delta)`` guarantee with a smaller
    ``eps'`` holds. ``(0.0, -1)`` if no seed exceeds ``delta`` at ``eps = 0``.

    Args:
        delta: ``0 < delta < 1``.
        eps0: Local privacy parameter.
        n: Number of users (``>= 2``).

    Returns:
        ``(epsilon, dataset)``.

    Raises:
        ParameterError: On invalid inputs.

    Example:
        >>> e, c = seed_epsilon_lower(1e-6, 2.0, 1000)
        >>> round(e, 8), c in (2, 997)
        (0.32332355, True)
    """
    eps0, n = _check(eps0, n)
    log_d = math.log(check_delta("delta", delta))
    pr = WorstCaseProblem(eps0, n, canonical_level(log_d))
    return _seed_epsilon(pr, seed_datasets(n, eps0), log_d)
