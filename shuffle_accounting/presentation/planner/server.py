"""The web planner's HTTP server: a static page and a JSON API (Starlette, served by uvicorn).

Routes (all GET, query parameters = the page's fields, see
:data:`shuffle_accounting.presentation.planner.compute.FIELDS`):

* ``/`` — the page (``static/index.html``);
* ``/api/plan`` — :func:`~shuffle_accounting.presentation.planner.compute.plan` as JSON (the numbers);
* ``/api/whatif`` — :func:`~shuffle_accounting.presentation.planner.compute.whatif` as JSON (the plots' data);
* ``/api/report.json`` — the full report (schema of :mod:`shuffle_accounting.presentation.report`), as a download;
* ``/api/script.py`` — :func:`~shuffle_accounting.presentation.planner.compute.script`, as a download.

Invalid input answers HTTP 400 with ``{"error": message}``; the page shows the message. The
server listens on 127.0.0.1 by default: it is a local tool, not a public service.
"""

from __future__ import annotations

import ipaddress
import warnings
from pathlib import Path
from typing import Any

from ..._validation import ParameterError, check_int
from . import compute

__all__ = ["create_app", "serve"]

_STATIC = Path(__file__).resolve().parent / "static"


def create_app(*, allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")) -> Any:
    """The Starlette application (imports Starlette; extra ``web``).

    Requests whose ``Host`` header is not in ``allowed_hosts`` are refused (HTTP 400), so a web
    page elsewhere cannot reach the planner through DNS rebinding.

    Raises:
        ImportError: If Starlette is not installed.
    """
    try:
        from starlette.applications import Starlette  # noqa: PLC0415
        from starlette.concurrency import run_in_threadpool  # noqa: PLC0415
        from starlette.middleware import Middleware  # noqa: PLC0415
        from starlette.middleware.trustedhost import TrustedHostMiddleware  # noqa: PLC0415
        from starlette.responses import FileResponse, JSONResponse, Response  # noqa: PLC0415
        from starlette.routing import Route  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the web planner needs starlette and uvicorn: pip install 'shuffle-accounting[web]'"
        ) from exc

    def _query(request: Any) -> dict[str, str]:
        return dict(request.query_params)

    async def page(request: Any) -> Any:
        return FileResponse(_STATIC / "index.html", media_type="text/html")

    async def api_plan(request: Any) -> Any:
        try:
            result = await run_in_threadpool(compute.plan, _query(request))
        except ParameterError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(result)

    async def api_whatif(request: Any) -> Any:
        try:
            result = await run_in_threadpool(compute.whatif, _query(request))
        except ParameterError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(result)

    async def api_report(request: Any) -> Any:
        from ..report import build_report, to_json  # noqa: PLC0415

        try:
            dep = compute.parse_params(_query(request))["deployment"]
            text = await run_in_threadpool(lambda: to_json(dep, build_report(dep)))
        except ParameterError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return Response(
            text,
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="shuffle-report.json"'},
        )

    async def api_script(request: Any) -> Any:
        try:
            text = compute.script(_query(request))
        except ParameterError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return Response(
            text,
            media_type="text/x-python",
            headers={"Content-Disposition": 'attachment; filename="shuffle_plan.py"'},
        )

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/plan", api_plan),
            Route("/api/whatif", api_whatif),
            Route("/api/report.json", api_report),
            Route("/api/script.py", api_script),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))],
    )


def serve(*, host: str = "127.0.0.1", port: int = 8765, open_browser: bool = False) -> None:
    """Run the planner until interrupted (uvicorn; extra ``web``).

    Args:
        host: Address to listen on (default loopback; another address warns: anyone who can reach
            it can use the planner).
        port: TCP port in ``[1, 65535]``.
        open_browser: Open the page in the default browser.

    Raises:
        ParameterError: On an invalid host or port.
        ImportError: If the web packages are missing.
    """
    port = check_int("port", port, minimum=1, maximum=65535)
    if not isinstance(host, str) or not host:
        raise ParameterError(f"host must be a non-empty string, got {host!r}")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        warnings.warn(f"serving on {host}: the planner is reachable from other machines", stacklevel=2)
    import socket  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    try:  # refuse a busy port up front, with a clear message
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise ParameterError(f"port must be free on {host}, got {port} ({exc.strerror})") from None

    app = create_app(allowed_hosts=tuple(sorted({host, "127.0.0.1", "localhost", "::1"})))
    if open_browser:
        import threading  # noqa: PLC0415
        import webbrowser  # noqa: PLC0415

        threading.Timer(1.0, webbrowser.open, args=(f"http://{host}:{port}/",)).start()
    print(f"shuffle-accounting planner on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
