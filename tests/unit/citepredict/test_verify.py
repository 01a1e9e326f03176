"""Batched verification against an OpenAI-compatible endpoint (a local server speaking the wire format) whose
replies leave a proposal out or never parse: the proposals stay, marked unparsed, and the run goes on."""

import json

from unit.llm.test_openai_compat import COMPLETION, scripted_server

from legalrag.citepredict.verify import Proposal, verify_batch
from legalrag.corpora.statutes import statute_document
from legalrag.llm.openai_compat import OpenAICompatLLM

DOCS = {d.id: d for d in [statute_document("2", "Whoever deceives another ...", "Penal Code Art. 2"),
                          statute_document("4", "A fine is set ...", "Penal Code Art. 4"),
                          statute_document("5", "Attempted crimes ...", "Penal Code Art. 5")]}


def reply(content: str) -> tuple:
    body = json.loads(json.dumps(COMPLETION))
    body["choices"][0]["message"]["content"] = content
    return 200, body, {}


def test_missing_verdict_keeps_the_proposal_and_correction_is_checked():
    content = json.dumps({"4": {"decision": "correct", "provision": "5"}, "9": {"decision": "reject"}})
    url, seen, close = scripted_server([reply(content)])
    try:
        llm = OpenAICompatLLM(url, "m", max_retries=0)
        verdicts, step = verify_batch(llm, "facts", [Proposal("4", "rule"), Proposal("2", "co-citation")], DOCS.get)
    finally:
        close()
    assert len(seen) == 1  # one call for both proposals
    prompt = seen[0]["messages"][-1]["content"]
    assert "[1] id 4 (proposed because: rule)" in prompt and "[2] id 2" in prompt
    v4, v2 = verdicts
    assert (v4.decision, v4.corrected, v4.resolved, v4.parsed) == ("correct", "5", True, True)
    assert (v2.decision, v2.parsed) == ("accept", False)
    assert step.error == "no verdict for 2"


def test_reply_that_never_parses_keeps_everything():
    url, seen, close = scripted_server([reply("I think all of them apply.")])
    try:
        llm = OpenAICompatLLM(url, "m", max_retries=0)
        verdicts, step = verify_batch(llm, "facts", [Proposal("4", "rule"), Proposal("2", "")], DOCS.get)
    finally:
        close()
    assert len(seen) == 2  # the reply and one re-ask
    assert [(v.decision, v.parsed) for v in verdicts] == [("accept", False), ("accept", False)]
    assert verdicts[0].calls == 2 and verdicts[1].calls == 0 and step.error
