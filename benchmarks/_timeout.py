"""Shared benchmark helper: run one row in a child process, stopped after a time limit.

``call_with_timeout(fn, args, timeout)`` forks a child that computes ``fn(*args)`` and sends
the result back through a pipe; after ``timeout`` seconds without an answer the child is
terminated and a string saying so is returned instead (a table row then reads "timeout").
``timeout <= 0`` calls ``fn`` in this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

__all__ = ["call_with_timeout"]


def _child(conn, fn: Callable[..., Any], args: tuple) -> None:
    conn.send(fn(*args))
    conn.close()


def call_with_timeout(fn: Callable[..., Any], args: tuple, timeout: float) -> Any:
    """``fn(*args)``, in a forked child stopped after ``timeout`` seconds when ``timeout > 0``."""
    if timeout <= 0:
        return fn(*args)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args))
    proc.start()
    send.close()
    out = recv.recv() if recv.poll(timeout) else f"timeout: no certificate within {timeout:g} s"
    proc.join(1.0)
    if proc.is_alive():
        proc.terminate()
        proc.join()
    return out
