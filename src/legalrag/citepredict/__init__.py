"""Citation prediction: the set of provisions a court decision would cite, from its facts.

Retrieval finds the topical provisions; rules and a co-citation graph learned from training citation sets
recover what retrieval misses (procedural, sentencing and fixed-cluster provisions); LLM verification and a
calibrated set-selection rule decide what stays. Nothing here is specific to one statute corpus.
"""
