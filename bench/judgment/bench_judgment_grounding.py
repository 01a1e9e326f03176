"""Drafts that state only what the facts support, measured on JuDGE's 301 evaluation cases.

    python bench/judgment/bench_judgment_grounding.py score --before runs/judge/before-eval.jsonl \
        --after runs/judge/cail-eval.jsonl --json-out bench/results/judge-draft-grounding.json
    python bench/judgment/bench_judgment_grounding.py llm --model-dir models/judge/structure-cail --model qwen2.5-0.5b \
        --n 6 --out runs/judge/grounding-llm.jsonl

``score`` reads the structure-first drafts (no LLM: ``bench_judgment_structure.py eval --out``) of two models or
code versions and gives, per file: the share of drafts whose reasoning or result states a circumstance (自首,
坦白, 累犯, 退赃退赔, 谅解, 未成年 ...; ``judgment/grounding.CHECKED``) that the facts do not state, the share
with a repeated paragraph, the share whose heading names no procuratorate and no placeholder
(``公诉机关人民检察院``), and the JuDGE evaluator's figures on the same drafts.

``llm`` drafts the first ``--n`` evaluation cases with an LLM writing the reasoning: "before" is the reply's
reasoning as the drafter used it until now (composed without grounding, with the nameless heading), "after" is
the grounded draft (``ReasonedDrafter``); the same reply serves both (the call cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEYS = ("prison", "fine", "charge_precision", "charge_recall", "charge_f1", "article_precision", "article_recall",
        "article_f1")
MACHINE = "2-core x86-64 CPU, 24 GiB, no GPU, shared with other jobs"
OLD_HEADING = "刑事判决书\n公诉机关人民检察院。\n本院依法组成合议庭，公开开庭审理了本案。现已审理终结。\n"


def draft_figures(docs, facts):
    from legalrag.judgment.grounding import repeated_paragraphs, unsupported_circumstances
    from legalrag.judgment.sections import split_sections

    bad, rep, nameless, examples = 0, 0, 0, {}
    for i, doc in docs.items():
        sec = split_sections(doc)
        written = (sec.reasoning or "") + "\n" + (sec.result or "")
        un = unsupported_circumstances(written, facts[i])
        bad += bool(un)
        for u in un:
            examples[u] = examples.get(u, 0) + 1
        rep += repeated_paragraphs(doc) > 0
        nameless += "公诉机关人民检察院" in doc
    n = len(docs)
    return {"n": n, "unsupported_circumstance_share": round(bad / n, 4), "unsupported_by_circumstance": examples,
            "repeated_paragraph_share": round(rep / n, 4), "nameless_procuratorate_share": round(nameless / n, 4)}


def cmd_score(args):
    from legalrag.judgment.metrics import evaluate_judgments
    from legalrag.training.recipes import load_judge

    facts, gold = load_judge(args.data)[:2]
    out = {"protocol": "JuDGE's 301 evaluation cases, structure-first drafts without an LLM", "machine": MACHINE,
           "command": "python " + " ".join(sys.argv)}
    for name, path in (("before", args.before), ("after", args.after)):
        recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        docs = {r["id"]: r["document"] for r in recs}
        rep = evaluate_judgments(docs, {i: gold[i] for i in docs}).summary()
        out[name] = {**draft_figures(docs, facts), **{k: round(rep[k], 4) for k in KEYS}, "file": str(path)}
        print(name, json.dumps(out[name], ensure_ascii=False), flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def cmd_llm(args):
    from legalrag.training.recipes import load_judge

    from legalrag.judgment.compose import reasoning_with_citation, result_section
    from legalrag.judgment.draft import CLOSING
    from legalrag.judgment.predict import StructurePredictor
    from legalrag.judgment.reasoned import ReasonedDrafter, ReasoningReply
    from legalrag.llm.structured import StructuredOutputError, structured_call
    from legalrag.wiring import make_encoder, make_llm

    facts, gold, train_ids, eval_ids, labels, statutes, _ = load_judge(args.data)
    man = json.loads((args.model_dir / "manifest.json").read_text(encoding="utf-8"))
    model = StructurePredictor.load(args.model_dir, statutes, make_encoder(man.get("encoder_spec"), progress=False))
    llm = make_llm(args.model, threads=args.threads)
    drafter = ReasonedDrafter(model, llm)
    before, after, secs = {}, {}, []
    for i in eval_ids[: args.n]:
        t0 = time.perf_counter()
        s = model.predict(facts[i], i)
        try:
            raw = structured_call(llm, drafter.messages(facts[i], s), ReasoningReply, drafter.retries,
                                  max_tokens=drafter.max_tokens).value.reasoning
        except StructuredOutputError as exc:  # the drafter falls back to its template; nothing to compare
            print(f"{i}: the reply could not be parsed ({str(exc)[:120]}); skipped", flush=True)
            continue
        d = drafter.draft(facts[i], i, structure=s)  # the same reply, from the call cache
        secs.append(time.perf_counter() - t0)
        before[i] = OLD_HEADING + "\n" + facts[i].strip() + "\n\n" + reasoning_with_citation(raw, s) + "\n" + \
            result_section(s) + "\n" + CLOSING
        after[i] = d.document
        with args.out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"id": i, "before": before[i], "after": after[i], "notes": list(d.notes),
                                 "seconds": round(secs[-1], 1)}, ensure_ascii=False) + "\n")
        print(f"{i} {secs[-1]:.0f} s notes={[n for n in d.notes if 'removed' in n]}", flush=True)
    out = {"protocol": f"the first {len(before)} of JuDGE's 301 evaluation cases, reasoning written by {args.model}",
           "machine": MACHINE, "command": "python " + " ".join(sys.argv),
           "before": draft_figures(before, facts), "after": draft_figures(after, facts),
           "seconds_per_case": round(sum(secs) / len(secs), 1)}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    if args.json_out:
        args.json_out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["score", "llm"])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("LEGALRAG_DATA", REPO.parent / "shared" / "data"))
                    / "judge")
    ap.add_argument("--before", type=Path)
    ap.add_argument("--after", type=Path)
    ap.add_argument("--model-dir", type=Path)
    ap.add_argument("--model", default="qwen2.5-0.5b")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--out", type=Path, default=Path("runs/judge/grounding-llm.jsonl"))
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()
    {"score": cmd_score, "llm": cmd_llm}[args.what](args)


if __name__ == "__main__":
    main()
