"""Cluster configs stay consistent with the code and with configs/: KubeRay manifests, the Ray
cluster launcher YAML, the Serve config files and the tier deployments the app builder creates."""

from __future__ import annotations

import importlib
import math
import re
import shlex
from pathlib import Path

import pytest
import yaml

from medgraph.config import load_config
from serve.app import build, deployed_engines, deployment_names, tier_options

REPO = Path(__file__).resolve().parents[2]
KUBERAY = REPO / "cluster" / "kuberay"
SERVE_CONFIGS = sorted((REPO / "configs" / "serve").glob("*.yaml"))
# GKE accelerator label of each Ray accelerator type used by configs/cluster.yaml
GKE_ACCELERATOR = {"L4": "nvidia-l4", "A100": "nvidia-tesla-a100", "H100": "nvidia-h100-80gb", "A10G": "nvidia-a10g"}


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _medgraph_config(app: dict):
    args = app.get("args", {})
    return load_config(REPO / args.get("config", "configs/local.yaml"), args.get("set", []))


def _gpu_groups(cluster_spec: dict) -> dict[str, int]:
    """accelerator type -> GPUs per node, from the worker groups' node selectors."""
    by_label = {v: k for k, v in GKE_ACCELERATOR.items()}
    out = {}
    for group in cluster_spec["workerGroupSpecs"]:
        spec = group["template"]["spec"]
        label = spec.get("nodeSelector", {}).get("cloud.google.com/gke-accelerator")
        gpus = int(spec["containers"][0]["resources"]["limits"].get("nvidia.com/gpu", 0))
        if label:
            assert gpus > 0, f"group {group['groupName']} selects GPU nodes but requests no GPU"
            out[by_label[label]] = gpus
    return out


def _needed_gpus(cfg) -> dict[str, int]:
    """accelerator type -> GPUs one replica of each vllm engine needs on one node (PACK placement)."""
    need: dict[str, int] = {}
    for engine in deployed_engines(cfg).values():
        if engine.kind == "vllm":
            gpus = math.ceil(engine.deployment.num_gpus * engine.tensor_parallel_size)
            need[engine.accelerator_type] = max(need.get(engine.accelerator_type, 0), gpus)
    return need


def test_manifests_parse_and_have_the_expected_kinds():
    kinds = {p.name: _yaml(p)["kind"] for p in KUBERAY.glob("*.yaml")}
    assert kinds == {"raycluster.yaml": "RayCluster", "rayservice.yaml": "RayService", "rayjob.yaml": "RayJob",
                     "networkpolicy.yaml": "NetworkPolicy"}
    for p in KUBERAY.glob("*.yaml"):
        assert _yaml(p)["apiVersion"] == ("networking.k8s.io/v1" if p.name == "networkpolicy.yaml" else "ray.io/v1")


def _ray_cluster_spec(manifest: str) -> dict:
    doc = _yaml(KUBERAY / manifest)
    return doc["spec"]["rayClusterConfig"] if doc["kind"] == "RayService" else doc["spec"]


@pytest.mark.parametrize("manifest", ["raycluster.yaml", "rayservice.yaml"])
def test_ray_clusters_need_the_ray_token_and_the_store_secrets(manifest):
    """The job API runs submitted code with the cluster's secrets: Ray token authentication on, its
    token from a Secret; the Qdrant key and the Redis password are not optional."""
    spec = _ray_cluster_spec(manifest)
    assert spec["authOptions"] == {"mode": "token", "secretName": "medgraph-ray-token"}
    assert "medgraph-ray-token" in (KUBERAY / manifest).read_text().split("apiVersion")[0]  # the header says how
    for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]:
        env = {e["name"]: e for e in group["template"]["spec"]["containers"][0]["env"]}
        for name in ("QDRANT_API_KEY", "REDIS_PASSWORD"):
            assert env[name]["valueFrom"]["secretKeyRef"].get("optional", False) is False, (manifest, name)


