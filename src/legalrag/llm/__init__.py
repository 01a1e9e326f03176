"""The LLM layer: one protocol, an embedded local model, OpenAI-compatible endpoints, structured output, cache.

Backends and helpers live in submodules and are imported where used (they pull in xllamacpp, httpx, jinja2):
``llm.embedded.EmbeddedLLM``, ``llm.openai_compat.OpenAICompatLLM``, ``llm.structured.ask_structured``,
``llm.cache.CachedLLM``, ``llm.serve.create_llm_app``, ``llm.models.ensure_model``.
"""

from legalrag.llm.base import LLM, ChatRequest, ChatResult, Message, PromptTooLongError, TokenLogprob, chat_text

__all__ = ["LLM", "ChatRequest", "ChatResult", "Message", "PromptTooLongError", "TokenLogprob", "chat_text"]
