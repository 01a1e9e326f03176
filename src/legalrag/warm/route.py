"""Which path answers a question: a running ``legalrag serve`` of this build with the same model, or this process.

``legalrag ask``, ``legalrag chat`` and :meth:`legalrag.api.Legalrag.ask` / ``Chat.ask`` all call
:func:`choose_server` and build their request with :func:`ask_request` / :func:`consult_request`, so the three answer
through the same server under the same conditions, and say the same reason when they do not. Standard library
only (with :mod:`legalrag.warm.client`): a fresh ``ask`` runs this before anything heavy is imported.
"""

from __future__ import annotations

import os
from typing import Any

from legalrag.warm.client import WarmServer, probe_warm_server

START_HINT = "start one with `legalrag serve --background`"
ASK_ROUTE, CONSULT_ROUTE = "/ask/stream", "/consult/stream"


def server_url(settings: Any) -> str:
    """Where ``legalrag serve`` listens by the saved settings (a wildcard bind is reached on loopback)."""
    host = settings.serve_host
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://[{host}]:{settings.serve_port}" if ":" in host else f"http://{host}:{settings.serve_port}"


def choose_server(settings: Any, *, local: bool = False, model: str | None = None, endpoint: str | None = None,
                  evidence_tokens: int | None = None, index: str | None = None) -> tuple[WarmServer | None, str]:
    """The warm server to answer through, or None and the reason this process answers instead. ``index`` is
    :func:`index_arg`'s. (``--no-cache`` is no reason: the request asks the server to skip its call cache.)"""
    from legalrag.warm.build import build_id

    if local:
        return None, "--local"
    if endpoint or settings.llm.endpoint:
        return None, "the model is an endpoint"
    url = server_url(settings)
    server = probe_warm_server(url)
    if server is None:
        return None, f"no legalrag server at {url}; {START_HINT}"
    if server.build != build_id():
        return None, (f"the server at {url} runs another legalrag build ({server.build}; this is {build_id()}): "
                      "it is stale and was not used; restart it: `legalrag serve --stop`, then `legalrag serve "
                      "--background` (or Ctrl-C and `legalrag serve` where it runs in the foreground)")
    if not server.llm:
        return None, f"the server at {url} has no model (started with --no-llm)"
    if model and not _same_model(model, server.llm):
        return None, f"--model {model}: the server at {url} answers with {server.llm}"
    if evidence_tokens == 0 and server.evidence_tokens is not None:
        return None, (f"--evidence-tokens 0 (whole articles): the server at {url} cuts articles to "
                      f"{server.evidence_tokens} tokens")
    if evidence_tokens is not None and server.evidence_tokens is not None and evidence_tokens > server.evidence_tokens:
        return None, (f"--evidence-tokens {evidence_tokens} is above the server's budget of {server.evidence_tokens} "
                      "(the serve.evidence_tokens setting of `legalrag serve`)")
    if index is not None and not server.holds(index) and server.max_indexes < 1:
        return None, (f"the server at {url} holds {server.index} and may not open {index} "
                      "(the serve.max_indexes setting of `legalrag serve`)")
    return server, ""


def request_budget(evidence_tokens: int | None) -> int | None:
    """The evidence budget a request to the warm server asks for: ``--evidence-tokens`` when given, else None
    (the server's own); 0 (whole articles) asks for the server's too, which :func:`choose_server` allows only
    to a server that gives whole articles itself."""
    return evidence_tokens or None


def _same_model(name: str, served: str) -> bool:
    from legalrag.llm.models import canonical_name

    return str(canonical_name(name)) == served or name == served


def index_arg(index: Any, settings: Any) -> str | None:
    """The index a request names: ``--index`` or the saved ``index.path``, as an absolute path; None for the
    server's own (no index named anywhere: in this process that is the statute sample)."""
    path = index if index is not None else settings.index
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


def ask_request(question: str, *, index: str | None, k: int | None = None, retriever: str | None = None,
             max_tokens: int | None = None, lang: str | None = None, style: str | None = None,
             evidence_tokens: int | None = None, cache: bool = True, as_of: str | None = None) -> dict[str, Any]:
    """The body of ``POST /ask/stream``: the options given (None: the server's defaults); ``cache=False`` asks the
    server to answer past its call cache."""
    body = {"question": question, "k": k, "retriever": retriever, "max_tokens": max_tokens, "lang": lang,
            "style": style, "evidence_tokens": request_budget(evidence_tokens), "index": index,
            "cache": None if cache else False, "as_of": as_of}
    return {key: value for key, value in body.items() if value is not None}


def consult_request(question: str, history: list[tuple[str, str]], *, processor: str, index: str | None,
                 k: int | None = None, retriever: str | None = None, max_tokens: int | None = None,
                 style: str | None = None, evidence_tokens: int | None = None,
                 as_of: str | None = None) -> dict[str, Any]:
    """The body of ``POST /consult/stream``: the message and the dialogue so far (the server keeps none)."""
    body = {"question": question, "history": [{"role": role, "content": text} for role, text in history],
            "processor": processor, "retriever": retriever, "k": k, "max_tokens": max_tokens,
            "evidence_tokens": request_budget(evidence_tokens), "index": index, "style": style, "as_of": as_of}
    return {key: value for key, value in body.items() if value is not None}
