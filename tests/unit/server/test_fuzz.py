"""API fuzzing with schemathesis against the app's own OpenAPI schema (in process, over ASGI), with the real
index of the bundled sample and a scripted model: whatever the body, no 5xx, and every error is JSON with a
message. Bounded: 15 schema-valid and 15 schema-breaking cases per operation."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="pip install schemathesis")
pytest.importorskip("fastapi")

from hypothesis import HealthCheck, settings  # noqa: E402

from support.server_setup import legal_llm, sample_index, sample_predictor, sample_structure  # noqa: E402


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory):
    from legalrag.server import ServerSettings, create_app

    tmp = tmp_path_factory.mktemp("fuzz")
    index = sample_index(tmp / "idx")
    app = create_app(index, legal_llm(), ServerSettings(rate_limit=0), predictor=sample_predictor(index, tmp),
                     structure=sample_structure())
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def test_no_server_error_and_every_error_is_json_with_a_message(api_schema):
    # schemathesis' pytest plugin does not load under this pytest; its strategies are driven by hypothesis here
    from hypothesis import given
    from hypothesis.errors import Unsatisfiable
    from schemathesis.generation.modes import GenerationMode

    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 14
    seen: dict[int, int] = {}
    for operation, mode in [(op, mode) for op in operations for mode in (GenerationMode.POSITIVE,
                                                                          GenerationMode.NEGATIVE)]:
        @given(case=operation.as_strategy(mode))
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                  database=None)
        def check(case):
            response = case.call()
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            assert response.status_code < 500, (case.method, case.path, case.body, response.text[:300])
            if response.status_code >= 400:
                error = response.json()["error"]
                assert isinstance(error["message"], str) and error["message"], response.text

        try:
            check()
        except Unsatisfiable:  # nothing to break: a GET without parameters has no schema-breaking request
            assert mode is GenerationMode.NEGATIVE and operation.method == "get"
    assert 200 in seen and 422 in seen  # schema-valid and schema-breaking requests were both sent
