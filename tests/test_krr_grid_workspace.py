"""Reused scratch memory in the two-dimensional laws (``_krr_grid.Workspace``, ``stencil3``).

The sweep over ``B`` (U2, ``_krr_spread``) and the k = 3 boxes step a grid one user at a time and
take a hockey sum at every stop; both now write into reused buffers. Reuse must change no value
(every entry written before it is read, sums in the same order) and no grid handed out may be
overwritten by a later step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffle_accounting.shuffled_krr import _krr_grid as G

LW = (math.log(0.1), math.log(0.15), math.log(0.75))  # moves (0, 0), (1, 1), (1, 0)
PI_P = (math.log(0.6), math.log(0.2), math.log(0.2))
PI_Q = (math.log(0.2), math.log(0.6), math.log(0.2))


def _grid(rows: int, cols: int, seed: int) -> G.Grid:
    arr = np.random.default_rng(seed).random((rows, cols)) + 1e-3
    return G.Grid(3, 1, arr / arr.max(), -2.0, -80.0, 1e-12)


def _step(arr: np.ndarray, c) -> np.ndarray:
    """The step written out on fresh arrays (the arithmetic before the buffers)."""
    rows, cols = arr.shape
    out = np.zeros((rows + 1, cols + 1))
    out[:-1, :-1] = c[0] * arr
    out[1:, 1:] += c[1] * arr
    out[1:, :-1] += c[2] * arr
    return out


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (31, 4), (32, 4), (33, 4), (40, 70), (100, 7)])
def test_stencil3_is_the_step_bit_for_bit(monkeypatch, shape):
    # blocks of STENCIL_ROWS rows: one, a boundary at the last row or just past it, several
    monkeypatch.setattr(G, "STENCIL_CELLS", 1)
    assert G.block_rows(shape[1]) == G.STENCIL_ROWS
    arr = _grid(*shape, seed=1).arr
    ws = G.Workspace()
    for c in ([0.1, 0.15, 0.75], [1.3, -2.0, 0.7]):  # weights of a step; hockey coefficients
        out = ws.array("o", shape[0] + 1, shape[1] + 1)
        out[...] = np.nan  # every entry must be written
        tmp = ws.array("t", min(shape[0], G.block_rows(shape[1])), shape[1])
        assert np.array_equal(G.stencil3(arr, c, out, tmp), _step(arr, c))


def test_workspace_views_are_contiguous_and_grow():
    ws = G.Workspace()
    a = ws.array("x", 3, 4)
    assert a.shape == (3, 4) and a.flags["C_CONTIGUOUS"]
    a[...] = 7.0
    assert np.shares_memory(a, ws.array("x", 2, 5))  # the same buffer while it is large enough
    big = ws.array("x", 300, 400)
    assert big.shape == (300, 400) and big.flags["C_CONTIGUOUS"]
    assert not np.shares_memory(a, big)  # grown: a new buffer
    assert not np.shares_memory(big, ws.array("y", 300, 400))  # one buffer per name


def test_hockey_upper_same_with_and_without_reused_memory():
    ws = G.Workspace()
    for seed, shape in enumerate([(30, 20), (8, 50), (30, 20), (60, 61)]):
        g = _grid(*shape, seed=seed)
        for eps in (0.0, 0.3, 1.2):
            assert G.hockey_upper(g, PI_P, PI_Q, eps, ws) == G.hockey_upper(g, PI_P, PI_Q, eps)


def test_sweep_grids_are_not_overwritten_by_later_steps():
    # stops at most steps, most of them between two trims (every 8 steps): every yielded grid is
    # kept until the sweep ends, then compared with the same count of users added on its own
    R = _grid(12, 9, seed=3)
    w = [math.exp(x) for x in LW]
    stops = [1, 2, 3, 5, 8, 9, 13, 16, 20]
    kept = list(G.sweep_users(R, stops, LW, -60.0))
    assert [b for b, _ in kept] == stops
    for b, g in kept:
        if b % 8 == 0 or b == stops[-1]:  # trimmed there: the same steps and trims as alone
            alone = G.add_users(R, b, LW, -60.0)
            assert np.array_equal(g.arr, alone.arr) and g.scale == alone.scale
        else:  # untrimmed since the last trim: the fresh-array steps from that trim's grid
            start = kept[[s for s, _ in kept].index(8)][1] if b > 8 else R
            ref = start.arr
            for _ in range(b - (8 if b > 8 else 0)):
                ref = _step(ref, w)
            assert g.scale == start.scale and np.array_equal(g.arr, ref)


def test_sweep_without_copies_yields_the_same_values_at_each_stop():
    R = _grid(12, 9, seed=4)
    stops = [1, 2, 3, 5, 8, 9, 13, 16, 20]
    own = list(G.sweep_users(R, stops, LW, -60.0))
    for (b, g), (b2, g2) in zip(G.sweep_users(R, stops, LW, -60.0, fresh=False), own):
        assert b == b2 and g.scale == g2.scale and g.log_drop == g2.log_drop and g.rel == g2.rel
        assert np.array_equal(g.arr, g2.arr)  # compared before the sweep resumes


@pytest.mark.parametrize("cells", [1, 7, 64, 1 << 20])
def test_binom_rows_in_blocks_is_the_same_and_exact(monkeypatch, cells):
    # blocks of one row, of a few rows (the last one shorter) and the whole grid at once
    from scipy.stats import binom

    Ns = np.arange(40.0, 75.0)
    whole = G.binom_rows(Ns, 5, 30, math.log(0.3), math.log(0.7))
    monkeypatch.setattr(G, "BINOM_ROWS_CELLS", cells)
    lb, extra = G.binom_rows(Ns, 5, 30, math.log(0.3), math.log(0.7))
    assert np.array_equal(lb, whole[0]) and extra == whole[1]
    ref = binom.logpmf(np.arange(5, 31)[None, :], Ns[:, None], 0.3)
    assert np.allclose(lb, ref, rtol=0.0, atol=1e-9)


def test_hockey_upper_many_is_each_term_and_blocks_only_reorder_the_sum(monkeypatch):
    g = _grid(70, 40, seed=9)
    terms = [(PI_P, PI_Q, 0.0), (PI_Q, PI_P, 0.0), (PI_P, PI_Q, 0.4)]
    whole = G.hockey_upper_many(g, terms)  # one block (a narrow grid)
    assert whole == [G.hockey_upper(g, *t) for t in terms]
    monkeypatch.setattr(G, "STENCIL_CELLS", 1)  # blocks of 32 rows: three blocks
    blocks = G.hockey_upper_many(g, terms)
    assert blocks == [G.hockey_upper(g, *t) for t in terms]
    assert np.allclose(blocks, whole, rtol=0.0, atol=1e-13)
    # and the value itself: the bound of the written-out cells (P, Q on fresh arrays)
    E = math.exp(0.4)
    rho = g.rel + 16 * 2.0**-53
    cp, cq = [math.exp(x) for x in PI_P], [math.exp(x) for x in PI_Q]
    coef = [a * (1 + rho + 24 * 2.0**-53) - E * b * (1 - rho - 24 * 2.0**-53) for a, b in zip(cp, cq)]
    direct = float(np.sum(np.maximum(_step(g.arr, coef), 0.0)))
    assert math.isclose(blocks[2], min(math.log(direct) + g.scale, 0.0), rel_tol=0.0, abs_tol=1e-9)
