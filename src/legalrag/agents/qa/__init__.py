"""Agentic legal question answering (L-MARS style): query, search, judge and summary agents in bounded loops.

``run_qa(question, llm, sources, mode=...)`` is the entry point (formerly ``answer_question``, still
accepted); ``answer_mcq`` answers a
multiple-choice question in the same modes plus the zero-shot and chain-of-thought baselines.
"""

from legalrag.agents.qa.pipeline import QAResult, answer_mcq, answer_question, run_qa

__all__ = ["QAResult", "answer_mcq", "run_qa", "answer_question"]
