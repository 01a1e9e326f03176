"""Web search through Serper (Google results), Tavily, or a self-hosted SearXNG instance's JSON API.

Keys come from the environment: SERPER_API_KEY, TAVILY_API_KEY, SEARXNG_URL. ``web_source_from_env`` picks the
first one configured and otherwise raises SourceNotConfigured saying what to set. Base URLs can be overridden
(SERPER_BASE_URL, TAVILY_BASE_URL) to point at a proxy or a local test server.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from legalrag.errors import EndpointError
from legalrag.search._http import request_json
from legalrag.search.base import SearchResult, SourceNotConfigured, SourceType, site_of


def _expect_list(body: Any, key: str, service: str) -> list[dict]:
    if not isinstance(body, dict):
        raise EndpointError(f"{service}: expected a JSON object, got {type(body).__name__}")
    items = body.get(key, [])
    if not isinstance(items, list):
        raise EndpointError(f"{service}: field {key!r} is not a list")
    return [i for i in items if isinstance(i, dict)]


class SerperSearch:
    """POST {base}/search with X-API-KEY; results are in ``organic`` (title, link, snippet, date, position)."""

    name = "serper"
    source_type = SourceType.WEB

    def __init__(self, api_key: str, base_url: str = "https://google.serper.dev", timeout: float = 20.0):
        if not api_key:
            raise SourceNotConfigured("Serper needs an API key: set SERPER_API_KEY")
        self.api_key, self.base_url, self.timeout = api_key, base_url.rstrip("/"), timeout

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        body = request_json("POST", f"{self.base_url}/search", service="Serper", timeout=self.timeout,
                            headers={"X-API-KEY": self.api_key, "Content-Type": "application/json"},
                            json_body={"q": query, "num": max(1, k)})
        out = []
        for item in _expect_list(body, "organic", "Serper")[:k]:
            link = str(item.get("link", ""))
            if not link:
                continue
            out.append(SearchResult(title=str(item.get("title", "")), url=link, snippet=str(item.get("snippet", "")),
                                    source_type=SourceType.WEB, site=site_of(link), date=str(item.get("date", "")),
                                    score=1.0 / float(item.get("position") or len(out) + 1),
                                    metadata={"engine": "serper"}))
        return out


class TavilySearch:
    """POST {base}/search with a Bearer key; results carry title, url, content, score, optional raw_content."""

    name = "tavily"
    source_type = SourceType.WEB

    def __init__(self, api_key: str, base_url: str = "https://api.tavily.com", timeout: float = 30.0,
                 include_raw_content: bool = False):
        if not api_key:
            raise SourceNotConfigured("Tavily needs an API key: set TAVILY_API_KEY")
        self.api_key, self.base_url, self.timeout = api_key, base_url.rstrip("/"), timeout
        self.include_raw_content = include_raw_content

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        body = request_json("POST", f"{self.base_url}/search", service="Tavily", timeout=self.timeout,
                            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
                            json_body={"query": query, "max_results": max(1, k), "search_depth": "basic",
                                       "include_raw_content": self.include_raw_content})
        out = []
        for item in _expect_list(body, "results", "Tavily")[:k]:
            url = str(item.get("url", ""))
            if not url:
                continue
            raw = item.get("raw_content")
            out.append(SearchResult(title=str(item.get("title", "")), url=url, snippet=str(item.get("content", "")),
                                    source_type=SourceType.WEB, site=site_of(url),
                                    date=str(item.get("published_date") or ""),
                                    content=raw if isinstance(raw, str) and raw.strip() else None,
                                    score=float(item.get("score") or 0.0), metadata={"engine": "tavily"}))
        return out


class SearxngSearch:
    """GET {base}/search?q=...&format=json on a self-hosted SearXNG (JSON must be enabled in its settings.yml)."""

    name = "searxng"
    source_type = SourceType.WEB

    def __init__(self, base_url: str, timeout: float = 20.0, language: str | None = None):
        if not base_url:
            raise SourceNotConfigured("SearXNG needs its address: set SEARXNG_URL (e.g. http://localhost:8080)")
        self.base_url, self.timeout, self.language = base_url.rstrip("/"), timeout, language

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        params = {"q": query, "format": "json"}
        if self.language:
            params["language"] = self.language
        try:
            body = request_json("GET", f"{self.base_url}/search", service="SearXNG", params=params,
                                timeout=self.timeout)
        except EndpointError as exc:
            if "HTTP 403" in str(exc):  # SearXNG answers 403 when the json format is disabled
                raise EndpointError(f"{exc}. If this is your instance, add 'json' to search.formats in "
                                    "settings.yml") from None
            raise
        out = []
        for item in _expect_list(body, "results", "SearXNG"):
            url = str(item.get("url", ""))
            if not url or any(r.url == url for r in out):
                continue
            out.append(SearchResult(title=str(item.get("title", "")), url=url, snippet=str(item.get("content") or ""),
                                    source_type=SourceType.WEB, site=site_of(url),
                                    date=str(item.get("publishedDate") or ""), score=float(item.get("score") or 0.0),
                                    metadata={"engine": "searxng", "engines": list(item.get("engines") or [])}))
            if len(out) >= k:
                break
        return out


WEB_ENV_HELP = ("no web search is configured: set one of SERPER_API_KEY (serper.dev), TAVILY_API_KEY (tavily.com) "
                "or SEARXNG_URL (your own SearXNG with the JSON format enabled)")


def web_source_from_env(env: Mapping[str, str] | None = None):
    """The first web source configured in ``env`` (default os.environ): Serper, then Tavily, then SearXNG."""
    env = os.environ if env is None else env
    if env.get("SERPER_API_KEY"):
        return SerperSearch(env["SERPER_API_KEY"], base_url=env.get("SERPER_BASE_URL") or "https://google.serper.dev")
    if env.get("TAVILY_API_KEY"):
        return TavilySearch(env["TAVILY_API_KEY"], base_url=env.get("TAVILY_BASE_URL") or "https://api.tavily.com")
    if env.get("SEARXNG_URL"):
        return SearxngSearch(env["SEARXNG_URL"])
    raise SourceNotConfigured(WEB_ENV_HELP)
