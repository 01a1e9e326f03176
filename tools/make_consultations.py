"""Build five-turn consultations from STARD training questions: the harder consultation set.

    python tools/make_consultations.py --train $LEGALRAG_DATA/../lab/stard-split/train.jsonl \
        --corpus $LEGALRAG_DATA/stard/corpus.jsonl --out bench/data/consultations/stard-dialogues

Only the training part of the frozen STARD split (``bench/data/stard-split.json``) is read; its dev and test
questions never enter a dialogue. Each dialogue is five real STARD questions, each used once in the whole set:

- turn 1 is a STARD question as a layperson wrote it (a seed drawn at random);
- turns 2-5 are related STARD questions (text similarity to the seed and the previous turn, the same law and
  article neighbourhood) that raise a *new* point (their gold shares no article with the earlier turns), except
  where a turn is chosen to stay on the same article ("same issue, narrower": a question sharing a gold article
  with an earlier turn, when one is left) and, in about half of the dialogues, one turn that needs another law
  than turn 1's;
- a follow-up is rewritten the way people continue a consultation: only its question clause is kept, what the
  dialogue already said is dropped or turned into a pronoun ("他", "这个"), and it opens with "那" / "那如果"
  / "还有" / "另外" or ends in "呢"; some are cut to their last clause ("那他这样合法吗" style);
- the assistant turn is the STARD lawyer's answer to that question (real text, cited articles included), the
  gold is the question's STARD gold articles (names as the corpus writes them, so they resolve).

The rewriting is programmatic (this script; fixed seed): the wording of turns 2-5 is ours, derived from the
STARD questions. Dialogues are split into a development part (``dev.json``: tune on it) and a test part
(``test.json``: report on it, never tune) before any retrieval is run; ``dataset.json`` holds both.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from pathlib import Path

ARTICLE = re.compile(r"第([零〇一二三四五六七八九十百千]+)条(?:之[一二三四五六七八九十]+)?$")
PERSON = ("人", "方", "者", "公司", "单位", "老板", "员工", "东", "妻", "夫", "父", "母", "儿", "女", "朋友", "商",
          "家", "主", "工", "户", "长", "师", "生", "客")
OPENERS = ("那", "那", "那如果", "还有，", "另外，", "那么", "对了，", "")
QUESTION_END = re.compile(r"(吗|么|呢|如何|怎么|怎样|什么|哪些|哪个|是否|能否|可否|可以|多少|几)")
DROP = re.compile(r"^(您好|你好|请问|律师|想问一下|想问|咨询一下|我想知道)[，,、：:\s]*")


def cn_number(text: str) -> int:
    from legalrag.numerals import to_int  # the project numeral parser

    return to_int(text)


def law_of(name: str) -> tuple[str, int]:
    m = ARTICLE.search(name)
    if not m:
        return name, -1
    try:
        return name[: m.start()], cn_number(m.group(1))
    except Exception:
        return name[: m.start()], -1


def bracketed(name: str) -> str:
    """A corpus article name as LexRAG writes gold: the title in 《》 (``劳动合同法第八十二条`` ->
    ``《劳动合同法》第八十二条``), which the citation parser reads without guessing where the title ends."""
    m = ARTICLE.search(name)
    return f"《{name[:m.start()]}》{name[m.start():]}" if m and m.start() else name


def clauses(text: str) -> list[str]:
    parts = re.split(r"[。？！?!；;/\n]", text)
    return [p.strip(" ，,、") for p in parts if p.strip(" ，,、")]


def question_clause(text: str) -> str:
    """The part of a STARD question that asks: its last clause that reads as a question (with the clause
    before it when it is very short)."""
    parts = clauses(DROP.sub("", text.strip()))
    if not parts:
        return text.strip()
    asking = [i for i, p in enumerate(parts) if QUESTION_END.search(p)]
    i = asking[-1] if asking else len(parts) - 1
    out = parts[i]
    sub = [s for s in re.split(r"[，,]", out) if s]
    if len(out) > 26 and len(sub) > 1:  # keep the asking sub-clause and the one before it
        out = "，".join(sub[-2:])
    if len(out) < 7 and i > 0:
        out = parts[i - 1] + "，" + out
    return out


def elide(text: str, context: str, rng: random.Random) -> str:
    """``text`` as a follow-up: words the dialogue already used (the questions and the lawyer's answers: people
    refer back to what was said) become a pronoun (the first) or are dropped (up to two more)."""
    import jieba.posseg as pseg

    words = list(pseg.cut(text))
    out, replaced = [], 0
    for w in words:
        word, flag = w.word, w.flag
        known = len(word) >= 2 and word in context and flag.startswith("n")
        if known and replaced < 3:
            replaced += 1
            if replaced == 1:
                out.append("他" if word.endswith(PERSON) else "这个")
            continue  # later known words are simply dropped, as people do
        out.append(word)
    s = "".join(out)
    s = re.sub(r"(这个|他)的?(这个|他)", r"\1", s)
    s = re.sub(r"^[的和与及、，,]+", "", s)
    return s or text


def follow_up(question: str, context: str, rng: random.Random) -> str:
    core = question_clause(question)
    core = re.sub(r"^(我|本人|我们)(想|想要)?(问|咨询)?", "", core)
    short = elide(core, context, rng)
    r = rng.random()
    if r < 0.35 and len(short) > 10:  # cut to its last sub-clause: "那他这样合法吗" style
        last = [s for s in re.split(r"[，,]", short) if s][-1]
        short = last if len(last) >= 5 else short
    short = short.rstrip("？?。 ")
    opener = rng.choice(OPENERS)
    if opener == "那如果" and re.search(r"(吗|么|是否|能否|可否)", short):
        opener = "那"  # "那如果……吗" is not how people ask
    if opener.startswith("那") and short.startswith("那"):
        opener = ""
    if rng.random() < 0.25 and not QUESTION_END.search(short[-3:]):
        return f"{opener}{short}呢？"
    return f"{opener}{short}？"


def tfidf(texts: list[str]):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer="char", ngram_range=(2, 3), sublinear_tf=True, min_df=1)
    return vec.fit_transform(texts)


def build(train: list[dict], corpus: dict[int, str], n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)  # which questions make a dialogue
    wording = random.Random(seed + 7)  # how the follow-ups are worded (its own stream: rewording keeps the dialogues)
    texts = [r["query"] + " " + str(r.get("keywords") or "") for r in train]
    m = tfidf(texts)
    sim = (m @ m.T).toarray()
    gold = [set(r["gold_ids"]) for r in train]
    places = [[law_of(corpus[g]) for g in r["gold_ids"]] for r in train]
    laws = [{p[0] for p in pl} for pl in places]

    def near(i: int, j: int) -> float:
        """1 when a gold article of j is within 40 articles of one of i's in the same law, .5 same law."""
        best = 0.0
        for la, a in places[i]:
            for lb, b in places[j]:
                if la == lb:
                    best = max(best, 1.0 if a >= 0 and b >= 0 and abs(a - b) <= 40 else 0.5)
        return best

    order = list(range(len(train)))
    rng.shuffle(order)
    used: set[int] = set()
    dialogues = []
    for s in order:
        if len(dialogues) >= n:
            break
        if s in used:
            continue
        chosen = [s]
        other_at = rng.choice((2, 3, 4, 5)) if rng.random() < 0.5 else None
        for t in range(2, 6):
            prev = chosen[-1]
            earlier = set().union(*(gold[c] for c in chosen))
            kind = "other_law" if t == other_at else ("narrower" if rng.random() < 0.15 else "new")
            cands = []
            for c in range(len(train)):
                if c in used or c in chosen:
                    continue
                if kind == "other_law":
                    if laws[c] & laws[s]:
                        continue
                    score = 0.6 * sim[s, c] + 0.4 * sim[prev, c]
                elif kind == "narrower":
                    if not gold[c] & earlier:
                        continue
                    score = sim[s, c] + sim[prev, c]
                else:
                    if gold[c] & earlier:
                        continue
                    score = 0.5 * sim[s, c] + 0.3 * sim[prev, c] + 0.2 * max(near(s, c), near(prev, c))
                cands.append((score, c))
            if not cands and kind != "new":  # nothing of that kind left: a new point instead
                cands = [(0.5 * sim[s, c] + 0.3 * sim[prev, c], c) for c in range(len(train))
                         if c not in used and c not in chosen and not gold[c] & earlier]
            if not cands:
                break
            cands.sort(reverse=True)
            chosen.append(rng.choice(cands[:3])[1])
        if len(chosen) < 5:
            continue
        used.update(chosen)
        conversation, context = [], ""
        for t, c in enumerate(chosen, 1):
            q = train[c]["query"].strip()
            user = q if t == 1 else follow_up(q, context, wording)
            context += " " + q + " " + train[c]["answer"]  # what was said so far: question and answer
            kws = [k for k in re.split(r"[；;，,、\s]+", str(train[c].get("keywords") or "")) if k]
            conversation.append({"user": user, "assistant": train[c]["answer"].strip(),
                                 "article": [bracketed(corpus[g]) for g in train[c]["gold_ids"]], "keywords": kws,
                                 "source_query_id": train[c]["query_id"], "source_question": q})
        dialogues.append({"id": f"sd-{len(dialogues) + 1:03d}", "conversation": conversation})
    return dialogues


