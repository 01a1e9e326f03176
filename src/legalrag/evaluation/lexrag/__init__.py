"""LexRAG-style multi-turn consultation benchmark: data formats, conversational retrieval, generation, judge."""
