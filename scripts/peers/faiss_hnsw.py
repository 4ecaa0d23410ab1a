"""FAISS's HNSW over a sagasu vector file, measured as `sagasu bench
--vectors` measures its own graph: build time (wall and CPU), recall@k
against the exact scan, single-query latency (p50/p99, one thread) at each
search list length, and peak RSS. Called by scripts/faiss-hnsw.sh.

  python faiss_hnsw.py FILE [--m 32] [--efc 100] [--ef 128,256,405] [--threads 2] [--k 10]

Rows are scaled to unit length and searched by inner product, as sagasu's
vector index searches cosine similarity. Prints one JSON object.
"""

import argparse
import json
import os
import resource
import time

import faiss
import numpy as np

HEADER = 32
MAGIC = b"SGSUVEC1"


def read_vector_file(path):
    with open(path, "rb") as f:
        h = f.read(HEADER)
    if h[:8] != MAGIC:
        raise SystemExit(f"{path} is not a sagasu vector file (make one with sagasu bench --export-vectors)")
    dim = int.from_bytes(h[8:12], "little")
    rows = int.from_bytes(h[16:24], "little")
    queries = int.from_bytes(h[24:32], "little")
    data = np.fromfile(path, dtype="<f4", offset=HEADER)
    if data.size != (rows + queries) * dim:
        raise SystemExit(f"{path}: header says {rows}+{queries} vectors of {dim}, the file holds {data.size} floats")
    data = data.reshape(rows + queries, dim)
    return np.ascontiguousarray(data[:rows]), np.ascontiguousarray(data[rows:])


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def percentile(ms, p):
    s = sorted(ms)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--m", type=int, default=32)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--ef", default="128,256,405")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--k", type=int, default=10)
    a = ap.parse_args()

    rows, queries = read_vector_file(a.file)
    faiss.normalize_L2(rows)
    faiss.normalize_L2(queries)
    n, dim = rows.shape
    k = a.k

    faiss.omp_set_num_threads(a.threads)
    exact = faiss.IndexFlatIP(dim)
    exact.add(rows)
    _, truth = exact.search(queries, k)
    del exact

    index = faiss.IndexHNSWFlat(dim, a.m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = a.efc
    t0, c0 = time.perf_counter(), cpu()
    index.add(rows)
    build_wall, build_cpu = time.perf_counter() - t0, cpu() - c0

    faiss.omp_set_num_threads(1)  # one client, one query at a time
    out = {"engine": f"faiss {faiss.__version__} IndexHNSWFlat", "vectors": n, "dim": dim, "queries": len(queries),
           "k": k, "m": a.m, "efConstruction": a.efc, "threads": a.threads,
           "buildSeconds": round(build_wall, 1), "buildCpuSeconds": round(build_cpu, 1), "ef": []}
    for ef in [int(x) for x in a.ef.split(",") if x]:
        index.hnsw.efSearch = ef
        for q in queries[:20]:  # untimed, as the bench warms up
            index.search(q.reshape(1, -1), k)
        ms, found = [], []
        for q in queries:
            t = time.perf_counter()
            _, ids = index.search(q.reshape(1, -1), k)
            ms.append((time.perf_counter() - t) * 1000)
            found.append(ids[0])
        hit = sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth))
        out["ef"].append({"ef": ef, "recallAtK": round(hit / (len(queries) * k), 4),
                          "p50Ms": round(percentile(ms, 50), 3), "p99Ms": round(percentile(ms, 99), 3)})
    out["peakRssMb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
