"""Local web planner: ``shuffle-accounting serve`` (extra ``web``: Starlette + uvicorn).

:mod:`~shuffle_accounting.presentation.planner.compute` turns the page's form fields into a validated
:class:`~shuffle_accounting.presentation.report.Deployment` and computes what the page shows (certified and
exhibited epsilon, composition, accuracy, the data of the plots) and what it downloads (the JSON
report, a Python script reproducing the numbers); :mod:`~shuffle_accounting.presentation.planner.server` serves
the static page and a small JSON API on 127.0.0.1. The web packages are imported only by
:func:`shuffle_accounting.presentation.planner.server.create_app`.
"""

__all__ = ["compute", "server"]


def __getattr__(name: str):  # PEP 562: submodules load on first use (server needs the web extra)
    if name in __all__:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
