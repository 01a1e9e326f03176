"""US case law through the CourtListener v4 search API (https://www.courtlistener.com/help/api/rest/search/).

GET /api/rest/v4/search/?type=o&q=... with ``Authorization: Token <COURTLISTENER_API_TOKEN>``. Besides keywords,
the API takes ``case_name`` (party names), ``citation`` (e.g. ``576 U.S. 644``) and ``docket_number``. Anonymous
use works but is heavily rate-limited, so the token is read from the environment when set.
"""

from __future__ import annotations

import enum
import os
import re
from typing import Mapping

from legalrag.errors import EndpointError
from legalrag.search._http import request_json
from legalrag.search.base import SearchResult, SourceType

_TAG = re.compile(r"</?mark>|<[^>]{1,40}>")


class CaseField(str, enum.Enum):
    KEYWORD = "keyword"
    PARTY = "party"
    CITATION = "citation"
    DOCKET = "docket"


_PARAM = {CaseField.PARTY: "case_name", CaseField.CITATION: "citation", CaseField.DOCKET: "docket_number"}


class CourtListenerSearch:
    name = "courtlistener"
    source_type = SourceType.CASE_LAW

    def __init__(self, token: str | None = None, base_url: str = "https://www.courtlistener.com",
                 timeout: float = 30.0, court: str | None = None):
        self.token, self.base_url, self.timeout, self.court = token, base_url.rstrip("/"), timeout, court

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "CourtListenerSearch":
        env = os.environ if env is None else env
        return cls(token=env.get("COURTLISTENER_API_TOKEN") or None,
                   base_url=env.get("COURTLISTENER_BASE_URL") or "https://www.courtlistener.com")

    def search(self, query: str, k: int = 5, field: CaseField | str = CaseField.KEYWORD) -> list[SearchResult]:
        field = CaseField(field)
        params: dict[str, str] = {"type": "o"}
        if field is CaseField.KEYWORD:
            params["q"] = query
        else:
            params[_PARAM[field]] = query
        if self.court:
            params["court"] = self.court
        headers = {"Authorization": f"Token {self.token}"} if self.token else {}
        body = request_json("GET", f"{self.base_url}/api/rest/v4/search/", service="CourtListener",
                            params=params, headers=headers, timeout=self.timeout)
        if not isinstance(body, dict) or not isinstance(body.get("results", []), list):
            raise EndpointError("CourtListener: expected an object with a 'results' list")
        return [self._result(item) for item in body["results"][:k] if isinstance(item, dict)]

    def _result(self, item: dict) -> SearchResult:
        opinions = [o for o in item.get("opinions") or [] if isinstance(o, dict)]
        snippet = " ".join(_TAG.sub("", str(o.get("snippet") or "")).strip() for o in opinions).strip()
        citations = [str(c) for c in item.get("citation") or []]
        url = self.base_url + str(item.get("absolute_url") or f"/opinion/{item.get('cluster_id', '')}/")
        title = str(item.get("caseName") or item.get("caseNameFull") or "")
        if citations:
            title = f"{title}, {citations[0]}"
        return SearchResult(
            title=title, url=url, snippet=snippet, source_type=SourceType.CASE_LAW,
            site=str(item.get("court") or item.get("court_id") or "courtlistener.com"),
            date=str(item.get("dateFiled") or ""),
            metadata={"case_name": item.get("caseName", ""), "citations": citations,
                      "docket_number": item.get("docketNumber", ""), "court_id": item.get("court_id", ""),
                      "cluster_id": item.get("cluster_id"),
                      "download_urls": [o["download_url"] for o in opinions if o.get("download_url")]})
