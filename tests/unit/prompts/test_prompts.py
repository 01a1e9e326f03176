"""Prompt templates: sections, variables checked at load and render, every packaged template loads."""

from __future__ import annotations

import pytest

from legalrag.errors import InputError
from legalrag.prompts import list_prompts, load_prompt, parse_prompt


def test_sections_and_rendering():
    p = parse_prompt("## system\nBe brief.\n## user\nQ: {{ question }}\n{% for s in sources %}- {{ s }}\n{% endfor %}\n"
                     "### assistant\nOK\n")
    assert p.variables == {"question", "sources"}
    msgs = p.render(question="什么是违约金？", sources=["a", "b"])
    assert msgs == [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Q: 什么是违约金？\n- a\n- b"},
                    {"role": "assistant", "content": "OK"}]


def test_missing_and_unknown_variables_raise():
    p = parse_prompt("## user\n{{ a }} {{ b }}", path="t.md")
    with pytest.raises(InputError, match=r"missing \['b'\]"):
        p.render(a=1)
    with pytest.raises(InputError, match=r"unknown \['c'\]"):
        p.render(a=1, b=2, c=3)


def test_declared_variables_are_checked_at_load():
    parse_prompt("<!-- variables: a -->\n## user\n{{ a }}")
    with pytest.raises(InputError, match=r"undeclared \['b'\]"):
        parse_prompt("<!-- variables: a -->\n## user\n{{ a }}{{ b }}", path="x.md")
    with pytest.raises(InputError, match=r"unused \['z'\]"):
        parse_prompt("<!-- variables: a, z -->\n## user\n{{ a }}", path="x.md")


def test_bad_templates_name_file_and_line():
    with pytest.raises(InputError, match="x.md: no '## system'"):
        parse_prompt("just text", path="x.md")
    with pytest.raises(InputError, match="x.md:2: text before"):
        parse_prompt("\nstray\n## user\nhi", path="x.md")
    with pytest.raises(InputError, match=r"x.md:4: template syntax error"):
        parse_prompt("## system\nok\n## user\n{{ a }\n", path="x.md")


def test_load_by_name_and_by_path(tmp_path):
    with pytest.raises(InputError, match="no prompt template named 'nope'"):
        load_prompt("nope")
    with pytest.raises(InputError, match="bad prompt name"):
        load_prompt("../etc/passwd")
    f = tmp_path / "mine.md"
    f.write_text("## user\nHello {{ who }}", encoding="utf-8")
    assert load_prompt(str(f)).render(who="you") == [{"role": "user", "content": "Hello you"}]


@pytest.mark.parametrize("name", ["answer", "answer_brief"])
def test_answer_prompts_in_both_languages_with_and_without_history_and_sources(name):
    p = load_prompt(name)
    assert p.variables == {"question", "sources", "history", "language"}
    zh = p.render(question="违约金过高怎么办？", sources="[1] 《中华人民共和国民法典》第五百八十五条 ……", history="",
                  language="zh")
    en = p.render(question="What is theft?", sources="[1] 18 U.S.C. § 1030 ...", history="User: hi", language="en")
    assert "只根据" in zh[0]["content"] and "问题：违约金过高怎么办？" in zh[1]["content"]
    assert "对话历史" not in zh[1]["content"]
    assert "only from the provisions" in en[0]["content"] and "Question: What is theft?" in en[1]["content"]
    assert en[1]["content"].index("User: hi") < en[1]["content"].index("Provisions:")
    zero = p.render(question="借钱不还可以起诉吗？", sources="", history="", language="zh")
    assert "只根据" not in zero[0]["content"] and "可用的法条" not in zero[1]["content"]  # no articles: no claim


@pytest.mark.parametrize("name", list_prompts())
def test_every_packaged_template_loads(name):
    p = load_prompt(name)
    assert p.sections and {r for r, _ in p.sections} <= {"system", "user", "assistant"}
