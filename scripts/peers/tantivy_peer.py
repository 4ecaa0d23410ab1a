"""tantivy (PyPI tantivy 0.27.0) as a peer of scripts/peers.sh: one stored
text field with tantivy's English stemming tokenizer (en_stem), BM25 with
its defaults, two indexing threads, queries through its query parser over
the query's words. Commands and output: see common.py."""

import os

import tantivy

import common


def index(chunks, out):
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("text", stored=True, tokenizer_name="en_stem")
    os.makedirs(out, exist_ok=True)
    ix = tantivy.Index(sb.build(), path=out)

    def add_all(ids, texts):
        w = ix.writer(num_threads=2)
        for i, t in zip(ids, texts):
            w.add_document(tantivy.Document(id=i, text=t))
        w.commit()
        w.wait_merging_threads()

    common.time_index(add_all, chunks, out)


def serve(d, argv):
    ix = tantivy.Index.open(d)
    ix.reload()
    s = ix.searcher()

    def search(q):
        return [(addr, score) for score, addr in s.search(ix.parse_query(common.plain(q), ["text"]), common.K).hits]

    common.time_serve(search, argv, docid=lambda addr: s.doc(addr)["id"][0])


if __name__ == "__main__":
    common.main(index, serve)
