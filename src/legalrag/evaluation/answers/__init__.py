"""The answer benchmark: STARD questions answered the way ``legalrag ask`` answers them, scored per answer.

For each question (``data.load_questions``: query, gold articles, keywords, the lawyer's answer) the answer
engine answers in one of two settings (``run.AnswerBenchSetting``): ``retriever`` (the index's default component, the
engine's default evidence budget: what ``ask`` does) or ``reference`` (the gold articles handed to the model).
Each answer is scored (``run.score_answer``): whether it cites a gold article, keyword accuracy (LexRAG's rule,
``evaluation.generation.keyword_accuracy``), the share of its citations marked *supported* (read from the
citation marks the answer carries), and, for yes/no questions, whether its conclusion agrees with the
lawyer's (``yesno``: a rule on explicit conclusions; ``judge``: an LLM judge, embedded model or endpoint).
Rows are written one per line as they finish (``run.run_answers``), so an interrupted run resumes.
"""
