"""Adversarial layer (b)/(c) for the numerics, literature, QIF, re-identification and d_sigma APIs.

Three tables drive everything (extend them, not the test functions):

* ``API`` — one row per public callable: ``(id, callable, good kwargs, {param: kind})``. Every
  row is called once with its good kwargs (the result must be finite and in range), then once per
  bad value of each listed parameter's kind (see ``BAD``): each must raise a ``ValueError`` (the
  project's ``ParameterError``) whose message names that parameter — never NaN, never an
  ``OverflowError``/``TypeError``/``IndexError``, never a hang.
* ``EXTRA_BAD`` — hand-written ``(id, thunk, param)`` rows: the reproducers of issue 10 (huge sizes,
  1e300, 10**400, nested groups, ...).
* ``BUDGET`` — ``(id, thunk)`` rows: exponential or size-proportional computations called with a
  tiny ``max_work``; each must raise :class:`WorkBudgetExceeded` before doing the work.

Plus hypothesis properties: the literature deltas are finite, in ``[0, 1]`` and monotone in eps
over random valid inputs (including subnormal and huge ones); the closed-form epsilons are in
``(0, eps0]``.

Counts are recorded in tests/README.md.
"""

from __future__ import annotations

import math
import re
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffle_accounting import KRR, FiniteRandomizer, dsigma, qif
from shuffle_accounting import literature as lit
from shuffle_accounting import reidentification as reid
from shuffle_accounting._validation import (
    ParameterError,
    WorkBudgetExceeded,
    check_int_array,
    check_real,
    check_real_array,
    check_work,
)

NAN, INF = math.nan, math.inf
HUGE_INT = 10**400  # beyond the float range: float(HUGE_INT) raises OverflowError

#: Bad values by kind of parameter. Every value must be rejected for every parameter of the kind.
BAD = {
    # a real number with a finite allowed range (NaN, infinities, bools, non-numbers, 10**400)
    "real": [NAN, INF, -INF, True, np.bool_(False), "1.0", None, [1.0], 1 + 1j, HUGE_INT, -HUGE_INT],
    # a real number that may be +inf (a dispersion theta): inf itself is fine
    "real_inf_ok": [NAN, -INF, True, "1.0", None, [1.0], -HUGE_INT],
    # an integer count
    "int": [2.5, NAN, INF, -INF, True, False, "3", None, [3], -1, 1 + 0j],
    # an integer count with an upper bound (so 10**400 and 1e300 must be rejected too)
    "int_bounded": [2.5, NAN, INF, True, "3", None, [3], -1, HUGE_INT, 1e300],
    # a probability vector / array of reals
    "vector": [
        [0.5, True],
        [True, False],
        "ab",
        None,
        0.5,
        [[0.5], [0.5, 0.5]],
        [NAN, 1.0],
        [INF, 0.0],
        [HUGE_INT, 0.0],
        [],
    ],
    # a permutation / integer sequence
    "perm": [[0, True, 2], [0.5, 1.0], "012", None, 7, [[0, 1], [2]], [2, 0, 0]],
    # a group assignment
    "groups": [
        [[0, True], [0, 1], [2]],
        [[0, 1], [[0, 1]], [2]],
        "ab",
        None,
        5,
        [[0, 1.5], [1], [2]],
        [np.array([[0, 1]]), [1], [2]],
        [[1], [0], [2]],
    ],
    # the max_work keyword
    "max_work": [0, -1, 2.5, True, "1e8", NAN, INF],
    # a string choice
    "choice": ["nope", 3, None, True],
    # a True/False flag
    "flag": ["no", 1, 0, None, 0.0],
}

KR = KRR(3, 1.0)
FR = FiniteRandomizer([[0.75, 0.25], [0.25, 0.75]])
GROUPS = [[0, 1], [0, 1], [2]]

