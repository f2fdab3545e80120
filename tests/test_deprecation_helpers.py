"""The deprecated-argument decorators of ``_deprecation``: binding, errors and where they warn."""

from __future__ import annotations

import warnings

import pytest

from shuffle_accounting._deprecation import keyword_only_now, old_positional_order


@keyword_only_now(1, ("scale", "shift"))
def _scaled(x, *, scale=1.0, shift=0.0):
    return x * scale + shift


@old_positional_order(("n", "k"))
def _sized(*, k, n):
    return (k, n)


def _caught(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    return value, caught


def test_keyword_only_now_binds_in_order_and_warns_at_the_caller():
    value, caught = _caught(lambda: _scaled(2.0, 3.0, 1.0))
    assert value == 7.0
    assert len(caught) == 1 and caught[0].category is DeprecationWarning
    assert "scale=..., shift=..." in str(caught[0].message)
    assert caught[0].filename == __file__  # the user's line, not the library's wrapper


def test_old_positional_order_binds_old_names_and_warns_at_the_caller():
    value, caught = _caught(lambda: _sized(10, 3))
    assert value == (3, 10)
    assert len(caught) == 1 and caught[0].category is DeprecationWarning
    assert "_sized(k=..., n=...)" in str(caught[0].message)
    assert caught[0].filename == __file__


def test_keyword_calls_do_not_warn():
    assert _caught(lambda: _scaled(2.0, scale=3.0))[1] == []
    assert _caught(lambda: _sized(k=3, n=10))[1] == []


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: _scaled(2.0, 3.0, scale=4.0), "multiple values for argument 'scale'"),
        (lambda: _scaled(2.0, 3.0, 1.0, 5.0), "at most 3 positional"),
        (lambda: _sized(10, n=4), "multiple values for argument 'n'"),
        (lambda: _sized(10, 3, 1), "at most 2 positional"),
    ],
)
def test_conflicting_or_extra_positional_arguments_raise_type_error(call, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match=match):
            call()
