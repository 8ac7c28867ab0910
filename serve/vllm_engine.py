"""The vLLM tier runtime on a GPU cluster: an ``LLMServer`` deployment from ``ray.serve.llm``.

Input: a ``VLLMEngineConfig``. Output: ``build_llm_server`` → the ``LLMServer`` application
(``LLMConfig`` from ``medgraph.llm.vllm_config``: model, accelerator type, tensor parallelism,
``enable_sleep_mode``, autoscaling), and ``VLLMChatModel``, the ``ChatModel`` the tier's
``TierService`` uses to talk to it. That ``TierService`` is the tier's gate (one replica): it
counts requests in flight for the whole model and sleeps / wakes **every** ``LLMServer`` replica,
so one GPU pool can hold several sleeping models.

Only public Ray APIs are used: ``ray.serve.llm`` (``LLMConfig``, ``LLMServer``,
``build_llm_deployment`` with ``deployment_cls`` / ``bind_kwargs``, ``ChatCompletionRequest``),
Serve deployment handles and ``serve.get_replica_context``, and Ray named actors. Ray Serve has no
public call that reaches every replica of a deployment (a handle call goes to one replica of the
router's choosing; Ray LLM's broadcast helper is internal), so the sleep state travels the other
way: the gate writes the state it wants (``awake`` / ``asleep`` and the sleep level) with a new
epoch on a **sleep board**, a small named actor; every ``LLMServer`` replica (``MedGraphLLMServer``,
an ``LLMServer`` subclass with ``SleepFollower``) polls the board, calls its own public
``sleep(level=...)`` / ``wakeup()`` to match, and reports back. The gate's ``sleep`` / ``wake``
return when every replica seen in the last few seconds has reported the new epoch (or one
reported an error). Replicas that autoscaling starts later follow the board on their first poll.

``ray.serve.llm`` imports only where vLLM is installed (a GPU image), so it is imported lazily;
everything else here runs on CPU and is tested there with an ``LLMServer``-shaped fake
(``tests/fake_llm_server.py``) over real Serve handles.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from medgraph.config.llm import VLLMEngineConfig
from medgraph.llm.base import ChatParams, Message, ModelAsleep
from medgraph.llm.vllm_config import llm_config_kwargs, sleep_kwargs

log = logging.getLogger(__name__)

BOARD_NAMESPACE = "medgraph-vllm"
AWAKE, ASLEEP = "awake", "asleep"


def board_name(app: str, model_id: str) -> str:
    """The named actor holding the sleep state of ``model_id`` in Serve application ``app``."""
    return f"sleep-board:{app}:{model_id}"


def current_app_name() -> str:
    """The Serve application of the calling replica ('' outside a replica)."""
    try:
        from ray import serve

        return str(serve.get_replica_context().app_name)
    except Exception:  # noqa: BLE001 - not inside a Serve replica
        return ""


def build_llm_server(cfg: VLLMEngineConfig, name: str) -> Any:
    """The ``LLMServer`` application of engine ``name`` (deployment ``vllm-<name>:...``), its
    replicas following the tier gate's sleep board."""
    from ray.serve.llm import LLMConfig, build_llm_deployment

    return build_llm_deployment(
        LLMConfig(**llm_config_kwargs(cfg, name)),
        name_prefix=f"vllm-{name}:",
        deployment_cls=medgraph_llm_server_cls(),
        bind_kwargs={"sleep_board_model": cfg.model_id},
    )


# --- the sleep board -------------------------------------------------------------------------


@dataclass
class _Seen:
    state: str
    epoch: int
    at: float


