"""CourtListener v4 search client against a local server answering in the v4 response format."""

from __future__ import annotations

import pytest
from support.qa_http import LocalServer

from legalrag.errors import EndpointError
from legalrag.search.courtlistener import CourtListenerSearch


@pytest.fixture
def server():
    s = LocalServer()
    s.add_json("/api/rest/v4/search/", "courtlistener_search.json")
    yield s
    s.close()


def test_keyword_search_normalises_cases(server):
    src = CourtListenerSearch(token="tok", base_url=server.url)
    results = src.search("same-sex marriage fourteenth amendment", k=5)
    req = server.requests[0]
    assert req["headers"]["authorization"] == "Token tok"
    assert req["query"] == {"type": "o", "q": "same-sex marriage fourteenth amendment"}
    first = results[0]
    assert first.title == "Obergefell v. Hodges, 576 U.S. 644"
    assert first.url == server.url + "/opinion/2812209/obergefell-v-hodges/"
    assert first.date == "2015-06-26" and first.metadata["docket_number"] == "14-556"
    assert "<mark>" not in first.snippet and "license a marriage" in first.snippet
    assert first.metadata["download_urls"] == ["http://www.supremecourt.gov/opinions/14pdf/14-556_3204.pdf"]
    doc = first.to_document()
    assert doc.kind.value == "judgment" and doc.metadata["citations"][0] == "576 U.S. 644"
    assert results[1].metadata["download_urls"] == []


@pytest.mark.parametrize("field,param,value", [("party", "case_name", "Miranda"),
                                               ("citation", "citation", "384 U.S. 436"),
                                               ("docket", "docket_number", "14-556")])
def test_field_searches_use_api_parameters(server, field, param, value):
    CourtListenerSearch(base_url=server.url).search(value, k=1, field=field)
    req = server.requests[0]
    assert req["query"] == {"type": "o", param: value}
    assert "authorization" not in req["headers"]  # anonymous when no token is set


def test_from_env_and_errors(server):
    src = CourtListenerSearch.from_env({"COURTLISTENER_API_TOKEN": "abc", "COURTLISTENER_BASE_URL": server.url})
    assert src.token == "abc" and len(src.search("q", k=1)) == 1
    server.add("/api/rest/v4/search/", '{"detail": "Invalid token."}', "application/json", status=401)
    with pytest.raises(EndpointError, match="CourtListener.*token"):
        src.search("q")
    with pytest.raises(ValueError):
        src.search("q", field="judge")
