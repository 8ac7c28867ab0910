"""The vLLM tier's code path over real Ray Serve handles on CPU, with an ``LLMServer``-shaped fake.

The real ``TierService`` gate (``llm-gpu``) and ``VLLMChatModel`` run as in production; in place of
``MedGraphLLMServer`` (vLLM, GPUs) two replicas of ``ServedFakeLLMServer`` serve ``chat`` (SSE
batches), ``sleep(level=)``, ``wakeup()`` and ``is_sleeping()``, following the gate's sleep board
through the same ``SleepFollower`` code. Checked: answers and streams through the gate, sleep
refused while a request is in flight, sleep reaching both replicas (the board's reports and the
replicas themselves refusing chats), wake on demand before serving, and the gate's stats.
The real vLLM run is tests/integration/test_vllm_tier.py (GPU machines only).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

import pytest

from medgraph.llm.base import ChatParams
from tests.unit.test_grounded_generation import EVIDENCE

pytestmark = pytest.mark.integration
APP = "vllm-fake-tier"
MESSAGES = [{"role": "user", "content": "Is metformin first-line?"}]
REPLY = "Metformin is first-line [1]."


@pytest.fixture(scope="module")
def tier():
    import ray
    from ray import serve

    from medgraph.config import load_config
    from serve.app import tier_options
    from serve.tiers import TierService
    from tests.fake_llm_server import ServedFakeLLMServer

    cfg = load_config(
        None,
        [
            "tiers.engines.gpu.kind=vllm",
            "tiers.engines.gpu.model_id=fake",
            "tiers.engines.gpu.model_source=/nowhere",
            "tiers.engines.gpu.sleep_level=2",
            "tiers.engines.gpu.deployment.num_gpus=0.5",
            "tiers.small=gpu",
            "tiers.medium=gpu",
            "tiers.large=gpu",
        ],
    )
    engine = cfg.tiers.engines["gpu"]
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    server = (
        serve.deployment(ServedFakeLLMServer)
        .options(name="vllm-gpu:fake", num_replicas=2, ray_actor_options={"num_cpus": 0})
        .bind("fake", sleep_board_model="fake", token_delay_s=0.1)
    )
    gate = (
        serve.deployment(TierService)
        .options(**tier_options("gpu", engine, cfg.serve))
        .bind(cfg, "gpu", server)
    )
    handle = serve.run(gate, name=APP, route_prefix=None)
    try:
        yield handle, serve.get_deployment_handle("vllm-gpu:fake", app_name=APP)
    finally:
        serve.shutdown()  # deletes the application
        if started_ray:
            ray.shutdown()


def _board_states() -> dict[str, str]:
    import ray

    from serve.vllm_engine import BOARD_NAMESPACE, board_name

    board = ray.get_actor(board_name(APP, "fake"), namespace=BOARD_NAMESPACE)
    return {r: s.state for r, s in ray.get(board.live.remote()).items()}


def _wait_for(check, timeout_s: float = 20.0):
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_fake_vllm_tier_over_serve_handles(tier):
    from medgraph.retrieve.types import QueryAnalysis

    gate, server = tier
    _wait_for(lambda: len(_board_states()) == 2)  # both replicas follow the board
    assert gate.chat.remote(MESSAGES, ChatParams()).result(timeout_s=30) == REPLY

    # a request in flight: the gate refuses to sleep, then sleeps every replica once it is done
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        slow = pool.submit(lambda: gate.chat.remote(MESSAGES, ChatParams()).result(timeout_s=30))
        _wait_for(lambda: gate.stats.remote().result()["in_flight"] == 1)
        refused = gate.sleep.remote().result(timeout_s=30)
        assert refused["slept"] is False and refused["state"] == "awake"
        assert slow.result() == REPLY
    slept = gate.sleep.remote().result(timeout_s=30)
    assert slept["slept"] is True and slept["state"] == "asleep" and slept["sleeps"] == 1
    assert _board_states() == {r: "asleep" for r in _board_states()} and len(_board_states()) == 2
    for _ in range(4):  # whichever replica the router picks, it is asleep
        with pytest.raises(Exception, match="engine is sleeping"):
            list(server.options(stream=True).chat.remote(type("R", (), {"stream": True})()))

    # a request on the sleeping tier wakes every replica first, then is served (streamed, parsed, grounded)
    analysis = QueryAnalysis("Is metformin first-line for type 2 diabetes?", "en")
    answer = gate.answer.remote(analysis.text, analysis, EVIDENCE).result(timeout_s=30)
    assert answer.model_used == "vllm:fake"
    stats = gate.stats.remote().result()
    assert stats["wakes"] == 1 and stats["state"] == "awake" and stats["wake_s"]["last"] is not None
    assert set(_board_states().values()) == {"awake"}
    streamed = []

    async def collect():
        async for event in gate.options(stream=True).stream.remote(analysis.text, analysis, EVIDENCE):
            streamed.append(event)

    asyncio.run(collect())
    assert streamed and "answer" in streamed[-1] and streamed[-1]["answer"].model_used == "vllm:fake"
