"""The composition root: the one place where names a user gives become objects.

A model name or endpoint becomes an ``LLM`` (:mod:`~legalrag.wiring.llms`), an encoder spec an ``Encoder``
(:mod:`~legalrag.wiring.encoders`), a reranker name a ``Reranker`` (:mod:`~legalrag.wiring.rerankers`), source
names the QA search sources (:mod:`~legalrag.wiring.sources`), CLI retriever choices index components
(:mod:`~legalrag.wiring.indexes`). ``Root`` (:mod:`~legalrag.wiring.root`) carries the saved settings and the
ready objects a caller hands in, and is the one builder a command uses: ``Root.index`` opens every index (a
directory, the saved default, the shipped national law, some of its laws, the demo) with encoders from here;
``build_index``, ``add_components``, ``read_corpus``, ``build_pipeline`` and one ``make_*`` per model kind
(LLM, answer LLM, policy LLM, encoder, reranker, support scorer, sources) build the rest.
Only the CLI (``legalrag.cli``), the HTTP app's launcher and ``bench/`` import this package; everything below
it receives its collaborators as arguments, so a test hands in a ``legalrag.testing`` double instead of
patching a factory. A new kind registers by a plain import and one branch in the module that builds its kind.

Saved settings (``legalrag.settings``: the TOML file, its profiles, ``LEGALRAG_*`` variables) are read here
and in the CLI only: a value a caller does not give (``None``) is taken from them and passed down.
"""

from legalrag.wiring.base import current_settings
from legalrag.wiring.encoders import ENCODER_SPECS, encoder_factory, make_encoder, make_support_scorer
from legalrag.wiring.indexes import expand_components, register_backends
from legalrag.wiring.llms import (canonical_model, label_route, local_server_client, make_llm, make_policy_llm,
                                  served_model_id)
from legalrag.wiring.rerankers import LLM_RERANKERS, RERANKERS, index_language, make_reranker
from legalrag.wiring.root import Root
from legalrag.wiring.sources import make_sources

__all__ = ["ENCODER_SPECS", "LLM_RERANKERS", "RERANKERS", "Root", "canonical_model", "current_settings",
           "encoder_factory", "expand_components", "index_language", "label_route", "local_server_client",
           "make_encoder", "make_llm", "make_policy_llm", "make_reranker", "make_sources", "make_support_scorer",
           "register_backends", "served_model_id"]
