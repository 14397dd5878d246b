#!/usr/bin/env python3
"""Computes the expected metric values for packages/core/test/metrics with the reference packages.

Reads  packages/core/test/metrics/fixtures/cases.json   (inputs, see gen_metric_cases.py)
Writes packages/core/test/metrics/fixtures/expected.json (full-precision outputs)

Needs rouge_score (source on PYTHONPATH, see README.md), nltk and sacrebleu. Python floats are
written with repr(), which JSON.parse reads back to the identical double.
"""

import json
import platform
import re
import sys
from pathlib import Path

import nltk
import sacrebleu
from nltk.stem.porter import PorterStemmer
from rouge_score import rouge_scorer, tokenize as rouge_tokenize
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "packages/core/test/metrics/fixtures"
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
# Cases whose token lists and 13a tokenizations are stored too (random/long ones are covered
# through the scores, and storing their tokens would bloat the fixture).
TOKEN_DETAIL_PREFIXES = ("pub-", "empty-", "whitespace-", "punctuation-", "single-", "identical-", "repeated-",
                         "unicode-", "numbers-", "rougelsum-", "stemmer-", "sacrebleu-", "chemistry-")

SNAKE = {"smoothMethod": "smooth_method", "smoothValue": "smooth_value", "effectiveOrder": "effective_order",
         "lowercase": "lowercase", "maxNgramOrder": "max_ngram_order", "tokenize": "tokenize"}


def rouge(scorer, reference, candidate):
    """[p, r, f] of rouge1, rouge2, rougeL, rougeLsum, flattened to 12 numbers (keeps the file small)."""
    scores = scorer.score(reference, candidate)  # rouge-score order: score(target, prediction)
    return [x for t in ROUGE_TYPES for x in (scores[t].precision, scores[t].recall, scores[t].fmeasure)]


def bleu_dict(score, with_precisions=True):
    result = {"score": score.score, "counts": list(score.counts), "totals": list(score.totals),
              "precisions": list(score.precisions), "bp": score.bp, "sysLen": score.sys_len, "refLen": score.ref_len}
    if not with_precisions:
        del result["precisions"]
    return result


def jaccard(stemmer, a, b):
    set_a = set(rouge_tokenize.tokenize(a, stemmer))
    set_b = set(rouge_tokenize.tokenize(b, stemmer))
    if not set_a and not set_b:
        return 1.0
    return len(set_a & set_b) / len(set_a | set_b)


def main():
    cases_doc = json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8"))
    plain = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=False)
    stemmed = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=True)
    stemmer = PorterStemmer()  # what rouge-score's DefaultTokenizer(use_stemmer=True) builds
    tok13a = Tokenizer13a()
    sentence_bleu = BLEU(effective_order=True)  # == sacrebleu.sentence_bleu defaults

    cases = []
    for case in cases_doc["cases"]:
        ref, cand = case["reference"], case["candidate"]
        entry = {
            "id": case["id"],
            "rouge": {"plain": rouge(plain, ref, cand), "stemmed": rouge(stemmed, ref, cand)},
            "jaccard": {"plain": jaccard(None, ref, cand), "stemmed": jaccard(stemmer, ref, cand)},
            # precisions are left out here to keep the file small (they are checked in the corpus,
            # multi-reference and option cases).
            "sentenceBleu": bleu_dict(sacrebleu.sentence_bleu(cand, [ref]), with_precisions=False),
        }
        assert entry["sentenceBleu"] == bleu_dict(sentence_bleu.sentence_score(cand, [ref]), with_precisions=False)
        if case["id"].startswith(TOKEN_DETAIL_PREFIXES):
            entry["tokens"] = {
                "reference": rouge_tokenize.tokenize(ref, None),
                "candidate": rouge_tokenize.tokenize(cand, None),
                "referenceStemmed": rouge_tokenize.tokenize(ref, stemmer),
                "candidateStemmed": rouge_tokenize.tokenize(cand, stemmer),
            }
            entry["tokenize13a"] = {"reference": tok13a(ref), "candidate": tok13a(cand)}
        cases.append(entry)

    all_cases = cases_doc["cases"]
    corpora = []
    for corpus in cases_doc["corpora"]:
        corpora.append({"id": corpus["id"],
                        "bleu": bleu_dict(sacrebleu.corpus_bleu(corpus["hypotheses"], corpus["references"]))})
    corpora.append({"id": "all-cases", "bleu": bleu_dict(sacrebleu.corpus_bleu(
        [c["candidate"] for c in all_cases], [[c["reference"] for c in all_cases]]))})

    multi = [{"id": m["id"], "bleu": bleu_dict(sacrebleu.sentence_bleu(m["hypothesis"], m["references"]))}
             for m in cases_doc["sentenceMultiRef"]]

    by_id = {c["id"]: c for c in all_cases}
    option_cases = []
    for oc in cases_doc["bleuOptionCases"]:
        kwargs = {"effective_order": True}
        kwargs.update({SNAKE[k]: v for k, v in oc["options"].items()})
        case = by_id[oc["caseId"]]
        option_cases.append(bleu_dict(BLEU(**kwargs).sentence_score(case["candidate"], [case["reference"]])))

    lowercase_to_ascii = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or chr(cp).isascii():
            continue
        lowered = re.sub(r"[^a-z0-9]+", " ", chr(cp).lower())
        if lowered.strip():
            lowercase_to_ascii.append([cp, lowered])

    expected = {
        "generatedWith": {
            "python": platform.python_version(),
            "unicode": __import__("unicodedata").unidata_version,
            "nltk": nltk.__version__,
            "sacrebleu": sacrebleu.__version__,
            "rouge_score": "google-research/google-research rouge/ (rouge_scorer.py @61ce9f0c, tokenize.py @7ce52c05, "
                           "tokenizers.py @30adf0ec, scoring.py fmeasure)",
        },
        "cases": cases,
        "corpora": corpora,
        "sentenceMultiRef": multi,
        "bleuOptionCases": option_cases,
        "tokenize13a": [tok13a(s) for s in cases_doc["tokenize13a"]],
        "stems": [stemmer.stem(w) for w in cases_doc["stemWords"]],
        "pythonWhitespace": [cp for cp in range(0x110000) if chr(cp).isspace()],
        "lowercaseToAscii": lowercase_to_ascii,
    }
    out = FIXTURES / "expected.json"
    with open(out, "w", encoding="utf-8") as f:
        f.write("{\n")
        items = list(expected.items())
        for k, (key, value) in enumerate(items):
            sep = "," if k < len(items) - 1 else ""
            if isinstance(value, list) and value and isinstance(value[0], dict):
                f.write(f"  {json.dumps(key)}: [\n")
                for j, item in enumerate(value):
                    f.write("    " + json.dumps(item) + ("," if j < len(value) - 1 else "") + "\n")
                f.write(f"  ]{sep}\n")
            else:
                f.write(f"  {json.dumps(key)}: {json.dumps(value)}{sep}\n")
        f.write("}\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