@dataclass
class SleepBoard:
    """The state the gate wants for every replica, and what each replica last reported.

    Plain class (unit-tested in-process); deployed as a named Ray actor by ``BoardClient``.
    """

    poll_s: float = 0.25
    stale_s: float = 5.0  # a replica silent this long is gone (scaled down, crashed)
    desired: str = AWAKE
    level: int = 1
    epoch: int = 0
    replicas: dict[str, _Seen] = field(default_factory=dict)

    def set(self, desired: str, level: int = 1) -> int:
        if desired not in (AWAKE, ASLEEP):
            raise ValueError(f"desired state {desired!r}: expected {AWAKE!r} or {ASLEEP!r}")
        self.desired, self.level, self.epoch = desired, level, self.epoch + 1
        return self.epoch

    def wanted(self) -> tuple[str, int, int]:
        """(desired state, level, epoch)."""
        return self.desired, self.level, self.epoch

    def report(
        self, replica: str, state: str, epoch: int, now: float | None = None
    ) -> tuple[str, int, int, float]:
        """A replica's heartbeat; answers (desired, level, epoch, poll_s)."""
        self.replicas[replica] = _Seen(state, epoch, time.monotonic() if now is None else now)
        return self.desired, self.level, self.epoch, self.poll_s

    def live(self, now: float | None = None) -> dict[str, _Seen]:
        now = time.monotonic() if now is None else now
        return {r: s for r, s in self.replicas.items() if now - s.at <= self.stale_s}

    def settled(self, epoch: int, now: float | None = None) -> tuple[str, dict[str, str]]:
        """("done" | "pending" | "superseded" | "error: ...", {replica: state}) for ``epoch``."""
        live = self.live(now)
        states = {r: f"{s.state}@{s.epoch}" for r, s in live.items()}
        if epoch != self.epoch:
            return "superseded", states
        errors = [
            f"{r}: {s.state}" for r, s in live.items() if s.epoch == epoch and s.state.startswith("error")
        ]
        if errors:
            return "error: " + "; ".join(errors), states
        if all(s.epoch == epoch and s.state == self.desired for s in live.values()):
            return "done", states
        return "pending", states


class BoardClient:
    """The gate's side of a sleep board: a named Ray actor, or a ``SleepBoard`` in-process."""

    def __init__(
        self, name: str, poll_s: float = 0.25, stale_s: float = 5.0, local: SleepBoard | None = None
    ):
        self.name = name
        if local is not None:
            self._local: SleepBoard | None = local
            self._actor: Any = None
        else:
            import ray

            self._local = None
            self._actor = (
                ray.remote(SleepBoard)
                .options(name=name, namespace=BOARD_NAMESPACE, get_if_exists=True, num_cpus=0)
                .remote(poll_s, stale_s)
            )

    def _call(self, method: str, *args: Any) -> Any:
        if self._local is not None:
            return getattr(self._local, method)(*args)
        import ray

        return ray.get(getattr(self._actor, method).remote(*args), timeout=60)

    def set(self, desired: str, level: int = 1) -> int:
        return int(self._call("set", desired, level))

    def wanted(self) -> str:
        """The state the board holds now (``awake`` for a new board)."""
        return str(self._call("wanted")[0])

    def settled(self, epoch: int) -> tuple[str, dict[str, str]]:
        status, states = self._call("settled", epoch)
        return str(status), dict(states)

    def wait(self, epoch: int, timeout_s: float, interval_s: float = 0.02) -> dict[str, str]:
        """Block until every live replica reached ``epoch``; raise on an error, a newer epoch or time out."""
        deadline = time.monotonic() + timeout_s
        while True:
            status, states = self.settled(epoch)
            if status == "done":
                return states
            if status != "pending":
                raise RuntimeError(f"{self.name}: {status} (replicas: {states})")
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.name}: replicas did not reach epoch {epoch} in {timeout_s:.0f} s: {states}"
                )
            time.sleep(interval_s)


# --- the replica side ------------------------------------------------------------------------


