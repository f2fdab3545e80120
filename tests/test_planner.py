"""The web planner: form validation, computed numbers, downloads, HTTP API and a real browser."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.presentation.planner.compute import parse_params, plan, script
from shuffle_accounting.shuffled_krr.lower import lower_epsilon
from shuffle_accounting.shuffled_krr.mechanism import ShuffledKRR

SMALL = {"k": "3", "n": "200", "eps0": "1", "rounds": "1", "delta": "1e-6"}


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("n", "abc", "n must be a number"),
        ("n", "1e300", "n must be an integer in [2, 1000000000]"),
        ("k", "2.5", "k must be an integer"),
        ("eps0", "1000", "eps0 must be a finite real number in (0.0, 50.0]"),
        ("eps0", "nan", "eps0 must be a finite number"),
        ("rounds", "0", "rounds must be an integer in [1, 100000]"),
        ("delta", "1", "delta must be"),
        ("target_epsilon", "-1", "target_epsilon must be"),
        ("mode", "both", "mode must be one of"),
        ("bogus", "1", "unknown fields ['bogus']"),
    ],
)
def test_parse_params_rejects_bad_fields(field, value, message):
    with pytest.raises(ParameterError) as err:
        parse_params({**SMALL, field: value})
    assert message in str(err.value)


def test_plan_numbers_are_the_library_numbers():
    out = plan(SMALL)
    assert out["certified_epsilon"] == {"value": ShuffledKRR(3, 1.0, 200).epsilon(1e-6), "bound": "upper"}
    # k = 3, n = 200: auto certifies with the worst case, whose witness is the exhibited value
    low = ShuffledKRR(3, 1.0, 200).epsilon_lower(1e-6)
    assert out["exhibited_epsilon"] == {"value": low, "bound": "lower"}
    assert low >= lower_epsilon(1e-6, 3, 1.0, 200)
    assert out["exhibited_epsilon"]["value"] <= out["certified_epsilon"]["value"]
    assert out["composed_epsilon"] is None
    json.dumps(out, allow_nan=False)  # JSON-ready, no NaN


def test_plan_target_mode_calibrates_eps0():
    from shuffle_accounting.shuffled_krr.calibration import calibrate_eps0

    out = plan({**SMALL, "mode": "target", "target_epsilon": "0.8"})
    assert out["calibrated_eps0"]["eps0"] == calibrate_eps0(3, 200, 0.8, 1e-6, rtol=1e-3)
    assert out["certified_epsilon"]["value"] <= 0.8


def test_script_reproduces_the_numbers():
    code = script(SMALL)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    eps = ShuffledKRR(3, 1.0, 200).epsilon(1e-6)
    assert f"certified epsilon (upper bound): {eps!r}" in proc.stdout
    assert f"exhibited epsilon (lower bound): {ShuffledKRR(3, 1.0, 200).epsilon_lower(1e-6)!r}" in proc.stdout
    assert "rounds = 3, 200, 1e-06, 2" in script({**SMALL, "rounds": "2"}).replace(
        "k, n, delta, rounds = ", "rounds = "
    )


def test_serve_refuses_a_busy_port():
    pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    from shuffle_accounting.presentation.planner.server import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        with pytest.raises(ParameterError, match="port must be free on 127.0.0.1"):
            serve(port=s.getsockname()[1])
    with pytest.raises(ParameterError, match="port must be an integer in"):
        serve(port=70000)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 30.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
    pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "shuffle_accounting.presentation.cli", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                if _get(base + "/", timeout=1)[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("the planner server did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_api_answers_and_rejects(server):
    status, body = _get(server + "/api/plan?k=3&n=200&eps0=1&delta=1e-6")
    assert status == 200
    assert json.loads(body)["certified_epsilon"]["value"] == ShuffledKRR(3, 1.0, 200).epsilon(1e-6)
    status, body = _get(server + "/api/whatif?k=3&n=200&eps0=1&delta=1e-6")
    grid = json.loads(body)
    assert status == 200 and grid["ns"] == [20, 63, 200, 632, 2000]
    assert grid["series"][0]["values"][2] == ShuffledKRR(3, 1.0, 200).epsilon(1e-6)
    status, body = _get(server + "/api/plan?n=abc")
    assert status == 400 and json.loads(body) == {"error": "n must be a number, got 'abc'"}
    req = urllib.request.Request(server + "/api/plan", headers={"Host": "evil.example"})
    try:
        urllib.request.urlopen(req, timeout=10)
        raise AssertionError("a foreign Host header was accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 400
    status, body = _get(server + "/api/script.py?k=3&n=200&eps0=1")
    assert status == 200 and b"ShuffledKRR(k=k, eps0=eps0, n=n)" in body
    status, body = _get(server + "/api/report.json?k=3&n=200&eps0=1")
    doc = json.loads(body)
    assert status == 200 and doc["schema_version"] == 1 and doc["deployment"]["n"] == 200


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Cdp:
    """A minimal Chrome DevTools Protocol client over one page's websocket."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.next_id = 0

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg["result"]

    def js(self, expr: str):
        res = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def wait(self, expr: str, timeout: float = 30.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = self.js(expr)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expr}")


