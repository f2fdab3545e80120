"""Issue 13: one ``WorkBudgetExceeded`` class, catchable as each of the two former classes."""

from __future__ import annotations

import pytest

from shuffle_accounting._validation import ParameterError, WorkBudgetExceeded, check_work
from shuffle_accounting.shuffled_krr import worst_case


def test_one_class_under_both_names():
    assert worst_case.WorkBudgetExceeded is WorkBudgetExceeded
    assert "WorkBudgetExceeded" in worst_case.__all__


@pytest.mark.parametrize("caught", [WorkBudgetExceeded, ParameterError, ValueError, RuntimeError])
def test_up_front_budget_error_caught_as_every_former_type(caught):
    with pytest.raises(caught, match="needs about 500 units of work, above max_work = 100"):
        check_work("demo", 500, max_work=100, alternative="use less")


@pytest.mark.parametrize("caught", [WorkBudgetExceeded, ParameterError, ValueError, RuntimeError])
def test_mid_search_budget_error_caught_as_every_former_type(caught):
    # a k = 2 branch and bound allowed a single evaluation cannot close its gap
    with pytest.raises(caught, match="exceeded"):
        worst_case.certify(1.0, 1000, eps=0.3, max_evals=1)


def test_up_front_check_passes_within_budget():
    assert check_work("demo", 100, max_work=100, alternative="use less") is None
