"""Build the reference text set: SciFact abstracts and claims, VitePress
English and Japanese paragraphs, and hand-written hard cases."""
import glob, json, os, re, sys

data = "/work/shared/data"
out = []

docs = [json.loads(l) for l in open(f"{data}/scifact/corpus.jsonl")]
for d in docs[::35][:150]:
    out.append({"id": "scifact-doc-" + d["_id"], "text": (d["title"] + "\n" + d["text"]).strip()})
qs = [json.loads(l) for l in open(f"{data}/scifact/queries.jsonl")]
for q in qs[::3][:100]:
    out.append({"id": "scifact-q-" + q["_id"], "text": q["text"]})

def paragraphs(lang, n):
    files = sorted(glob.glob(f"{data}/vitepress-docs/{lang}/**/*.md", recursive=True))
    paras = []
    for f in files:
        body = open(f, encoding="utf-8").read()
        for i, p in enumerate(re.split(r"\n\s*\n", body)):
            p = p.strip()
            if len(p) >= 40:
                paras.append((os.path.relpath(f, f"{data}/vitepress-docs"), i, p))
    step = max(1, len(paras) // n)
    return paras[::step][:n]

for lang, n in (("en", 100), ("ja", 100)):
    for f, i, p in paragraphs(lang, n):
        out.append({"id": f"vitepress-{f}#{i}", "text": p})

hard = [
    "Héllo wörld, ÇA VA? naïve café résumé",
    "e\u0301cole vs \u00e9cole: combining acute accent",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｌｅｔｔｅｒｓ　１２３ and ﾊﾝｶｸｶﾀｶﾅ",
    "ligatures ﬁne ﬂow, Roman numerals Ⅻ, circled ① ② ③, ½ and ㎏",
    "emoji 👍🏽 family 👨‍👩‍👧 flags 🇯🇵🇫🇷 and keycap 1️⃣",
    "control\u0000chars\u0007and\u200bzero\u200dwidth\ufeffmarks",
    "tabs\tand\nnewlines\r\nand   many    spaces  ",
    "   leading and trailing spaces   ",
    "literal special tokens [CLS] [SEP] [UNK] [MASK] <s> </s> <unk> <mask> <pad>",
    "İstanbul ΣΊΣΥΦΟΣ Straße ß ǅ ﬀ",
    "Ελληνικά, русский текст, العربية, עברית, हिन्दी, ไทย, 한국어 텍스트",
    "日本語の文章と English words が混ざった text、句読点。「かぎ括弧」と（全角括弧）",
    "半角ｶﾀｶﾅと全角カタカナ、ひらがな、漢字：東京都渋谷区",
    "中文简体和繁體中文混合，還有标点符号！",
    "supercalifragilisticexpialidocious" * 4,
    "a" * 120 + " short",
    "x" * 2000,
    "code: func main() { fmt.Println(\"hi\") } // x := a[i] + b->c && d || !e; $HOME ~/.config @user #tag 100% ^_^",
    "URLs https://example.com/path?q=1&r=2#frag and e-mail someone@example.org",
    "numbers 3.14159 1,000,000 -42 1e-9 0x1F 2024-05-01 12:30:45",
    "🙂",
    "…",
    "  \u3000 全角スペース\u3000で区切る  ",
    "Ǆemal, ǈubljana, ǋina — title-case digraphs",
    "x\u0308\u0301 stacked diacritics a\u0323\u0302",
    "ｇｏｏｇｌｅ　ｃｏｍ　ＴＥＳＴ　！？",
    "\u2028line separator\u2029paragraph separator\u0085next line",
    "mixed\u00a0no-break\u2009thin\u202fnarrow spaces",
]
for i, t in enumerate(hard):
    out.append({"id": f"hard-{i}", "text": t})

json.dump(out, open(sys.argv[1], "w"), ensure_ascii=False, indent=0)
print(len(out), "texts", sum(len(o["text"]) for o in out), "chars", file=sys.stderr)
