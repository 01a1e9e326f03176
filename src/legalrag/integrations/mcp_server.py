"""legalrag's tools as a Model Context Protocol server, on the official ``mcp`` SDK (``pip install 'legalrag[mcp]'``).

``create_mcp_server(tools)`` registers the eight tools of ``tools.LegalTools`` on an ``MCPServer``: their input
schemas come from the annotated parameters (types, limits, descriptions), their output schemas from the
pydantic result models, and each result is returned as structured content (and as its JSON text, for hosts
that read only text). Errors are tool errors (``isError: true``) whose text says what to change: a missing
or wrong-typed argument names the argument, what was expected and how to call the tool; a bad value, a
citation that is not in the corpus or a model the server lacks says which input or option fixes it. Tool
errors rather than protocol errors, because the calling model reads them and can correct its call.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from pydantic import Field, ValidationError

from legalrag._optional import require
from legalrag.errors import LegalRagError
from legalrag.integrations.models import Article, AskResult, CitationPrediction, StatuteSearchResult
from legalrag.integrations.tools import (MAX_K, ArticleHistory, CheckedCitations, DatedVerdictPrediction, LawVersions,
                                        LegalTools)

MAX_QUESTION_CHARS = 4000
MAX_TEXT_CHARS = 50000

INSTRUCTIONS = (
    "legalrag: 中国法律法规检索与引用核对。search_statutes 检索法条；get_article 按引用取条文原文；check_citations "
    "核对任意文本中的法条引用是否存在；predict_citations / predict_verdict 根据案件事实预测应引用的法条和判决结果；"
    "ask 回答法律问题并核对答案中的每一处引用；law_show / law_history 列出法律的各个版本及某一条文在各版本中的变化"
    "（as_of：某日有效的版本）。\n"
    "legalrag: retrieval and citation checking over Chinese statutes. search_statutes finds articles; get_article "
    "returns an article's text by its citation; check_citations checks every statute citation in any text against "
    "the corpus; predict_citations / predict_verdict predict the provisions a court would cite and the verdict from "
    "a case's facts; ask answers a legal question and checks every citation in its answer; law_show / law_history "
    "list a law's versions and one article across them (as_of: the version in force that day)."
)

DESCRIPTIONS = {
    "search_statutes": (
        "检索法条：按问题或案情返回最相关的 k 条法条（引用、法律名称、条文、得分）。\n"
        "Search the statutes: the k articles most relevant to a question or to the facts of a case (citation, law, "
        "text, score)."),
    "get_article": (
        "按引用取条文原文，例如《中华人民共和国劳动合同法》第十条；也接受 search_statutes 返回的文档 id。"
        "引用不存在时返回错误并说明原因。\n"
        "Get an article's text by its citation, e.g. 《中华人民共和国劳动合同法》第十条 (or by a document id from "
        "search_statutes). A citation that is not in the corpus is an error saying why."),
    "check_citations": (
        "核对任意文本（律师文书、文章、其他模型的回答）中的每一处法条引用，逐条标记：supported（条文存在且支持引用它的句子）、"
        "exists（条文存在，但未显示支持该句）、not_found（法律、条号或名称有误）、repealed（法律已废止，附现行法）、"
        "no_corpus（语料未覆盖的法域），并附条文原文与原因。\n"
        "Check every statute citation in any text (a draft, an article, another model's answer), each marked "
        "supported (the article exists and supports the sentence citing it), exists (exists, not shown to support "
        "it), not_found (wrong law, article number or title), repealed (with the law in force) or no_corpus (a "
        "jurisdiction the corpus does not cover), with the article's text and the reason. With as_of (the date the "
        "text speaks of), currency gives each citation's currency that day: current, amended (with the date and "
        "what changed), renumbered, repealed or unknown."),
    "law_show": (
        "列出一部法律的各个版本：版本日期、施行日期及其来源、有效期间、条文数；as_of：标出该日有效的版本。\n"
        "List a law's versions: the version date, the effective date and where it was stated, the interval in "
        "force and the number of articles; as_of marks the version in force that day (selected)."),
    "law_history": (
        "某一条文在其法律各版本中的变化（按条文内容对齐，跟踪条号变动）：各版本中的条号、条文及是否修改。\n"
        "One article across the versions of its law, followed through renumbering by its text: its number, its text "
        "and whether it changed in each version; as_of reads the article number in the version in force that day."),
    "predict_citations": (
        "根据案件事实预测法院会引用的法条，并说明每条由哪个环节提出。\n"
        "Predict the provisions a court would cite for the facts of a case, with the stages that proposed each."),
    "predict_verdict": (
        "根据刑事案件事实预测判决结构：罪名、适用的刑法条文、刑期（月）、罚金（元）、缓刑，以及判决主文。\n"
        "Predict the verdict of a criminal case from its facts: charges, Criminal Law articles applied, prison term "
        "(months), fine (yuan), probation, and the judgment's result section."),
    "ask": (
        "回答法律问题：检索法条、生成带引用的回答，并核对回答中的每一处引用（mark：supported / exists / not_found / "
        "repealed / no_corpus，同 check_citations）。\n"
        "Answer a legal question: retrieve articles, write a cited answer and check every citation in it (mark: "
        "supported / exists / not_found / repealed / no_corpus, as check_citations)."),
}

Query = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                             description="问题或案情 / the question or the facts to search for")]
K = Annotated[int, Field(ge=1, le=MAX_K, description=f"返回条数 / how many articles (1..{MAX_K})")]
CitationArg = Annotated[str, Field(min_length=1, max_length=500,
                                   description="法条引用或文档 id / a citation such as 《中华人民共和国劳动合同法》第十条, "
                                               "or a document id")]
AsOf = Annotated[str | None, Field(max_length=10, description="日期 YYYY-MM-DD（不早于 1949-10-01） / a date, "
                                                               "YYYY-MM-DD (on or after 1949-10-01)")]
LawTitle = Annotated[str, Field(min_length=1, max_length=200, description="法律名称 / a law title: 公司法, "
                                                                          "《中华人民共和国公司法》")]
ArticleCitation = Annotated[str, Field(min_length=1, max_length=300, description="条文 / an article: 公司法第四十七条")]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS, description="要核对的文本 / the text whose citations are "
                                                                   "checked")]
Facts = Annotated[str, Field(min_length=1, max_length=20000, description="案件事实 / the facts of the case")]
Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                                description="法律问题 / the legal question")]


def create_mcp_server(tools: LegalTools, *, name: str = "legalrag") -> Any:
    """An ``MCPServer`` exposing ``tools``; run it with ``.run("stdio")`` or mount ``.streamable_http_app()``."""
    require("mcp", "mcp")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from legalrag import __version__

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(argument_help(name, exc.__cause__, self._tool_manager.get_tool(name))) from None
                raise

    # MCPServer's constructor configures the root logger (logging.basicConfig with a rich handler); a library
    # call must not change the application's logging, so its state is put back (`legalrag mcp` sets its own)
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    server = Server(name, instructions=INSTRUCTIONS, version=__version__)
    root.setLevel(level)
    root.handlers[:] = handlers

    def run(call: Any) -> Any:
        try:
            return call()
        except LegalRagError as exc:  # bad input, an article not in the corpus, a model this server lacks
            raise ToolError(str(exc)) from None

    @server.tool(description=DESCRIPTIONS["search_statutes"])
    def search_statutes(query: Query, k: K = 5) -> StatuteSearchResult:
        return run(lambda: tools.search_statutes(query, k))

    @server.tool(description=DESCRIPTIONS["get_article"])
    def get_article(citation: CitationArg) -> Article:
        return run(lambda: tools.get_article(citation))

    @server.tool(description=DESCRIPTIONS["check_citations"])
    def check_citations(text: Text, as_of: AsOf = None) -> CheckedCitations:
        return run(lambda: tools.check_citations(text, as_of))

    @server.tool(description=DESCRIPTIONS["law_show"])
    def law_show(title: LawTitle, as_of: AsOf = None) -> LawVersions:
        return run(lambda: tools.law_show(title, as_of))

    @server.tool(description=DESCRIPTIONS["law_history"])
    def law_history(citation: ArticleCitation, as_of: AsOf = None) -> ArticleHistory:
        return run(lambda: tools.law_history(citation, as_of))

    @server.tool(description=DESCRIPTIONS["predict_citations"])
    def predict_citations(facts: Facts) -> CitationPrediction:
        return run(lambda: tools.predict_citations(facts))

    @server.tool(description=DESCRIPTIONS["predict_verdict"])
    def predict_verdict(facts: Facts, as_of: AsOf = None) -> DatedVerdictPrediction:
        return run(lambda: tools.predict_verdict(facts, as_of))

    @server.tool(description=DESCRIPTIONS["ask"])
    def ask(question: Question, k: K = 6) -> AskResult:
        return run(lambda: tools.ask(question, k))

    return server


def argument_help(tool: str, error: ValidationError, info: Any = None) -> str:
    """What was wrong with a call's arguments and how to call the tool, e.g. ``search_statutes: argument 'k' should
    be an integer (got 'five'). Call search_statutes(query: string (required), k: integer 1..50 = 5)``."""
    problems = []
    for e in error.errors():
        where = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        if e.get("type") == "missing":
            problems.append(f"argument '{where}' is missing")
        elif e.get("type") == "extra_forbidden":
            problems.append(f"'{where}' is not an argument of {tool}")
        else:
            problems.append(f"argument '{where}': {e.get('msg', 'invalid')} (got {e.get('input')!r:.60})")
    return f"{tool}: {'; '.join(problems)}. Call {tool}({signature(getattr(info, 'parameters', None) or {})})"


def signature(schema: dict[str, Any]) -> str:
    """A tool's JSON input schema as a call signature a model can copy."""
    required = set(schema.get("required", ()))
    parts = []
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type", "value")
        limits = ""
        if "minimum" in prop and "maximum" in prop:
            limits = f" {prop['minimum']}..{prop['maximum']}"
        default = " (required)" if name in required else f" = {prop.get('default')!r}"
        parts.append(f"{name}: {kind}{limits}{default}")
    return ", ".join(parts)
