"""The legalrag HTTP service: a thin FastAPI app over the library.

``create_app(index, llm=None, settings=None)`` returns the app; each route is one library call:

- ``GET  /health``                    liveness
- ``GET  /index``                     what the index holds (components, corpus size and hash)
- ``POST /search``   {query, k, retriever?, laws?}      ranked articles with citations
- ``POST /citations/check`` {text}                      every citation in the text, resolved against the corpus
- ``POST /ask``      {question, k, max_tokens?}         a cited answer; 503 when no LLM is configured
- ``GET  /``                                            a small web page for search and ask

Collaborators are passed in (an opened ``Index``, an ``LLM``); FastAPI is imported only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from legalrag._optional import require
from legalrag.errors import InputError, LegalRagError

STATIC = Path(__file__).parent / "static"


class Settings(BaseModel):
    """Service options (typed, closed: unknown keys are an error)."""

    model_config = ConfigDict(extra="forbid")
    max_k: int = Field(50, ge=1, le=1000)
    default_retriever: str | None = None


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(..., min_length=1)
    k: int = Field(10, ge=1)
    retriever: str | None = None
    laws: list[str] = Field(default_factory=list, description="restrict to these law titles")


class CheckBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(..., min_length=1)
    k: int = Field(8, ge=1)
    max_tokens: int = Field(512, ge=16, le=4096)


def hit_to_dict(hit: Any) -> dict[str, Any]:
    from legalrag.citations import citation_label

    d = hit.document
    return {"rank": hit.rank, "id": d.id, "score": hit.score, "title": d.title, "citation": citation_label(d),
            "text": d.text, "retriever": hit.retriever, "sources": dict(hit.sources)}


def create_app(index: Any, llm: Any = None, settings: Settings | None = None) -> Any:
    fastapi = require("fastapi", "server")
    from fastapi.responses import FileResponse, JSONResponse

    settings = settings or Settings()
    app = fastapi.FastAPI(title="legalrag", version=_version())

    @app.exception_handler(LegalRagError)
    def _legal_error(request: Any, exc: LegalRagError) -> Any:
        status = 400 if isinstance(exc, InputError) else 500
        return JSONResponse({"error": {"type": type(exc).__name__, "message": str(exc)}}, status_code=status)

    def check_k(k: int) -> None:
        if k > settings.max_k:
            raise InputError(f"k={k} is above this server's limit of {settings.max_k}")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "llm": getattr(llm, "model_id", None)}

    @app.get("/index")
    def index_info() -> dict[str, Any]:
        return {"path": str(index.path), "components": index.names, "default": index.default,
                "corpus": index.manifest.get("corpus", {})}

    @app.post("/search")
    def search(body: SearchBody) -> dict[str, Any]:
        from legalrag.retrieval.pipeline import build_pipeline, law_filter

        check_k(body.k)
        pipe = build_pipeline(index, retriever=body.retriever or settings.default_retriever)
        flt = law_filter(index, body.laws) if body.laws else None
        hits = pipe.search(body.query, k=body.k, filter=flt)
        return {"query": body.query, "retriever": pipe.name, "hits": [hit_to_dict(h) for h in hits]}

    @app.post("/citations/check")
    def check(body: CheckBody) -> dict[str, Any]:
        from legalrag.answer import citation_to_dict, resolver_for
        from legalrag.citations import check_citations

        cits = check_citations(body.text, resolver_for(index))
        return {"citations": [citation_to_dict(c) for c in cits],
                "unresolved": sum(not c.resolved for c in cits)}

    @app.post("/ask")
    def ask(body: AskBody) -> Any:
        from legalrag.answer import answer_question, answer_to_dict

        if llm is None:
            return JSONResponse({"error": {"type": "NoModel", "message": "this server has no language model; "
                                           "start it with `legalrag serve --index DIR --model qwen2.5-1.5b` "
                                           "or --endpoint URL"}}, status_code=503)
        check_k(body.k)
        answer = answer_question(body.question, index, llm, k=body.k, max_tokens=body.max_tokens,
                                 retriever=settings.default_retriever)
        return answer_to_dict(body.question, answer, model=llm.model_id)

    @app.get("/")
    def page() -> Any:
        return FileResponse(STATIC / "index.html")

    return app


def _version() -> str:
    from legalrag import __version__

    return __version__
