"""Per-document isolation: run one parse or OCR step in a child process with a time and memory limit.

Input: a function named by its import path (``"medgraph.ingest.pdf:parse_pdf"``) and picklable
arguments. Output: its return value, or ``IsolationError`` saying why there is none: the
function's own exception (``PdfError: not a readable PDF ...``), a timeout, the memory limit, or
a crash with its signal. The caller never hangs and never dies with the document.

A ``Sandbox`` keeps one child (``python -m medgraph.ingest.isolation``) and reuses it for the next
document, so the import cost is paid once per Ray actor. The child caps its own address space
(``RLIMIT_AS``, inherited by any ``tesseract`` it starts) before it imports anything, answers
each call over its stdin/stdout pipes (length-prefixed pickles), and exits when its parent goes
away. It runs in its own process group: on a timeout the whole group is killed and the next
call starts a fresh child; after a memory error or a crash, too.
"""

from __future__ import annotations

import importlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

_HEADER = 8


class IsolationError(RuntimeError):
    """The isolated call produced no result; the message says why."""


def _frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(_HEADER, "big") + data


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class Sandbox:
    """One reusable child process; ``call`` runs a function in it under a timeout."""

    def __init__(self, memory_mb: int | None = None, env: dict[str, str] | None = None) -> None:
        self.memory_mb = memory_mb
        self.env = env or {}
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        env = {**os.environ, "OMP_THREAD_LIMIT": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **self.env}
        cmd = [sys.executable, "-m", "medgraph.ingest.isolation", str(self.memory_mb or 0)]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                      start_new_session=True)
        return self._proc

    def call(self, target: str, *args: Any, timeout_s: float, **kwargs: Any) -> Any:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(_frame((target, args, kwargs)))
            proc.stdin.flush()
        except BrokenPipeError:
            raise IsolationError(self._died()) from None
        deadline = time.monotonic() + timeout_s
        header = self._read(proc, _HEADER, deadline, timeout_s)
        ok, value = pickle.loads(self._read(proc, int.from_bytes(header, "big"), deadline, timeout_s))
        if ok:
            return value
        if value.startswith("MemoryError"):
            self.close()  # the child's heap is suspect after an allocation failure
        raise IsolationError(value)

    def _read(self, proc: subprocess.Popen[bytes], n: int, deadline: float, timeout_s: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                self.close()
                raise IsolationError(f"timed out after {timeout_s:.0f} s")
            chunk = os.read(fd, min(n, 1 << 20))
            if not chunk:
                raise IsolationError(self._died())
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _died(self) -> str:
        proc, self._proc = self._proc, None
        code = proc.wait(timeout=10) if proc is not None else 0
        limit = f"; its memory limit is {self.memory_mb} MB" if self.memory_mb else ""
        if code < 0:
            return f"the parser process died of {_signal_name(code)} (a crash in native code{limit})"
        return f"the parser process exited with status {code}{limit}"

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the child and any tesseract it started
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to clean up with
            pass


def run_isolated(sandbox: Sandbox | None, target: str, *args: Any, timeout_s: float, **kwargs: Any) -> Any:
    """``sandbox.call(...)``, or the plain call in this process when there is no sandbox."""
    if sandbox is not None:
        return sandbox.call(target, *args, timeout_s=timeout_s, **kwargs)
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


# --- the child -------------------------------------------------------------------------------


def _watch_parent() -> None:
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os.killpg(0, signal.SIGKILL)


def _serve(memory_mb: int) -> None:
    if memory_mb:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    threading.Thread(target=_watch_parent, daemon=True).start()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    while True:
        header = stdin.read(_HEADER)
        if len(header) < _HEADER:
            return
        target, args, kwargs = pickle.loads(stdin.read(int.from_bytes(header, "big")))
        fatal = False
        try:
            module, _, name = target.partition(":")
            result: tuple[bool, Any] = (True, getattr(importlib.import_module(module), name)(*args, **kwargs))
        except MemoryError:
            result, fatal = (False, f"MemoryError: the document needs more than the memory limit of {memory_mb} MB"), True
        except Exception as exc:  # every failure goes back to the caller as its reason
            result = (False, f"{type(exc).__name__}: {exc}")
        try:
            frame = _frame(result)
        except Exception as exc:  # an unpicklable result is a failure of the call, not of the child
            frame = _frame((False, f"{type(exc).__name__}: the result cannot be sent back: {exc}"))
        stdout.write(frame)
        stdout.flush()
        if fatal:
            return


if __name__ == "__main__":
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
