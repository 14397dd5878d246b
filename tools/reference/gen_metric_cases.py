#!/usr/bin/env python3
"""Writes packages/core/test/metrics/fixtures/cases.json: the *inputs* of the metric golden tests.

Deterministic (fixed seed, no external data), so re-running it reproduces the committed file
byte for byte. The expected outputs are computed separately by gen_metric_fixtures.py with the
reference packages (rouge-score, nltk, sacrebleu).
"""

import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "packages/core/test/metrics/fixtures/cases.json"

# ---------------------------------------------------------------------------------------------
# Hand-written and published cases: (id, reference, candidate)
# ---------------------------------------------------------------------------------------------
HAND_CASES = [
    # rouge-score README example (score(target, prediction)).
    ("pub-rouge-readme", "The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log."),
    # sacrebleu README example, first reference stream, one segment per case.
    ("pub-sacrebleu-1", "The dog bit the man.", "The dog bit the man."),
    ("pub-sacrebleu-2", "It was not unexpected.", "It wasn't surprising."),
    ("pub-sacrebleu-3", "The man bit him first.", "The man had just bitten him."),
    ("empty-both", "", ""),
    ("empty-reference", "", "The solution was heated to reflux."),
    ("empty-candidate", "The solution was heated to reflux.", ""),
    ("whitespace-only", "   \n\t  \n", "word"),
    ("punctuation-only", "!!! ... ???", "--- ,,, ;;; ***"),
    ("punctuation-vs-text", "?!", "Filter the solid."),
    ("single-token-same", "a", "a"),
    ("single-token-different", "a", "b"),
    ("identical-sentence", "Dissolve 5 g of sodium chloride in water.", "Dissolve 5 g of sodium chloride in water."),
    ("repeated-tokens", "the the the the", "the cat the"),
    ("repeated-tokens-both", "the the the the", "the the"),
    ("repeated-bigrams", "to be or not to be to be", "to be to be to be"),
    ("unicode-accents", "Café crème brûlée à la française, naïve coöperation", "Cafe creme brulee a la francaise, naive cooperation"),
    ("unicode-cjk", "東京は日本の首都です。Tokyo is big.", "Tokyo 東京 is the capital 首都"),
    ("unicode-emoji", "I love 🍕 and 🍣! 😀😀 great", "i love pizza 🍕 great 😀"),
    ("unicode-german-eszett", "Die Straße ist groß und STRASSE", "Die Strasse ist gross und straße"),
    ("unicode-turkish-dotted-i", "İstanbul'da İNNİNG yapıldı; KELVIN \u212a", "istanbul inning yapildi kelvin k"),
    ("unicode-greek-sigma", "ΟΔΥΣΣΕΥΣ και Σοφία", "οδυσσευς sophia"),
    ("numbers-decimals", "Add 3.5 mL of 0.1 M HCl to 1,000 g at 25 °C (pH 7.4).", "Add 3.5 ml of 0.1 M HCl to 1000 g at 25°C, pH 7.4"),
    ("numbers-ranges", "Heat at 80-90 °C for 2-3 h; see pages 10-20 and well-known step 4.", "Heat at 80 - 90 C for 2 to 3 h, see pages 10-20, well known step 4"),
    ("rougelsum-repeated-sentences",
     "The mixture was stirred.\n\nThe mixture was stirred.\nThen it was filtered.\n",
     "The mixture was stirred for an hour.\nIt was filtered.\n\n\nThe solid was dried."),
    ("rougelsum-empty-lines", "\n\n\nfirst line\n\n\n\nsecond line\n\n", "second line\n\nfirst line"),
    ("rougelsum-crlf", "line one\r\nline two\r\nline three", "line one\nline two\nline three"),
    ("rougelsum-punctuation-lines", "...\n!!!\nreal words here\n---", "real words\n---\nhere real"),
    ("rougelsum-same-token-many-sentences", "a b a\nb a b\na a a", "a a\nb b\na b a b"),
    ("rougelsum-blank-line-sentences", "alpha beta\n   \n\t\ngamma", "   \nalpha gamma beta\n "),
    ("stemmer-heavy",
     "The generously conditional hopefulness agreed; dying skies over the news of innings and meeting cried happy feed.",
     "Generous conditions, hopeful agreement: the die sky, news inning, meet, cry, happiness, feeding."),
    ("stemmer-step2",
     "relational electrical controlling vileli radicalli differentli analogousli geologi hopefulli sensibiliti",
     "relate electric control vile radical different analogous geology hopeful sensible"),
    ("stemmer-short-words", "is as us was his has bus gas yes", "i a u wa hi ha bu ga ye"),
    ("stemmer-y-words", "yyyy syzygy toy enjoy enjoyment spy fly try sky skies", "yyy syzygi toi enjoi spied flies tried skied"),
    ("sacrebleu-entities", "He said &quot;yes&quot; &amp; left <skipped> the build-\nup &lt;now&gt; &amp;lt;", 'He said "yes" & left the buildup <now> &lt;'),
    ("sacrebleu-trailing-whitespace", "text with trailing   \n\t", "text with trailing"),
    ("sacrebleu-python-whitespace", "word\u00a0word\u2003x\u0085y\u001cz\ufeffw end", "word word x y z\ufeffw end"),
    ("sacrebleu-case", "The Cat sat.", "the cat SAT."),
    ("sacrebleu-apostrophes-dashes", "It's the children's well-known state-of-the-art method -- really.", "Its the childrens well known state of the art method - really."),
    ("sacrebleu-symbols", "x=(a+b)*c/d; a<b>c; #1 $5 %3 @home ~tilde `tick` {braces} [brackets] \\back ^caret _under |pipe",
     "x = ( a + b ) * c / d ; # 1 $ 5"),
    ("sacrebleu-periods-commas", "Mr. Smith paid 1,000.50 dollars, i.e. a lot... e.g., 3.14,2.71.", "Mr Smith paid 1,000.50 dollars , i.e. a lot . e.g. , 3.14 , 2.71 ."),
    ("chemistry-procedure",
     "Dissolve 3.0 g of 4-aminophenol in 10 mL of water in a 50 mL flask.\n"
     "Add 4.0 mL of acetic anhydride dropwise while stirring.\n"
     "Heat the mixture on a water bath at 85 °C for 15 minutes.\n"
     "Cool the flask in an ice bath until crystals of acetaminophen form.\n"
     "Collect the crude product by vacuum filtration and wash it with cold water.\n"
     "Recrystallize from hot water and dry the crystals before measuring the melting point (169-171 °C).",
     "Add 3 g 4-aminophenol to 10 mL water in a flask.\n"
     "Slowly add acetic anhydride (4 mL) with stirring.\n"
     "Heat at 85 °C in a water bath for about 15 min.\n"
     "Filter the crystals under vacuum, washing with cold water.\n"
     "Cool in ice until acetaminophen crystallizes.\n"
     "Recrystallise the crude paracetamol from hot water; dry it and measure the melting point."),
    ("chemistry-negation", "Do not heat the ether; keep it away from flames.", "Heat the ether; keep it near flames."),
]