def statistics(dialogues: list[dict]) -> dict:
    """Turns, the share of turns 2-5 whose gold repeats an earlier turn's article, laws per dialogue, the
    share of dialogues with a turn outside turn 1's laws, mean characters of turn 1 and of later turns."""
    repeat = later = other = 0
    laws_per, first_len, later_len = [], [], []
    for d in dialogues:
        seen: set[str] = set()
        all_laws: set[str] = set()
        first_laws = {law_of(a.replace("《", "").replace("》", ""))[0] for a in d["conversation"][0]["article"]}
        outside = False
        for t, turn in enumerate(d["conversation"], 1):
            names = set(turn["article"])
            turn_laws = {law_of(a.replace("《", "").replace("》", ""))[0] for a in names}
            all_laws |= turn_laws
            (first_len if t == 1 else later_len).append(len(turn["user"]))
            if t > 1:
                later += 1
                repeat += bool(names & seen)
                outside |= bool(turn_laws - first_laws)
            seen |= names
        other += outside
        laws_per.append(len(all_laws))
    n = len(dialogues)
    return {"dialogues": n, "turns": sum(len(d["conversation"]) for d in dialogues),
            "gold_repeat_rate": round(repeat / max(later, 1), 3),
            "laws_per_dialogue": round(sum(laws_per) / max(n, 1), 2),
            "dialogues_with_another_law": round(other / max(n, 1), 3),
            "chars_turn_1": round(sum(first_len) / max(len(first_len), 1), 1),
            "chars_later_turns": round(sum(later_len) / max(len(later_len), 1), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", required=True, help="the training part of the frozen STARD split (train.jsonl)")
    ap.add_argument("--corpus", required=True, help="the STARD corpus (corpus.jsonl)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dialogues", type=int, default=160)
    ap.add_argument("--dev-share", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--compare", help="also print the statistics of another dialogues file (e.g. the invented set)")
    args = ap.parse_args()
    corpus = {}
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["id"]] = d["name"]
    with open(args.train, encoding="utf-8") as f:
        train = [json.loads(line) for line in f if line.strip()]
    dialogues = build(train, corpus, args.dialogues, args.seed)
    rng = random.Random(args.seed + 1)
    ids = [d["id"] for d in dialogues]
    rng.shuffle(ids)
    dev_ids = set(ids[: round(len(ids) * args.dev_share)])
    dev = [d for d in dialogues if d["id"] in dev_ids]
    test = [d for d in dialogues if d["id"] not in dev_ids]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("dataset.json", dialogues), ("dev.json", dev), ("test.json", test)):
        (out / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    stats = {"all": statistics(dialogues), "dev": statistics(dev), "test": statistics(test)}
    print(json.dumps(stats, ensure_ascii=False, indent=1))
    kinds = Counter(len(d["conversation"]) for d in dialogues)
    print("dialogue lengths:", dict(kinds))
    if args.compare:
        print("compared set:", json.dumps(statistics(json.loads(Path(args.compare).read_text(encoding="utf-8"))),
                                           ensure_ascii=False))


if __name__ == "__main__":
    main()
