import glob, json, sentencepiece as spm
lines = []
for f in sorted(glob.glob("/work/shared/data/vitepress-docs/**/*.md", recursive=True)):
    lines += [l for l in open(f, encoding="utf-8").read().splitlines() if l.strip()]
for i, l in enumerate(open("/work/shared/data/scifact/corpus.jsonl")):
    if i % 2 == 0:
        d = json.loads(l); lines.append(d["title"]); lines.append(d["text"])
open("spm-corpus.txt", "w").write("\n".join(lines))
spm.SentencePieceTrainer.train(input="spm-corpus.txt", model_prefix="spm", vocab_size=8000, model_type="unigram",
    character_coverage=0.9995, normalization_rule_name="nmt_nfkc", input_sentence_size=200000, shuffle_input_sentence=False,
    num_threads=2)