# Words that stress the Porter stemmer, plus ordinary and domain words.
STRESS_WORDS = """generously conditional hopefulness agreed dying skies sky news innings meeting cried happy
feed controlling electrical relational vileli radicalli differentli analogousli hopefulli sensibiliti
formaliti digitizer conformabli vietnamization predication operator feudalism decisiveness callousness
sensitiviti triplicate formative formalize electriciti hopeful goodness revival allowance inference
airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou
communism activate angulariti homologous effective bowdlerize probate rate cease controll roll enjoy
spied flies died dies ties lying tying outings cannings howe proceed exceed succeed caresses ponies
plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing
filing geology theology archaeologi generalization oscillators national rational syzygy yyyy""".split()
COMMON_WORDS = """the a an of to in and or not is was were be been it this that with for on at by from
as into over under then than so if when while after before until each all some no more most
solution mixture flask water ethanol acid base salt sodium chloride hydrochloric sulfuric
stir stirred stirring heat heated heating cool cooled cooling filter filtered filtration
wash washed dry dried add added adding dissolve dissolved crystal crystals crystallize
yield product reaction reflux temperature minutes hours hour room dropwise slowly carefully
measure measured weigh weighed sample samples step steps procedure method result results""".split()
EXTRA_TOKENS = """3.5 0.1 1,000 25 °C mL g M HCl pH 7.4 10-20 2-3 (1) [2] {x} "quoted" 'single' &amp; &quot;
<skipped> - -- ... , . ; : ! ? / * + = % $ # @ café naïve Straße İNNİNG 東京 🍕 😀 Ωmega É""".split()
CAPITALIZED = ["The", "Stir", "HEAT", "Filter", "Dry", "Add", "Agreed", "Skies", "News", "Dying"]