def test_only_ray_pods_and_the_operator_reach_the_ray_control_plane():
    policy = _yaml(KUBERAY / "networkpolicy.yaml")["spec"]
    assert policy["podSelector"] == {"matchLabels": {"ray.io/is-ray-node": "yes"}} and policy["policyTypes"] == ["Ingress"]
    open_ports = set()
    for rule in policy["ingress"]:
        ports = {p["port"] for p in rule.get("ports", [])}
        sources = rule.get("from")
        if not sources:  # open to anyone: only the Serve HTTP port, behind required API keys
            open_ports |= ports
        else:
            for source in sources:
                assert source.get("podSelector") == {"matchLabels": {"ray.io/is-ray-node": "yes"}} or (
                    source.get("namespaceSelector") == {"matchLabels": {"medgraph.io/ray-control": "allowed"}}
                    and ports <= {8265, 6379})
    assert open_ports == {8000} and load_config(REPO / "configs" / "cluster.yaml").auth.required
    launcher = _yaml(REPO / "cluster" / "ray-cluster.yaml")
    assert launcher["file_mounts"] == {"~/.ray/auth_token": "~/.ray/auth_token"}
    for command in (launcher["head_start_ray_commands"][-1], launcher["worker_start_ray_commands"][-1]):
        assert command.startswith("export RAY_AUTH_MODE=token;") and "ray start" in command


def test_rayservice_serves_the_repository_serve_config():
    service = _yaml(KUBERAY / "rayservice.yaml")
    embedded = yaml.safe_load(service["spec"]["serveConfigV2"])
    assert embedded == _yaml(REPO / "configs" / "serve" / "cluster.yaml")


@pytest.mark.parametrize("path", SERVE_CONFIGS, ids=lambda p: p.name)
def test_serve_configs_reference_code_and_configs_that_exist(path):
    config = _yaml(path)
    for app in config["applications"]:
        module, _, attr = app["import_path"].partition(":")
        assert callable(getattr(importlib.import_module(module), attr))
        cfg = _medgraph_config(app)  # the MedGraph config and overrides validate
        names = deployment_names(cfg)
        assert len(names) == len(set(names)) and "ingress" in names and "agent" in names
        assert ("router" in names) != ("router" in cfg.serve.colocate)  # deployed, or built in the agent
        for tier in ("small", "medium", "large"):
            engine = cfg.tiers.engine_for(tier)
            colocated = cfg.tiers.engines[engine].kind == "extractive" and "extractive" in cfg.serve.colocate
            assert (f"llm-{engine}" in names) != colocated
        for override in app.get("deployments", []):  # per-deployment overrides name real deployments
            assert override["name"] in names


def test_the_app_builder_creates_exactly_the_planned_deployments():
    from ray.serve._private.build_app import build_app

    cfg = load_config(REPO / "configs" / "local.yaml", ["tiers.medium=gemma", "tiers.large=gemma"])
    built = build_app(build(cfg), name="medgraph")
    assert sorted(d.name for d in built.deployments) == sorted(deployment_names(cfg))
    gemma = next(d for d in built.deployments if d.name == "llm-gemma")
    assert gemma.ray_actor_options["num_cpus"] == cfg.tiers.engines["gemma"].deployment.num_cpus


def test_tier_deployment_options_carry_autoscaling_and_resources():
    cfg = load_config(REPO / "configs" / "local.yaml", [
        "tiers.engines.gemma.deployment.autoscaling.min_replicas=0",
        "tiers.engines.gemma.deployment.autoscaling.max_replicas=3",
        "tiers.engines.gemma.deployment.autoscaling.target_ongoing_requests=2",
        "tiers.engines.gemma.deployment.num_cpus=1.5"])
    opts = tier_options("gemma", cfg.tiers.engines["gemma"], cfg.serve)
    assert opts["name"] == "llm-gemma" and opts["ray_actor_options"] == {"num_cpus": 1.5}
    assert opts["autoscaling_config"] == {"min_replicas": 0, "max_replicas": 3, "target_ongoing_requests": 2.0}
    assert "num_replicas" not in opts
    cluster = load_config(REPO / "configs" / "cluster.yaml")
    gate = tier_options("large", cluster.tiers.engines["large"], cluster.serve)
    assert gate["num_replicas"] == 1 and "num_gpus" not in gate["ray_actor_options"]  # GPUs: its LLMServer