#: (id, callable, good kwargs, {param: kind}).
API = [
    # ------------------------------------------------------------------ randomizers
    ("KRR", KRR, dict(k=3, eps0=1.0), {"k": "int_bounded", "eps0": "real"}),
    ("FiniteRandomizer", FiniteRandomizer, dict(matrix=[[0.75, 0.25], [0.25, 0.75]]), {"matrix": "vector"}),
    ("KRR.clone_decomposition", KR.clone_decomposition, dict(x0=0, x1=1), {"x0": "int", "x1": "int"}),
    # ------------------------------------------------------------------ literature
    (
        "fmt2021_closed_form_delta",
        lit.fmt2021_closed_form_delta,
        dict(eps=0.5378, eps0=4.0, n=100_000),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "fmt2021_closed_form_log_delta",
        lit.fmt2021_closed_form_log_delta,
        dict(eps=0.5, eps0=2.0, n=10**8),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "fmt2021_closed_form_epsilon",
        lit.fmt2021_closed_form_epsilon,
        dict(eps0=4.0, n=100_000, delta=1e-6),
        {"eps0": "real", "n": "int_bounded", "delta": "real"},
    ),
    (
        "fmt2023_krr_closed_form_delta",
        lit.fmt2023_krr_closed_form_delta,
        dict(eps=0.4099, eps0=4.0, n=100_000),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "fmt2023_krr_closed_form_log_delta",
        lit.fmt2023_krr_closed_form_log_delta,
        dict(eps=0.5, eps0=2.0, n=10**8),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "fmt2023_krr_closed_form_epsilon",
        lit.fmt2023_krr_closed_form_epsilon,
        dict(eps0=4.0, n=100_000, delta=1e-6),
        {"eps0": "real", "n": "int_bounded", "delta": "real"},
    ),
    (
        "fmt2021_clone_delta",
        lit.fmt2021_clone_delta,
        dict(eps=0.5, eps0=2.0, n=1000),
        {"eps": "real", "eps0": "real", "n": "int_bounded", "max_work": "max_work"},
    ),
    (
        "fmt2021_clone_log_delta",
        lit.fmt2021_clone_log_delta,
        dict(eps=0.5, eps0=2.0, n=1000),
        {"eps": "real", "eps0": "real", "n": "int_bounded", "max_work": "max_work"},
    ),
    (
        "fmt2023_krr_clone_delta",
        lit.fmt2023_krr_clone_delta,
        dict(eps=0.5, eps0=2.0, n=1000),
        {"eps": "real", "eps0": "real", "n": "int_bounded", "max_work": "max_work"},
    ),
    (
        "clone_pair_delta",
        lit.clone_pair_delta,
        dict(eps=0.5, eps0=2.0, n=1000, clone_prob=0.1),
        {
            "eps": "real",
            "eps0": "real",
            "n": "int_bounded",
            "clone_prob": "real",
            "rel_slack": "real",
            "max_work": "max_work",
        },
    ),
    (
        "balle2019_krr_delta",
        lit.balle2019_krr_delta,
        dict(eps=0.1825, k=10, eps0=2.0, n=100_000),
        {"eps": "real", "k": "int_bounded", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "balle2019_krr_epsilon",
        lit.balle2019_krr_epsilon,
        dict(k=10, eps0=2.0, n=100_000, delta=1e-6),
        {"k": "int_bounded", "eps0": "real", "n": "int_bounded", "delta": "real"},
    ),
    (
        "balle2019_hoeffding_delta",
        lit.balle2019_hoeffding_delta,
        dict(eps=0.2, k=10, eps0=2.0, n=100_000),
        {"eps": "real", "k": "int_bounded", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "balle2019_bennett_log_delta",
        lit.balle2019_bennett_log_delta,
        dict(eps=0.2, k=10, eps0=2.0, n=100_000),
        {"eps": "real", "k": "int_bounded", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "erlingsson2019_delta",
        lit.erlingsson2019_delta,
        dict(eps=0.111508, eps0=0.25, n=10_000),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    (
        "erlingsson2019_epsilon",
        lit.erlingsson2019_epsilon,
        dict(eps0=0.25, n=10_000, delta=1e-6),
        {"eps0": "real", "n": "int_bounded", "delta": "real"},
    ),
    (
        "biswas_as_printed_delta",
        lit.biswas_as_printed_delta,
        dict(eps=0.5, n=100, n_x0=80, k=10, eps0=2.0),
        {
            "eps": "real",
            "n": "int_bounded",
            "n_x0": "int",
            "k": "int_bounded",
            "eps0": "real",
            "max_work": "max_work",
        },
    ),
    (
        "biswas_table2_feldman_simplified_delta",
        lit.biswas_table2_feldman_simplified_delta,
        dict(eps=0.3, eps0=0.49, n=100),
        {"eps": "real", "eps0": "real", "n": "int_bounded"},
    ),
    ("krr_clone_probability", lit.krr_clone_probability, dict(eps0=1.0), {"eps0": "real"}),
    # ------------------------------------------------------------------ QIF
    ("krr_keep_probability", qif.krr_keep_probability, dict(k=3, eps0=1.0), {"k": "int", "eps0": "real"}),
    ("prior_vulnerability", qif.prior_vulnerability, dict(k=3), {"k": "int"}),
    ("krr_vulnerability", qif.krr_vulnerability, dict(k=3, p=0.5), {"k": "int", "p": "real"}),
    ("shuffle_vulnerability", qif.shuffle_vulnerability, dict(n=20, k=3), {"n": "int", "k": "int"}),
    (
        "krr_shuffle_vulnerability",
        qif.krr_shuffle_vulnerability,
        dict(n=20, k=3, p=0.6),
        {"n": "int", "k": "int", "p": "real"},
    ),
    (
        "expected_max_load",
        qif.expected_max_load,
        dict(n=10, k=3),
        {"n": "int_bounded", "k": "int_bounded", "tol": "real", "max_work": "max_work"},
    ),
    (
        "shuffle_vulnerability_exact",
        qif.shuffle_vulnerability_exact,
        dict(n=6, k=3),
        {"n": "int", "k": "int", "max_work": "max_work"},
    ),
    (
        "krr_shuffle_vulnerability_exact",
        qif.krr_shuffle_vulnerability_exact,
        dict(n=6, k=3, p=0.5),
        {"n": "int", "k": "int", "p": "real", "max_work": "max_work"},
    ),
    ("histograms", qif.histograms, dict(n=3, k=2), {"n": "int", "k": "int", "max_work": "max_work"}),
    ("datasets", qif.datasets, dict(n=2, k=2), {"n": "int", "k": "int"}),
    (
        "krr_channel",
        qif.krr_channel,
        dict(n=2, k=2, p=0.75),
        {"n": "int", "k": "int", "p": "real", "exact": "flag"},
    ),
    ("shuffle_channel", qif.shuffle_channel, dict(n=2, k=2), {"n": "int", "k": "int", "exact": "flag"}),
    ("uniform_prior", qif.uniform_prior, dict(size=4), {"size": "int_bounded", "exact": "flag"}),
    ("identity_gain", qif.identity_gain, dict(size=4), {"size": "int_bounded"}),
    ("prior_bayes_vulnerability", qif.prior_bayes_vulnerability, dict(prior=[0.2, 0.8]), {"prior": "vector"}),
    (
        "equivalent",
        qif.equivalent,
        dict(first=[[1.0, 0.0], [0.0, 1.0]], second=[[0.0, 1.0], [1.0, 0.0]]),
        {"first": "vector", "second": "vector", "rtol": "real"},
    ),
    (
        "refines",
        qif.refines,
        dict(first=[[1.0, 0.0], [0.0, 1.0]], second=[[0.5, 0.5], [0.5, 0.5]]),
        {"first": "vector", "second": "vector", "atol": "real"},
    ),
    (
        "cascade",
        qif.cascade,
        dict(first=[[1.0, 0.0], [0.0, 1.0]], second=[[0.5, 0.5], [0.5, 0.5]]),
        {"first": "vector", "second": "vector"},
    ),
    (
        "reduce_channel",
        qif.reduce_channel,
        dict(channel=[[0.5, 0.5], [0.5, 0.5]]),
        {"channel": "vector", "rtol": "real"},
    ),
    # ------------------------------------------------------------------ re-identification
    ("clone_bound", reid.clone_bound, dict(eps=1.0, n=10), {"eps": "real_inf_ok", "n": "int"}),
    (
        "success_probability",
        reid.success_probability,
        dict(P=[0.75, 0.25], Q=[0.25, 0.75], n=3),
        {"P": "vector", "Q": "vector", "n": "int"},
    ),
    (
        "total_variation",
        reid.total_variation,
        dict(P=[0.75, 0.25], Q=[0.25, 0.75]),
        {"P": "vector", "Q": "vector"},
    ),
    ("ReidentificationRisk", reid.ReidentificationRisk, dict(randomizer=FR, n=3), {"n": "int"}),
    (
        "ReidentificationRisk.exact_worst_case",
        reid.ReidentificationRisk(FR, 3).exact_worst_case,
        dict(x1=0),
        {"x1": "int", "max_work": "max_work"},
    ),
    # ------------------------------------------------------------------ d_sigma
    (
        "sample_mallows",
        dsigma.sample_mallows,
        dict(n=4, theta=1.0, size=2, rng=1),
        {"n": "int", "theta": "real_inf_ok", "size": "int", "max_work": "max_work", "distance": "choice"},
    ),
    ("kendall_distance", dsigma.kendall_distance, dict(perm=[2, 0, 1]), {"perm": "perm"}),
    ("hamming_distance", dsigma.hamming_distance, dict(perm=[2, 0, 1]), {"perm": "perm"}),
    ("inverse_order", dsigma.inverse_order, dict(order=[2, 0, 1]), {"order": "perm"}),
    ("width", dsigma.width, dict(groups=GROUPS, order=[0, 2, 1]), {"groups": "groups", "order": "perm"}),
    ("validate_groups", dsigma.validate_groups, dict(groups=GROUPS), {"groups": "groups"}),
    (
        "hamming_preservation_delta",
        dsigma.hamming_preservation_delta,
        dict(n=7, subset_size=4, eta=0.6, theta=0.5),
        {"n": "int", "subset_size": "int", "eta": "real", "theta": "real_inf_ok", "max_work": "max_work"},
    ),
    (
        "hamming_preservation_log_delta",
        dsigma.hamming_preservation_log_delta,
        dict(n=7, subset_size=4, eta=0.6, theta=0.5),
        {"n": "int", "subset_size": "int", "eta": "real", "theta": "real_inf_ok", "max_work": "max_work"},
    ),
    (
        "kendall_log_normalizer",
        dsigma.kendall_log_normalizer,
        dict(n=5, theta=0.5),
        {"n": "int", "theta": "real_inf_ok"},
    ),
    (
        "hamming_log_normalizer",
        dsigma.hamming_log_normalizer,
        dict(n=5, theta=0.5),
        {"n": "int", "theta": "real_inf_ok"},
    ),
    (
        "preservation_k",
        dsigma.preservation_k,
        dict(subset_size=4, eta=0.6),
        {"subset_size": "int", "eta": "real"},
    ),
    (
        "theta_for_alpha",
        dsigma.theta_for_alpha,
        dict(alpha=1.0, sensitivity=2),
        {"alpha": "real_inf_ok", "sensitivity": "int"},
    ),
]

#: (row id, param) -> reprs of values of the kind that are valid there (documented defaults).
_EXEMPT: dict[tuple[str, str], set[str]] = {
    ("ReidentificationRisk.exact_worst_case", "x1"): {"None"},  # None = maximise over targets
    ("sample_mallows", "size"): {"None"},  # None = one permutation
}


def _bad_cases():
    for row_id, fn, good, params in API:
        for param, kind in params.items():
            for i, bad in enumerate(BAD[kind]):
                if repr(bad) in _EXEMPT.get((row_id, param), set()):
                    continue
                yield pytest.param(fn, good, param, bad, id=f"{row_id}-{param}-{i}")


BAD_CASES = list(_bad_cases())


class _Timeout(Exception):
    pass


def _call_with_timeout(thunk, seconds=20.0):
    """Run ``thunk`` with a wall-clock alarm: a hang is a failure, not a stuck CI job."""

    def handler(*_):
        raise _Timeout(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return thunk()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _check_finite(value):
    if isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (int, float, np.floating, np.integer)):
        assert math.isfinite(value) or value == -math.inf, value  # -inf = log of an exact 0
        return
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        assert not np.any(np.isnan(value)), value
        return
    if hasattr(value, "__float__") and not isinstance(value, (str, bytes)):
        assert not math.isnan(float(value)), value
    if isinstance(value, tuple) and value and all(isinstance(v, (int, float)) for v in value):
        assert not any(isinstance(v, float) and math.isnan(v) for v in value), value


@pytest.mark.parametrize("row", API, ids=[r[0] for r in API])
def test_good_inputs_give_finite_results(row):
    _, fn, good, _ = row
    _check_finite(_call_with_timeout(lambda: fn(**good)))


@pytest.mark.parametrize("fn, good, param, bad", BAD_CASES)
def test_bad_input_is_a_value_error_naming_the_parameter(fn, good, param, bad):
    kwargs = dict(good)
    kwargs[param] = bad
    with pytest.raises(ValueError) as info:
        _call_with_timeout(lambda: fn(**kwargs))
    assert isinstance(info.value, ParameterError), type(info.value)
    assert re.search(rf"\b{re.escape(param)}\b", str(info.value)), str(info.value)


#: Hand-written reproducers (issue 10, items 3, 5, 6): (id, thunk, parameter the message names).
EXTRA_BAD = [
    ("fmt2021 n=10**308", lambda: lit.fmt2021_closed_form_delta(26, 1.0, 10**308), "n"),
    ("fmt2023 log n=1e300", lambda: lit.fmt2023_krr_closed_form_log_delta(15, 1e-4, 1e301), "n"),
    ("clone n=10**308", lambda: lit.fmt2021_clone_delta(0.5, 1.0, 10**308), "n"),
    ("KRR k=2**70", lambda: KRR(2**70, 1.0), "k"),
    ("KRR eps0=10**400", lambda: KRR(3, 10**400), "eps0"),
    ("shuffle_vulnerability n=10**400", lambda: qif.shuffle_vulnerability(k=3, n=10**400), "n"),
    ("clone_bound n=10**400", lambda: reid.clone_bound(1.0, 10**400), "n"),
    ("kendall_log_normalizer n=1e12", lambda: dsigma.kendall_log_normalizer(10**12, 1.0), "n"),
    ("KRR(10**5).matrix", lambda: KRR(10**5, 1.0).matrix, "k"),
    ("histograms k=2**63", lambda: qif.histograms(k=2**63, n=3), "k"),
    ("datasets 1e9^1e9", lambda: qif.datasets(k=10**9, n=10**9), "k"),
    ("prior_bayes_vulnerability(0)", lambda: qif.prior_bayes_vulnerability(0), "prior"),
    ("equivalent rtol=nan", lambda: qif.equivalent([[1.0]], [[1.0]], rtol=NAN), "rtol"),
    ("identity_gain 1e6", lambda: qif.identity_gain(10**6), "size"),
    ("inverse_order([2, 0, 0])", lambda: dsigma.inverse_order([2, 0, 0]), "order"),
    ("MallowsShuffler order=7", lambda: dsigma.MallowsShuffler(GROUPS, alpha=1.0, order=7), "order"),
    ("nested group", lambda: dsigma.validate_groups([[0, 1], [[0, 1]], [2]]), "groups"),
    ("bool in group", lambda: dsigma.validate_groups([[0, True], [0, 1], [2]]), "groups"),
    ("check_real 10**400", lambda: check_real("x", 10**400), "x"),
    ("check_real_array bool element", lambda: check_real_array("x", [1.0, True]), "x"),
    ("check_real_array ragged", lambda: check_real_array("x", [[1.0], [1.0, 2.0]]), "x"),
    ("check_real_array 10**400", lambda: check_real_array("x", [10**400]), "x"),
    ("check_int_array bool", lambda: check_int_array("x", [1, True]), "x"),
    ("check_int_array fraction", lambda: check_int_array("x", [1, 2.5]), "x"),
    ("biswas eps0=600", lambda: lit.biswas_as_printed_delta(0.5, 100, 80, 10, 600.0), "eps0"),
]


@pytest.mark.parametrize("thunk, param", [pytest.param(t, p, id=i) for i, t, p in EXTRA_BAD])
def test_issue10_reproducers_raise_parameter_errors(thunk, param):
    with pytest.raises(ParameterError) as info:
        _call_with_timeout(thunk)
    assert re.search(rf"\b{re.escape(param)}\b", str(info.value)), str(info.value)


#: Work-capped computations called with a tiny budget: each must refuse before working.
BUDGET = [
    ("histograms(3, 23)", lambda mw: qif.histograms(k=23, n=3, max_work=mw)),
    ("histograms(3, 2**52)", lambda mw: qif.histograms(k=2**52, n=3, max_work=mw)),
    (
        "shuffle_vulnerability_exact k=1e9",
        lambda mw: qif.shuffle_vulnerability_exact(k=10**9, n=60, max_work=mw),
    ),
    (
        "krr_shuffle_vulnerability_exact",
        lambda mw: qif.krr_shuffle_vulnerability_exact(3, 0.5, 10, max_work=mw),
    ),
    (
        "exact_worst_case n=36",
        lambda mw: reid.ReidentificationRisk(KRR(3, 1.0), 36).exact_worst_case(max_work=mw),
    ),
    (
        "sample_mallows size=10**300",
        lambda mw: dsigma.sample_mallows(3, 1.0, size=10**300, rng=1, max_work=mw),
    ),
    (
        "hamming_preservation n=1e6",
        lambda mw: dsigma.hamming_preservation_delta(10**6, 5 * 10**5, 0.5, 1.0, max_work=mw),
    ),
    ("fmt2021_clone n=1e12", lambda mw: lit.fmt2021_clone_delta(0.001, 0.01, 10**12, max_work=mw)),
    ("fmt2023_clone_epsilon", lambda mw: lit.fmt2023_krr_clone_epsilon(1.0, 10**5, 1e-6, max_work=mw)),
    ("clone_pair_epsilon", lambda mw: lit.clone_pair_epsilon(1.0, 10**5, 1e-6, 0.5, max_work=mw)),
    ("expected_max_load", lambda mw: qif.expected_max_load(k=3, n=1000, max_work=mw)),
    ("biswas n=1e9", lambda mw: lit.biswas_as_printed_delta(0.5, 10**9, 10**8, 10, 2.0, max_work=mw)),
]


@pytest.mark.parametrize("thunk", [pytest.param(t, id=i) for i, t in BUDGET])
def test_work_budget_refuses_before_working(thunk):
    with pytest.raises(WorkBudgetExceeded, match="max_work = 10\\b"):
        _call_with_timeout(lambda: thunk(10), seconds=5.0)


@pytest.mark.parametrize(
    "thunk",
    [
        pytest.param(lambda: qif.histograms(k=2**52, n=3), id="histograms k=2**52"),
        pytest.param(lambda: qif.shuffle_vulnerability_exact(k=10**9, n=80), id="exact n=80 k=1e9"),
        pytest.param(
            lambda: reid.ReidentificationRisk(KRR(3, 1.0), 36).exact_worst_case(), id="worst case n=36"
        ),
        pytest.param(lambda: dsigma.sample_mallows(3, 1.0, size=10**300, rng=1), id="mallows size=1e300"),
        pytest.param(lambda: lit.fmt2021_clone_delta(0.001, 0.01, 10**12), id="clone n=1e12"),
        pytest.param(lambda: qif.shuffle_vulnerability(k=3, n=10**12), id="V[S] n=1e12"),
    ],
)
def test_default_budget_refuses_the_issue10_hangs(thunk):
    with pytest.raises(WorkBudgetExceeded, match="raise max_work"):
        _call_with_timeout(thunk, seconds=10.0)


def test_work_budget_allows_what_fits_and_names_the_alternative():
    assert qif.histograms(k=2, n=3, max_work=8) == [(3, 0), (2, 1), (1, 2), (0, 3)]
    with pytest.raises(WorkBudgetExceeded, match="closed forms"):
        qif.histograms(k=2, n=3, max_work=7)
    check_work("x", 5, max_work=5, alternative="y")
    with pytest.raises(WorkBudgetExceeded, match="x needs about 6 units of work, above max_work = 5; y"):
        check_work("x", 6, max_work=5, alternative="y")


# ---------------------------------------------------------------------------- literature numerics


@pytest.mark.parametrize(
    "thunk",
    [
        pytest.param(lambda: lit.fmt2021_closed_form_delta(0.2, 5e-324, 10000), id="fmt21 eps0=5e-324"),
        pytest.param(lambda: lit.fmt2023_krr_closed_form_delta(5, 5e-324, 10000), id="fmt23 eps0=5e-324"),
        pytest.param(lambda: lit.fmt2023_krr_closed_form_log_delta(15, 1e-4, 10**300), id="fmt23 n=1e300"),
        pytest.param(lambda: lit.fmt2021_closed_form_log_delta(0.5, 1.0, 10**300), id="fmt21 n=1e300"),
        pytest.param(lambda: lit.fmt2021_closed_form_log_delta(1e-301, 1e-300, 10000), id="fmt21 tiny"),
        pytest.param(lambda: lit.fmt2021_closed_form_epsilon(5e-324, 10000, 1e-6), id="fmt21 eps tiny"),
        pytest.param(lambda: lit.erlingsson2019_log_delta(1e300, 5e-324 * 2**60, 10**6), id="erl ratio huge"),
    ],
)
def test_issue10_literature_nan_reproducers_are_numbers(thunk):
    value = _call_with_timeout(thunk)
    assert not math.isnan(value)


def test_closed_form_epsilon_never_rounds_a_positive_bound_to_zero():
    # eps0 = 5e-324: the exact amplified epsilon underflows; the bound must stay > 0 and <= eps0
    e = lit.fmt2021_closed_form_epsilon(5e-324, 10_000, 1e-6)
    assert e == 5e-324
    assert lit.erlingsson2019_epsilon(1e-300, 10**6, 0.001) > 0.0


def test_delta_upper_bounds_do_not_underflow_to_zero():
    # the log variants exist and the plain values round a tiny positive bound *up*
    log_d = dsigma.hamming_preservation_log_delta(2000, 1000, 0.5, 30.0)
    assert -math.inf < log_d < -745
    assert dsigma.hamming_preservation_delta(2000, 1000, 0.5, 30.0) == 5e-324
    assert lit.fmt2021_clone_log_delta(0.9, 1.0, 10**5) < -745
    assert lit.fmt2021_clone_delta(0.9, 1.0, 10**5) > 0.0
    assert lit.fmt2021_closed_form_delta(0.5, 2.0, 10**8) > 0.0
    # an exact zero stays zero
    assert dsigma.hamming_preservation_delta(7, 4, 0.6, math.inf) == 0.0
    assert lit.fmt2021_closed_form_delta(2.0, 1.0, 10**4) == 0.0


_EPS = st.one_of(
    st.sampled_from([0.0, 5e-324, 1e-300, 1e-8, 0.5, 5.0, 30.0, 700.0, 1e300]), st.floats(0.0, 50.0)
)
_EPS0 = st.one_of(
    st.sampled_from([5e-324, 1e-300, 1e-8, 0.25, 1.0, 4.0, 30.0, 709.0, 800.0, 1e300]), st.floats(1e-6, 40.0)
)
_N = st.one_of(st.sampled_from([2, 3, 1000, 10**9, 2**53]), st.integers(2, 10**7))
_K = st.one_of(st.sampled_from([2, 3, 2**53]), st.integers(2, 1000))

_DELTAS = {
    "fmt21_closed": lambda e, k, e0, n: lit.fmt2021_closed_form_delta(e, e0, n),
    "fmt23_closed": lambda e, k, e0, n: lit.fmt2023_krr_closed_form_delta(e, e0, n),
    "balle_krr": lambda e, k, e0, n: lit.balle2019_krr_delta(e, k, e0, n),
    "balle_hoeffding": lambda e, k, e0, n: lit.balle2019_hoeffding_delta(e, k, e0, n),
    "balle_bennett": lambda e, k, e0, n: lit.balle2019_bennett_delta(e, k, e0, n),
    "erlingsson": lambda e, k, e0, n: lit.erlingsson2019_delta(e, e0, n),
    "biswas_feldman": lambda e, k, e0, n: lit.biswas_table2_feldman_simplified_delta(e, e0, n),
}


#: Closed forms are monotone in eps by construction; the Hoeffding/Bennett numerical bounds are
#: bounds evaluated separately at each eps and need not be (Bennett is not at k = 2**53, n = 2).
_MONOTONE = {"fmt21_closed", "fmt23_closed", "balle_krr", "erlingsson", "biswas_feldman"}


def _delta_or_none(fn, *args):
    try:
        return fn(*args)
    except lit.BoundNotApplicable:
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(_DELTAS)), e=_EPS, k=_K, e0=_EPS0, n=_N, bump=st.floats(0.0, 2.0))
def test_literature_deltas_finite_in_range_and_monotone(name, e, k, e0, n, bump):
    fn = _DELTAS[name]
    d1 = _delta_or_none(fn, e, k, e0, n)
    if d1 is None:
        return
    assert 0.0 <= d1 <= 1.0 and not math.isnan(d1)
    e2 = e + bump
    if math.isfinite(e2) and name in _MONOTONE:
        d2 = _delta_or_none(fn, e2, k, e0, n)
        if d2 is not None:
            assert 0.0 <= d2 <= 1.0
            assert d2 <= d1 * (1 + 1e-9) + 1e-300, (e, e2, d1, d2)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(e0=_EPS0, n=_N, delta=st.sampled_from([5e-324, 1e-300, 1e-12, 1e-6, 0.001, 0.5]))
def test_closed_form_epsilons_in_zero_eps0(e0, n, delta):
    for fn in (
        lit.fmt2021_closed_form_epsilon,
        lit.fmt2023_krr_closed_form_epsilon,
        lit.erlingsson2019_epsilon,
    ):
        try:
            eps = fn(e0, n, delta)
        except lit.BoundNotApplicable:
            continue
        assert 0.0 < eps <= e0, (fn.__name__, e0, n, delta, eps)
