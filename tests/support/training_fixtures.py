"""A tiny randomly initialised BERT encoder and an inline corpus for the training tests (seconds on a CPU).

Each article has a name word that only queries use ("synonyms"), so the untrained model can find an article
only by chance or through shared filler words, and a trained one learns the mapping from the training queries
and applies it to held-out queries of the same articles."""

from __future__ import annotations

import random
from pathlib import Path

from legalrag.types import Document, Query

N_ARTICLES = 16
FILLER = ["the", "law", "court", "rule", "case", "party", "shall", "may", "not", "under"]


def tiny_corpus(seed: int = 0) -> tuple[list[Document], list[Query]]:
    rng = random.Random(seed)
    docs = [Document(id=f"a{i}", title=f"article {i}",
                     text=" ".join([f"topic{i}", f"detail{i}"] + rng.sample(FILLER, 4))) for i in range(N_ARTICLES)]
    queries = []
    for i in range(N_ARTICLES):
        for j in range(4):
            words = [f"syn{i}"] + rng.sample(FILLER, 3)
            rng.shuffle(words)
            queries.append(Query(text=" ".join(words), id=f"q{i}-{j}", gold_ids=(f"a{i}",)))
    return docs, queries


def tiny_encoder(out: Path, seed: int = 0, layers: int = 1) -> Path:
    """A sentence-transformers directory: 1-layer BERT (hidden 32), word-level tokenizer, mean pooling."""
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    docs, queries = tiny_corpus()
    words = sorted({w for t in [d.text + " " + d.title for d in docs] + [q.text for q in queries]
                    for w in t.split()} | {"query:", "passage:"})
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    hf = out.parent / f"{out.name}-hf"
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=64, pad_token_id=0)
    transformers.BertModel(cfg, add_pooling_layer=False).save_pretrained(hf)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                         cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                         model_max_length=64).save_pretrained(hf)
    word = modules.Transformer(str(hf), max_seq_length=32)
    model = SentenceTransformer(modules=[word, modules.Pooling(32, pooling_mode="mean"), modules.Normalize()],
                                device="cpu", prompts={"query": "query: ", "document": "passage: "})
    model.save(str(out))
    return out
