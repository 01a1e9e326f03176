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
    "national": T("src/legalrag/national.py",
                  f"{U}/test_national_stale.py {U}/test_national.py {U}/test_national_mutants.py"),
    "answer.processors": T("src/legalrag/answer/processors.py",
                           f"{U}/answer/test_processors.py {U}/answer/test_processors_auto.py "
                           f"{U}/answer/test_consultation.py {U}/answer/test_processors_mutants.py"),
    "server.routes_openai": T("src/legalrag/server/routes_openai.py",
                              f"{U}/server/test_routes_openai_limits.py {U}/server/test_routes_openai.py "
                              f"{U}/server/test_routes_openai_mutants.py"),
    "answer.evidence": T("src/legalrag/answer/evidence.py",
                         f"{U}/answer/test_evidence.py {U}/answer/test_evidence_mutants.py"),
    "answer.carry": T("src/legalrag/answer/carry.py",
                      f"{U}/answer/test_carry_rules.py {U}/answer/test_carry.py {U}/answer/test_carry_mutants.py"),
    "judgment.features": T("src/legalrag/judgment/features.py",
                           f"{U}/judgment/test_features.py {U}/judgment/test_features_mutants.py"),
    "server.routes_llm": T("src/legalrag/server/routes_llm.py",
                            f"{U}/server/test_app.py {U}/server/test_routes_mutants.py"),
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

def _same(module: str, reason: str, *names: str) -> dict[str, str]:
    """One reason for several mutants of ``module`` (their names without the module prefix)."""
    return {f"{module}.{n}": reason for n in names}


