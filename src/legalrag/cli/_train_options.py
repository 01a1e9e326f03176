"""``-o KEY=VALUE`` of the trainers (``train ...``): each command's keys are its library settings' fields with
the same defaults (``EncoderSettings``, ``RerankerSettings``, ``GRPOSettings`` + ``RewardSettings``, the
recipes' keyword arguments); tests/unit/cli checks that they agree. The library modules are not imported
here: `legalrag --help` stays fast."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, field_validator

from legalrag.cli._options import QUERY_FIELDS, Options, _names

DEVICE = "auto (a GPU when torch sees one), cpu, cuda or cuda:N"
MINE = "index components to mine negatives from, comma-separated (default: bm25 and the dense ones)"


class ExportOptions(Options):
    """``train export-onnx -o``: ``training.export.export_onnx``'s keyword arguments."""

    quantise: bool = Field(True, description="int8 dynamic quantisation (false: fp32)")
    per_channel: bool = Field(False, description="one int8 scale per weight row")
    keep_fp32: Optional[tuple[str, ...]] = Field(None, description="comma-separated regexes of ONNX node names "
                                                 "whose matrix products stay fp32, e.g. layer\\.\\d+/output/dense "
                                                 "(each layer's feed-forward output)")
    opset: int = Field(17, ge=11, description="ONNX opset")

    _keep = field_validator("keep_fp32", mode="before")(classmethod(lambda cls, v: _names(v)))


class TrainSplitOptions(Options):
    """``train split -o``: how the queries are split."""

    dev_share: float = Field(0.2, ge=0.0, le=1.0, description="dev share, by a hash of seed and query id (the split "
                             "`train encoder -o dev_share -o seed` makes)")
    seed: int = Field(13, description="seed of the hash")
    train_first: int = Field(0, ge=0, description="instead of dev_share: the first N queries by sorted id are "
                             "train, the rest dev")
    query_fields: Optional[str] = Field(None, description=QUERY_FIELDS)


class _TrainerRun(Options):
    """What every encoder and reranker trainer takes beside its hyperparameters."""

    query_fields: Optional[str] = Field(None, description=QUERY_FIELDS)
    restart: bool = Field(False, description="discard an earlier run's checkpoint instead of resuming it")
    device: str = Field("auto", description=DEVICE)


class TrainEncoderOptions(_TrainerRun):
    """``train encoder -o``: ``EncoderSettings``' fields, the components mined and the run's device."""

    mine: Optional[tuple[str, ...]] = Field(None, description=MINE)
    epochs: int = Field(1, ge=1, description="epochs")
    batch_size: int = Field(16, ge=2, description="queries per batch")
    lr: float = Field(2e-5, gt=0, description="learning rate")
    warmup_share: float = Field(0.1, ge=0, le=1, description="share of the steps warming the learning rate up")
    negatives: int = Field(1, ge=0, description="hard negatives per query")
    max_chars: int = Field(300, ge=1, description="article characters kept after its name")
    max_seq_length: int = Field(128, ge=8, description="longest input, in tokens")
    dev_share: float = Field(0.2, ge=0, lt=1, description="share of queries held out (by id hash) for dev")
    seed: int = Field(13, description="seed")
    cached: bool = Field(False, description="cached MNRL: big batches in mini-batches of mini_batch")
    mini_batch: int = Field(8, ge=1, description="mini-batch of the cached loss")
    freeze_embeddings: bool = Field(True, description="keep the word embeddings frozen (false trains them: slow)")
    mine_depth: int = Field(30, ge=1, description="candidates mined per query")
    mine_skip: int = Field(0, ge=0, description="top mined candidates skipped")
    guard_ratio: float = Field(0.95, ge=0, description="drop negatives scoring >= GUARD x the gold (0: off)")
    remine: bool = Field(False, description="re-mine negatives with the improved model after each epoch")
    checkpoint_every: int = Field(100, ge=1, description="steps between checkpoints")
    scale: float = Field(20.0, gt=0, description="similarity scale of the loss")
    select_by: str = Field("recall@10", description="the dev figure that picks the best epoch (ties: mrr@10)")

    _mine = field_validator("mine", mode="before")(classmethod(lambda cls, v: _names(v)))


class TrainRerankerOptions(_TrainerRun):
    """``train reranker -o``: ``RerankerSettings``' fields, the components mined and the run's device."""

    mine: Optional[tuple[str, ...]] = Field(None, description=MINE + "; the first also feeds dev reranking")
    epochs: int = Field(1, ge=1, description="epochs")
    group_size: int = Field(4, ge=2, description="gold plus GROUP_SIZE-1 negatives per query")
    batch_groups: int = Field(4, ge=1, description="groups per batch")
    lr: float = Field(3e-5, gt=0, description="learning rate")
    max_chars: int = Field(300, ge=1, description="article characters kept")
    max_length: int = Field(192, ge=8, description="longest input, in tokens")
    dev_share: float = Field(0.2, ge=0, lt=1, description="share of queries held out for dev")
    depth: int = Field(30, ge=1, description="candidates per dev query, and negatives mined per query")
    seed: int = Field(13, description="seed")
    freeze_embeddings: bool = Field(True, description="keep the word embeddings frozen")
    checkpoint_every: int = Field(100, ge=1, description="steps between checkpoints")

    _mine = field_validator("mine", mode="before")(classmethod(lambda cls, v: _names(v)))


