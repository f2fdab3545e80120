"""Presentation: everything that formats, plots or parses commands (layer 5, issue 13).

The mathematics (layers 1-4) never imports this package; this package imports the mathematics.

* :mod:`.report` — :class:`~shuffle_accounting.presentation.report.Deployment`, report sections
  and their renderers (text, Markdown, CSV, versioned JSON); :func:`~.report.build_report`.
* Report sections, one module per subject: :mod:`.shuffled_krr_report` (certified and exhibited
  epsilon, composition, calibration, accuracy), :mod:`.literature_report` (published bounds),
  :mod:`.reidentification_report` (Su, Cheng, Wang), :mod:`.qif_report` (Jurado et al.:
  :class:`~.qif_report.LeakageReport`).
* :mod:`.curve_rows` — the one path from privacy curves
  (:class:`~shuffle_accounting.curves.PrivacyCurve`) to report rows: :func:`~.curve_rows.curve_rows`
  (value, bound direction, citation), :class:`~.curve_rows.DeploymentCurves` (one report's cached
  curves, shared by its sections, the what-if grid, the planner and the figures).
* :mod:`.whatif` — the what-if grid over ``n`` (orchestration of public APIs, no new mathematics).
* Figures (matplotlib, extra ``plot``, imported lazily): :mod:`.plotting` (report figures;
  :func:`~.plotting.plot_curves` draws any privacy curves),
  :mod:`.qif_plot` (vulnerability curves), :mod:`.simulation_plot` (utility of a simulation).
* The command line: :mod:`.cli` (``shuffle-accounting``) with the subcommands of
  :mod:`.simulate_command` and :mod:`.dsigma_command`; :mod:`.planner` (``shuffle-accounting
  serve``, extra ``web``).

The old paths (``shuffle_accounting.report``, ``shuffle_accounting.qif.report_section``, ...)
still work as deprecated aliases (:mod:`shuffle_accounting._deprecation`). Importing this package
imports nothing else, so ``shuffle-accounting --help`` stays fast.
"""

__all__: list[str] = []