# the modules pinned since (resolve, national, scope, select, routes, evidence, processors, judgment features and
# circumstances), each reason once with the mutants it covers
for _module, _reason, *_names in (
    ('legalrag.citecheck.resolve',
     "a title never ends in 'XXXX': with no article label the law title is '' either way", 'x__law_title__mutmut_7'),
    ('legalrag.citecheck.resolve', 'docs is only tested for emptiness: None and [] are both no documents',
     'xǁCitationResolverǁlookup__mutmut_62', 'xǁCitationResolverǁlookup__mutmut_64'),
    ('legalrag.citecheck.resolve',
     "not_held's patterns are Chinese place names: a Swiss or US law's Latin abbreviation never matches them",
     'xǁCitationResolverǁlookup__mutmut_14'),
    ('legalrag.citecheck.resolve', 'the default of lines is never used: its only caller passes lines',
     'x__structure_problem__mutmut_1'),
    ('legalrag.national', 'the default of progress only shows or hides a progress bar on stderr',
     'x_ensure_index__mutmut_1'),
    ('legalrag.national', "np.load's allow_pickle=None refuses pickles as False does",
     'xǁNationalLawǁvectors__mutmut_6', 'xǁNationalLawǁvectors__mutmut_15'),
    ('legalrag.national', 'np.load refuses pickles by default (allow_pickle=False)',
     'xǁNationalLawǁvectors__mutmut_8', 'xǁNationalLawǁvectors__mutmut_17'),
    ('legalrag.national', 'codes are at most 127 without the upper clip: |x| / (max|x| / 127) <= 127',
     'x_quantise__mutmut_20', 'x_quantise__mutmut_28'),
    ('legalrag.national', 'codes are at least -127 without the lower clip: |x| / (max|x| / 127) <= 127',
     'x_quantise__mutmut_19', 'x_quantise__mutmut_27'),
    ('legalrag.citecheck.resolve',
     "an empty title read as 'XXXX' does not end in the article label either: '' both ways",
     'x__law_title__mutmut_9'),
    ('legalrag.answer.scope',
     "an empty text read as 'XXXX' has letters but is never detected as Chinese: not Chinese either way, "
     "and beside Chinese texts the Chinese ones decide",
     'x_chinese_corpus__mutmut_3'),
    ('legalrag.answer.scope', 'bool(None) is False: the same default', 'xǁScopeModelǁfrom_dict__mutmut_32'),
    ('legalrag.answer.scope', 'd.get(key) is None when absent, and bool(None) is False',
     'xǁScopeModelǁfrom_dict__mutmut_34'),
    ('legalrag.answer.scope', 'sigmoid of 50 and of 51 are both exactly 1.0 in double precision',
     'xǁScopeModelǁprobability__mutmut_25'),
    ('legalrag.answer.scope',
     "the skipped features (top1, mean5, spread5) are the last three of NUMERIC: stopping at the first skipped "
     "one skips the same ones",
     'xǁScopeModelǁvector__mutmut_10'),
    ('legalrag.answer.select', 'the warm-up hit and question are arbitrary: any content warms the tables',
     'xǁArticleSelectorǁwarm_up__mutmut_4', 'xǁArticleSelectorǁwarm_up__mutmut_8',
     'xǁArticleSelectorǁwarm_up__mutmut_11', 'xǁArticleSelectorǁwarm_up__mutmut_12',
     'xǁArticleSelectorǁwarm_up__mutmut_13', 'xǁArticleSelectorǁwarm_up__mutmut_14',
     'xǁArticleSelectorǁwarm_up__mutmut_15', 'xǁArticleSelectorǁwarm_up__mutmut_16',
     'xǁArticleSelectorǁwarm_up__mutmut_17', 'xǁArticleSelectorǁwarm_up__mutmut_18',
     'xǁArticleSelectorǁwarm_up__mutmut_19', 'xǁArticleSelectorǁwarm_up__mutmut_24'),
    ('legalrag.answer.select',
     "encoding None or omitted is the locale's, UTF-8 on every supported platform (PEP 686 UTF-8 mode)",
     'x_write_model__mutmut_14', 'x_write_model__mutmut_16', 'x_write_model__mutmut_42', 'x_write_model__mutmut_44',
     'x_write_model__mutmut_60', 'x_write_model__mutmut_62', 'x_check_files__mutmut_11', 'x_read_model__mutmut_8'),
    ('legalrag.answer.select', "'UTF-8' is the same codec as 'utf-8'", 'x_write_model__mutmut_29',
     'x_write_model__mutmut_57', 'x_write_model__mutmut_69', 'x_check_files__mutmut_13', 'x_read_model__mutmut_10'),
    ('legalrag.answer.select', 'ensure_ascii=None is falsy, as False', 'x_write_model__mutmut_20',
     'x_write_model__mutmut_48'),
    ('legalrag.answer.select', 'the JSON indent changes only the layout: the files read back the same',
     'x_write_model__mutmut_21', 'x_write_model__mutmut_24', 'x_write_model__mutmut_26', 'x_write_model__mutmut_49',
     'x_write_model__mutmut_52', 'x_write_model__mutmut_54'),
    ('legalrag.answer.select', "numpy reads the sort kind 'STABLE' as 'stable'", 'x__desc_rank__mutmut_8'),
    ('legalrag.answer.select', 'a dtype of None or omitted gives float64 for these float inputs',
     'x__neighbour_columns__mutmut_1', 'x_feature_matrix__mutmut_5', 'x_feature_matrix__mutmut_7',
     'x_feature_matrix__mutmut_29', 'x_feature_matrix__mutmut_31', 'x_feature_matrix__mutmut_143',
     'x_feature_matrix__mutmut_145', 'xǁPlattǁ__call____mutmut_11', 'xǁPlattǁ__call____mutmut_13'),
    ('legalrag.answer.select',
     'the upper clip is unobservable: 1/(1+e^-z) is exactly 1.0 in float64 for z above about 37',
     'xǁPlattǁ__call____mutmut_4', 'xǁPlattǁ__call____mutmut_16'),
    ('legalrag.answer.select', 'ideal is 0 only when every weight is 0, and the score is then 0 either way',
     'xǁClauseBM25ǁbest__mutmut_13'),
    ('legalrag.answer.select', "a default of None instead of '' is caught by the `or ''` / `if name` that follows",
     'x_law_of__mutmut_5', 'x_law_of__mutmut_7', 'x_law_of__mutmut_29', 'x_feature_matrix__mutmut_39',
     'x_feature_matrix__mutmut_41', 'xǁPriorsǁfrom_gold__mutmut_13', 'xǁPriorsǁfrom_gold__mutmut_15'),
    ('legalrag.answer.select', "an own gold id with no law counts under 'XXXX', a law no candidate has",
     'x_feature_matrix__mutmut_43'),
    ('legalrag.answer.select', 'laws[i] is always a key of same_law, built from the same list',
     'x_feature_matrix__mutmut_75', 'x_feature_matrix__mutmut_77'),
    ('legalrag.answer.select', 'the support_rank placeholder is overwritten by _desc_rank',
     'x_feature_matrix__mutmut_85'),
    ('legalrag.answer.select', 'the manifest default None is caught by `or {}`', 'x_dense_component__mutmut_23'),
    ('legalrag.answer.select', 'SupportScorer(encoder) already defaults to the full model with an encoder',
     'x_load_selector__mutmut_16', 'x_load_selector__mutmut_18'),
    ('legalrag.answer.select', 'dense_component(None) returns None anyway', 'x_load_selector__mutmut_25'),
    ('legalrag.answer.select', "it also strips 'X', which no Chinese law name starts or ends with",
     'x_short_law_name__mutmut_5'),
    ('legalrag.answer.select', 'without the float32 cast the neighbour cosines differ only by rounding',
     'xǁArticleSelectorǁprobabilities__mutmut_23', 'xǁArticleSelectorǁprobabilities__mutmut_25'),
    ('legalrag.answer.select', "`question or 'XXXX'` is reached only for a non-empty question",
     'xǁArticleSelectorǁselect__mutmut_21'),
    ('legalrag.server.routes_openai',
     'loc is never empty: ConsultBody has no model-level validator, so every error names a field',
     'x_consult_body__mutmut_95', 'x_consult_body__mutmut_113', 'x_consult_body__mutmut_114'),
    ('legalrag.server.routes_openai', 'started = None is falsy, as False', 'xǁChunkWriterǁ__init____mutmut_4'),
    ('legalrag.server.routes_openai', 'json.dumps reads ensure_ascii=None as False',
     'xǁChunkWriterǁchunk__mutmut_26', 'xǁChunkWriterǁ__call____mutmut_90'),
    ('legalrag.server.routes_search', "without first_stage_k=30 PlannerConfig's default is also 30",
     'x_agents_search__mutmut_12'),
    ('legalrag.server.routes_search', 'with 31 the pool is still cut to at most 30 from the same BM25 ranking',
     'x_agents_search__mutmut_24'),
    ('legalrag.server.routes_search',
     'the label shows only for texts over 6 M characters; the body caps text at 5 MB', 'x_check_input__mutmut_13',
     'x_check_input__mutmut_14'),
    ('legalrag.server.routes_search', 'FastAPI reads responses=None as {}', 'x_router__mutmut_4'),
    ('legalrag.answer.evidence',
     'the `or 2.0` fallback is reached only when no clause matches, so the mean length is never read',
     'x__bm25_scores__mutmut_11'),
    ('legalrag.answer.evidence', 'adds 1 to every score; scores are only compared', 'x__bm25_scores__mutmut_22'),
    ('legalrag.answer.evidence',
     'another positive constant for (K1+1) scales every score alike and keeps their order',
     'x__bm25_scores__mutmut_36', 'x__bm25_scores__mutmut_38', 'x__bm25_scores__mutmut_39'),
    ('legalrag.answer.evidence',
     'the midpoint (lo+hi+2)//2 still lies in (lo, hi]: the binary search finds the same fit',
     'x_cut_to_tokens__mutmut_8', 'x_keep_last_tokens__mutmut_8'),
    ('legalrag.answer.evidence', 'for a two-character run the run is its one bigram', 'x_default_terms__mutmut_23'),
    ('legalrag.answer.evidence', 'default_terms ignores its language: None gives the same terms',
     'x_select_evidence__mutmut_15'),
    ('legalrag.answer.evidence', 'the starting score is overwritten for every clause before it is read',
     'x_select_evidence__mutmut_24', 'x_select_evidence__mutmut_32'),
    ('legalrag.answer.evidence', 'a float share is compared only with whole token counts: n <= x iff n <= floor(x)',
     'x_select_evidence__mutmut_84'),
    ('legalrag.answer.evidence', 'the first kept clause is paragraph 1 (no label) or after a gap (labelled anyway)',
     'x_select_evidence__mutmut_164'),
    ('legalrag.answer.processors', "elliptical('', short) is called only to check short; its result is discarded",
     'xǁAutoǁ__init____mutmut_2', 'xǁAutoǁ__init____mutmut_6'),
    ('legalrag.answer.processors',
     'when Auto carries (second question on) the follow-up detector always gives a reason',
     'xǁAutoǁretrieve__mutmut_29', 'xǁAutoǁretrieve__mutmut_30'),
    ('legalrag.judgment.features', "_UNIT.get('XXXX', 1.0) and _UNIT.get('', 1.0) are both 1.0",
     'x__amounts__mutmut_21'),
    ('legalrag.judgment.features',
     'a total word is at most 11 characters and ends at the number: a 13-character window finds the same',
     'x__amounts__mutmut_47'),
    ('legalrag.judgment.features', 'a negation match is at most 6 characters: a 7-character window finds the same',
     'x__circumstances__mutmut_10'),
    ('legalrag.judgment.circumstances', 'rfind(n, None, at) is rfind(n, 0, at)', 'x__defendant__mutmut_3',
     'x__defendant__mutmut_11'),
    ('legalrag.judgment.circumstances', 'find and rfind agree on whether a name occurs', 'x__defendant__mutmut_16'),
    ('legalrag.judgment.circumstances',
     'a name at 0 scored -1 is still chosen alone and loses to any later name either way', 'x__defendant__mutmut_9'),
    ('legalrag.judgment.circumstances',
     'a negation match is at most 9 characters: an 11-character window finds the same', 'x__negated__mutmut_9'),
    ('legalrag.judgment.circumstances',
     'each listed word only matches its own rule: the list after `== name or` is redundant', 'x__tier__mutmut_5',
     'x__tier__mutmut_6', 'x__tier__mutmut_7', 'x__tier__mutmut_8', 'x__tier__mutmut_9'),
    ('legalrag.judgment.circumstances', 'the 未掌握 match begins with 如实供述, so a confession is found either way',
     'x__tier__mutmut_32'),
    ('legalrag.judgment.circumstances',
     'every 坦白 match but the bare word holds a confession phrase: certain either way', 'x__tier__mutmut_49'),
    ('legalrag.judgment.circumstances', "no circumstance is found in 'XXXX', as in ''",
     'x_find_circumstances__mutmut_7'),
    ('legalrag.judgment.circumstances', "the key ('XX累犯XX', None) is never looked up; the finding keeps the name 累犯",
     'x_find_circumstances__mutmut_86'),
    ('legalrag.judgment.circumstances', "'XXXX' gives the empty set, as ''", 'x_stated_in_reasoning__mutmut_11'),
    ('legalrag.judgment.circumstances',
     'the inserted XX leaves the cited-paragraph patterns matching and no gold word spanned',
     'x_stated_in_reasoning__mutmut_20'),
):
    EQUIVALENT.update(_same(_module, _reason, *_names))