def test_kuberay_gpu_groups_provide_the_tiers_gpu_types():
    cfg = _medgraph_config(_yaml(REPO / "configs" / "serve" / "cluster.yaml")["applications"][0])
    need = _needed_gpus(cfg)
    assert need, "the cluster config runs vLLM tiers"
    for manifest, spec in [("raycluster.yaml", lambda d: d["spec"]), ("rayservice.yaml", lambda d: d["spec"]["rayClusterConfig"])]:
        have = _gpu_groups(spec(_yaml(KUBERAY / manifest)))
        for accel, gpus in need.items():
            assert have.get(accel, 0) >= gpus, f"{manifest}: no {accel} group with {gpus} GPU(s) per node"


def test_launcher_node_types_provide_the_tiers_gpu_types():
    launcher = _yaml(REPO / "cluster" / "ray-cluster.yaml")
    types = launcher["available_node_types"]
    assert launcher["head_node_type"] in types
    cfg = _medgraph_config(_yaml(REPO / "configs" / "serve" / "cluster.yaml")["applications"][0])
    for accel, gpus in _needed_gpus(cfg).items():
        assert any(t["resources"].get(f"accelerator_type:{accel}") and t["resources"].get("GPU", 0) >= gpus
                   for t in types.values()), f"no node type with {gpus} x {accel}"


def test_rayjob_runs_the_corpus_build_on_the_batch_cluster():
    job = _yaml(KUBERAY / "rayjob.yaml")
    cluster = _yaml(KUBERAY / "raycluster.yaml")
    assert job["spec"]["clusterSelector"]["ray.io/cluster"] == cluster["metadata"]["name"]
    argv = shlex.split(job["spec"]["entrypoint"])
    assert argv[:2] == ["python", "-m"]
    module = importlib.import_module(argv[2])
    assert callable(module.main)
    config = argv[argv.index("--config") + 1]
    assert (REPO / config).is_file()
    load_config(REPO / config)


def test_images_are_built_by_the_dockerfile():
    dockerfile = (REPO / "cluster" / "Dockerfile").read_text()
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    targets = set(re.findall(r"^FROM \S+ AS (\w+)$", dockerfile, re.M))
    assert targets == {"cpu", "gpu"}
    images = set(re.findall(r"image: (\S+)", "\n".join(p.read_text() for p in KUBERAY.glob("*.yaml"))))
    images.add(_yaml(REPO / "cluster" / "ray-cluster.yaml")["docker"]["image"])
    assert images == {f"medgraph/medgraph:{version}", f"medgraph/medgraph:{version}-gpu"}
    for image in images:
        assert f"-t {image} ." in dockerfile


def test_cluster_traces_go_to_the_bundled_backend_from_every_serve_process():
    """configs/cluster.yaml turns tracing on; Serve's own spans (proxy, handle calls) use the same
    exporter, which reads its address from the pods' environment: the serve configs name the exporter
    hook and the ratio of the config, every RayService container carries the exporter environment the
    config implies, and that address is the Service of cluster/phoenix/phoenix-k8s.yaml."""
    from urllib.parse import urlsplit

    from medgraph.observe.tracing import EXPORTER_IMPORT_PATH, exporter_environment

    cfg = load_config(REPO / "configs" / "cluster.yaml").tracing
    assert cfg.enabled and not cfg.record_prompts
    for path in SERVE_CONFIGS:
        if path.name == "cluster.yaml":
            tracing = _yaml(path)["tracing_config"]
            assert tracing == {"enabled": True, "exporter_import_path": EXPORTER_IMPORT_PATH,
                               "sampling_ratio": cfg.sample_ratio}
    module, _, name = EXPORTER_IMPORT_PATH.partition(":")
    assert callable(getattr(importlib.import_module(module), name))
    spec = _ray_cluster_spec("rayservice.yaml")
    for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]:
        env = {e["name"]: e.get("value") for e in group["template"]["spec"]["containers"][0]["env"]}
        assert {k: env.get(k) for k in exporter_environment(cfg)} == exporter_environment(cfg)
    backend = list(yaml.safe_load_all((REPO / "cluster" / "phoenix" / "phoenix-k8s.yaml").read_text()))
    service = next(d for d in backend if d["kind"] == "Service")
    url = urlsplit(cfg.endpoint)
    assert url.hostname == f"{service['metadata']['name']}.medgraph.svc" and url.path == "/v1/traces"
    assert url.port in {p["port"] for p in service["spec"]["ports"]} and service["spec"]["type"] == "ClusterIP"
    image = next(d for d in backend if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    dev = (REPO / "cluster" / "phoenix" / "phoenix-dev.sh").read_text()
    assert image.endswith("version-" + re.search(r'PHOENIX_VERSION:-([0-9.]+)', dev).group(1))


def test_every_serve_process_on_the_cluster_uses_the_throughput_optimised_data_plane():
    """What a local cluster gets from jobs/ray_runtime.py, every RayService pod gets from its manifest."""
    from jobs.ray_runtime import SERVE_THROUGHPUT_ENV

    spec = _ray_cluster_spec("rayservice.yaml")
    for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]:
        env = {e["name"]: e.get("value") for e in group["template"]["spec"]["containers"][0]["env"]}
        assert {k: env.get(k) for k in SERVE_THROUGHPUT_ENV} == SERVE_THROUGHPUT_ENV


