"""The base of every config model: frozen (a config never changes once loaded) and strict (an
unknown key is an error, not silently ignored)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
