"""The front doors pass the one support model from the composition root: every call in the CLI, the HTTP app,
the Python API and the MCP tools that builds an answer, a consultation or a server names ``support=`` (a
consultation may get it through the ``engine=`` it is handed). Library code marks with the lexical model when
none is passed, so a front door that forgot would degrade silently."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "legalrag"
BUILDERS = {"answer_question", "engine_for", "create_app", "Collaborators", "Consultation", "run_answers",
            "run_generation"}
FRONT_DOORS = [*sorted((SRC / "cli").rglob("*.py")), *sorted((SRC / "server").rglob("*.py")), SRC / "api.py",
               *sorted((SRC / "integrations").rglob("*.py"))]


def calls_without_support(source: str, name: str) -> list[str]:
    missing = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        given = {k.arg for k in node.keywords}
        if called in BUILDERS and not given & {"support", None} and not (called == "Consultation" and "engine" in given):
            missing.append(f"{name}:{node.lineno} {called}(...)")
    return missing


def test_every_front_door_passes_the_support_model():
    missing = [m for p in FRONT_DOORS for m in calls_without_support(p.read_text(encoding="utf-8"),
                                                                     str(p.relative_to(SRC)))]
    assert not missing, "pass support= (Root.make_support_scorer, or the server's ctx.support):\n" + "\n".join(missing)


def test_the_check_sees_a_call_that_forgets():
    source = ("answer_question(q, index, llm, k=3)\nengine_for(llm, index, support=s)\n"
              "Consultation(engine=e)\nConsultation(search=f, llm=llm)\n")
    assert calls_without_support(source, "x.py") == ["x.py:1 answer_question(...)", "x.py:4 Consultation(...)"]
