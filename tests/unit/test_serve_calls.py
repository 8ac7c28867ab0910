"""serve/calls.py: handle calls and streams with a time limit and one error mapping (fake handles)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from serve import calls


class Late(Exception):
    pass


class Mapped(Exception):
    pass


def translate(exc: BaseException) -> Exception | None:
    return Mapped(str(exc)) if isinstance(exc, KeyError) else None


class Method:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def remote(self, *args: Any) -> Any:
        return self.fn(*args)


class Gen:
    def __init__(self, delays: list[float], fail: BaseException | None = None) -> None:
        self.delays, self.fail, self.cancelled = list(delays), fail, False

    async def __anext__(self) -> float:
        if not self.delays:
            if self.fail is not None:
                raise self.fail
            raise StopAsyncIteration
        delay = self.delays.pop(0)
        await asyncio.sleep(delay)
        return delay

    def cancel(self) -> None:
        self.cancelled = True


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def kw() -> dict[str, Any]:
    return {"late": lambda: Late("late"), "translate": translate}


def test_call_returns_maps_and_times_out() -> None:
    async def ok(x: int) -> int:
        return x + 1

    async def missing() -> None:
        raise KeyError("k")

    async def bug() -> None:
        raise ValueError("v")

    assert run(calls.call(Method(ok), 1, timeout=1.0, **kw())) == 2
    with pytest.raises(Mapped):
        run(calls.call(Method(missing), timeout=1.0, **kw()))
    with pytest.raises(ValueError):  # not mapped: re-raised as it is
        run(calls.call(Method(bug), timeout=1.0, **kw()))
    with pytest.raises(Late):
        run(calls.call(Method(lambda: asyncio.sleep(1.0)), timeout=0.05, **kw()))


async def _collect(gen: Gen, first: float, then: float) -> list[float]:
    return [x async for x in calls.stream(gen, first_timeout=first, timeout=then, **kw())]


def test_stream_gives_the_first_item_its_own_limit() -> None:
    assert run(_collect(Gen([0.1, 0.0]), first=1.0, then=0.05)) == [0.1, 0.0]
    slow_second = Gen([0.0, 0.2])
    with pytest.raises(Late):
        run(_collect(slow_second, first=1.0, then=0.05))
    assert slow_second.cancelled
    with pytest.raises(Mapped):
        run(_collect(Gen([0.0], fail=KeyError("k")), first=1.0, then=1.0))
