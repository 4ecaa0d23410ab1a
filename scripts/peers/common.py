"""What the Python peers of scripts/peers.sh share: reading the chunks and
query files sagasu wrote, timing, resident memory, and the JSON each step
prints on stdout (one object) for table.py.

A peer program is called as
  PEER index CHUNKS.jsonl DIR            -> {"seconds", "cpuSeconds", "chunks", "bytes"}
  PEER serve DIR NAME=QUERIES.jsonl ... [--run FILE]
                                         -> {"sets": {NAME: {"p50", "p99", "p50Second", "p99Second", "queries"}}, "rssMb"}
with --run, the top 10 of each query of the first set are written as TREC
run lines (qid Q0 docid rank score tag), for nDCG@10 on SciFact.
"""

import json
import os
import re
import resource
import sys
import time

K = 10
WARM = 20  # untimed queries before the timed passes, as sagasu bench does


def read_chunks(path):
    """Returns (ids, texts): each chunk's id and the text a peer indexes,
    its title, heading path and text on lines of their own."""
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            c = json.loads(line)
            parts = [c.get("title", ""), c.get("heading", ""), c["text"]]
            ids.append(c["id"])
            texts.append("\n".join(p for p in parts if p))
    return ids, texts


def read_queries(path):
    """Returns [(id, text)] of a BEIR queries.jsonl."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                out.append((str(q["_id"]), q["text"]))
    return out


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def plain(q):
    """The query's words alone: no query-parser syntax (quotes, colons,
    parentheses, operators) reaches a parser."""
    return _PUNCT.sub(" ", q).lower()


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0


def percentile(ms, p):
    s = sorted(ms)
    if not s:
        return 0.0
    i = min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[i]


def dir_bytes(d):
    n = 0
    for root, _, files in os.walk(d):
        for f in files:
            n += os.path.getsize(os.path.join(root, f))
    return n


def time_index(add_all, chunks_path, out_dir):
    """Reads the chunks, then times add_all(ids, texts) (which indexes and
    commits them into out_dir) in wall and CPU time, and prints the index
    step's JSON."""
    ids, texts = read_chunks(chunks_path)
    t0, c0 = time.perf_counter(), cpu_seconds()
    add_all(ids, texts)
    secs, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    print(json.dumps({"seconds": secs, "cpuSeconds": cpu, "chunks": len(ids),
                      "bytes": dir_bytes(out_dir)}))


def time_serve(search, argv, docid=lambda h: h):
    """Times search(text) -> [(hit, score)] over each NAME=FILE query set
    in argv (two passes after WARM untimed queries) and prints the serve
    step's JSON; --run FILE writes the first set's results as a TREC run,
    naming each hit by docid(hit) outside the timed part (an engine returns
    its internal IDs and scores, as sagasu's store does)."""
    run_path = None
    sets = []
    i = 0
    while i < len(argv):
        if argv[i] == "--run":
            run_path = argv[i + 1]
            i += 2
            continue
        name, path = argv[i].split("=", 1)
        sets.append((name, read_queries(path)))
        i += 1
    out = {}
    run_lines = []
    for n, (name, qs) in enumerate(sets):
        for _, q in qs[:WARM]:
            search(q)
        passes = []
        for _ in range(2):
            lat = []
            for qid, q in qs:
                t0 = time.perf_counter()
                hits = search(q)
                lat.append((time.perf_counter() - t0) * 1e3)
                if n == 0 and run_path and not passes:
                    for rank, (hit, score) in enumerate(hits[:K], 1):
                        run_lines.append(f"{qid} Q0 {docid(hit)} {rank} {score} peer\n")
            passes.append(lat)
        out[name] = {"queries": len(qs),
                     "p50": percentile(passes[0], 50), "p99": percentile(passes[0], 99),
                     "p50Second": percentile(passes[1], 50), "p99Second": percentile(passes[1], 99)}
    if run_path:
        with open(run_path, "w") as f:
            f.writelines(run_lines)
    print(json.dumps({"sets": out, "rssMb": rss_mb()}))


def main(index, serve):
    """Dispatches a peer's command line to index(chunks, dir) or
    serve(dir, rest)."""
    if len(sys.argv) >= 4 and sys.argv[1] == "index":
        index(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(f"usage: {sys.argv[0]} index CHUNKS.jsonl DIR | serve DIR NAME=QUERIES.jsonl... [--run FILE]")
