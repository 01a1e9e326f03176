"""The legalrag HTTP service and its web application: a thin FastAPI app over the library.

``create_app(index, llm=None, settings=None, *, predictor=None, drafter=None, agents_llm=None, structure=None, support=None)``
returns the app. Collaborators are passed in (an opened ``Index``, an ``LLM``, a ``CitationPredictor``, a
``JudgmentDrafter``, the free drafter ``/draft`` uses without a structure model (one is made from the LLM and the
index's documents when not given); ``agents_llm``, a trained policy's model, runs ``/agents/search`` instead of
``llm``; ``structure``, a judgment ``StructurePredictor``, answers ``/judgment/structure`` and decides the
judgment ``/draft`` writes, as ``legalrag judgment draft`` does; ``open_index(path)``, when given, opens another index
a request names, up to ``ServerSettings.max_indexes`` kept); ``legalrag serve`` builds them with ``legalrag.wiring``.
``legalrag ask`` and ``legalrag chat`` answer through a running server (``legalrag.warm``): ``GET /health`` says
its version and build, its model and the indexes it holds. Routes (the schema is at ``/openapi.json``, listed for people at ``/docs``):

- ``GET  /health``, ``/index``, ``/capabilities``, ``/laws``, ``/documents/{id}``
- ``POST /search`` {query, k, retriever?, laws?}; ``POST /agents/search`` (+ planner trajectory)
- ``POST /citations/check`` {text}
- ``GET /v1/models``, ``POST /v1/chat/completions``: the consultation as an OpenAI-compatible chat model
  (``routes_openai.py``); ``POST /mcp``: the MCP tools over streamable HTTP (``legalrag.integrations``)
- ``POST /ask``, ``/consult``, ``/draft`` and their ``/stream`` forms (server-sent events); ``POST /cite``;
  ``POST /judgment/structure`` {facts, check_charges?} (the predicted verdict with its evidence);
  answers put at most ``ServerSettings.evidence_tokens`` tokens of evidence in the prompt (a request may ask for less)
- pages: ``/`` (consultation), ``/search.html``, ``/draft.html``, ``/cite.html``, ``/check.html``; assets under ``/static/``

Without a model, generating routes answer 503 with a message while search keeps working. Every error is JSON
``{"error": {"type", "message"}}`` (``type`` is a stable code the pages translate; 422s add ``fields``: field,
pydantic type and limits; some add ``params``); a page that does not exist answers a browser with the 404 page
and an API client with JSON; no stack trace leaves the server (``security.py`` has keys, rate limits,
body limits and headers; ``streaming.py`` the model queue and disconnect handling).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from legalrag._optional import require
from legalrag.server.context import AppContext, ServerSettings
from legalrag.server.render import hit_to_dict
from legalrag.server.streaming import LLMGate, error_payload

STATIC = Path(__file__).resolve().parent.parent / "static"
PAGES = {"/": "index.html", "/search.html": "search.html", "/draft.html": "draft.html", "/cite.html": "cite.html",
         "/check.html": "check.html",
         "/docs": "docs.html"}
LOG = logging.getLogger("legalrag.server")

__all__ = ["ServerSettings", "create_app", "hit_to_dict"]


def create_app(index: Any, llm: Any = None, settings: ServerSettings | None = None, *, predictor: Any = None,
               drafter: Any = None, agents_llm: Any = None, structure: Any = None,
               open_index: Any = None, support: Any = None, versions: Any = None) -> Any:
    fastapi = require("fastapi", "server")
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException

    from legalrag.errors import LegalRagError
    from legalrag.server import routes_law, routes_llm, routes_openai, routes_search
    from legalrag.server.security import Guard, KeyRing, RateLimiter

    from legalrag.warm.build import build_id

    settings = settings or ServerSettings()
    ctx = AppContext(build=build_id(), index=index, llm=llm, settings=settings, predictor=predictor, drafter=drafter,
                     agents_llm=agents_llm, structure=structure, open_index=open_index, support=support,
                     versions=versions, gate=LLMGate(settings.llm_slots, settings.max_waiting))
    mcp_app, lifespan = _mcp(ctx)
    app = fastapi.FastAPI(title="legalrag", version=_version(), docs_url=None, redoc_url=None,
                          openapi_url="/openapi.json", lifespan=lifespan,
                          description="Statute search, cited answers, consultations, judgment drafts and citation "
                                      "prediction. Not legal advice; consult a lawyer for your case. Errors are JSON {error: {type, message}}. "
                                      + _evidence_doc(settings.evidence_tokens))
    app.state.context = ctx

    def error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Any:
        return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Any, exc: Any) -> Any:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return error(400, "MalformedJSON", "the request body is not valid JSON")
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg')}"
                             for e in errors[:5])
        body = {"type": "InvalidRequest", "message": f"invalid request: {problems}", "fields": _fields(errors[:5])}
        return JSONResponse({"error": body}, status_code=422)

    @app.exception_handler(HTTPException)
    def _http(request: Any, exc: Any) -> Any:
        kinds = {404: "NotFound", 405: "MethodNotAllowed", 413: "TooLarge"}
        message = exc.detail if isinstance(exc.detail, str) else "bad request"
        if exc.status_code == 404:
            if request.method in ("GET", "HEAD") and "text/html" in request.headers.get("accept", ""):
                return FileResponse(STATIC / "404.html", status_code=404, media_type="text/html")
            message = f"no route {request.url.path}; the routes are listed at /docs"
        elif exc.status_code == 400 and "parsing the body" in message:
            message = "the request body could not be read (too large, or cut off)"
        return error(exc.status_code, kinds.get(exc.status_code, "HTTPError"), message,
                     getattr(exc, "headers", None))

    @app.exception_handler(LegalRagError)
    def _legal(request: Any, exc: LegalRagError) -> Any:
        status, body = error_payload(exc)
        headers = {"Retry-After": "5"} if status == 503 and body["error"]["type"] == "Busy" else None
        return JSONResponse(body, status_code=status, headers=headers)

    @app.exception_handler(Exception)
    def _internal(request: Any, exc: Exception) -> Any:
        status, body = error_payload(exc)
        return JSONResponse(body, status_code=status)

    for api in routes_search.router(ctx):
        app.include_router(api)
    app.include_router(routes_llm.router(ctx))
    app.include_router(routes_openai.router(ctx))
    app.include_router(routes_law.router(ctx))
    if mcp_app is not None:
        app.router.routes.extend(mcp_app.routes)  # POST /mcp: the MCP tools over streamable HTTP

    for path, name in PAGES.items():
        def page(name: str = name) -> Any:
            return FileResponse(STATIC / name, media_type="text/html")

        app.add_api_route(path, page, methods=["GET", "HEAD"], include_in_schema=False)

    def favicon() -> Any:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    app.add_api_route("/favicon.ico", favicon, methods=["GET", "HEAD"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _document_security(app, bool(settings.api_keys))

    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type"])
    app.add_middleware(Guard, keys=KeyRing(settings.api_keys),
                       limiter=RateLimiter(settings.rate_limit, settings.rate_burst),
                       max_body_bytes=settings.max_body_bytes, page_paths=tuple(PAGES))
    return app


def _mcp(ctx: AppContext) -> tuple[Any, Any]:
    """The MCP tools over the app's own collaborators (and its model queue), as a Starlette app whose route is
    ``/mcp``, and the lifespan that runs its session manager; (None, None) when ``ServerSettings.mcp`` is off or the
    ``mcp`` extra is not installed."""
    import importlib.util
    from contextlib import asynccontextmanager

    if not ctx.settings.mcp:
        return None, None
    if importlib.util.find_spec("mcp") is None:
        LOG.warning("/mcp is off: the mcp package is not installed (pip install 'legalrag[mcp]')")
        return None, None
    from legalrag.integrations.mcp_server import create_mcp_server
    from legalrag.integrations.tools import Collaborators, LegalTools
    from legalrag.server import routes_law

    def given(value: Any, takes_index: bool = False) -> Any:
        if value is None:
            return None
        return (lambda _index: value) if takes_index else (lambda: value)

    tools = LegalTools(Collaborators(index=lambda: ctx.index, llm=given(ctx.llm), predictor=given(ctx.predictor, True),
                                     structure=given(ctx.structure), support=given(ctx.support),
                                     slot=ctx.gate.slot,
                                     versions=lambda: routes_law.law_versions(ctx, required=False)),
                       max_k=min(ctx.settings.max_k, 50), evidence_tokens=ctx.settings.evidence_tokens)
    server = create_mcp_server(tools)
    # stateless: each POST is one exchange, so the route needs no session affinity behind a proxy; the
    # DNS-rebinding check (Host and Origin headers) is on when the server binds a loopback address
    mcp_app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=ctx.settings.host)

    @asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with server.session_manager.run():
            yield

    return mcp_app, lifespan


def _fields(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each validation problem as codes a page can translate: the field, pydantic's error type, its limits."""
    out = []
    for e in errors:
        limits = {k: v for k, v in (e.get("ctx") or {}).items() if isinstance(v, (int, float, str)) and k != "error"}
        out.append({"field": ".".join(str(p) for p in e.get("loc", ())[1:]) or "body", "type": e.get("type", ""),
                    **({"limits": limits} if limits else {})})
    return out


def _document_security(app: Any, keys: bool) -> None:
    """Name the API-key schemes in the OpenAPI schema when the server needs a key."""
    if not keys:
        return
    from fastapi.openapi.utils import get_openapi

    def schema() -> dict[str, Any]:
        if app.openapi_schema is None:
            s = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            s.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
            s["security"] = [{"bearer": []}, {"apiKey": []}]
            app.openapi_schema = s
        return app.openapi_schema

    app.openapi = schema


def _evidence_doc(budget: int | None) -> str:
    if budget is None:
        return ("/ask and /consult give the model whole retrieved articles; a request may set evidence_tokens to "
                "cut them to the clauses that match the question.")
    return (f"/ask and /consult cut each retrieved article to the clauses that match the question, within an "
            f"evidence budget of {budget} prompt tokens (`legalrag serve -o evidence_tokens=N`); a request may ask "
            "for less with evidence_tokens.")


def _version() -> str:
    from legalrag import __version__

    return __version__