def test_cluster_serving_requires_keys_and_keeps_state_on_servers():
    cfg = load_config(REPO / "configs" / "cluster.yaml")
    assert cfg.auth.required and cfg.auth.force_tier == "admin"
    assert cfg.auth.pepper_env and cfg.auth.admin_key_env
    assert cfg.app.path.startswith("postgresql://") and "@" in cfg.app.path and ":" not in cfg.app.path.split("@")[0][13:]
    assert cfg.redis.url and cfg.redis.url.startswith("redis://")
    assert cfg.serve.ingress.num_replicas == 2 and not cfg.serve.tier_admin


@pytest.mark.parametrize("manifest", ["raycluster.yaml", "rayservice.yaml"])
def test_every_container_takes_its_secrets_from_the_kubernetes_secret(manifest):
    doc = _yaml(KUBERAY / manifest)
    spec = doc["spec"]["rayClusterConfig"] if doc["kind"] == "RayService" else doc["spec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    cfg = load_config(REPO / "configs" / "cluster.yaml")
    for group in groups:
        env = {e["name"]: e for e in group["template"]["spec"]["containers"][0]["env"]}
        for name, required in ((cfg.auth.pepper_env, True), ("PGPASSWORD", True), (cfg.auth.admin_key_env, False),
                               (cfg.redis.password_env, True)):
            ref = env[name]["valueFrom"]["secretKeyRef"]  # never a literal value
            assert ref["name"] == "medgraph-secrets" and "value" not in env[name]
            assert ref.get("optional", False) is (not required), name
        assert env["MEDGRAPH_APP_DB"]["value"].startswith("postgresql://") and env["REDIS_URL"]["value"].startswith("redis://")


@pytest.mark.parametrize("app_path,agents", [("/tmp/app.sqlite", 1), ("postgresql://u@db:5432/medgraph", 2)])
def test_the_agent_scales_only_when_the_app_state_is_on_a_server(app_path, agents):
    from ray.serve._private.build_app import build_app

    cfg = load_config(REPO / "configs" / "local.yaml", [f"app.path={app_path}", "serve.agent.num_replicas=2"])
    agent = next(d for d in build_app(build(cfg), name="medgraph").deployments if d.name == "agent")
    assert agent.num_replicas == agents


class _Front:
    def __init__(self, cfg, ingress):
        self.ingress = ingress


def test_a_new_deployment_is_one_row_of_the_table(monkeypatch):
    """``serve.app.DEPLOYMENTS`` is the application: a new row is built, bound to the handles it
    names and sized by its section, and the deployment names the manifests are checked against
    follow it."""
    from ray.serve._private.build_app import build_app

    from serve import app

    cfg = load_config(REPO / "configs" / "local.yaml")
    row = app.Deployment("front", _Front, lambda s: s.reranker, calls=("ingress",), owns_files=lambda c: True)
    monkeypatch.setattr(app, "DEPLOYMENTS", (*app.DEPLOYMENTS, row))  # the last row is the entry
    built = {d.name: d for d in build_app(app.build(cfg), name="medgraph").deployments}
    assert sorted(built) == sorted(app.deployment_names(cfg)) and "front" in built and "ingress" in built
    assert built["front"].ray_actor_options["num_cpus"] == cfg.serve.reranker.num_cpus
    assert built["front"].num_replicas == 1  # owns files: one replica
