"""Load YAML into ``MedGraphConfig``: ``${ENV}`` / ``${ENV:-default}`` substitution, then
``--set a.b=c`` overrides (values parsed as YAML scalars), then validation.

Relative paths in the file stay relative to the working directory, like any CLI argument.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from medgraph.config.models import MedGraphConfig

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class ConfigError(ValueError):
    """A config file or override that cannot be used, with the reason."""


def substitute_env(value: Any, env: Mapping[str, str] | None = None) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in every string of a nested structure."""
    env = os.environ if env is None else env

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"environment variable {name} is not set and has no default")

    if isinstance(value, str):
        return _ENV.sub(repl, value)
    if isinstance(value, dict):
        return {k: substitute_env(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_env(v, env) for v in value]
    return value


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Apply ``a.b.c=value`` overrides; the value is parsed as YAML (``2`` → int, ``[1,2]`` → list).

    Changing a backend's ``kind`` (``stores.graph.kind=neo4j``) starts that section afresh, so
    the previous backend's fields do not leak into the new one; set its fields after the kind.
    """
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not of the form a.b=c")
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {item!r}: {part!r} is not a section")
            node = child
        value = yaml.safe_load(raw)
        if parts[-1] == "kind" and node.get("kind", value) != value:
            node.clear()  # a new backend: the old backend's fields do not apply to it
        node[parts[-1]] = value
    return data


def load_config(
    path: str | Path | None = None,
    overrides: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
) -> MedGraphConfig:
    """Read a YAML file (or start from defaults when ``path`` is None) into a frozen config."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        loaded = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{p}: top level must be a mapping")
        data = loaded
    data = substitute_env(data, env)
    data = apply_overrides(data, overrides)
    try:
        return MedGraphConfig.model_validate(data)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        raise ConfigError(f"invalid config{f' {path}' if path else ''}:\n{exc}") from exc