def random_text(rng, vocab, length, newline_rate):
    words = []
    for _ in range(length):
        words.append(rng.choice(vocab))
        if rng.random() < newline_rate:
            words.append("\n")
    text = " ".join(words).replace(" \n ", "\n").replace(" \n", "\n").replace("\n ", "\n")
    return text


def perturb(rng, text, vocab):
    words = text.split(" ")
    out = []
    for w in words:
        r = rng.random()
        if r < 0.12:
            continue  # delete
        if r < 0.24:
            out.append(rng.choice(vocab))  # substitute
            continue
        if r < 0.30:
            out.append(w)
            out.append(rng.choice(vocab))  # insert
            continue
        if r < 0.34:
            out.append(w.upper())
            continue
        out.append(w)
    if len(out) > 3 and rng.random() < 0.3:  # move a block
        i = rng.randrange(len(out))
        j = rng.randrange(len(out))
        block = out[i:i + 3]
        del out[i:i + 3]
        out[j:j] = block
    return " ".join(out)


def random_cases(rng, count):
    vocab = STRESS_WORDS * 2 + COMMON_WORDS * 2 + EXTRA_TOKENS + CAPITALIZED
    cases = []
    for k in range(count):
        kind = rng.random()
        length = rng.choice([0, 1, 2, 3] + list(range(4, 31)))
        newline_rate = rng.choice([0.0, 0.0, 0.08, 0.2])
        reference = random_text(rng, vocab, length, newline_rate)
        if kind < 0.7:
            candidate = perturb(rng, reference, vocab)
        elif kind < 0.9:
            candidate = random_text(rng, vocab, rng.randrange(0, 31), newline_rate)
        else:
            candidate = reference if rng.random() < 0.5 else reference.lower()
        if rng.random() < 0.5:
            reference, candidate = candidate, reference
        cases.append({"id": f"random-{k:03d}", "reference": reference, "candidate": candidate})
    return cases


def procedure_sentence(rng):
    verbs = ["Add", "Stir", "Heat", "Cool", "Filter", "Wash", "Dry", "Weigh", "Dissolve", "Measure", "Record", "Transfer"]
    objects = ["the mixture", "the solution", "the crude product", "the flask", "the crystals", "the filtrate",
               "the organic layer", "the aqueous phase", "the sample", "the residue"]
    details = ["for 10 minutes", "at 85 °C", "with cold water", "under vacuum", "dropwise", "slowly",
               "until the solid dissolves", "in an ice bath", "with 5 mL of ethanol", "twice", "carefully",
               "before the next step", "and note the temperature", "using a Büchner funnel", "at room temperature"]
    parts = [rng.choice(verbs), rng.choice(objects)] + rng.sample(details, rng.randrange(1, 4))
    return " ".join(parts) + "."


