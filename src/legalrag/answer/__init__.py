"""Answering a question: the answer engine, evidence selection, the guard, the query processors, carry and the
consultation."""
