"""Issue 13: qif's argument order is the library's (k, the randomizer parameter p, then n).

Both paths are tested for every public qif function whose order changed: the new call gives no
warning; the former positional call ``(n, k[, p])`` warns with ``DeprecationWarning`` and gives
the same value; keyword calls (same names before and after) never warn.
"""

from __future__ import annotations

import inspect
import warnings
from fractions import Fraction as F

import numpy as np
import pytest

from shuffle_accounting import qif
from shuffle_accounting.qif._common import old_nkp_call, old_np_call

# (function, old positional args, new call as (args, kwargs))
NKP = [
    (qif.krr_shuffle_vulnerability, (200, 2, 0.9), ((2, 0.9, 200), {})),
    (qif.krr_shuffle_vulnerability_bounds, (100, 3, 0.6), ((3, 0.6, 100), {})),
    (qif.krr_shuffle_vulnerability_exact, (3, 2, F(9, 10)), ((2, F(9, 10), 3), {})),
    (qif.krr_shuffle_vulnerability_asymptotic, (1000, 4, 0.5), ((4, 0.5, 1000), {})),
    (qif.krr_channel, (2, 2, F(3, 4)), ((2, F(3, 4), 2), {"exact": True})),
    (qif.reduced_krr_channel, (2, 3, 0.5), ((3, 0.5, 2), {})),
]
NK = [
    (qif.shuffle_vulnerability, (200, 2)),
    (qif.shuffle_vulnerability_bounds, (100, 3)),
    (qif.shuffle_vulnerability_exact, (4, 3)),
    (qif.shuffle_vulnerability_asymptotic, (1000, 3)),
    (qif.expected_max_load, (50, 4)),
    (qif.datasets, (2, 3)),
    (qif.histograms, (3, 2)),
    (qif.shuffle_channel, (2, 2)),
    (qif.reduced_shuffle_channel, (2, 3)),
    (qif.single_target_gain, (2, 3)),
]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and bool(np.all(a == b))
    return a == b


def _no_warning(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("fn, old, new", NKP, ids=[f[0].__name__ for f in NKP])
def test_k_p_n_order_and_the_deprecated_n_k_p_order(fn, old, new):
    args, kwargs = new
    value = _no_warning(fn, *args, **kwargs)
    with pytest.warns(DeprecationWarning, match=rf"{fn.__name__}\(n, k, p\).*deprecated.*\(k, p, n"):
        old_value = fn(*old, **kwargs)
    assert _same(old_value, value)
    # keywords: no warning, same value (the names did not change)
    assert _same(_no_warning(fn, n=old[0], k=old[1], p=old[2], **kwargs), value)
    # mixed old form: n positional, k and p as keywords
    with pytest.warns(DeprecationWarning):
        assert _same(fn(old[0], k=old[1], p=old[2], **kwargs), value)
    assert list(inspect.signature(fn).parameters)[:3] == ["k", "p", "n"]


@pytest.mark.parametrize("fn, old", NK, ids=[f[0].__name__ for f in NK])
def test_keyword_k_n_and_the_deprecated_positional_n_k(fn, old):
    n, k = old
    value = _no_warning(fn, k=k, n=n)
    with pytest.warns(DeprecationWarning, match=rf"{fn.__name__}\(n, k\).*deprecated.*k=\.\.\., n=\.\.\."):
        assert _same(fn(n, k), value)
    params = inspect.signature(fn).parameters
    assert list(params)[:2] == ["k", "n"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_binary_p_n_order_and_the_deprecated_n_p_order():
    fn = qif.krr_shuffle_vulnerability_binary
    value = _no_warning(fn, 0.9, 200)
    with pytest.warns(DeprecationWarning, match=r"\(n, p\)"):
        assert fn(200, 0.9) == value
    with pytest.warns(DeprecationWarning):
        assert fn(200, p=0.9) == value
    assert _no_warning(fn, n=200, p=0.9) == value
    assert _no_warning(fn, 1, 1) == fn(p=1, n=1)  # the same call in both orders: no warning
    with pytest.warns(DeprecationWarning):
        assert fn(5, 1) == _no_warning(fn, 1.0, 5)  # p = 5 is impossible: the old (n, p)


def test_all_but_one_prior_keywords_and_the_deprecated_positional_order():
    value = _no_warning(qif.all_but_one_prior, k=2, n=3, known=[1, 0], exact=True)
    with pytest.warns(DeprecationWarning, match=r"all_but_one_prior\(n, k, known\)"):
        old = qif.all_but_one_prior(3, 2, [1, 0], exact=True)
    assert _same(old, value)


def test_detectors():
    assert old_nkp_call((200, 2, 0.9), {}) and old_nkp_call((2, 1, 0.5), {}) and old_nkp_call((5,), {"k": 2})
    assert not old_nkp_call((2, 0.9, 200), {}) and not old_nkp_call((2, 1.0, 1), {})
    assert not old_nkp_call((2, 1.5, 10), {})  # an invalid p stays a p (its error names p)
    assert not old_nkp_call(("a", "b"), {}) and not old_nkp_call((2,), {"p": 0.5})
    assert old_np_call((200, 0.9), {}) and old_np_call((5, 1), {}) and old_np_call((200,), {"p": 0.9})
    assert not old_np_call((0.9, 200), {}) and not old_np_call((1, 1), {}) and not old_np_call((None, 2), {})
    assert not old_np_call((0.7, 1), {})  # p = 0.7, n = 1 in the new order
    assert not old_nkp_call((2, 0.7, 2.5), {})  # new order, invalid n: its error names n


def test_errors_of_the_old_path():
    with pytest.raises(TypeError, match="multiple values for argument 'k'"):
        qif.krr_shuffle_vulnerability(200, 2, 0.9, k=2)
    with pytest.raises(TypeError, match="at most 2 positional"):
        qif.shuffle_vulnerability(200, 2, 3)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="p must"):
        qif.krr_shuffle_vulnerability(200, 2, 0.4)  # old order, invalid p: the error names p
    with pytest.raises(ValueError, match="p must"):
        qif.krr_shuffle_vulnerability(2, 1.5, 200)  # new order, invalid p


# ------------------------------------------------------------------ dataset_delta's output keyword
def test_dataset_delta_output_keyword_only_with_deprecated_positional_use():
    from shuffle_accounting.shuffled_krr.exact import dataset_delta, dataset_log_delta

    for fn in (dataset_delta, dataset_log_delta):
        new = _no_warning(fn, 0.5, 4, 1.0, [0, 0, 6, 0], output="count")
        with pytest.warns(DeprecationWarning, match=r"output positionally to dataset_(log_)?delta"):
            assert fn(0.5, 4, 1.0, [0, 0, 6, 0], "count") == new
        assert new != _no_warning(fn, 0.5, 4, 1.0, [0, 0, 6, 0])  # the keyword is honoured
        par = inspect.signature(fn).parameters["output"]
        assert par.kind is inspect.Parameter.KEYWORD_ONLY and par.default == "histogram"
        with pytest.raises(TypeError, match="multiple values"):
            fn(0.5, 4, 1.0, [0, 0, 6, 0], "count", output="count")
        with pytest.raises(TypeError, match="at most 5 positional"):
            fn(0.5, 4, 1.0, [0, 0, 6, 0], "count", "x")