def long_cases(rng):
    # ~1,100 tokens on many lines (ROUGE-L over the whole text, ROUGE-Lsum over ~120 short sentences).
    ref_lines = [procedure_sentence(rng) for _ in range(120)]
    cand_lines = []
    for line in ref_lines:
        r = rng.random()
        if r < 0.15:
            continue
        if r < 0.45:
            cand_lines.append(procedure_sentence(rng))
        else:
            cand_lines.append(line)
        if rng.random() < 0.05:
            cand_lines.append(rng.choice(cand_lines))
    # ~1,100 tokens each on ONE line: ROUGE-Lsum sees one huge "sentence" pair (more than 2^20
    # LCS cells, so the TypeScript side takes its checkpointed path).
    vocab = COMMON_WORDS + STRESS_WORDS
    single_ref = " ".join(rng.choice(vocab) for _ in range(1100))
    single_cand = perturb(rng, single_ref, vocab)
    return [
        {"id": "long-multiline", "reference": "\n".join(ref_lines), "candidate": "\n".join(cand_lines)},
        {"id": "long-single-line", "reference": single_ref, "candidate": single_cand},
    ]


STEM_BASES = """connect relate condition hope agree generous electric operate digit conform radical differ vile
analog vietnam predic feudal decis callous formal sensit sensib triplic form good reviv allow infer airlin
gyroscop adjust defens irrit replac depend adopt homolog commun activ angular effect bowdler probat rate
ceas control roll happy sky die lie tie fly spy try cry plaster motor sing conflat troubl size hop tan fall
hiss fizz fail file caress pony cat feed meet run swim stir filter dissolv crystal heat cool wash dry
measur weigh acetyl amin phenol synthes react reduc oxid nitrat titrat distil evapor precipit centrifug
analys geo theo archaeo philo bio apolog nation ration institut organ final gener special real materi
industr beaut dut enjoy employ toy syzyg yell yawn eye ski hop plan stop admit equip occur refer prefer""".split()
STEM_SUFFIXES = """ s es ed ing ies ied er ers est ly ness ful fully fulness fulli ation ational ations ative ize
ized izing ization izer ise al ally alli alism ality aliti able ably abli ible bli bility biliti ment
ments ement ent ently entli ence ency enci ance anci ant ism ist ive ively iveness iviti ous ously ousli
ousness ic ical icate iciti logy logi eli ator y tion tional e ee eed""".split(" ")
STEM_EDGE_WORDS = [
    "", "a", "ab", "abc", "Ab", "ABC", "RUNNING", "Caresses", "y", "by", "bye", "yy", "yyy", "yyyy", "yyyyyyy",
    "SKIES", "Dying", "NEWS", "feed", "agreed", "bled", "sing", "onion", "enjoyment", "1234", "3.5", "12ing",
    "a*ded", "x*d", "café", "naïve", "straße", "東京", "a😀😀ing", "😀😀", "hop😀😀ed", "😀ies", "ÉCOLE",
    "KELVIN", "\u212aelvin", "İnning", "İİ", "İ", "ΟΔΥΣΣΕΥΣ", "Σ", "caaed", "caed", "ied", "ies", "eed",
    "ing", "ed", "s", "ss", "sses", "alli", "logi", "bli", "fulli", "ational", "hopeful", "hopefulness",
]


def stem_words(rng, cases):
    words = list(STEM_EDGE_WORDS) + STRESS_WORDS
    combos = [b + s for b in STEM_BASES for s in STEM_SUFFIXES]
    words += rng.sample(combos, 1500)
    for case in cases:
        for text in (case["reference"], case["candidate"]):
            words += [w.strip(".,;:!?()[]{}\"'") for w in text.split()]
    seen = set()
    unique = []
    for w in words:
        if w not in seen:
            seen.add(w)
            unique.append(w)
    return unique


