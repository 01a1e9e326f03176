"""The ``predict_verdict`` tool with ``as_of``: each Criminal Law article of the verdict read in the version in
force at the acts, over the tools' versions collaborator (the two-version Criminal Law of ``test_temporal``),
typed as ``law_versions``; through ``LegalTools`` and through the official ``mcp`` SDK's client connected in
process to ``create_mcp_server``. The private-company manager of 2023: 第一百六十五条's old text, which does not
reach him; ``as_of`` 2024-05-01: today's."""

from __future__ import annotations

import pytest

pytest.importorskip("lightgbm")

from legalrag.errors import InputError  # noqa: E402
from legalrag.integrations.tools import Collaborators, DatedVerdictPrediction, LegalTools  # noqa: E402
from legalrag.judgment.temporal import NO_VERSIONS  # noqa: E402
from unit.judgment.manager_case import ACTS_2023, TWO_VERSIONS, article, manager_model  # noqa: E402
from unit.judgment.test_temporal import NEW_165, OLD_165  # noqa: E402


def tools(versions=lambda: TWO_VERSIONS) -> LegalTools:
    def no_index():
        raise AssertionError("predict_verdict needs no index")

    return LegalTools(Collaborators(index=no_index, structure=manager_model, versions=versions))


def test_the_verdict_reads_the_law_at_the_acts():
    t = tools()
    old = t.predict_verdict(ACTS_2023)
    assert isinstance(old, DatedVerdictPrediction) and old.charges[0].name == "非法经营同类营业罪"
    a = article(old.model_dump()["law_versions"])
    assert (a["rule"], a["version"], a["text"]) == ("not_covered", "2020-12-26", OLD_165)
    assert old.law_versions.acts.source == "facts" and "第十二条" in old.law_versions.statement
    new = t.predict_verdict(ACTS_2023, as_of="2024-05-01")
    a = article(new.model_dump()["law_versions"])
    assert (a["rule"], a["version"], a["text"]) == ("current", "2023-12-29", NEW_165)
    assert new.law_versions.statement == "" and new.result_section == old.result_section
    with pytest.raises(InputError, match="YYYY-MM-DD") as err:
        t.predict_verdict(ACTS_2023, as_of="2024-02-30")
    assert err.value.field == "as_of"


def test_without_versions_the_verdict_says_so():
    bare = tools(versions=None).predict_verdict(ACTS_2023)
    assert bare.law_versions.notice == NO_VERSIONS and bare.law_versions.articles == []


def test_through_the_mcp_client():
    pytest.importorskip("mcp")
    from legalrag.integrations.mcp_server import create_mcp_server
    from unit.integrations.test_mcp_law_tools import call, error, session

    server = create_mcp_server(tools())

    async def body(client):
        return (await call(client, "predict_verdict", {"facts": ACTS_2023}),
                await call(client, "predict_verdict", {"facts": ACTS_2023, "as_of": "2024-05-01"}),
                await error(client, "predict_verdict", {"facts": ACTS_2023, "as_of": "2024-02-30"}))

    old, new, bad = session(server, body)
    assert old["charges"][0]["name"] == "非法经营同类营业罪"
    assert article(old["law_versions"])["rule"] == "not_covered" and old["law_versions"]["statement"]
    assert article(new["law_versions"])["rule"] == "current" and new["law_versions"]["acts"]["source"] == "as_of"
    assert "YYYY-MM-DD" in bad and "as_of" in bad
