"""Reference token ids and embeddings of all-MiniLM-L6-v2 for ref/texts.json."""
import gzip, json, sys
import numpy as np, torch, tokenizers, transformers, sentence_transformers
from sentence_transformers import SentenceTransformer

folder, outdir = sys.argv[1], sys.argv[2]
texts = json.load(open(f"{outdir}/texts.json"))
torch.set_num_threads(2)
model = SentenceTransformer(folder, device="cpu")
print("max_seq_length", model.max_seq_length, file=sys.stderr)

# Token ids as sentence-transformers feeds them to the model (truncated to max_seq_length).
feats = model.tokenize([t["text"] for t in texts])
mask = feats["attention_mask"]
with gzip.open(f"{outdir}/minilm-ids.tsv.gz", "wt") as f:
    for t, ids, m in zip(texts, feats["input_ids"], mask):
        n = int(m.sum())
        f.write(t["id"] + "\t" + " ".join(str(int(i)) for i in ids[:n]) + "\n")

# The same tokenizer.json without truncation, through the tokenizers library alone.
tok = tokenizers.Tokenizer.from_file(f"{folder}/tokenizer.json")
tok.no_truncation(); tok.no_padding()
with gzip.open(f"{outdir}/minilm-ids-full.tsv.gz", "wt") as f:
    for t in texts:
        f.write(t["id"] + "\t" + " ".join(map(str, tok.encode(t["text"]).ids)) + "\n")

vecs = model.encode([t["text"] for t in texts], batch_size=16, convert_to_numpy=True, normalize_embeddings=True)
vecs.astype("<f4").tofile(f"{outdir}/minilm-vectors.f32")
print(vecs.shape, "torch", torch.__version__, "sentence-transformers", sentence_transformers.__version__,
      "transformers", transformers.__version__, "tokenizers", tokenizers.__version__, file=sys.stderr)
