"""Chat models behind the model-backed tiers: llama.cpp (``llamacpp``), OpenAI-compatible endpoints
via litellm (``openai``) and the vLLM config builder (``vllm_config``; the vLLM runtime lives in
``serve/vllm_engine.py`` because it needs Ray). Each backend imports its library lazily."""

from __future__ import annotations

from medgraph.llm.base import ChatModel, ChatParams, Message, ModelAsleep, ModelUnavailable

__all__ = ["ChatModel", "ChatParams", "Message", "ModelAsleep", "ModelUnavailable"]
