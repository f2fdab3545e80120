"""dataset_delta at scale (issue 11 item 5): exact windowed families and the general bracket.

Run: ``.venv/bin/python benchmarks/bench_dataset_delta_scale.py`` (``--smoke``: tiny sizes, for
CI; ``--spread-only``: only the general-bracket rows). One row per dataset: the certified bracket
``(lower, upper)`` of ``log delta`` from
:func:`shuffle_accounting.shuffled_krr.exact.dataset_log_delta_bounds` (``dataset_delta``
returns its upper end), its width and the wall time. First the exact windowed families (others
at the target's two values 0 and 1, ``_krr_grid.dataset_log_hockey_rest``; others at 0 and one
v >= 2, ``_krr_grid.dataset_log_hockey_zero_v``), then datasets beyond every exact path, answered
by the general bracket of ``_krr_spread`` (run and timed through ``_krr_spread.spread_log_bounds``
with the arguments ``dataset_log_delta_bounds`` passes it, so that its routes come from the same
call; the "routes" column names which bound gave each end:
L2 merged output, L1 linear statistic h0 - h1, U2 coins at values >= 2 revealed, UP users at 0
and 1 paired and the other coins revealed, U1 all but one class revealed; ``max_work`` is the
default unless the row says otherwise; ``--large-only``: only the rows at ``n >= 1e5``;
``--unbalanced-only``: only the k = 10 rows with counts proportional to ``1 / (j + 1)``;
``--shapes-1e6``: only other shapes at n = 1e6 (and the k = 10 one at 2e6); ``--u2-at-1e6``: also that dataset at n = 1e6 with ``max_work = 3e12``, minutes). The load average
and a fixed reference computation (blanket ``epsilon(1e-6)`` at k = 3, eps0 = 1, n = 1e4, timed
in the same run) are printed so times can be compared as ratios across machines and loads.
"""

from __future__ import annotations

import argparse
import os
import time

from shuffle_accounting._validation import WorkBudgetExceeded
from shuffle_accounting.shuffled_krr import ShuffledKRR, exact
from shuffle_accounting.shuffled_krr import _krr_spread as spread
from shuffle_accounting.shuffled_krr.exact import dataset_log_delta_bounds


def _reference() -> float:
    t = time.perf_counter()
    ShuffledKRR(3, 1.0, 10**4).epsilon(1e-6, method="blanket")
    return time.perf_counter() - t


