"""The LLM layer: one protocol, an embedded local model, OpenAI-compatible endpoints, structured output, cache."""

from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message, TokenLogprob

__all__ = ["LLM", "ChatRequest", "ChatResult", "Message", "TokenLogprob"]