class SleepFollower:
    """Mixin for an ``LLMServer``-shaped class: follow the gate's sleep board.

    Needs the public ``sleep(**kw)``, ``wakeup(**kw)`` and ``is_sleeping()`` coroutines of
    ``LLMServer``. ``follow`` starts a task on the replica's event loop: each poll reports this
    replica's state and reads the wanted one; a new epoch starts one transition (``sleep`` with
    the board's level, or ``wakeup``), reported as soon as it ends. The heartbeat goes on during
    a transition, so a slow sleep is not mistaken for a replica that has gone.
    """

    _follow_task: asyncio.Task[None] | None = None

    def follow(
        self, model_id: str, app: str | None = None, replica: str | None = None, board: Any = None
    ) -> None:
        """Start following the board of ``model_id`` (``board``: a ``SleepBoard`` in-process, for tests)."""
        self._board_key = board_name(current_app_name() if app is None else app, model_id)
        self._replica = replica or _replica_id()
        self._follow_state, self._follow_epoch, self._target_epoch = AWAKE, 0, 0
        self._transition: asyncio.Task[None] | None = None
        self._board_handle = board
        self._follow_task = asyncio.get_running_loop().create_task(self._follow_loop())

    async def _board(self) -> Any:
        if self._board_handle is None:
            import ray

            self._board_handle = ray.get_actor(self._board_key, namespace=BOARD_NAMESPACE)
        return self._board_handle

    async def _report(self) -> tuple[str, int, int, float]:
        board = await self._board()
        args = (self._replica, self._follow_state, self._follow_epoch)
        if isinstance(board, SleepBoard):  # in-process (tests)
            desired, level, epoch, poll_s = board.report(*args)
        else:
            desired, level, epoch, poll_s = await board.report.remote(*args)
        return str(desired), int(level), int(epoch), float(poll_s)

    async def _follow_loop(self) -> None:
        poll_s = 0.25
        while True:
            try:
                desired, level, epoch, poll_s = await self._report()
                if epoch != self._target_epoch and (self._transition is None or self._transition.done()):
                    self._target_epoch = epoch
                    self._transition = asyncio.get_running_loop().create_task(
                        self._reconcile(desired, level, epoch)
                    )
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no board yet (gate starting) or it restarted
                self._board_handle = None
                log.debug("sleep board %s not reachable: %s", self._board_key, exc)
            await asyncio.sleep(poll_s)

    async def _reconcile(self, desired: str, level: int, epoch: int) -> None:
        try:
            sleeping = bool(await self.is_sleeping())  # type: ignore[attr-defined]
            if desired == ASLEEP and not sleeping:
                self._follow_state = "going_to_sleep"
                await self.sleep(level=level)  # type: ignore[attr-defined]
            elif desired == AWAKE and sleeping:
                self._follow_state = "waking"
                await self.wakeup()  # type: ignore[attr-defined]
            self._follow_state = desired
        except Exception as exc:  # noqa: BLE001 - reported to the gate, which fails the sleep / wake
            log.exception("%s: %s failed", self._replica, desired)
            self._follow_state = f"error: {type(exc).__name__}: {exc}"
        self._follow_epoch = epoch
        try:
            await self._report()
        except Exception:  # noqa: BLE001 - the next poll reports it
            self._board_handle = None

    def stop_following(self) -> None:
        if self._follow_task is not None:
            self._follow_task.cancel()


def _replica_id() -> str:
    try:
        from ray import serve

        return str(serve.get_replica_context().replica_id.unique_id)
    except Exception:  # noqa: BLE001 - outside a replica
        return f"local-{threading.get_ident()}"


def medgraph_llm_server_cls() -> type:
    """``LLMServer`` (public, ``ray.serve.llm.deployment``) whose replicas follow the sleep board."""
    from ray.serve.llm.deployment import LLMServer

    class MedGraphLLMServer(SleepFollower, LLMServer):
        async def __init__(self, llm_config: Any, *, sleep_board_model: str, **kwargs: Any) -> None:  # type: ignore[misc]
            await super().__init__(llm_config, **kwargs)
            self.follow(sleep_board_model)

    return MedGraphLLMServer


# --- the stream ------------------------------------------------------------------------------


def _chunks_text(item: Any) -> Iterator[str]:
    """Text deltas of one streamed ``LLMServer.chat`` item (SSE strings, lists of them, or objects)."""
    if isinstance(item, list):
        for sub in item:
            yield from _chunks_text(sub)
        return
    if isinstance(item, str):
        for line in item.splitlines():
            line = line.strip()
            if not line.startswith("data:") or line.endswith("[DONE]"):
                continue
            payload = json.loads(line[5:])
            if "error" in payload:
                raise RuntimeError(f"vLLM error: {payload['error']}")
            for choice in payload.get("choices", []):
                text = (choice.get("delta") or {}).get("content") or (choice.get("message") or {}).get(
                    "content"
                )
                if text:
                    yield str(text)
        return
    dumped = item.model_dump() if hasattr(item, "model_dump") else item
    if isinstance(dumped, dict):
        if dumped.get("error"):
            raise RuntimeError(f"vLLM error: {dumped['error']}")
        for choice in dumped.get("choices", []):
            text = (choice.get("message") or {}).get("content") or (choice.get("delta") or {}).get("content")
            if text:
                yield str(text)


