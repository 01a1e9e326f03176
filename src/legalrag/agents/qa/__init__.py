"""Agentic legal question answering (L-MARS style): query, search, judge and summary agents in bounded loops.

``answer_question(question, llm, sources, mode=...)`` is the entry point; ``answer_mcq`` answers a
multiple-choice question in the same modes plus the zero-shot and chain-of-thought baselines.
"""

from legalrag.agents.qa.pipeline import QAResult, answer_mcq, answer_question

__all__ = ["QAResult", "answer_mcq", "answer_question"]
