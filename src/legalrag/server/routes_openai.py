"""An OpenAI-compatible chat endpoint, so that any chat front-end or SDK can use legalrag as a "model".

``GET /v1/models`` lists one model, ``legalrag``; ``POST /v1/chat/completions`` (JSON, or server-sent
``chat.completion.chunk`` events with ``stream: true``) runs the dialogue through the consultation path of
``POST /consult``: the last message is the question, the earlier user and assistant messages its history. The
answer's text ends with its citations and their marks; the same, with the retrieved articles, the retrieval
query and the timings, is in the ``legalrag`` field of the response (and of the last streamed chunk).
``usage`` counts the model's tokens. The server's API key (``Authorization: Bearer KEY``) and rate limits apply
as on every route.

Parameters legalrag does not use (``temperature``, ``top_p``, ``n``, ``tools``, ``response_format``, ...),
system messages (legalrag's own prompt governs the answer) and non-text content parts are accepted, never
silently: they are listed in the ``X-Legalrag-Ignored-Params`` header and in ``legalrag.ignored_params``.
``max_tokens`` / ``max_completion_tokens``, ``stream`` and ``stream_options.include_usage`` are honoured;
``legalrag`` in the body (``extra_body`` in the OpenAI SDK) sets the consultation's ``processor``, ``k``,
``laws``, ``retriever`` and ``evidence_tokens``. (``legalrag llm serve``, the bare model server, has its own
``/v1`` endpoint, unchanged: that one is the model alone.)
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from legalrag.errors import InputError
from legalrag.server.bodies import MAX_EVIDENCE_TOKENS, MAX_K, MAX_LAWS, MAX_TURNS, ConsultBody, Processor
from legalrag.server.context import AppContext
from legalrag.server.routes_search import ERRORS
from legalrag.server.streaming import Emit

MODEL_ID = "legalrag"
IGNORED_HEADER = "X-Legalrag-Ignored-Params"
HONOURED = {"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "legalrag"}


class Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str = Field(..., max_length=20)
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class LegalragOptions(BaseModel):
    """legalrag's own settings of the consultation (``extra_body={"legalrag": {...}}`` in the OpenAI SDK)."""

    model_config = ConfigDict(extra="forbid")
    processor: Processor | None = None
    k: int | None = Field(None, ge=1, le=MAX_K)
    laws: list[str] = Field(default_factory=list, max_length=MAX_LAWS)
    retriever: str | None = Field(None, max_length=100)
    evidence_tokens: int | None = Field(None, ge=1, le=MAX_EVIDENCE_TOKENS)


class ChatCompletionBody(BaseModel):
    """The OpenAI chat request; fields legalrag does not use are accepted and reported (see the module doc)."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(..., max_length=200, description=f"'{MODEL_ID}' (GET /v1/models)")
    messages: list[Message] = Field(..., min_length=1, max_length=1000)
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(None, ge=16, le=4096)
    max_completion_tokens: int | None = Field(None, ge=16, le=4096)
    legalrag: LegalragOptions | None = None


def consult_body(body: ChatCompletionBody) -> tuple[ConsultBody, list[str]]:
    """The consultation turn a chat request asks for, and what of the request legalrag does not use."""
    from legalrag.server.bodies import Role, TurnBody

    if body.model != MODEL_ID:
        raise InputError(f"model {body.model!r} is not served here; use '{MODEL_ID}' (GET /v1/models)", field="model")
    ignored = sorted(set(body.model_extra or {}) - HONOURED)
    if body.stream_options is not None:
        ignored += [f"stream_options.{k}" for k in sorted(body.stream_options.model_extra or {})]
    turns: list[tuple[str, str]] = []
    for i, m in enumerate(body.messages):
        ignored += [f"messages[{i}].{k}" for k in sorted(m.model_extra or {})]
        if m.role not in ("user", "assistant"):
            ignored.append(f"messages[{i}] (role {m.role}: legalrag's own instructions govern the answer)")
            continue
        text, dropped = _text(m.content)
        ignored += [f"messages[{i}].content[{j}] ({kind})" for j, kind in dropped]
        turns.append((m.role, text))
    if not turns or turns[-1][0] != "user" or not turns[-1][1].strip():
        raise InputError("the last user or assistant message must be the user's question, with text",
                         field="messages")
    history = turns[:-1]
    if len(history) > MAX_TURNS:
        ignored.append(f"messages (the {len(history) - MAX_TURNS} oldest turns; the last {MAX_TURNS} are kept)")
        history = history[-MAX_TURNS:]
    options = body.legalrag or LegalragOptions()
    fields: dict[str, Any] = {k: v for k, v in options.model_dump(exclude_none=True).items() if v != []}
    max_tokens = body.max_completion_tokens or body.max_tokens
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    try:
        consult = ConsultBody(question=turns[-1][1], history=[TurnBody(role=Role(r), content=t) for r, t in history],
                              **fields)
    except ValidationError as exc:
        e = exc.errors()[0]
        where = {"question": "the last message"}.get(str(e["loc"][0]), "messages") if e.get("loc") else "messages"
        raise InputError(f"{where}: {e['msg']}", field="messages") from None
    return consult, ignored


def _text(content: Any) -> tuple[str, list[tuple[int, str]]]:
    if content is None or isinstance(content, str):
        return content or "", []
    texts, dropped = [], []
    for j, part in enumerate(content):
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            dropped.append((j, str(part.get("type", "unknown"))))
    return "\n".join(texts), dropped


def _citation(c: dict[str, Any]) -> Any:
    """A citation of the payload (``serialize.citation_to_dict``) back as the ``Citation`` it was."""
    from legalrag.serialize import citation_from_dict

    return citation_from_dict(c)


def citation_block(citations: list[dict[str, Any]]) -> str:
    """The answer's citations and their marks (the symbols of ``legalrag check``), appended to the answer."""
    from legalrag.citecheck.checker import SYMBOLS
    from legalrag.citecheck.marks import mark_line
    from legalrag.integrations.tools import mark

    if not citations:
        return "\n\n---\n引用核对 / Citations checked: 回答未引用法条 / the answer cites no article."
    lines = ["\n\n---\n引用核对 / Citations checked:"]
    for c in map(_citation, citations):
        lines.append(f"- {SYMBOLS[mark(c)]} {c.canonical or c.text} — {mark_line(c)}")
    return "\n".join(lines)