@dataclass
class PlainChatRequest:
    """The fields of ``ChatCompletionRequest`` the gate sets; used only where ``ray.serve.llm`` does
    not import (no vLLM: the CPU tests, whose ``LLMServer``-shaped fake reads these attributes)."""

    model: str
    messages: list[Message]
    max_tokens: int | None = None
    temperature: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    stream: bool = False


def chat_request_cls() -> Any:
    """``ChatCompletionRequest`` of the public ``ray.serve.llm.openai_api_models``; where vLLM is
    missing (so no real ``LLMServer`` can run either), ``PlainChatRequest`` with a warning."""
    try:
        from ray.serve.llm.openai_api_models import ChatCompletionRequest
    except ImportError as exc:
        log.warning(
            "ray.serve.llm not importable (%s): sending PlainChatRequest (only a test server takes it)", exc
        )
        return PlainChatRequest
    return ChatCompletionRequest


# --- the gate's chat model -------------------------------------------------------------------


class VLLMChatModel:
    """``ChatModel`` over an ``LLMServer`` deployment handle (blocking calls, run in worker threads).

    ``board``: the sleep board (default: the named actor of this Serve application and model);
    ``request_cls``: the chat request class (default: Ray's public ``ChatCompletionRequest``).
    """

    def __init__(
        self,
        handle: Any,
        cfg: VLLMEngineConfig,
        *,
        board: BoardClient | None = None,
        request_cls: Any = None,
        control_timeout_s: float = 900.0,
    ) -> None:
        if handle is None:
            raise ValueError("VLLMChatModel needs the LLMServer deployment handle")
        self.handle, self.cfg = handle, cfg
        self.name = f"vllm:{cfg.model_id}"
        self.board = board or BoardClient(board_name(current_app_name(), cfg.model_id))
        self._request_cls = request_cls
        self.control_timeout_s = control_timeout_s
        # a new board says awake (vLLM engines start awake); a gate replica that replaces another
        # while its board is still there takes the state on it
        self._sleeping = self.board.wanted() == ASLEEP
        self.last_replicas: dict[str, str] = {}  # the replicas' states when the last sleep / wake settled

    def sleep(self) -> None:
        """Sleep every replica; on a failure wake them all again (never half asleep) and raise."""
        epoch = self.board.set(ASLEEP, int(sleep_kwargs(self.cfg)["level"]))
        try:
            self.last_replicas = self.board.wait(epoch, self.control_timeout_s)
        except Exception:
            self._sleeping = True  # a wake is needed before the next request
            try:
                self.wake()
            except Exception:  # noqa: BLE001 - the sleep's error is the one to report
                log.exception("%s: waking after a failed sleep", self.name)
            raise
        self._sleeping = True

    def wake(self) -> None:
        epoch = self.board.set(AWAKE)
        self.last_replicas = self.board.wait(epoch, self.control_timeout_s)
        self._sleeping = False

    def is_sleeping(self) -> bool:
        return self._sleeping

    def _request(self, messages: list[Message], params: ChatParams, stream: bool) -> Any:
        cls = self._request_cls or chat_request_cls()
        return cls(
            model=self.cfg.model_id,
            messages=messages,
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            stop=list(params.stop) or None,
            seed=params.seed,
            stream=stream,
        )

    def _items(self, messages: list[Message], params: ChatParams, stream: bool) -> Iterator[Any]:
        if self._sleeping:
            raise ModelAsleep(f"{self.name} is asleep")
        yield from self.handle.options(stream=True).chat.remote(self._request(messages, params, stream))

    def stream(self, messages: list[Message], params: ChatParams) -> Iterator[str]:
        for item in self._items(messages, params, True):
            yield from _chunks_text(item)

    def generate(self, messages: list[Message], params: ChatParams) -> str:
        parts: list[str] = []
        for item in self._items(messages, params, False):
            parts.extend(_chunks_text(item))
        return "".join(parts)
