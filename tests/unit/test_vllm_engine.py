"""The vLLM tier's runtime on CPU: stream parsing, the sleep board, the gate (``VLLMChatModel``) and
the tier manager over it, with ``LLMServer``-shaped fakes (tests/fake_llm_server.py) in place of
vLLM, which needs GPUs. The fakes follow the board through the same ``SleepFollower`` code as the
real ``MedGraphLLMServer``; here they run on an event loop in a thread, in-process (no Ray).
tests/integration/test_vllm_fake_serve.py runs the same over real Ray Serve handles.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from medgraph.config.llm import VLLMEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import make_engine
from medgraph.llm.base import ChatParams, ModelAsleep
from serve.tiers import TierManager
from serve.vllm_engine import (
    ASLEEP,
    AWAKE,
    BoardClient,
    PlainChatRequest,
    SleepBoard,
    VLLMChatModel,
    _chunks_text,
    board_name,
)
from tests.fake_llm_server import FakeLLMServer, FakeResponse, sse

MESSAGES = [{"role": "user", "content": "Is metformin first-line?"}]


# --- stream parsing --------------------------------------------------------------------------


def _delta(text: str) -> str:
    return sse({"choices": [{"index": 0, "delta": {"content": text}}]})


def test_sse_strings_lists_and_done():
    assert list(_chunks_text(_delta("Met") + _delta("formin"))) == ["Met", "formin"]
    batched = [_delta("a"), [_delta("b"), "data: [DONE]\n\n"], ": keep-alive\n\n", "event: ping\n"]
    assert list(_chunks_text(batched)) == ["a", "b"]
    empty = sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})  # role-only / finish chunks
    assert list(_chunks_text([empty, sse({"choices": [{"delta": {}, "finish_reason": "stop"}]})])) == []
    assert list(_chunks_text("data:" + '{"choices":[{"message":{"content":"whole"}}]}')) == ["whole"]


def test_response_objects_and_dicts():
    assert list(_chunks_text(FakeResponse("The answer [1]."))) == ["The answer [1]."]
    assert list(_chunks_text({"choices": [{"message": {"content": "x"}}, {"delta": {"content": "y"}}]})) == [
        "x",
        "y",
    ]
    assert list(_chunks_text({"choices": []})) == [] and list(_chunks_text(None)) == []


@pytest.mark.parametrize(
    "item",
    [
        sse({"error": {"message": "context length exceeded", "code": 400}}),
        [_delta("ok"), sse({"error": "engine dead"})],
        {"error": {"message": "bad request"}},
    ],
)
def test_errors_raise(item):
    with pytest.raises(RuntimeError, match="vLLM error"):
        list(_chunks_text(item))


# --- the sleep board -------------------------------------------------------------------------


def test_board_settles_when_every_live_replica_reports_the_epoch():
    board = SleepBoard(poll_s=0.1, stale_s=5)
    assert board.settled(0, now=0) == ("done", {})  # no replica yet: nothing to wait for
    board.report("r1", AWAKE, 0, now=0)
    board.report("r2", AWAKE, 0, now=0)
    epoch = board.set(ASLEEP, 2)
    assert board.report("r1", AWAKE, 0, now=1) == (ASLEEP, 2, epoch, 0.1)
    board.report("r1", ASLEEP, epoch, now=1)
    status, states = board.settled(epoch, now=1)
    assert status == "pending" and states == {"r1": f"asleep@{epoch}", "r2": "awake@0"}
    board.report("r2", "going_to_sleep", 0, now=2)
    assert board.settled(epoch, now=2)[0] == "pending"
    board.report("r2", ASLEEP, epoch, now=3)
    assert board.settled(epoch, now=3)[0] == "done"
    newer = board.set(AWAKE)
    assert board.settled(epoch, now=3)[0] == "superseded"
    board.report("r1", "error: RuntimeError: CUDA", newer, now=4)
    assert board.settled(newer, now=4)[0].startswith("error: r1: error: RuntimeError: CUDA")
    board.report("r1", AWAKE, newer, now=5)
    board.report("r3", AWAKE, newer, now=5)
    assert board.settled(newer, now=5)[0] == "pending"  # r2 still reports asleep ...
    assert board.settled(newer, now=9)[0] == "done"  # ... until it is silent for stale_s: gone
    with pytest.raises(ValueError, match="desired state"):
        board.set("drowsy")


def test_board_client_wait_raises_on_error_and_timeout():
    board = SleepBoard()
    client = BoardClient("b", local=board)
    board.report("r1", AWAKE, 0)
    epoch = client.set(ASLEEP)
    with pytest.raises(TimeoutError, match="did not reach epoch"):
        client.wait(epoch, timeout_s=0.05)
    board.report("r1", "error: boom", epoch)
    with pytest.raises(RuntimeError, match="boom"):
        client.wait(epoch, timeout_s=1)
    assert board_name("medgraph", "m") == "sleep-board:medgraph:m"


# --- the gate over fakes ---------------------------------------------------------------------


class LoopThread:
    """An event loop in a thread, hosting the fake LLMServer replicas."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(cancel_all())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class FakeHandle:
    """A deployment handle's shape: ``options(stream=True).chat.remote(request)`` → blocking iterator;
    requests go to the replicas in turn (a router's choice, not a broadcast)."""

    def __init__(self, lt: LoopThread, replicas: list[FakeLLMServer]) -> None:
        self.lt, self.replicas, self.next = lt, replicas, 0
        self.chat = self

    def options(self, stream: bool = False) -> FakeHandle:
        assert stream
        return self

    def remote(self, request: Any) -> Any:
        replica = self.replicas[self.next % len(self.replicas)]
        self.next += 1
        agen = replica.chat(request)
        while True:
            try:
                yield self.lt.run(agen.__anext__())
            except StopAsyncIteration:
                return


