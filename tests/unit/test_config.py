from __future__ import annotations

import pytest

from medgraph.config import ConfigError, load_config, substitute_env
from medgraph.config.models import EmbeddedGraphStoreConfig, Neo4jGraphStoreConfig


def test_local_yaml_loads_with_embedded_defaults(repo_root):
    cfg = load_config(repo_root / "configs" / "local.yaml")
    assert isinstance(cfg.stores.graph, EmbeddedGraphStoreConfig)
    assert cfg.stores.vector.kind == "qdrant_local"
    assert cfg.stores.embedded
    assert cfg.chunking.max_tokens <= 300


def test_env_substitution_with_default_and_missing():
    env = {"HOME_DIR": "/data"}
    assert substitute_env({"a": ["${HOME_DIR}/x", "${NOPE:-fallback}"]}, env) == {"a": ["/data/x", "fallback"]}
    with pytest.raises(ConfigError, match="NOPE"):
        substitute_env("${NOPE}", env)


def test_set_overrides_parse_yaml_values(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("chunking:\n  max_tokens: 200\n")
    cfg = load_config(path, ["chunking.max_tokens=120", "pipeline.embed.max_actors=2", "stores.graph.kind=neo4j"])
    assert cfg.chunking.max_tokens == 120
    assert cfg.pipeline.embed.max_actors == 2
    assert isinstance(cfg.stores.graph, Neo4jGraphStoreConfig)


def test_config_is_frozen_and_rejects_unknown_keys(tmp_path):
    cfg = load_config(None)
    with pytest.raises(ValueError):
        cfg.chunking.max_tokens = 5  # type: ignore[misc]
    with pytest.raises(ConfigError, match="max_tokenz"):
        load_config(None, ["chunking.max_tokenz=5"])
    with pytest.raises(ConfigError, match="a.b=c"):
        load_config(None, ["chunking"])


def test_switching_backend_kind_drops_the_old_backends_fields(repo_root):
    cfg = load_config(repo_root / "configs" / "local.yaml",
                      ["stores.graph.kind=neo4j", "stores.graph.uri=bolt://db:7687"])
    assert isinstance(cfg.stores.graph, Neo4jGraphStoreConfig) and cfg.stores.graph.uri == "bolt://db:7687"


def test_backend_validates_only_its_own_fields():
    with pytest.raises(ConfigError):
        load_config(None, ["stores.graph.uri=bolt://x"])  # 'uri' is not a field of the embedded store
    cfg = load_config(None, ["stores.graph.kind=neo4j", "stores.graph.uri=bolt://db:7687"])
    assert cfg.stores.graph.uri == "bolt://db:7687"  # type: ignore[union-attr]


def test_stage_pool_bounds_are_validated():
    with pytest.raises(ConfigError, match="min_actors"):
        load_config(None, ["pipeline.embed.min_actors=3", "pipeline.embed.max_actors=2"])
