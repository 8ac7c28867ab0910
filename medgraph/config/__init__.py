"""Configuration: YAML → frozen pydantic models (see ``models``), loaded by ``load_config``."""

from medgraph.config.loader import ConfigError, apply_overrides, load_config, substitute_env
from medgraph.config.models import MedGraphConfig

__all__ = ["ConfigError", "MedGraphConfig", "apply_overrides", "load_config", "substitute_env"]
