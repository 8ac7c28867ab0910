"""The DSPy bridge: DSPy programs run on a project ``ChatModel`` (here a tiny scripted one)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest
from dspy.lm15 import ImagePart, Message, Request, UnsupportedFeatureError

from medgraph.llm.base import ChatParams
from medgraph.llm.dspy_bridge import ChatEngine, chat_lm, request_messages, request_params

REPO = Path(__file__).resolve().parents[2]
REPLY = "[[ ## answer ## ]]\nfour\n\n[[ ## completed ## ]]"


class FakeChatModel:
    """A ``ChatModel`` that records what it was asked and answers in DSPy's chat format."""

    name = "fake:tiny"

    def __init__(self, reply: str = REPLY) -> None:
        self.reply = reply
        self.calls: list[tuple[list[dict[str, str]], ChatParams]] = []

    def generate(self, messages: list[dict[str, str]], params: ChatParams) -> str:
        self.calls.append((messages, params))
        return self.reply

    def stream(self, messages: list[dict[str, str]], params: ChatParams) -> Iterator[str]:
        yield self.generate(messages, params)

    def sleep(self) -> None: ...

    def wake(self) -> None: ...

    def is_sleeping(self) -> bool:
        return False


def test_a_dspy_program_runs_on_a_chat_model():
    model = FakeChatModel()
    lm = chat_lm(model, params=ChatParams(max_tokens=77, stop=("\n\n\n",)))
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        out = dspy.Predict("question -> answer")(question="What is two plus two?")
    assert out.answer == "four"
    assert len(model.calls) == 1
    messages, params = model.calls[0]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "`question`" in messages[0]["content"] and "`answer`" in messages[0]["content"]
    assert "What is two plus two?" in messages[1]["content"]
    assert params.max_tokens == 77 and params.temperature == 0.0 and params.stop == ("\n\n\n",)
    assert lm.model == "medgraph/fake-tiny" and lm.cache is False and lm.num_retries == 0


def test_acall_uses_the_async_chat_function():
    seen: list[ChatParams] = []
    sync_model = FakeChatModel(reply="never used")

    async def achat(messages: list[dict[str, str]], params: ChatParams) -> str:
        await asyncio.sleep(0)
        seen.append(params)
        return REPLY

    lm = chat_lm(sync_model, achat=achat, params=ChatParams(max_tokens=12))
    with dspy.context(lm=lm):
        out = asyncio.run(dspy.Predict("question -> answer").acall(question="2+2?"))
    assert out.answer == "four" and len(seen) == 1 and seen[0].max_tokens == 12
    assert sync_model.calls == []


def test_async_only_lm_refuses_sync_calls_and_model_errors_surface():
    async def achat(messages: list[dict[str, str]], params: ChatParams) -> str:
        raise RuntimeError("engine down")

    lm = chat_lm(achat=achat)
    program = dspy.Predict("question -> answer")
    with dspy.context(lm=lm):
        with pytest.raises(dspy.LMError, match="only an async chat function"):
            program(question="x")
        with pytest.raises(dspy.LMError, match="engine down"):
            asyncio.run(program.acall(question="x"))
    with pytest.raises(ValueError, match="needs a chat function"):
        chat_lm()
    with pytest.raises(TypeError):
        ChatEngine(42)  # type: ignore[arg-type]


def test_request_mapping_system_turns_params_and_text_only():
    turns = (Message.user("q1"), Message.assistant("a1"), Message.user("q2"))
    request = Request(model="medgraph/x", messages=turns, system="be brief")
    assert request_messages(request) == [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"}]
    defaults = ChatParams(max_tokens=9, temperature=0.3, stop=("END",), seed=5)
    assert request_params(request, defaults) == defaults  # nothing set in the request: the defaults
    picture = Message.user([ImagePart(url="https://example.org/x.png")])
    image = Request(model="medgraph/x", messages=(picture,))
    with pytest.raises(UnsupportedFeatureError, match="text only"):
        ChatEngine(FakeChatModel()).complete(image)


def test_no_dspy_cache_is_written_into_home(tmp_path):
    """Importing the bridge and running a program leaves $HOME untouched (no ~/.dspy_cache)."""
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "import dspy\n"
        "from medgraph.llm.dspy_bridge import chat_lm\n"
        f"reply = {REPLY!r}\n"
        "lm = chat_lm(lambda messages, params: reply)\n"
        "with dspy.context(lm=lm):\n"
        "    assert dspy.Predict('question -> answer')(question='q').answer == 'four'\n"
        "assert dspy.cache.enable_disk_cache is False\n"
    )
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("DSPY_CACHEDIR", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(home.iterdir()) == []
