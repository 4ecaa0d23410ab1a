"""PISA (PyPI pyterrier-pisa 0.4.9) as a peer of scripts/peers.sh: its
defaults (Porter2 stemming, the Terrier stopword list, block_simdbp
postings, BM25 with k1 0.9 and b 0.4, block-max WAND), two indexing
threads. PISA keeps no text. Each query is timed through the extension's
retrieve call on one query, without the pandas frame PyTerrier wraps it in.
Commands and output: see common.py."""

import numpy as np
import pyterrier_pisa
from pyterrier_pisa import _pisathon

import common


def index(chunks, out):
    def add_all(ids, texts):
        ix = pyterrier_pisa.PisaIndex(out, text_field="text", threads=2, overwrite=True)
        ix.index({"docno": i, "text": t} for i, t in zip(ids, texts))
        ix.bm25(num_results=common.K)  # the block-max index queries read, built on first use

    common.time_index(add_all, chunks, out)


def serve(d, argv):
    retr = pyterrier_pisa.PisaIndex(d).bm25(num_results=common.K)
    n = common.K
    qidx = np.empty(n, dtype=np.int32)
    docnos = np.empty(n, dtype=object)
    ranks = np.empty(n, dtype=np.int32)
    scores = np.empty(n, dtype=np.float32)

    def search(q):
        size = _pisathon.retrieve(retr._ctxt, retr.query_algorithm.value, [(0, common.plain(q))],
                                  k=n, threads=1, query_weighted=0, pretokenised=False,
                                  result_qidxs=qidx, result_docnos=docnos, result_ranks=ranks, result_scores=scores)
        return list(zip(docnos[:size], scores[:size]))

    common.time_serve(search, argv)


if __name__ == "__main__":
    common.main(index, serve)