def _cfg(**kw: Any) -> VLLMEngineConfig:
    return VLLMEngineConfig(kind="vllm", model_id="fake", model_source="/nowhere", sleep_level=2, **kw)


@pytest.fixture
def gate():
    lt = LoopThread()
    board = SleepBoard(poll_s=0.01, stale_s=2)

    async def start(replica: str, **kw: Any) -> FakeLLMServer:
        fake = FakeLLMServer("fake", **kw)
        fake.follow("fake", board=board, replica=replica)
        return fake

    def make(replicas: int = 2, **kw: Any) -> tuple[VLLMChatModel, list[FakeLLMServer]]:
        fakes = [lt.run(start(f"r{i}", **kw)) for i in range(replicas)]
        deadline = time.monotonic() + 5
        while len(board.live()) < replicas and time.monotonic() < deadline:
            time.sleep(0.01)
        model = VLLMChatModel(
            FakeHandle(lt, fakes),
            _cfg(),
            board=BoardClient("fake", local=board),
            request_cls=PlainChatRequest,
            control_timeout_s=5,
        )
        return model, fakes

    yield make
    lt.close()


def test_generate_and_stream_through_the_handle(gate):
    model, fakes = gate()
    params = ChatParams(max_tokens=32, stop=("\n\n",))
    assert model.generate(MESSAGES, params) == "Metformin is first-line [1]."
    assert "".join(model.stream(MESSAGES, params)) == "Metformin is first-line [1]."
    assert [f.calls["chat"] for f in fakes] == [1, 1]
    req = PlainChatRequest(
        model="fake", messages=MESSAGES, max_tokens=32, temperature=0.0, stop=["\n\n"], seed=0, stream=True
    )
    assert model._request(MESSAGES, params, True) == req


def test_sleep_and_wake_reach_every_replica(gate):
    model, fakes = gate(replicas=3)
    model.sleep()
    assert model.is_sleeping() and all(f.sleeping and f.level == 2 for f in fakes)
    assert set(model.last_replicas) == {"r0", "r1", "r2"}
    with pytest.raises(ModelAsleep):
        model.generate(MESSAGES, ChatParams())
    with pytest.raises(ModelAsleep):
        list(model.stream(MESSAGES, ChatParams()))
    assert sum(f.calls["chat"] for f in fakes) == 0  # refused at the gate: no replica was reached
    model.wake()
    assert not model.is_sleeping() and not any(f.sleeping for f in fakes)
    assert model.generate(MESSAGES, ChatParams()) == "Metformin is first-line [1]."
    model.wake()  # idempotent: no replica is woken twice
    assert [f.calls["wakeup"] for f in fakes] == [1, 1, 1]
    model.sleep()
    again = VLLMChatModel(model.handle, _cfg(), board=model.board, request_cls=PlainChatRequest)
    assert again.is_sleeping()  # a gate started over an existing board takes its state


def test_failed_sleep_wakes_every_replica_again(gate):
    model, fakes = gate(replicas=2, fail_sleep=True)
    with pytest.raises(RuntimeError, match="CUDA error"):
        model.sleep()
    assert not model.is_sleeping() and not any(f.sleeping for f in fakes)
    assert model.generate(MESSAGES, ChatParams()).startswith("Metformin")


