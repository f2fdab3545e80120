"""d_sigma-privacy and the Mallows shuffler.

Implements Meehan, Roy-Chowdhury, Chaudhuri, Jha, *Privacy Implications of Shuffling* (ICLR 2022)
with the paper's known errors corrected:

* the mechanism uses the private composition ``z = y[order[delta[pos]]]`` with
  ``delta ~ Mallows(theta, identity)`` on BFS positions (the printed Alg. 1 step 8 is not private);
* the Kendall sensitivity is computed exactly (``omega(omega+1)/2`` is kept only as an upper bound);
* Thm A.4 uses ``k = floor((1 - eta)|S|)``.

Modules: :mod:`.groups` (group assignment), :mod:`.reference` (BFS sigma_0, widths),
:mod:`.sensitivity`, :mod:`.mallows` (exact samplers, normalisers, moments), :mod:`.mechanism`
(:class:`MallowsShuffler`), :mod:`.accounting` (:class:`DSigmaAccountant`, Thm A.2, 4.4, 4.2),
:mod:`.utility` ((eta, delta)-preservation); the ``shuffle-accounting dsigma`` subcommand is
:mod:`shuffle_accounting.presentation.dsigma_command`.

Example:
    >>> from shuffle_accounting.dsigma import MallowsShuffler
    >>> MallowsShuffler([[0, 1], [0, 1], [2]], alpha=1.0).sensitivity
    1
"""

from .accounting import (
    DSigmaAccountant,
    ReidentificationBound,
    Release,
    regrouped_alpha,
    reidentification_bound,
)
from .groups import EARTH_RADIUS_KM, groups_from_graph, groups_from_points, nearest_groups, validate_groups
from .mallows import (
    decode_insertion_code,
    hamming_distance,
    hamming_distance_pmf,
    hamming_log_normalizer,
    kendall_distance,
    kendall_distance_mean,
    kendall_distance_variance,
    kendall_log_normalizer,
    mallows_log_pmf,
    sample_mallows,
)
from .mechanism import MallowsShuffler, theta_for_alpha
from .reference import group_widths, inverse_order, reference_permutation, width
from .sensitivity import (
    exact_sensitivity,
    group_sensitivities,
    hamming_sensitivity,
    kendall_width_bound,
    sensitivity,
)
from .utility import (
    PreservationEstimate,
    hamming_preservation_delta,
    hamming_preservation_log_delta,
    kendall_preservation_delta_mc,
    preservation_k,
)

__all__ = [
    "DSigmaAccountant",
    "EARTH_RADIUS_KM",
    "MallowsShuffler",
    "PreservationEstimate",
    "ReidentificationBound",
    "Release",
    "decode_insertion_code",
    "exact_sensitivity",
    "group_sensitivities",
    "group_widths",
    "groups_from_graph",
    "groups_from_points",
    "hamming_distance",
    "hamming_distance_pmf",
    "hamming_log_normalizer",
    "hamming_preservation_delta",
    "hamming_preservation_log_delta",
    "hamming_sensitivity",
    "inverse_order",
    "kendall_distance",
    "kendall_distance_mean",
    "kendall_distance_variance",
    "kendall_log_normalizer",
    "kendall_preservation_delta_mc",
    "kendall_width_bound",
    "mallows_log_pmf",
    "nearest_groups",
    "preservation_k",
    "reference_permutation",
    "regrouped_alpha",
    "reidentification_bound",
    "sample_mallows",
    "sensitivity",
    "theta_for_alpha",
    "validate_groups",
    "width",
]
