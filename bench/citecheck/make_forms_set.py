"""Write the citation-forms set: sentences citing real corpus articles in every usual form, Chinese and English.

Data written here (not taken from any data set): the sentence frames below are ours, the articles are drawn
(fixed seed) from the shipped national corpus among the laws of the English title table, and each citation's
gold is the corpus document of the article it cites, with the paragraph (款) and item (项) it names, which exist
in that article. A second part holds citations whose right outcome is a reason, not a document: a paragraph the
article does not have, a local regulation, a title that fits several laws, an English title the table does not
know, another jurisdiction's law.

    python bench/citecheck/make_forms_set.py --out bench/data/citation-forms.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path

from legalrag.citecheck.aliases import PRC, shipped_abbreviations
from legalrag.citecheck.resolve import article_structure
from legalrag.corpora.statutes import statute_document
from legalrag.national import data_dir, national_law
from legalrag.numerals import to_chinese

PER_FORM = 40
ZH_FRAMES = ["根据{c}的规定，用人单位应当承担相应责任。", "依照{c}，本院予以支持。", "{c}规定了这一情形。",
             "违反{c}的，应当依法承担责任。", "按照{c}之规定处理。", "本案应当适用{c}。"]
EN_FRAMES = ["Under {c}, the employer must pay compensation.", "{c} provides for this case.",
             "The court applied {c} and upheld the claim.", "This follows from {c}.", "See {c}, which governs it.",
             "As {c} states, the rule applies."]
PRC_EN = ["", " of the PRC", " of the People's Republic of China"]


def _corpus() -> dict[str, dict[str, object]]:
    """law -> {article key: document}."""
    law = national_law()
    out: dict[str, dict[str, object]] = {}
    for _, rec in law.records():
        doc = statute_document(str(rec["id"]), rec["content"], rec["name"])
        if doc.metadata.get("article"):
            out.setdefault(doc.metadata["law"], {})[doc.metadata["article"]] = doc
    return out


def _short(title: str) -> str:
    return title[len(PRC):] if title.startswith(PRC) else title


def _prc(title: str) -> str:
    return title if title.startswith(PRC) or title.startswith("最高") else PRC + title


def _zh_num(n: int, arabic: bool) -> str:
    return str(n) if arabic else to_chinese(n)


def _label(art: str, arabic: bool = False) -> str:
    base, _, sub = art.partition("-")
    out = f"第{_zh_num(int(base), arabic)}条"
    return out + (f"之{_zh_num(int(sub), arabic)}" if sub else "")


def _gold(doc, para=None, item=None) -> dict:
    return {"doc_id": doc.id, "paragraph": para, "item": item}


def build(seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    corpus = _corpus()
    table = json.loads((Path(str(data_dir().parent)) / "citations" / "english_titles.json").read_text(encoding="utf-8"))
    laws = [e for e in table["laws"] if e["zh"] in corpus and not e["zh"].startswith("最高")]
    rows: list[dict] = []

    def pick(with_paras: bool = False, with_items: bool = False, sub: bool = False):
        pool = [e for e in laws if any("-" in k for k in corpus[e["zh"]])] if sub else laws
        for _ in range(10_000):
            e = rng.choice(pool)
            arts = corpus[e["zh"]]
            key = rng.choice(sorted(arts))
            if sub != ("-" in key):
                continue
            parts = article_structure(arts[key].text)
            if with_paras and len(parts) < 2:
                continue
            if with_items and not any(parts):
                continue
            return e, key, arts[key], parts
        raise RuntimeError("no article fits")

    def add(form: str, text: str, gold: list[dict], lang: str) -> None:
        rows.append({"form": form, "lang": lang, "text": text, "gold": gold})

    for _ in range(PER_FORM):
        # ---- Chinese
        e, key, doc, parts = pick()
        zh, frame = e["zh"], rng.choice(ZH_FRAMES)
        add("zh: 《full title》", frame.format(c=f"《{_prc(zh)}》{_label(key)}"), [_gold(doc)], "zh")
        e, key, doc, parts = pick()
        add("zh: 《short title》", rng.choice(ZH_FRAMES).format(c=f"《{_short(e['zh'])}》{_label(key)}"), [_gold(doc)], "zh")
        e, key, doc, parts = pick()
        add("zh: full title without 《》", rng.choice(ZH_FRAMES).format(c=f"{_prc(e['zh'])}{_label(key)}"), [_gold(doc)], "zh")
        e, key, doc, parts = pick()
        add("zh: short title without 《》", rng.choice(ZH_FRAMES).format(c=f"{_short(e['zh'])}{_label(key)}"), [_gold(doc)],
            "zh")
        e, key, doc, parts = pick(with_paras=True)
        p = rng.randint(1, len(parts))
        c = f"《{_short(e['zh'])}》{_label(key)}第{to_chinese(p)}款"
        gold = [_gold(doc, p)]
        if parts[p - 1]:
            i = rng.randint(1, parts[p - 1])
            c += rng.choice([f"第{to_chinese(i)}项", f"第（{to_chinese(i)}）项"])
            gold = [_gold(doc, p, i)]
        add("zh: 第…款…项", rng.choice(ZH_FRAMES).format(c=c), gold, "zh")
        e, key, doc, parts = pick()
        add("zh: Arabic numerals", rng.choice(ZH_FRAMES).format(c=f"《{_short(e['zh'])}》{_label(key, arabic=True)}"),
            [_gold(doc)], "zh")
        e, key, doc, parts = pick(sub=True)
        add("zh: 之N", rng.choice(ZH_FRAMES).format(c=f"《{_short(e['zh'])}》{_label(key, arabic=rng.random() < 0.3)}"),
            [_gold(doc)], "zh")
        e, key, doc, parts = pick()
        key2 = rng.choice(sorted(corpus[e["zh"]]))
        add("zh: list sharing a title (、)", rng.choice(ZH_FRAMES).format(
            c=f"《{_short(e['zh'])}》{_label(key)}、{_label(key2)}"), [_gold(doc), _gold(corpus[e['zh']][key2])], "zh")
        e, key, doc, parts = pick()
        add("zh: inside quotation marks", rng.choice([f"“{_short(e['zh'])}{_label(key)}规定的情形”不适用。",
                                                     f"他说：「依照《{_short(e['zh'])}》{_label(key)}处理」。",
                                                     f"所谓‘{_prc(e['zh'])}{_label(key)}’，是指本条。"]),
            [_gold(doc)], "zh")
        e, key, doc, parts = pick()
        add("zh: footnote", rng.choice([f"用人单位应当赔偿。[1]\n[1] 《{_short(e['zh'])}》{_label(key)}。",
                                        f"应当承担责任。①\n① 参见{_prc(e['zh'])}{_label(key)}。",
                                        f"应予支持。^[2]\n注2：《{_short(e['zh'])}》{_label(key)}。"]), [_gold(doc)], "zh")
        # ---- English
        e, key, doc, parts = pick()
        en = rng.choice(e["en"])
        add("en: Article N of the <title>", rng.choice(EN_FRAMES).format(c=f"Article {key} of the {en}"), [_gold(doc)],
            "en")
        e, key, doc, parts = pick()
        add("en: Art. N of the <title> of the PRC", rng.choice(EN_FRAMES).format(
            c=f"Art. {key} of the {rng.choice(e['en'])}{rng.choice(PRC_EN[1:])}"), [_gold(doc)], "en")
        e, key, doc, parts = pick()
        t = rng.choice(e["en"])
        c = rng.choice([f"PRC {t} art. {key}", f"{t} of the PRC, Article {key}", f"{t}, Art. {key}",
                        f"China's {t} Article {key}"])
        add("en: title first (PRC Civil Code art. N)", rng.choice(EN_FRAMES).format(c=c), [_gold(doc)], "en")
        e, key, doc, parts = pick()
        t = rng.choice(e["en"]).replace("Labor", "Labour").replace("Defense", "Defence")
        add("en: British spelling, full PRC name", rng.choice(EN_FRAMES).format(
            c=f"Article {key} of the {t}{rng.choice(PRC_EN)}"), [_gold(doc)], "en")
        e, key, doc, parts = pick(with_paras=True)
        p = rng.randint(1, len(parts))
        t = rng.choice(e["en"])
        if parts[p - 1]:
            i = rng.randint(1, parts[p - 1])
            c = rng.choice([f"Article {key}, paragraph {p}, item {i} of the {t}", f"Article {key}({p})({i}) of the {t}",
                            f"Item {i}, Paragraph {p}, Article {key} of the {t}"])
            gold = [_gold(doc, p, i)]
        else:
            c = rng.choice([f"Article {key}, paragraph {p} of the {t}", f"Paragraph {p} of Article {key} of the {t}",
                            f"Art. {key} para. {p} of the {t}"])
            gold = [_gold(doc, p)]
        add("en: paragraph / item", rng.choice(EN_FRAMES).format(c=c), gold, "en")
        while True:
            e, key, doc, parts = pick()
            arts = corpus[e["zh"]]
            nxt = str(int(key) + 1)
            if nxt in arts:
                break
        t = rng.choice(e["en"])
        c = rng.choice([f"Arts. {key}-{nxt} of the {t}", f"Articles {key} and {nxt} of the {t}",
                        f"{t}, Arts. {key}-{nxt}"])
        add("en: Arts. N-M / Articles N and M", rng.choice(EN_FRAMES).format(c=c), [_gold(doc), _gold(arts[nxt])], "en")
        e, key, doc, parts = pick()
        t = rng.choice(e["en"])
        add("en: inside quotation marks", rng.choice([f'He wrote: "Article {key} of the {t} applies here."',
                                                     f"The so-called ‘Art. {key} of the {t}’ rule.",
                                                     f"“Under Article {key} of the {t}, the claim fails.”"]),
            [_gold(doc)], "en")
        e, key, doc, parts = pick()
        t = rng.choice(e["en"])
        add("en: footnote", rng.choice([f"The employer must pay.[1]\n[1] Article {key} of the {t}.",
                                        f"The claim fails.¹\n¹ See Art. {key} of the {t} of the PRC.",
                                        f"It is void.[^3]\n[^3]: {t}, Article {key}."]), [_gold(doc)], "en")

    # ---- abbreviations (unambiguous short names of laws in the corpus)
    abbrev = [(a, ts[0]) for a, ts in sorted(shipped_abbreviations().items()) if len(ts) == 1 and ts[0] in corpus]
    for _ in range(PER_FORM):
        a, title = rng.choice(abbrev)
        key = rng.choice(sorted(corpus[title]))
        add("zh: abbreviation (民诉法)", rng.choice(ZH_FRAMES).format(c=f"{a}{_label(key)}"), [_gold(corpus[title][key])],
            "zh")

    # ---- outcomes that are reasons
    for _ in range(PER_FORM // 2):
        e, key, doc, parts = pick()
        p = len(parts) + rng.randint(1, 3)
        add("zh: paragraph the article lacks", rng.choice(ZH_FRAMES).format(c=f"《{_short(e['zh'])}》{_label(key)}第{to_chinese(p)}款"),
            [{"reason": "unknown_paragraph", "paragraphs": len(parts)}], "zh")
        e, key, doc, parts = pick()
        p = len(parts) + rng.randint(1, 3)
        add("en: paragraph the article lacks", rng.choice(EN_FRAMES).format(
            c=f"Article {key}, paragraph {p} of the {rng.choice(e['en'])}"),
            [{"reason": "unknown_paragraph", "paragraphs": len(parts)}], "en")
    locals_ = ["北京市物业管理条例", "上海市消费者权益保护条例", "广东省工资支付条例", "深圳经济特区和谐劳动关系促进条例",
               "浙江省劳动人事争议调解仲裁条例", "江苏省劳动合同条例", "重庆市失业保险条例", "四川省道路交通安全条例",
               "杭州市城市房屋使用安全管理条例", "新疆维吾尔自治区人口与计划生育条例"]
    for i in range(PER_FORM // 2):
        add("zh: local regulation (no corpus)", rng.choice(ZH_FRAMES).format(
            c=f"《{locals_[i % len(locals_)]}》第{to_chinese(rng.randint(1, 60))}条"), [{"reason": "not_held"}], "zh")
    ambiguous = [a for a, ts in shipped_abbreviations().items() if len(ts) > 1]
    for _ in range(PER_FORM // 4):
        add("zh: title that fits several laws", rng.choice(ZH_FRAMES).format(
            c=f"{rng.choice(ambiguous)}第{to_chinese(rng.randint(1, 10))}条"), [{"reason": "ambiguous_law"}], "zh")
    foreign = ["German Civil Code", "Japanese Civil Code", "Companies Act 2006", "Employment Ordinance",
               "Indian Contract Act", "French Civil Code", "Korean Labor Standards Act", "Swiss Code of Obligations"]
    for i in range(PER_FORM // 4):
        add("en: another jurisdiction's law (no corpus)", rng.choice(EN_FRAMES).format(
            c=f"Article {rng.randint(1, 300)} of the {foreign[i % len(foreign)]}"), [{"reason": "not_held"}], "en")
    unknown = ["Labor Dispute Interpretation", "Housing Lease Law", "Minimum Wage Law", "Internet Platform Law",
               "Private Lending Law", "Family Property Law"]
    for i in range(PER_FORM // 4):
        add("en: English title the table lacks", rng.choice(EN_FRAMES).format(
            c=f"Article {rng.randint(1, 60)} of the {unknown[i % len(unknown)]} of the PRC"),
            [{"reason": "unknown_law"}], "en")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/data/citation-forms.jsonl")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = build(args.seed)
    out = Path(args.out)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    print(f"{len(rows)} sentences -> {out}")


if __name__ == "__main__":
    main()
