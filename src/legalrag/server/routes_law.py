"""Routes of the law over time: ``GET /law/show`` (a law's versions with their dates, and the one in force on
``as_of``) and ``GET /law/history`` (one article across the versions of its law), answering the JSON that
`legalrag law show|history --json` prints (``legalrag.laws.report``).

The versions are loaded once per server, on the first request that needs them (``AppContext.versions``, the
launcher's loader; default: the versions shipped with legalrag), and kept on the app context; the check route
reads the currency marks of its citations from the same versions (``currency_marks``).
"""

from __future__ import annotations

from typing import Any

from legalrag.server.context import AppContext
from legalrag.server.streaming import NoModel

TITLE_CHARS = 200
CITATION_CHARS = 300
ERRORS = {400: {"description": "bad input (message and fields say which parameter and why)"},
          401: {"description": "missing or wrong API key"}, 422: {"description": "a parameter missing or too long"},
          429: {"description": "rate limit; see Retry-After"},
          503: {"description": "this server holds no versions of the national law"}}


class NoVersions(NoModel):
    """This server holds no versions of the national law (a 503, as a missing model is)."""


def law_versions(ctx: AppContext, *, required: bool = True) -> Any:
    """The server's ``laws.Library``, loaded on first use; None (``required=False``) or ``NoVersions`` when
    none is installed."""
    from legalrag.errors import InputError

    with ctx._versions_lock:  # one load; a second request waits for it and finds it
        if not ctx._versions:
            lib, why = None, ""
            try:
                if ctx.versions is not None:
                    lib = ctx.versions()
                else:
                    from legalrag.national_versions import law_library

                    lib = law_library()
            except InputError as exc:
                why = str(exc)
            ctx._versions.append((lib, why or "this server holds no versions of the national law"))
        lib, why = ctx._versions[0]
    if lib is None and required:
        raise NoVersions(why)
    return lib


def currency_marks(ctx: AppContext, report: Any, as_of: str) -> list[dict[str, Any] | None]:
    """The currency of each checked citation of ``report`` as of ``as_of`` (``citecheck.currency``), in the
    order of ``report.items``, as `legalrag check --as-of --json` prints them (None: not a Chinese article);
    empty when the server holds no versions."""
    from legalrag.citecheck.currency import citation_currency, currency_to_dict
    from legalrag.laws.versions import check_day

    day = check_day(as_of)  # InputError naming as_of: a 400
    lib = law_versions(ctx, required=False) if report.items else None
    if lib is None:
        return []
    return [currency_to_dict(citation_currency(lib, item.citation, day)) for item in report.items]


def router(ctx: AppContext) -> Any:
    from fastapi import APIRouter, Query

    api = APIRouter(responses=ERRORS)
    as_of_doc = "YYYY-MM-DD (on or after 1949-10-01)"

    @api.get("/law/show", summary="A law's versions: version date, effective date and its source, interval in "
             "force, articles; `selected`: the version in force on as_of")
    def show(title: str = Query(..., min_length=1, max_length=TITLE_CHARS,
                                description="a law title: 公司法, 《中华人民共和国公司法》"),
             as_of: str | None = Query(None, max_length=10, description=f"{as_of_doc}: the version in force that "
                                       "day is marked selected")) -> dict[str, Any]:
        from legalrag.laws.report import law_report

        return law_report(law_versions(ctx), title, as_of)

    @api.get("/law/history", summary="One article across the versions of its law, followed through renumbering: "
             "its number, text and whether it changed in each")
    def history(citation: str = Query(..., min_length=1, max_length=CITATION_CHARS,
                                      description="an article: 公司法第四十七条"),
                as_of: str | None = Query(None, max_length=10, description=f"{as_of_doc}: the article number is "
                                          "read in the version in force that day (default: the latest version)")
                ) -> dict[str, Any]:
        from legalrag.laws.report import history_report

        return history_report(law_versions(ctx), citation, as_of)

    return api