def test_tier_manager_defers_sleep_while_busy_and_wakes_before_serving(gate):
    model, fakes = gate(replicas=2, token_delay_s=0.05)
    engine = make_engine(_cfg(idle_sleep_s=60), AnswerConfig(), model)

    async def scenario() -> None:
        manager = TierManager({"gpu": (engine, 60.0)}, monitor_interval_s=60)
        started = asyncio.Event()

        async def slow_request() -> str:
            async with manager.use("gpu") as e:
                started.set()
                return await asyncio.to_thread(e.chat, MESSAGES, ChatParams())

        task = asyncio.create_task(slow_request())
        await started.wait()
        assert await manager.sleep("gpu") is False  # one request in flight: refused
        assert not any(f.sleeping for f in fakes)
        assert await task == "Metformin is first-line [1]."
        assert await manager.sleep("gpu") is True
        assert all(f.sleeping for f in fakes) and manager.stats()["gpu"]["state"] == "asleep"
        # two requests on a sleeping tier: one wake, then both are served
        answers = await asyncio.gather(*(slow_request() for _ in range(2)))
        assert answers == ["Metformin is first-line [1]."] * 2
        stats = manager.stats()["gpu"]
        assert stats["wakes"] == 1 and stats["sleeps"] == 1 and stats["state"] == "awake"
        assert [f.calls["wakeup"] for f in fakes] == [1, 1]
        assert sum(f.calls["chat_while_asleep"] for f in fakes) == 0
        await manager.close()

    asyncio.run(scenario())


def test_replica_that_joins_later_follows_the_board(gate):
    model, fakes = gate(replicas=1)
    model.sleep()
    board = model.board._local
    assert board is not None
    late = FakeLLMServer("fake")
    assert not late.sleeping  # engines start awake ...

    async def follow() -> None:
        late.follow("fake", board=board, replica="late")
        for _ in range(200):
            if late.sleeping:
                break
            await asyncio.sleep(0.01)
        late.stop_following()

    asyncio.run(follow())
    assert late.sleeping and late.level == 2  # ... and go to sleep on their first poll


def test_build_llm_server_wires_the_public_api(monkeypatch):
    """``build_llm_server`` and ``MedGraphLLMServer`` against stand-ins of the public ``ray.serve.llm``
    names (the real module imports only with vLLM): ``LLMConfig`` gets the engine's arguments,
    ``build_llm_deployment`` the subclass and the board's model as a bind argument, and the
    subclass's async constructor starts the real one, then follows the board."""
    import sys
    import types

    from medgraph.llm.vllm_config import llm_config_kwargs
    from serve.vllm_engine import build_llm_server

    calls: dict[str, Any] = {}

    class LLMServer:
        async def __init__(self, llm_config: Any, **kwargs: Any) -> None:
            self.started_with = (llm_config, kwargs)

        async def sleep(self, **kw: Any) -> None:
            self.slept = kw

        async def wakeup(self, **kw: Any) -> None: ...

        async def is_sleeping(self) -> bool:
            return False

    def build_llm_deployment(llm_config: Any, **kw: Any) -> str:
        calls.update(llm_config=llm_config, **kw)
        return "app"

    llm = types.ModuleType("ray.serve.llm")
    llm.LLMConfig = lambda **kw: ("LLMConfig", kw)  # type: ignore[attr-defined]
    llm.build_llm_deployment = build_llm_deployment  # type: ignore[attr-defined]
    deployment = types.ModuleType("ray.serve.llm.deployment")
    deployment.LLMServer = LLMServer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray.serve.llm", llm)
    monkeypatch.setitem(sys.modules, "ray.serve.llm.deployment", deployment)

    cfg = _cfg()
    assert build_llm_server(cfg, "large") == "app"
    assert calls["llm_config"] == ("LLMConfig", llm_config_kwargs(cfg, "large"))
    assert calls["name_prefix"] == "vllm-large:" and calls["bind_kwargs"] == {"sleep_board_model": "fake"}
    cls = calls["deployment_cls"]
    assert issubclass(cls, LLMServer)

    async def construct() -> Any:
        server = cls.__new__(cls)
        server.follow = lambda model: setattr(server, "following", model)  # recorded, not started
        await server.__init__(llm_config="cfg", sleep_board_model="fake", engine_cls=None)
        return server

    server = asyncio.run(construct())
    assert server.started_with == ("cfg", {"engine_cls": None}) and server.following == "fake"