@pytest.fixture(scope="module")
def page(server):
    binary = _browser()
    if binary is None:
        pytest.skip("no Chromium/Chrome binary on PATH (Debian: apt-get install chromium)")
    pytest.importorskip("websockets", reason="the test extra (websockets) is not installed")
    port = _free_port()
    profile = tempfile.mkdtemp(prefix="planner-chromium-")
    proc = subprocess.Popen(
        [
            binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        targets = None
        for _ in range(200):
            try:
                _status, body = _get(f"http://127.0.0.1:{port}/json/list", timeout=1)
                targets = [t for t in json.loads(body) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not targets:
            raise RuntimeError("headless Chromium did not open its DevTools endpoint")
        from websockets.sync.client import connect

        with connect(targets[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10) as ws:
            cdp = _Cdp(ws)
            cdp.call("Runtime.enable")
            cdp.call("Page.navigate", url=server + "/")
            yield cdp
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


def _ready(cdp: _Cdp, previous: str | None = None) -> str:
    cond = (
        "document.getElementById('status') && document.getElementById('status').textContent === 'ready'"
        " && document.getElementById('certified').getAttribute('data-value')"
    )
    if previous is not None:
        cond += (
            f" !== {json.dumps(previous)} && document.getElementById('certified').getAttribute('data-value')"
        )
    return cdp.wait(f"({cond})")


def _set(cdp: _Cdp, **fields: str) -> None:
    for name, value in fields.items():
        cdp.js(f"document.getElementById({json.dumps(name)}).value = {json.dumps(value)}")
    cdp.js("document.getElementById('compute').click()")


def test_browser_shows_the_library_epsilon(page):
    first = _ready(page)
    assert float(first) == ShuffledKRR(10, 2.0, 10_000).epsilon(1e-6)
    _set(page, k="4", n="500", eps0="1.5", delta="1e-5", rounds="1")
    shown = _ready(page, previous=first)
    lib = ShuffledKRR(4, 1.5, 500).epsilon(1e-5)
    assert float(shown) == lib
    text = float(page.js("document.getElementById('certified').textContent"))
    assert lib <= text <= lib * (1 + 1e-5)  # displayed rounded up, 6 digits
    low_text = float(page.js("document.getElementById('exhibited').textContent"))
    low = lower_epsilon(1e-5, 4, 1.5, 500)
    assert low * (1 - 1e-5) <= low_text <= low  # displayed rounded down
    page.wait("document.getElementById('plot-status').textContent === 'plots: ready'")
    assert page.js("document.querySelectorAll('#plot-eps polyline').length") == 1
    assert page.js("document.querySelectorAll('#plot-acc polyline').length") >= 1
    assert page.js("document.getElementById('dl-json').href").endswith("delta=1e-5")


def test_browser_shows_errors(page):
    _ready(page)
    _set(page, n="abc")
    msg = page.wait(
        "document.getElementById('error').classList.contains('on') && document.getElementById('error').textContent"
    )
    assert msg == "n must be a number, got 'abc'"
    _set(page, n="300")
    page.wait(
        "!document.getElementById('error').classList.contains('on') && document.getElementById('status').textContent === 'ready'"
    )
    assert float(page.js("document.getElementById('certified').getAttribute('data-value')")) == ShuffledKRR(
        4, 1.5, 300
    ).epsilon(1e-5)
