"""Compiled DSPy programs on disk: saved as DSPy's JSON state, with a record beside it.

``save_program(program, path, meta)`` writes ``program``'s state (``dspy.Module.save``: each
predictor's instructions, demos and fields) to ``path`` and, with ``meta``, the record
``<path>.meta.json`` (``meta_path``). ``load_state(program, path, what)`` reads a state back into a
fresh program of the same class; a missing file, a file that is not JSON or a state of another
program is an error that names the file and what it should have been (``what``: "router",
"generator"), raised when the service starts, not on a request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import dspy

P = TypeVar("P", bound=dspy.Module)


def meta_path(path: str | Path) -> Path:
    """Where the record of the program at ``path`` is written."""
    path = Path(path)
    return path.with_name(path.name + ".meta.json")


def save_program(program: dspy.Module, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
    """``program``'s state as JSON at ``path``, and ``meta`` beside it when given."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    program.save(str(path))
    if meta is not None:
        meta_path(path).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load_state(program: P, path: str | Path, what: str) -> P:
    """``program`` with the compiled state of ``path``; a clear error when the file is unusable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} program not found: {path}")
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a JSON {what} program ({exc.msg})") from exc
    try:
        program.load(str(path))
    except Exception as exc:  # noqa: BLE001 - any state mismatch is the file's fault, said plainly
        raise ValueError(f"{path}: not a {what} program ({type(exc).__name__}: {exc})") from exc
    return program