def _even(k: int, n: int) -> list[int]:
    """``n - 1`` other users spread evenly over the ``k`` values (the remainder at value 0)."""
    out = [(n - 1) // k] * k
    out[0] += (n - 1) - sum(out)
    return out


def _harmonic(k: int, n: int) -> list[int]:
    """``n - 1`` other users with counts proportional to ``1 / (j + 1)`` (the remainder at 0)."""
    w = [1.0 / (j + 1) for j in range(k)]
    out = [int((n - 1) * x / sum(w)) for x in w]
    out[0] += (n - 1) - sum(out)
    return out


def _shares(k: int, n: int, first: list[float]) -> list[int]:
    """``n - 1`` other users: the given shares at values ``0, 1, ...``, the rest spread evenly
    over the values after them (the remainder at 0)."""
    rest = (1.0 - sum(first)) / (k - len(first)) if k > len(first) else 0.0
    out = [int((n - 1) * x) for x in first + [rest] * (k - len(first))]
    out[0] += (n - 1) - sum(out)
    return out


def _held(others: list[int]) -> str:
    held = {v: c for v, c in enumerate(others) if c}
    if len(held) > 4:
        return f"{len(held)} values, {min(held.values())}-{max(held.values())} each"
    return str(held)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI checks that the script runs)")
    ap.add_argument("--spread-only", action="store_true", help="only the general-bracket rows")
    ap.add_argument("--large-only", action="store_true", help="only the general-bracket rows at n >= 1e5")
    ap.add_argument(
        "--unbalanced-only",
        action="store_true",
        help="only the rows with counts proportional to 1/(j + 1) (k = 10, n = 1e4 - 1e6)",
    )
    ap.add_argument(
        "--shapes-1e6",
        action="store_true",
        help="only other shapes at n = 1e6 (k = 3 - 20, eps0 = 0.1 - 4, counts far from even; "
        "10-70 s and up to 7 GB each)",
    )
    ap.add_argument(
        "--u2-at-1e6",
        action="store_true",
        help="also the n = 1e6 row with counts proportional to 1/(j + 1) at max_work = 3e12 "
        "(U2; about 12 minutes and 7 GB of memory on the 2-core box)",
    )
    args = ap.parse_args()
    families = [  # (k, eps0, eps, others, max_work)
        (4, 1.0, 0.1, [500, 499, 0, 0], None),
        (4, 1.0, 0.1, [1500, 1499, 0, 0], None),
        (10, 2.0, 0.3, [400, 599] + [0] * 8, None),
        (5, 1.0, 0.1, [300, 0, 699, 0, 0], None),
        (4, 1.0, 0.1, [1500, 0, 1499, 0], None),
        (10, 2.0, 0.3, [0, 200, 0, 0, 799, 0, 0, 0, 0, 0], None),
    ]
    general = [
        (10, 2.0, 0.1, [0, 0, 999, 0, 0, 0, 0, 0, 0, 0], None),  # the example (a family)
        (10, 2.0, 0.05, _even(10, 1000), None),
        (10, 2.0, 0.3, _even(10, 1000), None),
        (4, 1.0, 0.1, [300, 0, 400, 299], None),
        (100, 2.0, 0.05, _even(100, 10**4), None),
        (10, 2.0, 0.05, _even(10, 10**4), None),
        (10, 2.0, 0.05, _even(10, 10**4), 3 * 10**10),
        (3, 1.0, 0.05, [3000, 3000, 2999], None),
        (100, 4.0, 0.2, [5000, 0] + [50] * 98, None),
        (10, 2.0, 0.03, _even(10, 10**5), None),
        (10, 2.0, 0.01, _even(10, 10**6), None),
        (4, 1.0, 0.01, _even(4, 10**5), None),
        (4, 1.0, 0.003, _even(4, 10**6), None),
        (20, 2.0, 0.02, _even(20, 10**5), None),
        (20, 2.0, 0.005, _even(20, 10**6), None),
        (10, 2.0, 0.05, _harmonic(10, 10**4), None),
        (10, 2.0, 0.045, _harmonic(10, 2 * 10**4), None),
        (10, 2.0, 0.04, _harmonic(10, 3 * 10**4), None),
        (10, 2.0, 0.04, _harmonic(10, 3 * 10**4), 2 * 10**10),
        (10, 2.0, 0.035, _harmonic(10, 5 * 10**4), None),
        (10, 2.0, 0.03, _harmonic(10, 7 * 10**4), None),
        (10, 2.0, 0.03, _harmonic(10, 10**5), None),
        (10, 2.0, 0.03, _harmonic(10, 10**5), 3 * 10**10),
        (10, 2.0, 0.02, _harmonic(10, 2 * 10**5), None),
        (10, 2.0, 0.01, _harmonic(10, 10**6), None),
    ]
    if args.u2_at_1e6:
        general.append((10, 2.0, 0.01, _harmonic(10, 10**6), 3 * 10**12))
    if args.smoke:
        families = [(4, 1.0, 0.1, [150, 149, 0, 0], None)]
        general = [(5, 1.0, 0.1, [100, 0, 50, 49, 0], None)]
    cases = general if args.spread_only else families + general
    if args.large_only:
        cases = [c for c in general if sum(c[3]) + 1 >= 10**5]
    if args.shapes_1e6:
        m = 10**6
        cases = [
            (10, 0.5, 0.002, _harmonic(10, m), None),
            (10, 4.0, 0.03, _harmonic(10, m), None),
            (20, 2.0, 0.005, _harmonic(20, m), None),
            (10, 2.0, 0.01, _shares(10, m, [0.5, 0.1]), None),
            (4, 1.0, 0.004, _harmonic(4, m), None),
            (4, 1.0, 0.004, _shares(4, m, [0.6, 0.2, 0.1, 0.1]), None),
            (3, 1.0, 0.004, _shares(3, m, [0.7, 0.2, 0.1]), None),
            (3, 0.1, 0.0004, _shares(3, m, [0.6, 0.3, 0.1]), None),
            (10, 2.0, 0.008, _harmonic(10, 2 * m), None),
        ]
    if args.unbalanced_only:
        cases = [c for c in general if c[0] == 10 and c[3] == _harmonic(10, sum(c[3]) + 1)]
    ref = _reference()
    print(
        f"load average {os.getloadavg()[0]:.2f}; reference (blanket k=3 eps0=1 n=1e4 eps(1e-6)) {ref:.3f} s"
    )
    print(
        "| k | n | others held | eps0 | eps | max_work | log delta lower | upper | width | routes | sec | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k, eps0, eps, others, max_work in cases:
        mw = "default" if max_work is None else f"{max_work:.2g}"
        routes = "exact family"
        t = time.perf_counter()
        try:
            if exact.family_bounds(eps, k, eps0, tuple(others)) is not None:
                t = time.perf_counter()  # timed as one call of the public function
                lo, up = dataset_log_delta_bounds(eps, k, eps0, others, max_work=max_work)
            else:  # what dataset_log_delta_bounds runs next (one call: its routes are reported)
                budget = exact.MAX_SPREAD_WORK if max_work is None else max_work
                wide = exact.MAX_SPREAD_WORK_WIDE if max_work is None else None
                if spread.spread_work(k, eps0, tuple(others), 1, -85.0) > budget:
                    raise WorkBudgetExceeded("over the budget")
                low, high, info = spread.spread_log_bounds(
                    k, eps0, tuple(others), [eps], -85.0, budget, wide_budget=wide
                )
                lo, up = float(low[0]), float(high[0])
                routes = f"{info['lower_from'][0]} / {info['upper_from'][0]}"
        except WorkBudgetExceeded:
            print(f"| {k} | {sum(others) + 1} | {_held(others)} | {eps0} | {eps} | {mw} | refused (work) |")
            continue
        dt = time.perf_counter() - t
        print(
            f"| {k} | {sum(others) + 1} | {_held(others)} | {eps0} | {eps} | {mw} | {lo:.10f} | {up:.10f} "
            f"| {up - lo:.1e} | {routes} | {dt:.2f} | {dt / ref:.2f} |"
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