class RecipeEncoderOptions(Options):
    """``train stard-e5 / judge-e5 -o``: the run, not the recipe."""

    query_fields: Optional[str] = Field(None, description=QUERY_FIELDS)
    restart: bool = Field(False, description="discard an earlier run's checkpoint")
    device: str = Field("cpu", description="cpu (as shipped), auto, cuda or cuda:N")


class RankerOptions(Options):
    """``train ranker -o``: the candidates, LightGBM's rounds, the cross-encoder and the question memory."""

    depth: int = Field(50, ge=2, description="candidates per query taken from `candidates`")
    rounds: int = Field(150, ge=1, description="LightGBM boosting rounds")
    cv: int = Field(0, ge=0, description="also report K-fold cross-validated metrics on these queries (0: skip)")
    k: int = Field(10, ge=1, description="cut-off for the reported metrics")
    cross: Optional[str] = Field(None, description="a cross-encoder directory (`legalrag train reranker`) whose "
                                 "scores become three more features")
    neighbours: int = Field(0, ge=0, description="remember the training queries: the K most similar ones vote for "
                            "the articles they cite (five more features; 0 turns it off)")
    expand: int = Field(20, ge=0, description="with neighbours: best-voted articles added as candidates when the "
                        "first stage missed them")
    neighbour_temperature: float = Field(0.02, ge=1e-4, description="with neighbours: a neighbour's weight is "
                                         "exp((cosine - nearest cosine) / T)")
    candidates: Optional[str] = Field(None, description="index component whose top DEPTH it reranks (default: "
                                      "hybrid, else the index's default)")


class CailSplitOptions(Options):
    """``train cail-split -o``: what --encode encodes."""

    sample: int = Field(5, ge=0, description="--encode: hold-out cases per main charge")
    encode_train: int = Field(0, ge=0, description="--encode: at most this many training cases (0: all)")
    encoder: str = Field("judge-e5", description="--encode: the encoder")


class JudgeStructureOptions(Options):
    """``train judge-structure -o``: the recipe's keyword arguments (``recipes.judge_structure``)."""

    neighbours: Literal["encoder", "lexical"] = Field("encoder", description="similar cases among all the cases by "
                                                      "the index's encoder (as shipped) or by hashed character "
                                                      "n-grams (lexical)")
    cail_rows: Literal["encoded", "all", "none"] = Field("encoded", description="CAIL cases that give rows to the "
                                                         "learned models: those whose vectors the encoder's cache "
                                                         "holds (encoded, as shipped; `train cail-split --encode` "
                                                         "fills it), all, or none")
    max_cail_rows: int = Field(0, ge=0, description="at most this many CAIL rows (0: no cap)")
    case_texts: Optional[bool] = Field(None, description="keep the facts in the model directory (default: with "
                                       "--index, digests, circumstance keys and vectors instead, as shipped; "
                                       "without, the texts BM25 searches)")


class JudgeCiteOptions(Options):
    """``train judge-cite -o``: the recipe's keyword arguments (``recipes.judge_cite``)."""

    memory: Literal["dense", "bm25", "none"] = Field("dense", description="similar cases by the first stage's "
                                                     "encoder (dense, as shipped), by BM25, or none")
    case_neighbours: int = Field(10, ge=1, description="similar cases that vote")
    case_weight: float = Field(0.9, ge=0, description="weight of the similar cases' vote")
    int8: bool = Field(True, description="the case memory's vectors as int8 codes (as shipped)")
    stage: Literal["similar-cases", "learned-set"] = Field("similar-cases", description="what is saved: the "
                                                           "pipeline up to similar cases with that row's calibrated "
                                                           "threshold (as shipped), or with the learned set decision")
    case_texts: bool = Field(False, description="keep the facts in the case memory (default: digests only, as "
                             "shipped)")


