"""DSPy on the project's chat models: a ``dspy.LM`` whose every call goes to a ``ChatModel``.

Input: a chat function, sync (``ChatModel`` of any tier: llama.cpp, vLLM, OpenAI-compatible, or
any ``Callable[[list[Message], ChatParams], str]``) and/or async (e.g. a Serve engine handle's
``chat``: ``async (messages, params) -> str``). Output: ``chat_lm(...)``, a ``dspy.LM`` built on
DSPy's engine interface (``dspy.LM(engine=..., async_engine=...)``, ``complete(Request) ->
Response``; the ``BaseLM.forward`` plug-in is deprecated in DSPy 3.4), so any DSPy program runs
on a configured tier with ``dspy.context(lm=...)``: ``program(...)`` uses the sync function,
``await program.acall(...)`` the async one. Nothing goes through litellm or the network.

DSPy's own request building, adapters, callbacks and history stay in charge; the engines only
turn a canonical request into chat messages (system first, then the turns) and ``ChatParams``
(the request's ``max_tokens`` / ``temperature`` / ``stop`` / ``seed``, else the defaults), and the
reply text into a response. Text only: a request with images, files or tools is refused. The LM
does not cache (``cache=False``) and does not retry (the tier manager owns failures); importing
this module points DSPy's response cache at memory only, so DSPy never writes its cache
directory into ``$HOME`` (``configure_dspy_cache`` turns a disk cache on, in a directory chosen
by the caller).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import dspy
from dspy.lm15 import Message as LMMessage
from dspy.lm15 import Request, Response, TextPart, UnsupportedFeatureError, Usage, response_to_events

from medgraph.llm.base import ChatModel, ChatParams, Message

ChatFn = Callable[[list[Message], ChatParams], str]
AsyncChatFn = Callable[[list[Message], ChatParams], Awaitable[str]]
DEFAULT_PARAMS = ChatParams()
_ROLES = {"user": "user", "assistant": "assistant", "developer": "system"}


def configure_dspy_cache(disk_dir: str | None = None, memory: bool = False) -> None:
    """DSPy's response cache: on disk only in ``disk_dir`` (never by default), in memory if asked."""
    dspy.configure_cache(enable_disk_cache=disk_dir is not None, enable_memory_cache=memory,
                         disk_cache_dir=disk_dir)


def _text(parts: Any, where: str) -> str:
    if isinstance(parts, str):
        return parts
    if not all(isinstance(p, TextPart) for p in parts):
        raise UnsupportedFeatureError(f"medgraph chat engines take text only ({where} has other parts)")
    return "".join(p.text for p in parts)


def request_messages(request: Request) -> list[Message]:
    """The chat messages of a canonical DSPy request: its system text, then each turn as text."""
    if request.tools:
        raise UnsupportedFeatureError("medgraph chat engines do not call tools")
    out: list[Message] = []
    if request.system is not None:
        out.append({"role": "system", "content": _text(request.system, "the system prompt")})
    for m in request.messages:
        role = _ROLES.get(m.role)
        if role is None:
            raise UnsupportedFeatureError(f"medgraph chat engines do not take {m.role!r} messages")
        out.append({"role": role, "content": _text(m.parts, f"a {m.role} message")})
    return out


def request_params(request: Request, defaults: ChatParams) -> ChatParams:
    """``ChatParams`` from the request's config, the defaults filling what it leaves unset."""
    c = request.config
    return ChatParams(
        max_tokens=c.max_tokens if c.max_tokens is not None else defaults.max_tokens,
        temperature=c.temperature if c.temperature is not None else defaults.temperature,
        stop=tuple(c.stop) or defaults.stop,
        seed=c.seed if c.seed is not None else defaults.seed,
    )


def text_response(text: str, model: str) -> Response:
    return Response(id=None, model=model, message=LMMessage.assistant([TextPart(text)]), finish_reason="stop",
                    usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0))


def _as_fn(chat: ChatModel | ChatFn) -> ChatFn:
    generate = getattr(chat, "generate", None)
    if callable(generate):
        return generate  # type: ignore[no-any-return]
    if callable(chat):
        return chat
    raise TypeError("chat must be a ChatModel or a callable (messages, params) -> str")


class ChatEngine:
    """DSPy's sync engine over a chat function (``dspy.clients.engines.base.Engine``)."""

    def __init__(self, chat: ChatModel | ChatFn, defaults: ChatParams = DEFAULT_PARAMS,
                 name: str = "") -> None:
        self.chat = _as_fn(chat)
        self.defaults = defaults
        self.name = name or str(getattr(chat, "name", "medgraph"))

    def complete(self, request: Request) -> Response:
        reply = self.chat(request_messages(request), request_params(request, self.defaults))
        return text_response(str(reply), self.name)

    def stream(self, request: Request) -> Iterator[Any]:
        return iter(response_to_events(self.complete(request)))

    def close(self) -> None:
        return None


class AsyncChatEngine:
    """DSPy's async engine (``dspy.clients.engines.base.AsyncEngine``) over an async chat function.

    A sync function is accepted too: it then runs inline, blocking the event loop while it runs.
    """

    def __init__(self, achat: AsyncChatFn | ChatFn, defaults: ChatParams = DEFAULT_PARAMS,
                 name: str = "medgraph") -> None:
        if not callable(achat):
            raise TypeError("achat must be a callable (messages, params) -> awaitable str")
        self.achat = achat
        self.defaults = defaults
        self.name = name

    async def complete(self, request: Request) -> Response:
        reply = self.achat(request_messages(request), request_params(request, self.defaults))
        text = await reply if inspect.isawaitable(reply) else reply
        return text_response(str(text), self.name)

    async def stream(self, request: Request) -> AsyncIterator[Any]:
        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        return None


class _NoSyncChat:
    """The sync side of an async-only LM: a sync call is a usage error, said clearly."""

    def __call__(self, messages: list[Message], params: ChatParams) -> str:
        raise RuntimeError("this DSPy LM has only an async chat function: call the program with acall()")


def chat_lm(chat: ChatModel | ChatFn | None = None, *, achat: AsyncChatFn | None = None,
            name: str = "", params: ChatParams = DEFAULT_PARAMS) -> dspy.LM:
    """A ``dspy.LM`` on ``chat`` (sync calls) and/or ``achat`` (``acall``), no cache, no retries.

    With only ``chat``, async calls run it inline; with only ``achat``, sync calls raise.
    ``params`` gives the defaults for what DSPy's request leaves unset.
    """
    if chat is None and achat is None:
        raise ValueError("chat_lm needs a chat function (chat=) or an async one (achat=)")
    label = name or str(getattr(chat, "name", "") or "medgraph")
    sync = ChatEngine(chat if chat is not None else _NoSyncChat(), params, label)
    engine = AsyncChatEngine(achat if achat is not None else sync.chat, params, label)
    model = f"medgraph/{''.join(ch if ch.isalnum() or ch in '-_.' else '-' for ch in label)}"
    return dspy.LM(model, engine=sync, async_engine=engine, cache=False, num_retries=0,
                   temperature=params.temperature, max_tokens=params.max_tokens)


if "cache" not in vars(dspy):  # nobody has configured or used DSPy's cache yet: keep it off disk
    configure_dspy_cache()
