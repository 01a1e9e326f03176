"""The composition root: the one place where names a user gives become objects.

A model name or endpoint becomes an ``LLM`` (:mod:`~legalrag.wiring.llms`), an encoder spec an ``Encoder``
(:mod:`~legalrag.wiring.encoders`), an index directory an ``Index`` whose dense components get their encoders
from here (:mod:`~legalrag.wiring.indexes`), a reranker name a ``Reranker`` and a pipeline
(:mod:`~legalrag.wiring.rerankers`), source names the QA search sources (:mod:`~legalrag.wiring.sources`);
``Root`` (:mod:`~legalrag.wiring.root`) carries the saved settings and the ready objects a caller hands in.
Only the CLI (``legalrag.cli``), the HTTP app's launcher and ``bench/`` import this package; everything below
it receives its collaborators as arguments, so a test hands in a ``legalrag.testing`` double instead of
patching a factory. A new kind registers by a plain import and one branch in the module that builds its kind.

Saved settings (``legalrag.settings``: the TOML file, its profiles, ``LEGALRAG_*`` variables) are read here
and in the CLI only: a value a caller does not give (``None``) is taken from them and passed down.
"""

from legalrag.wiring.base import current_settings
from legalrag.wiring.encoders import ENCODER_SPECS, encoder_factory, make_encoder, make_support_scorer
from legalrag.wiring.indexes import (add_components, build_index, expand_components, open_index, read_corpus,
                                     register_backends)
from legalrag.wiring.llms import (canonical_model, label_route, local_server_client, make_llm, make_policy_llm,
                                  served_model_id)
from legalrag.wiring.rerankers import LLM_RERANKERS, RERANKERS, build_pipeline, index_language, make_reranker
from legalrag.wiring.root import Root
from legalrag.wiring.sources import make_sources

__all__ = ["ENCODER_SPECS", "LLM_RERANKERS", "RERANKERS", "Root", "add_components", "build_index",
           "build_pipeline", "canonical_model", "current_settings", "encoder_factory",
           "expand_components", "index_language", "label_route", "local_server_client", "make_encoder", "make_llm",
           "make_policy_llm", "make_reranker", "make_sources", "make_support_scorer", "open_index", "read_corpus",
           "register_backends", "served_model_id"]