class PolicyOptions(Options):
    """``train policy -o``: ``GRPOSettings``' and ``RewardSettings``' fields, the queries and the planner loop."""

    group_size: int = Field(4, ge=2, description="G: trajectories per query")
    groups_per_step: int = Field(2, ge=1, description="queries (groups) per update")
    epochs: int = Field(1, ge=1, description="epochs")
    learning_rate: float = Field(5e-5, gt=0, description="learning rate")
    warmup_steps: int = Field(0, ge=0, description="warm-up steps")
    weight_decay: float = Field(0.0, ge=0, description="weight decay")
    max_grad_norm: float = Field(1.0, gt=0, description="gradient clipping norm")
    adv_eps: float = Field(1e-4, gt=0, description="added to a group's reward deviation when normalising advantages")
    lora_r: int = Field(8, ge=1, description="LoRA rank")
    lora_alpha: int = Field(16, ge=1, description="LoRA alpha")
    lora_dropout: float = Field(0.0, ge=0, lt=1, description="LoRA dropout")
    max_prompt_tokens: int = Field(2048, ge=64, description="longer prompts keep their last tokens")
    seed: int = Field(0, description="seed")
    recall_weight: float = Field(1.0, ge=0, description="reward: weight of the final pool's recall")
    step_penalty: float = Field(0.02, ge=0, description="reward: penalty per planner decision")
    gain_bonus: float = Field(0.1, ge=0, description="reward: bonus per agent round, times the share "
                              "of gold it newly retrieved")
    early_exit_penalty: float = Field(0.2, ge=0, description="reward: penalty per exit attempted before "
                                      "any reformulation was retrieved")
    failure_penalty: float = Field(0.1, ge=0, description="reward: penalty per reply still unusable after the re-asks")
    limit: int = Field(0, ge=0, description="only the first N queries (after skip); 0 = all")
    skip: int = Field(0, ge=0, description="skip the first N queries of the file")
    max_steps: Optional[int] = Field(None, ge=1, description="stop after this many steps (the run stays resumable; "
                                     "the policy is written with what was done)")
    retriever: Optional[str] = Field(None, description="index component (default: the index's strongest)")
    threads: Optional[int] = Field(None, ge=1, description="CPU threads (default: all cores)")
    max_rounds: int = Field(4, ge=1, le=10, description="most planner rounds per rollout")
    fused_planner: bool = Field(False, description="sample with the fused planner (one call per round: the planner "
                                "writes the agent's queries); the policy learns that prompt")
    restart: bool = Field(False, description="discard an interrupted run's checkpoint")

    def grpo(self) -> dict:
        """The ``GRPOSettings`` keywords."""
        return self.model_dump(include={"group_size", "groups_per_step", "epochs", "learning_rate", "warmup_steps",
                                        "weight_decay", "max_grad_norm", "adv_eps", "lora_r", "lora_alpha",
                                        "lora_dropout", "max_prompt_tokens", "seed"})

    def reward(self) -> dict:
        """The ``RewardSettings`` keywords."""
        return self.model_dump(include={"recall_weight", "step_penalty", "gain_bonus", "early_exit_penalty",
                                        "failure_penalty"})


class SupportModelOptions(Options):
    """``train support-model -o``: the recipe's keyword arguments (``recipes.support.support_model``)."""

    encoder: str = Field("stard-e5", description="encoder of the cosine feature (as shipped)")
    lexical_only: bool = Field(False, description="fit the lexical model only (no encoder)")
    negatives: int = Field(3, ge=1, description="retrieved non-gold articles paired with each claim")
    train_limit: int = Field(0, ge=0, description="questions sampled from train with seed 13 (0 = all; the "
                             "shipped model used 300)")
    min_precision: float = Field(0.9, gt=0, le=1, description="the threshold: the lowest with this precision on dev")
    hand: Optional[str] = Field(None, description="JSONL of hand-labelled claims (claim, article, supports), "
                                "reported as a fourth part")
    cache: Optional[str] = Field(None, description="JSON file of the labelled pairs, written after each part (a "
                                 "rerun resumes)")
    df: Optional[str] = Field(None, description="the bigram table (written from --corpus when missing), by default "
                              "the shipped one")

class ScopeModelOptions(Options):
    """``train scope-model -o``: the recipe's keyword arguments (``recipes.scope.scope_model``)."""

    c_grid: str = Field("0.3,1,3,10", description="regularisation strengths tried, comma-separated (the one that "
                        "declines the most out-of-scope dev messages is kept)")
    max_in_declined: float = Field(0.0, ge=0, le=0.5, description="share of the in-scope dev pool (dev messages "
                                   "and STARD dev questions) the threshold may decline")
    stard_folds: int = Field(5, ge=0, le=20, description="folds of the STARD dev questions cross-fitted as in-scope "
                             "training data (0 or 1: they only choose the threshold)")

class SelectorOptions(Options):
    """``train selector -o``: the recipe's keyword arguments (``recipes.selector.train_selector``)."""

    depth: int = Field(30, ge=2, le=200, description="candidates per question (the top of the default index)")
    folds: int = Field(5, ge=2, le=20, description="cross-fitting folds on dev, by question")
    seed: int = Field(13, description="seed of the folds and of LightGBM")
    k: int = Field(3, ge=1, le=10, description="at most this many chosen articles (the threshold is chosen for it)")
    max_empty: float = Field(0.25, ge=0, le=1, description="the threshold leaves at most this share of dev "
                             "questions with nothing chosen")
    support: str = Field("full", description="the support pair model, as `wiring.make_support_scorer` takes it "
                         "(full, with the shipped stard-e5's cosine, or lexical, without an encoder and with no "
                         "neighbour memory)")
    lightgbm: bool = Field(True, description="also try LightGBM (rerank.learned's parameters)")
    neighbours: int = Field(10, ge=0, description="train questions that vote for what they cited (0: no memory)")
    temperature: float = Field(0.05, gt=0, description="temperature of the neighbours' vote weights")
    cache: Optional[str] = Field(None, description="JSON file of the support scores, reused when the support model "
                                 "is the same (a rerun is then quick)")
    threads: Optional[int] = Field(None, ge=1, description="threads of the encoder")