TOKENIZE_13A_EXTRA = [
    "", " ", "\n", "-\n", "a-\nb", "a -\n b", "<skipped>", "a<skipped>b", "&amp;quot;", "&amp;amp;", "&lt;&gt;",
    "no ampersand &quot", "3.5", "3.5.", ".5", "5.", "a.b", "a,b", "1,000", "1,a", "a,1", "..", "...", ",,", "1..2",
    "e.g.,", "U.S.A.", "x-1", "1-x", "1-2-3", "--", "1--2", "'quoted'", "\"double\"", "tab\tsep", "cr\rlf",
    "nbsp\u00a0sep", "nel\u0085sep", "fs\u001csep", "bom\ufeffsep", "ideographic\u3000space", "emoji😀.", "😀,😀",
    "東京.", "x.😀", "a\u2028b", "trailing   ", "   leading", "$5.00", "#hash", "@at", "~tilde", "`tick`",
]


def main():
    rng = random.Random(20250607)
    cases = [{"id": i, "reference": r, "candidate": c} for i, r, c in HAND_CASES]
    cases += long_cases(rng)
    cases += random_cases(rng, 200)
    corpora = [
        {
            "id": "sacrebleu-readme-2refs",
            "hypotheses": ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."],
            "references": [
                ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
                ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
            ],
        },
        {
            "id": "sacrebleu-readme-1ref",
            "hypotheses": ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."],
            "references": [["The dog bit the man.", "It was not unexpected.", "The man bit him first."]],
        },
        {
            "id": "variable-references",
            "hypotheses": ["a b c d e", "the cat sat on the mat", "x"],
            "references": [["a b c d", None, "x y"], ["a b c d e f g", "the cat sat on a mat", None]],
        },
        {
            "id": "single-empty-segment",
            "hypotheses": [""],
            "references": [[""]],
        },
    ]
    sentence_multi_ref = [
        {"id": "multi-ref-closest-tie", "hypothesis": "one two three four", "references": ["one two three", "one two three four five"]},
        {"id": "multi-ref-clip-max", "hypothesis": "the the the cat", "references": ["the cat", "the the dog", "a the"]},
        {"id": "multi-ref-empty-one", "hypothesis": "hello world", "references": ["", "hello there world"]},
    ]
    option_sets = [
        {"smoothMethod": "floor"},
        {"smoothMethod": "floor", "smoothValue": 0.5},
        {"smoothMethod": "add-k"},
        {"smoothMethod": "add-k", "smoothValue": 2},
        {"smoothMethod": "none"},
        {"effectiveOrder": False},
        {"lowercase": True},
        {"tokenize": "none"},
        {"maxNgramOrder": 2},
        {"maxNgramOrder": 6, "smoothMethod": "exp"},
    ]
    option_case_ids = ["pub-rouge-readme", "pub-sacrebleu-2", "empty-candidate", "repeated-tokens",
                       "sacrebleu-case", "numbers-decimals", "single-token-different", "chemistry-negation",
                       "random-000", "random-003"]
    # Sentence BLEU of case `caseId` (hypothesis = its candidate, reference = its reference) with options.
    bleu_option_cases = [{"caseId": cid, "options": opts} for opts in option_sets for cid in option_case_ids]
    data = {
        "note": "Inputs for the metric golden tests; generated by tools/reference/gen_metric_cases.py. "
                "Expected values live in expected.json (tools/reference/gen_metric_fixtures.py).",
        "cases": cases,
        "corpora": corpora,
        "sentenceMultiRef": sentence_multi_ref,
        "bleuOptionCases": bleu_option_cases,
        "tokenize13a": TOKENIZE_13A_EXTRA,
        "stemWords": stem_words(rng, cases),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("{\n")
        items = list(data.items())
        for k, (key, value) in enumerate(items):
            sep = "," if k < len(items) - 1 else ""
            if isinstance(value, list):
                f.write(f"  {json.dumps(key)}: [\n")
                for j, item in enumerate(value):
                    f.write("    " + json.dumps(item, ensure_ascii=True) + ("," if j < len(value) - 1 else "") + "\n")
                f.write(f"  ]{sep}\n")
            else:
                f.write(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=True)}{sep}\n")
        f.write("}\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes, {len(cases)} cases, {len(data['stemWords'])} stem words)")


if __name__ == "__main__":
    main()
