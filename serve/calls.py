"""Calls to other deployments with a time limit and one error mapping, for the ingress and the agent.

``call(method, *args, timeout=..., late=..., translate=...)`` awaits one handle call;
``stream(gen, first_timeout=..., timeout=..., late=..., translate=...)`` iterates a streaming
handle response, the first item with its own limit (it may include a tier's wake). ``late()`` is
the exception for a call that ran out of time; ``translate(exc)`` maps a deployment's error to
the caller's (``None``: re-raise it as it is, a bug). A streaming call that runs out of time is
cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

Late = Callable[[], Exception]
Translate = Callable[[BaseException], Exception | None]


async def _awaitable(response: Any) -> Any:
    return await response


def _mapped(exc: BaseException, translate: Translate) -> Exception:
    mapped = translate(exc)
    if mapped is None:
        raise exc
    return mapped


async def call(method: Any, *args: Any, timeout: float, late: Late, translate: Translate) -> Any:
    try:
        return await asyncio.wait_for(_awaitable(method.remote(*args)), timeout)
    except TimeoutError as exc:
        raise late() from exc
    except Exception as exc:
        raise _mapped(exc, translate) from exc


async def stream(gen: Any, *, first_timeout: float, timeout: float, late: Late,
                 translate: Translate) -> AsyncIterator[Any]:
    wait = first_timeout
    while True:
        try:
            item = await asyncio.wait_for(gen.__anext__(), wait)
        except StopAsyncIteration:
            return
        except TimeoutError as exc:
            gen.cancel()
            raise late() from exc
        except Exception as exc:
            raise _mapped(exc, translate) from exc
        wait = timeout
        yield item
