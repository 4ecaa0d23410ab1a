import gzip, json, sys, tokenizers, sentencepiece as spm
texts = json.load(open("ref/texts.json"))
tok = tokenizers.Tokenizer.from_file("ref/unigram-tokenizer.json")
sp = spm.SentencePieceProcessor(model_file="spm.model")
same = 0
with gzip.open("ref/unigram-ids.tsv.gz", "wt") as f:
    for t in texts:
        ids = tok.encode(t["text"]).ids
        f.write(t["id"] + "\t" + " ".join(map(str, ids)) + "\n")
        # SentencePiece itself, shifted to the XLM-R ids, for comparison only
        s = [0] + [i + 1 if i > 2 else 3 for i in sp.encode(t["text"])] + [2]
        same += s == ids
print("tokenizers", tokenizers.__version__, "sentencepiece agrees on", same, "of", len(texts), file=sys.stderr)
