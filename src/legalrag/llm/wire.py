"""The OpenAI chat-completions wire format, shared by the embedded backend, the HTTP client and the server."""

from __future__ import annotations

import math
from typing import Any, Mapping

from legalrag.errors import LegalRagError, ModelError
from legalrag.llm.base import ChatRequest, ChatResult, PromptTooLongError, TokenLogprob


def request_body(request: ChatRequest, *, strict_schema: bool = True, json_schema: bool = True,
                 model: str | None = None) -> dict[str, Any]:
    """The chat-completions body for ``request``. ``json_schema=False`` leaves the schema out (for servers
    that reject ``response_format``); ``strict_schema`` sets OpenAI's ``strict`` flag."""
    body: dict[str, Any] = {
        "messages": [dict(m) for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stream": False,
    }
    if model is not None:
        body["model"] = model
    if request.stop:
        body["stop"] = list(request.stop)
    if request.seed is not None:
        body["seed"] = request.seed
    if request.json_schema is not None and json_schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "reply", "schema": dict(request.json_schema), "strict": strict_schema}}
    if request.logprobs or request.top_logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    return body


def parse_logprobs(choice: Mapping[str, Any]) -> tuple[TokenLogprob, ...]:
    content = (choice.get("logprobs") or {}).get("content") or []
    out = []
    for item in content:
        top: dict[str, float] = {}
        for alt in item.get("top_logprobs") or []:
            tok, lp = alt.get("token", ""), float(alt.get("logprob", float("-inf")))
            top[tok] = max(lp, top.get(tok, float("-inf")))  # distinct ids can decode to the same string
        out.append(TokenLogprob(token=item.get("token", ""), logprob=float(item.get("logprob", 0.0)), top=top))
    return tuple(out)


def parse_reply(reply: Mapping[str, Any], seconds: float, model_id: str, n_ctx: int = 0,
                max_tokens: int = 0, error_cls: type[LegalRagError] = ModelError) -> ChatResult:
    """A ChatResult from a chat-completions reply; an error reply raises ``error_cls`` (or PromptTooLongError)."""
    if not isinstance(reply, Mapping):
        raise error_cls(f"{model_id} answered with {type(reply).__name__}, not a JSON object: {str(reply)[:300]}")
    if "error" in reply:
        err = reply["error"] if isinstance(reply["error"], Mapping) else {"message": str(reply["error"])}
        if err.get("type") == "exceed_context_size_error":
            raise PromptTooLongError(int(err.get("n_prompt_tokens", 0)), max_tokens, int(err.get("n_ctx", n_ctx)),
                                     model_id)
        raise error_cls(f"{model_id} refused the request: {err.get('message', err)}")
    choices = reply.get("choices") or []
    if not choices or not isinstance(choices[0], Mapping):
        raise error_cls(f"{model_id} returned no choices: {str(reply)[:300]}")
    choice = choices[0]
    usage = reply.get("usage") or {}
    timings = {k: float(v) for k, v in (reply.get("timings") or {}).items() if isinstance(v, (int, float))}
    return ChatResult(
        text=(choice.get("message") or {}).get("content") or "",
        logprobs=parse_logprobs(choice),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        seconds=seconds,
        model=model_id,
        finish_reason=choice.get("finish_reason") or "",
        timings=timings,
    )


def result_to_reply(result: ChatResult, model: str, *, logprobs: bool = False, created: int = 0,
                    reply_id: str = "") -> dict[str, Any]:
    """The chat-completions reply for ``result`` (what ``legalrag llm serve`` sends back)."""
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": result.text},
                              "finish_reason": result.finish_reason or "stop"}
    if logprobs:
        choice["logprobs"] = {"content": [
            {"token": t.token, "logprob": t.logprob,
             "top_logprobs": [{"token": k, "logprob": v} for k, v in
                              sorted(t.top.items(), key=lambda kv: -kv[1]) if math.isfinite(v)]}
            for t in result.logprobs]}
    return {"id": reply_id, "object": "chat.completion", "created": created, "model": model, "choices": [choice],
            "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                      "total_tokens": result.prompt_tokens + result.completion_tokens}}
