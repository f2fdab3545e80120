"""Published amplification-by-shuffling bounds, side by side (one module per paper).

* :mod:`.erlingsson2019` — Erlingsson et al., SODA 2019.
* :mod:`.balle2019` — Balle, Bell, Gascon, Nissim, CRYPTO 2019: k-RR theorem, Hoeffding, Bennett.
* :mod:`.feldman2021` — Feldman, McMillan, Talwar, FOCS 2021: closed form and exact clone bound.
* :mod:`.feldman2023` — Feldman, McMillan, Talwar, SODA 2023: stronger clones for k-RR.
* :mod:`.biswas` — Biswas, Jung, Palamidessi: reproductions of their Tables II and IV (as printed).
* :mod:`.registry` — all of them at one deployment (:func:`literature_epsilons`); the report's
  section is :func:`shuffle_accounting.presentation.literature_report.report_section`.

Every bound is a privacy curve (:class:`shuffle_accounting.curves.PrivacyCurve`): a frozen
dataclass of the deployment (``Erlingsson2019Curve(eps0, n)``, ``Balle2019KRRCurve(k, eps0, n)``,
...) with ``delta``, ``log_delta``, ``epsilon`` and ``bound`` (``"upper"`` for a theorem,
``"as-printed"`` for Biswas et al.'s reproductions). The functions (``*_delta``, ``*_log_delta``,
``*_epsilon``) are thin aliases with the same values. Validity conditions raise
:class:`BoundNotApplicable` (a ``ParameterError``).
"""

from .._deprecation import moved_names
from ._common import BoundNotApplicable, LiteratureCurve
from .balle2019 import (
    Balle2019BennettCurve,
    Balle2019HoeffdingCurve,
    Balle2019KRRCurve,
    balle2019_bennett_delta,
    balle2019_bennett_epsilon,
    balle2019_bennett_log_delta,
    balle2019_hoeffding_delta,
    balle2019_hoeffding_epsilon,
    balle2019_hoeffding_log_delta,
    balle2019_krr_delta,
    balle2019_krr_epsilon,
    balle2019_krr_log_delta,
)
from .biswas import (
    BiswasAsPrintedCurve,
    BiswasSimplifiedCurve,
    biswas_as_printed_delta,
    biswas_table2_balle_simplified_delta,
    biswas_table2_erlingsson_simplified_delta,
    biswas_table2_feldman_simplified_delta,
)
from .erlingsson2019 import (
    Erlingsson2019Curve,
    erlingsson2019_delta,
    erlingsson2019_epsilon,
    erlingsson2019_log_delta,
)
from .feldman2021 import (
    ClonePairCurve,
    ClosedFormCloneCurve,
    FMT2021CloneCurve,
    FMT2021ClosedFormCurve,
    clone_pair_delta,
    clone_pair_epsilon,
    clone_pair_log_delta,
    fmt2021_clone_delta,
    fmt2021_clone_epsilon,
    fmt2021_clone_log_delta,
    fmt2021_closed_form_delta,
    fmt2021_closed_form_epsilon,
    fmt2021_closed_form_log_delta,
)
from .feldman2023 import (
    FMT2023KRRCloneCurve,
    FMT2023KRRClosedFormCurve,
    fmt2023_krr_clone_delta,
    fmt2023_krr_clone_epsilon,
    fmt2023_krr_clone_log_delta,
    fmt2023_krr_closed_form_delta,
    fmt2023_krr_closed_form_epsilon,
    fmt2023_krr_closed_form_log_delta,
    krr_clone_probability,
)
from .registry import LITERATURE_BOUNDS, LITERATURE_CURVES, LiteratureBound, literature_epsilons

__all__ = [
    "BoundNotApplicable",
    "LiteratureCurve",
    "Erlingsson2019Curve",
    "Balle2019KRRCurve",
    "Balle2019HoeffdingCurve",
    "Balle2019BennettCurve",
    "ClosedFormCloneCurve",
    "FMT2021ClosedFormCurve",
    "ClonePairCurve",
    "FMT2021CloneCurve",
    "FMT2023KRRCloneCurve",
    "FMT2023KRRClosedFormCurve",
    "BiswasAsPrintedCurve",
    "BiswasSimplifiedCurve",
    "LITERATURE_CURVES",
    "erlingsson2019_epsilon",
    "erlingsson2019_delta",
    "balle2019_krr_epsilon",
    "balle2019_krr_delta",
    "balle2019_hoeffding_delta",
    "balle2019_hoeffding_epsilon",
    "balle2019_bennett_delta",
    "balle2019_bennett_epsilon",
    "fmt2021_closed_form_epsilon",
    "fmt2021_closed_form_delta",
    "fmt2021_clone_delta",
    "fmt2021_clone_epsilon",
    "clone_pair_delta",
    "clone_pair_epsilon",
    "clone_pair_log_delta",
    "krr_clone_probability",
    "fmt2023_krr_clone_delta",
    "fmt2023_krr_clone_epsilon",
    "fmt2023_krr_closed_form_epsilon",
    "fmt2023_krr_closed_form_delta",
    "erlingsson2019_log_delta",
    "balle2019_krr_log_delta",
    "balle2019_hoeffding_log_delta",
    "balle2019_bennett_log_delta",
    "fmt2021_closed_form_log_delta",
    "fmt2021_clone_log_delta",
    "fmt2023_krr_clone_log_delta",
    "fmt2023_krr_closed_form_log_delta",
    "biswas_as_printed_delta",
    "biswas_table2_erlingsson_simplified_delta",
    "biswas_table2_balle_simplified_delta",
    "biswas_table2_feldman_simplified_delta",
    "LiteratureBound",
    "LITERATURE_BOUNDS",
    "literature_epsilons",
]

#: Presentation names that moved to :mod:`shuffle_accounting.presentation` (deprecated aliases).
__getattr__ = moved_names(__name__, {"report_section": "shuffle_accounting.presentation.literature_report"})
