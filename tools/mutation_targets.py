"""What the mutation driver (``tools/mutation.py``) mutates, with which fast tests, and which of mutmut's mutants
cannot be told apart from the original by any caller.

``MODULES`` lists each module's sources and the unit tests that cover it (mirrored layout, ``tests/unit/...``),
smallest module first; ``FLAT`` gives the older flat name of a test file the mirrored path replaces;
``EQUIVALENT`` names each equivalent mutant with why it is one (left out of the kill rate).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    files: tuple[str, ...]  # repository-relative sources to mutate
    tests: tuple[str, ...]  # the fast tests that cover them (mirrored layout)
    skip: str = ""  # why the tool does not mutate it, when it does not


def T(files, tests, skip=""):
    return Target(tuple(files.split()), tuple(tests.split()), skip)


U = "tests/unit"
# module -> its sources and fast tests, smallest module first (the order `run` takes them in).
MODULES: dict[str, Target] = {
    "citecheck.repealed": T("src/legalrag/citecheck/repealed.py",
                            f"{U}/citecheck/test_repealed_chain.py {U}/citecheck/test_marks_lines.py "
                            f"{U}/citecheck/test_marks.py"),
    "judgment.ranges": T("src/legalrag/judgment/ranges.py",
                         f"{U}/judgment/test_ranges_bounds.py {U}/judgment/test_ranges.py"),
    "answer.guard": T("src/legalrag/answer/guard.py",
                      f"{U}/answer/test_guard_verdicts.py {U}/answer/test_guard.py {U}/answer/test_injection.py"),
    "citecheck.resolve": T("src/legalrag/citecheck/resolve.py",
                           f"{U}/citecheck/test_parse.py {U}/citecheck/test_resolve_structure.py "
                           f"{U}/citecheck/test_resolve_dated.py {U}/citecheck/test_english.py "
                           f"{U}/citecheck/test_fuzz.py {U}/citecheck/test_resolve_mutants.py"),
    "citecheck.support": T("src/legalrag/citecheck/support.py",
                           f"{U}/citecheck/test_support_features.py {U}/citecheck/test_support_model.py "
                           f"{U}/citecheck/test_marks_thresholds.py "
                           f"{U}/citecheck/test_marks.py"),
    "citecheck.marks": T("src/legalrag/citecheck/marks.py",
                         f"{U}/citecheck/test_marks_text.py {U}/citecheck/test_marks_thresholds.py "
                         f"{U}/citecheck/test_marks_lines.py {U}/citecheck/test_marks.py"),
    "national": T("src/legalrag/national.py", f"{U}/test_national_stale.py {U}/test_national.py {U}/test_national_mutants.py"),
    "answer.processors": T("src/legalrag/answer/processors.py",
                           f"{U}/answer/test_processors.py {U}/answer/test_processors_auto.py "
                           f"{U}/answer/test_consultation.py {U}/answer/test_processors_mutants.py"),
    "server.routes_openai": T("src/legalrag/server/routes_openai.py",
                              f"{U}/server/test_routes_openai_limits.py {U}/server/test_routes_openai.py "
                              f"{U}/server/test_routes_openai_mutants.py"),
    "answer.evidence": T("src/legalrag/answer/evidence.py", f"{U}/answer/test_evidence.py {U}/answer/test_evidence_mutants.py"),
    "answer.carry": T("src/legalrag/answer/carry.py",
                      f"{U}/answer/test_carry_rules.py {U}/answer/test_carry.py {U}/answer/test_carry_mutants.py"),
    "judgment.features": T("src/legalrag/judgment/features.py", f"{U}/judgment/test_features.py {U}/judgment/test_features_mutants.py"),
    "server.routes_llm": T("src/legalrag/server/routes_llm.py", f"{U}/server/test_app.py {U}/server/test_routes_mutants.py"),
    "server.routes_search": T("src/legalrag/server/routes_search.py",
                               f"{U}/server/test_app.py {U}/server/test_routes_mutants.py"),
    "answer.engine": T("src/legalrag/answer/engine.py",
                       f"{U}/answer/test_engine.py {U}/answer/test_engine_basis.py {U}/answer/test_answer_as_of.py "
                       f"{U}/answer/test_engine_mutants.py"),
    "clauses": T("src/legalrag/clauses.py",
                 f"{U}/test_clauses.py {U}/answer/test_evidence.py {U}/test_clauses_mutants.py"),
    "answer.scope": T("src/legalrag/answer/scope.py", f"{U}/answer/test_scope_features.py {U}/answer/test_scope.py "
                      f"{U}/answer/test_scope_mutants.py"),
    "answer.basis": T("src/legalrag/answer/basis.py", f"{U}/answer/test_basis.py {U}/answer/test_basis_mutants.py"),
    "answer.select": T("src/legalrag/answer/select.py", f"{U}/answer/test_select_files.py {U}/answer/test_select.py "
                       f"{U}/answer/test_select_mutants.py"),
    "judgment.circumstances": T("src/legalrag/judgment/circumstances.py",
                                f"{U}/judgment/test_circumstances.py {U}/judgment/test_circumstances_tiers.py "
                                f"{U}/judgment/test_draft_circumstances.py {U}/judgment/test_circumstances_mutants.py"),
    "laws.versions": T("src/legalrag/laws/versions.py src/legalrag/laws/select.py",
                       f"{U}/laws/test_versions.py {U}/laws/test_store.py {U}/laws/test_select.py "
                       f"{U}/laws/test_versions_mutants.py"),
    "citecheck.currency": T("src/legalrag/citecheck/currency.py",
                            f"{U}/citecheck/test_currency_lines.py {U}/citecheck/test_currency.py"),
}
# mirrored path -> the flat name it has before the test layout moves (tests/test_<old>.py)
FLAT = {
    f"{U}/citecheck/test_marks.py": "tests/unit/citecheck/test_marks.py",
    f"{U}/citecheck/test_parse.py": "tests/unit/citecheck/test_parse.py",
    f"{U}/judgment/test_ranges.py": "tests/unit/judgment/test_ranges.py",
    f"{U}/judgment/test_features.py": "tests/unit/judgment/test_features.py",
    f"{U}/answer/test_guard.py": "tests/unit/answer/test_guard.py",
    f"{U}/answer/test_injection.py": "tests/unit/answer/test_injection.py",
    f"{U}/answer/test_processors.py": "tests/unit/answer/test_processors.py",
    f"{U}/answer/test_evidence.py": "tests/unit/answer/test_evidence.py",
    f"{U}/answer/test_carry.py": "tests/unit/answer/test_carry.py",
    f"{U}/answer/test_engine.py": "tests/unit/answer/test_engine.py",
    f"{U}/test_national.py": "tests/unit/test_national.py",
    f"{U}/server/test_routes_openai.py": "tests/unit/server/test_routes_openai.py",
    f"{U}/server/test_app.py": "tests/unit/server/test_app.py",
    f"{U}/answer/test_basis.py": "tests/unit/answer/test_basis.py",
    f"{U}/test_clauses.py": "tests/unit/test_clauses.py",
}
# mutmut's mutant name -> why it cannot be told apart from the original by any caller
S, M, G = "legalrag.citecheck.support.", "legalrag.citecheck.marks.", "legalrag.answer.guard."
EQUIVALENT: dict[str, str] = {
    S + "x__lexical__mutmut_70": "best > 0 always holds here: a claim with bigrams has a positive best BM25 score",
    S + "x__lexical__mutmut_77": "best >= 0 vs best > 0: best is never 0 once the claim has bigrams",
    S + "x__lexical__mutmut_79": "the else branch (best == 0) is unreachable: the value put there is never returned",
    S + "x_lexical_features__mutmut_10": "the extra units it lets in (empty lines, the whole article again) score "
                                          "0 or the same, and only the maximum over units is used",
    S + "xǁSupportModelǁprobability__mutmut_12": "scale.get(f, None) or 1.0 is scale.get(f, 1.0) or 1.0",
    S + "xǁSupportModelǁprobability__mutmut_14": "scale.get(f) or 1.0 is scale.get(f, 1.0) or 1.0",
    S + "xǁSupportModelǁprobability__mutmut_34": "sigmoid of 50 and of 51 are both exactly 1.0 in double precision",
    M + "x__no_corpus__mutmut_15": "unreachable: every parsed citation's system is zh, ch or us (unknown ones are "
                                   "marked before)",
    M + "x_mark_citations__mutmut_64": "every parsed citation class has a system, so the default is never used",
    M + "x_mark_citations__mutmut_67": "every parsed citation class has a system, so the default is never used",
    M + "x_mark_citations__mutmut_70": "every parsed citation class has a system, so the default is never used",
    M + "x_mark_citations__mutmut_180": "_labels([]) joins to an empty string: the same successor",
    M + "x_mark_citations__mutmut_182": "_labels returns one string, so the separator of the join is never used",
    M + "x_mark_citations__mutmut_193": "an unresolved citation always has a reason: the condition is always true",
    M + "x_mark_citations__mutmut_194": "an unresolved citation always has a reason: the else value is never used",
    G + "x_foreign_jurisdiction__mutmut_4": "None or an empty question searched as 'XXXX' matches no jurisdiction "
                                            "either",
    G + "x_instruction_in__mutmut_4": "None or an empty question searched as 'XXXX' matches no instruction either",
    "legalrag.citecheck.repealed.xǁRepealǁdescribe__mutmut_19": "an article's label (第N条) does not depend on the "
                                                                  "law it is built with",
    S + "xǁSupportModelǁprobability__mutmut_36": "only probabilities under 2e-22 change: shown as 0.0 and below every "
                                                 "threshold either way",
}
BA = "legalrag.answer.basis."
EQUIVALENT.update({
    BA + "x__terms__mutmut_1": "default_terms ignores its language: the same terms for None",
    BA + "x_decisive_quote__mutmut_45": "default_terms ignores its language: the same terms for None",
    BA + "x__quoted__mutmut_5": "quote() without parts splits the text in the same language: the parts passed",
    BA + "x__quoted__mutmut_9": "quote() without parts splits the text in the same language: the parts passed",
    BA + "x__quoted__mutmut_57": "a clause is stripped, so the text up to its end never ends in whitespace: rstrip "
                                  "changes nothing there and lstrip leaves the end as it is",
    BA + "x__quoted__mutmut_81": "scores holds one score per clause, so j < len(scores) always holds",
    BA + "x__quoted__mutmut_82": "scores holds one score per clause, so j <= len(scores) holds where j < len does",
    BA + "x__quoted__mutmut_83": "scores holds one score per clause: the else value is never used",
    BA + "x_amounts__mutmut_71": "endswith reads the slice's last character, text[start - 1] in both slices",
    BA + "x_decisive_quote__mutmut_24": "with an empty body text.find('') is 0, the else value",
    BA + "x_decisive_quote__mutmut_26": "the stripped text occurs once in the text, so find and rfind agree",
    BA + "x_decisive_quote__mutmut_41": "Quoted.exceptions defaults to 0",
    BA + "x_is_claim__mutmut_4": "None or an empty question searched as 'XXXX' matches no claim either",
    BA + "x_unquoted_note__mutmut_15": "a value never starts at a sentence's end: a sentence ends at a separator or "
                                        "at the end of the text",
    "legalrag.clauses.x_clauses__mutmut_46": "the message of an assertion that cannot fail (a clause is a piece of "
                                             "its line, found from the line's start)",
})
