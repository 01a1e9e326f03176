"""``legalrag llm serve``: any LLM (by default the embedded model) behind an OpenAI-compatible HTTP API.

Routes: ``POST /v1/chat/completions`` (max_tokens, temperature, stop, seed, ``response_format`` json_schema /
json_object, logprobs, top_logprobs; ``stream: true`` sends server-sent events, token by token when the backend
can stream), ``GET /v1/models``, ``GET /health``.
The server binds 127.0.0.1 by default; with ``api_key`` set, requests must send ``Authorization: Bearer``.
Requests are served one at a time by the model (the backend's own lock); FastAPI runs handlers in a thread
pool, so /health stays responsive during a long generation.
"""

# No ``from __future__ import annotations`` here: FastAPI reads the route signatures at definition time, and
# fastapi itself is imported lazily inside create_app.
import secrets
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from legalrag._optional import require
from legalrag.errors import EndpointError, InputError, LegalRagError
from legalrag.llm.base import LLM, ChatRequest, PromptTooLongError
from legalrag.llm.wire import result_to_reply


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant"]
    content: str


class ChatBody(BaseModel):
    """The subset of OpenAI's chat-completions request that is honoured; unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    stop: str | list[str] | None = None
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    logprobs: bool = False
    top_logprobs: int = Field(default=0, ge=0, le=20)
    stream: bool = False
    n: int = Field(default=1, ge=1, le=1)

    def to_request(self, default_max_tokens: int) -> ChatRequest:
        if self.stream and (self.logprobs or self.top_logprobs):
            raise InputError("logprobs are not streamed; send stream=false to get them")
        schema = None
        if self.response_format:
            kind = self.response_format.get("type")
            if kind == "json_schema":
                schema = (self.response_format.get("json_schema") or {}).get("schema")
                if not isinstance(schema, dict):
                    raise InputError("response_format.json_schema.schema must be a JSON schema object")
            elif kind == "json_object":
                schema = {"type": "object"}
            elif kind not in (None, "text"):
                raise InputError(f"unsupported response_format type {kind!r}")
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop or ())
        return ChatRequest(messages=tuple(m.model_dump() for m in self.messages),
                           max_tokens=self.max_completion_tokens or self.max_tokens or default_max_tokens,
                           temperature=self.temperature, stop=stop, seed=self.seed, json_schema=schema,
                           logprobs=self.logprobs or self.top_logprobs > 0, top_logprobs=self.top_logprobs)


def _error(status: int, message: str, kind: str, **extra: Any) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse(status_code=status, content={"error": {"message": message, "type": kind, "code": status,
                                                               **extra}})


def create_llm_app(llm: LLM, *, model_name: str | None = None, api_key: str | None = None,
                   default_max_tokens: int = 512) -> Any:
    """A FastAPI app serving ``llm``; ``model_name`` is what /v1/models lists (default: its model id)."""
    fastapi = require("fastapi", "server")
    name = model_name or llm.model_id
    app = fastapi.FastAPI(title="legalrag LLM server", version="1", docs_url=None, redoc_url=None)
    created = int(time.time())

    @app.exception_handler(fastapi.exceptions.RequestValidationError)
    def bad_body(request: fastapi.Request, exc: Any) -> Any:
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg')}"
                             for e in exc.errors()[:5])
        return _error(400, f"invalid request body: {problems}", "invalid_request_error")

    def authorised(request: Any) -> bool:
        if not api_key:
            return True
        given = request.headers.get("authorization", "")
        return secrets.compare_digest(given, f"Bearer {api_key}")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models(request: fastapi.Request) -> Any:
        if not authorised(request):
            return _error(401, "invalid API key", "authentication_error")
        return {"object": "list", "data": [{"id": name, "object": "model", "created": created,
                                            "owned_by": "legalrag"}]}

    @app.post("/v1/chat/completions")
    def chat(body: ChatBody, request: fastapi.Request) -> Any:
        if not authorised(request):
            return _error(401, "invalid API key", "authentication_error")
        if body.model not in (None, "", name):
            return _error(404, f"model {body.model!r} is not served here; this server has {name!r}",
                          "invalid_request_error")
        try:
            req = body.to_request(default_max_tokens)
            if body.stream:
                return _stream_response(llm, req, name)
            result = llm.chat(req)
        except PromptTooLongError as exc:
            return _error(400, str(exc), "exceed_context_size_error", n_prompt_tokens=exc.prompt_tokens,
                          n_ctx=exc.n_ctx)
        except InputError as exc:
            return _error(400, str(exc), "invalid_request_error")
        except EndpointError as exc:
            return _error(502, str(exc), "upstream_error")
        except LegalRagError as exc:
            return _error(500, str(exc), "server_error")
        return result_to_reply(result, name, logprobs=req.logprobs, created=int(time.time()),
                               reply_id="chatcmpl-" + secrets.token_hex(12))

    return app


def _stream_response(llm: LLM, req: ChatRequest, name: str) -> Any:
    """Server-sent events for ``req``. The backend's stream is read by one worker thread (the embedded model
    holds its lock for the whole generation, and a lock must be released by the thread that took it)."""
    import queue
    import threading

    from fastapi.responses import StreamingResponse

    from legalrag.llm.stream import sse_chunks, stream_chat

    pieces: "queue.Queue[tuple[str, Any]]" = queue.Queue(maxsize=256)
    totals: dict[str, Any] = {}

    def produce() -> None:
        try:
            result = stream_chat(llm, req, lambda piece: pieces.put(("text", piece)))
            totals.update(prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                          total_tokens=result.prompt_tokens + result.completion_tokens)
            pieces.put(("end", None))
        except LegalRagError as exc:
            pieces.put(("error", exc))
        except Exception as exc:  # surfaced to the client as an error event, never a silent cut
            pieces.put(("error", LegalRagError(f"{type(exc).__name__}: {exc}")))

    def drain() -> Any:
        while True:
            kind, value = pieces.get()
            if kind == "text":
                yield value
            elif kind == "error":
                raise value
            else:
                return

    threading.Thread(target=produce, name="legalrag-stream", daemon=True).start()
    events = sse_chunks(drain(), model=name, reply_id="chatcmpl-" + secrets.token_hex(12), created=int(time.time()),
                        usage=lambda: totals)
    return StreamingResponse(events, media_type="text/event-stream")


def serve(llm: LLM, *, host: str = "127.0.0.1", port: int = 8000, model_name: str | None = None,
          api_key: str | None = None, log_level: str = "warning") -> None:
    """Run the server until interrupted (blocking)."""
    uvicorn = require("uvicorn", "server")
    uvicorn.run(create_llm_app(llm, model_name=model_name, api_key=api_key), host=host, port=port, log_level=log_level)
