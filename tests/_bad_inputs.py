"""Shared bad-input tables for the tests (imported by test modules; not collected by pytest)."""

from __future__ import annotations

#: Invalid ``(k, eps0, n)`` keyword sets for every shuffled k-RR constructor, with the parameter
#: the error message must name: out of range, non-integer, bool, NaN, inf and wrong type.
BAD_K_EPS0_N = [
    (dict(k=1, eps0=1.0, n=10), "k"),
    (dict(k=2.5, eps0=1.0, n=10), "k"),
    (dict(k=True, eps0=1.0, n=10), "k"),
    (dict(k="3", eps0=1.0, n=10), "k"),
    (dict(k=3, eps0=0.0, n=10), "eps0"),
    (dict(k=3, eps0=-1.0, n=10), "eps0"),
    (dict(k=3, eps0=float("nan"), n=10), "eps0"),
    (dict(k=3, eps0=float("inf"), n=10), "eps0"),
    (dict(k=3, eps0=True, n=10), "eps0"),
    (dict(k=3, eps0=1.0, n=0), "n"),
    (dict(k=3, eps0=1.0, n=10.5), "n"),
    (dict(k=3, eps0=1.0, n=float("inf")), "n"),
    (dict(k=3, eps0=1.0, n=False), "n"),
]