def extension(payload: dict[str, Any], ignored: list[str]) -> dict[str, Any]:
    """The ``legalrag`` field: the consultation's payload (as ``POST /consult`` returns it) and what was ignored."""
    from legalrag.integrations.tools import mark

    cits = [{**c, "mark": mark(_citation(c))} for c in payload["citations"]]
    keep = ("query", "processor", "model", "retrieved", "unresolved", "marks", "not_retrieved", "notes", "timings",
            "basis", "fallback", "fallback_reason", "not_from_law")
    return {"answer": payload["answer"], "citations": cits, **{k: payload.get(k) for k in keep},
            "ignored_params": ignored}


def usage(payload: dict[str, Any]) -> dict[str, int]:
    u = payload.get("usage") or {}
    p, c = int(u.get("prompt_tokens", 0)), int(u.get("completion_tokens", 0))
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def finish_reason(payload: dict[str, Any], consult: ConsultBody) -> str:
    return "length" if usage(payload)["completion_tokens"] >= consult.max_tokens else "stop"


class ChunkWriter:
    """Writes the consultation's events as ``chat.completion.chunk`` server-sent events."""

    def __init__(self, consult: ConsultBody, ignored: list[str], include_usage: bool):
        self.consult, self.ignored, self.include_usage = consult, ignored, include_usage
        self.id, self.created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        self.started = False

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        body = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": MODEL_ID,
                "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    def __call__(self, event: str, data: Any) -> str:
        if event == "token":
            out = "" if self.started else self.chunk({"role": "assistant", "content": ""})
            self.started = True
            return out + self.chunk({"content": data["text"]})
        if event == "done":
            out = "" if self.started else self.chunk({"role": "assistant", "content": ""})
            out += self.chunk({"content": citation_block(data["citations"])})
            out += self.chunk({}, finish_reason(data, self.consult), legalrag=extension(data, self.ignored))
            if self.include_usage:  # as OpenAI sends it: a last chunk with no choices
                body = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": MODEL_ID,
                        "choices": [], "usage": usage(data)}
                out += f"data: {json.dumps(body)}\n\n"
            return out + "data: [DONE]\n\n"
        if event == "error":
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
        # queued, started, retrieved: comments keep the connection alive while the model is busy
        return f": {event}\n\n"


def router(ctx: AppContext) -> Any:
    from fastapi import APIRouter
    from fastapi.responses import JSONResponse

    from legalrag.server.routes_llm import consult
    from legalrag.server.streaming import sse_response

    api = APIRouter(prefix="/v1", responses=ERRORS, tags=["OpenAI-compatible"])
    created = int(time.time())

    @api.get("/models", summary="The models this endpoint serves (OpenAI format): one, 'legalrag'")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": created,
                                            "owned_by": "legalrag", "llm": ctx.model}]}

    @api.post("/chat/completions", summary="A consultation turn in the OpenAI chat format (streamed with stream: "
              "true); the answer carries its checked citations", responses={
                  503: {"description": "no language model, or too many requests waiting for it"}})
    def completions(body: ChatCompletionBody) -> Any:
        consult_req, ignored = consult_body(body)
        headers = {IGNORED_HEADER: ", ".join(ignored)} if ignored else {}

        def run(emit: Emit | None = None, cancel: threading.Event | None = None) -> dict[str, Any]:
            return consult(ctx, consult_req, emit, cancel)

        if body.stream:
            ctx.check_k(consult_req.k)
            ctx.evidence_budget(consult_req.evidence_tokens)
            ctx.need_llm("the consultation")
            ctx.gate.refuse_if_full()
            include = bool(body.stream_options and body.stream_options.include_usage)
            return sse_response(run, ChunkWriter(consult_req, ignored, include), headers)

        payload = run()
        text = payload["answer"] + citation_block(payload["citations"])
        return JSONResponse({
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": MODEL_ID, "system_fingerprint": None,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "finish_reason": finish_reason(payload, consult_req), "logprobs": None}],
            "usage": usage(payload), "legalrag": extension(payload, ignored)}, headers=headers)

    return api
