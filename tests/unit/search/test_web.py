"""Web search clients against a local server that answers in each service's real JSON format."""

from __future__ import annotations

import pytest
from support.qa_http import LocalServer

from legalrag.errors import EndpointError
from legalrag.search.base import SearchSource, SourceNotConfigured, SourceType, authority_score
from legalrag.search.web import SearxngSearch, SerperSearch, TavilySearch, web_source_from_env


@pytest.fixture
def server():
    s = LocalServer()
    yield s
    s.close()


def test_serper_request_and_normalised_results(server):
    server.add_json("/search", "serper_search.json")
    src = SerperSearch("key-123", base_url=server.url)
    assert isinstance(src, SearchSource)
    results = src.search("computer fraud penalty", k=2)
    req = server.requests[0]
    assert req["method"] == "POST" and req["headers"]["x-api-key"] == "key-123"
    assert req["json"] == {"q": "computer fraud penalty", "num": 2}
    assert [r.title[:12] for r in results] == ["18 U.S. Code", "Computer Fra"]
    assert results[0].url == server.url + "/pages/usc1030.html" and results[0].site == "127.0.0.1"
    assert results[1].date == "Jun 3, 2021" and results[0].source_type is SourceType.WEB
    doc = results[0].to_document()
    assert doc.kind.value == "web" and doc.source == results[0].url and "knowingly accessed" in doc.text


def test_tavily_bearer_and_fields(server):
    server.add_json("/search", "tavily_search.json")
    results = TavilySearch("tvly-abc", base_url=server.url).search("deposit deadline", k=5)
    req = server.requests[0]
    assert req["headers"]["authorization"] == "Bearer tvly-abc"
    assert req["json"]["query"] == "deposit deadline" and req["json"]["max_results"] == 5
    assert len(results) == 2 and results[0].score == pytest.approx(0.93)
    assert results[0].site == "leginfo.legislature.ca.gov" and "21 days" in results[0].snippet
    assert results[1].date == "2023-08-14"
    # official legislature page outranks the forum thread
    assert authority_score(results[0]) > authority_score(results[1]) == 0


def test_searxng_get_json_dedupes(server):
    server.add_json("/search", "searxng_search.json")
    results = SearxngSearch(server.url + "/").search("GDPR erasure", k=5)
    req = server.requests[0]
    assert req["method"] == "GET" and req["query"] == {"q": "GDPR erasure", "format": "json"}
    assert [r.site for r in results] == ["eur-lex.europa.eu", "gdpr-info.eu"]  # duplicate URL dropped
    assert results[1].date.startswith("2018-05-25") and results[0].metadata["engines"] == ["duckduckgo", "brave"]


def test_searxng_json_disabled_gives_actionable_error(server):
    server.add("/search", "<html>Forbidden</html>", status=403)
    with pytest.raises(EndpointError, match="settings.yml"):
        SearxngSearch(server.url).search("x")


@pytest.mark.parametrize("status,pattern", [(401, "API key"), (429, "rate limited"), (500, "HTTP 500")])
def test_http_errors_are_endpoint_errors(server, status, pattern):
    server.add("/search", '{"message": "nope"}', "application/json", status=status)
    with pytest.raises(EndpointError, match=pattern):
        SerperSearch("k", base_url=server.url).search("q")


def test_non_json_and_wrong_shape(server):
    server.add("/search", "<html>maintenance</html>")
    with pytest.raises(EndpointError, match="not JSON"):
        TavilySearch("k", base_url=server.url).search("q")
    server.add("/search", '{"organic": {"not": "a list"}}', "application/json")
    with pytest.raises(EndpointError, match="not a list"):
        SerperSearch("k", base_url=server.url).search("q")


def test_timeout_is_reported(server):
    server.add("/search", "{}", "application/json", delay=1.0)
    with pytest.raises(EndpointError, match="within 0.2 s"):
        SerperSearch("k", base_url=server.url, timeout=0.2).search("q")


def test_env_selection_and_clear_message(server):
    with pytest.raises(SourceNotConfigured, match="SERPER_API_KEY.*TAVILY_API_KEY.*SEARXNG_URL"):
        web_source_from_env({})
    assert web_source_from_env({"SEARXNG_URL": server.url}).name == "searxng"
    assert web_source_from_env({"TAVILY_API_KEY": "t", "SEARXNG_URL": "x"}).name == "tavily"
    src = web_source_from_env({"SERPER_API_KEY": "s", "SERPER_BASE_URL": server.url})
    server.add_json("/search", "serper_search.json")
    assert src.name == "serper" and len(src.search("q", k=3)) == 3
