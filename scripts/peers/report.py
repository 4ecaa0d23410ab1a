"""The files scripts/peers.sh prepares and the table it prints.

  report.py beir-chunks CORPUS.jsonl OUT.jsonl   a BEIR corpus as chunk lines (one chunk a document)
  report.py titles CORPUS.jsonl N OUT.jsonl      the titles set: the first N titles as queries
  report.py table WORK                           the table from the JSON each step left in WORK
"""

import json
import math
import os
import sys


def beir_chunks(corpus, out):
    with open(corpus, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as w:
        for line in f:
            if line.strip():
                d = json.loads(line)
                w.write(json.dumps({"id": d["_id"], "title": d.get("title", ""), "text": d.get("text", "")}) + "\n")


def titles(corpus, n, out):
    k = 0
    with open(corpus, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as w:
        for line in f:
            d = json.loads(line) if line.strip() else {}
            t = d.get("title", "").strip()
            if t:
                w.write(json.dumps({"_id": f"title-{d['_id']}", "text": t}) + "\n")
                k += 1
                if k == n:
                    break


def ndcg10(qrels_path, run_path):
    """nDCG@10 of a TREC run against BEIR qrels (query-id corpus-id score,
    with a header line), averaged over the queries the qrels judge."""
    qrels = {}
    with open(qrels_path) as f:
        for i, line in enumerate(f):
            p = line.split()
            if i == 0 and not p[-1].isdigit():
                continue
            qrels.setdefault(p[0], {})[p[1]] = int(p[2])
    run = {}
    with open(run_path) as f:
        for line in f:
            qid, _, docid, rank, _, _ = line.split()
            run.setdefault(qid, []).append((int(rank), docid))
    total = 0.0
    for qid, rels in qrels.items():
        ranked = [d for _, d in sorted(run.get(qid, []))][:10]
        dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked))
        ideal = sorted(rels.values(), reverse=True)[:10]
        idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
        total += dcg / idcg if idcg else 0
    return total / len(qrels)


def load(work, name):
    p = os.path.join(work, name)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        # PISA's library logs to stdout: the step's JSON is its last line.
        return json.loads([l for l in text.splitlines() if l.startswith("{")][-1])


def table(work):
    exp = load(work, "export.json")
    mb = exp["mb"]
    cols = {}  # engine -> {row: text}
    s_idx, s_tit, s_ev = load(work, "sagasu-scifact.json"), load(work, "sagasu-titles.json"), load(work, "sagasu-eval.json")
    if s_idx:
        st = s_idx.get("storeLatencyMs") or s_idx["latencyMs"]
        tt = (s_tit or {}).get("storeLatencyMs") or {}
        cols["sagasu"] = {
            "mbs": f"{mb / s_idx['indexSeconds']:.1f}",
            "cpu": f"{100 * s_idx.get('indexCpuSeconds', 0) / mb:.1f}",
            "size": f"{s_idx['dbBytes'] / 1e6:.0f}",
            "sci": f"{st['p50']:.2f} / {st['p99']:.2f}",
            "tit": f"{tt.get('p50', 0):.2f} / {tt.get('p99', 0):.2f}" if tt else "",
            "rss": f"{(s_tit or s_idx).get('serveRssMb', 0):.0f}",
            "ndcg": f"{s_ev['ndcgAt10']:.4f}" if s_ev else "",
        }
    qrels = os.path.join(work, "qrels.tsv")
    for peer in ("tantivy", "lucene", "pisa"):
        ix, sv = load(work, f"{peer}-index.json"), load(work, f"{peer}-serve.json")
        if not ix or not sv:
            continue
        sets = sv["sets"]
        sc = load(work, f"{peer}-scifact-serve.json")
        run = os.path.join(work, f"{peer}-scifact.run")
        cols[peer] = {
            "mbs": f"{mb / ix['seconds']:.1f}",
            "cpu": f"{100 * ix['cpuSeconds'] / mb:.1f}",
            "size": f"{ix['bytes'] / 1e6:.0f}",
            "sci": f"{sets['scifact']['p50']:.2f} / {sets['scifact']['p99']:.2f}",
            "tit": f"{sets['titles']['p50']:.2f} / {sets['titles']['p99']:.2f}",
            "rss": f"{sv['rssMb']:.0f}",
            "ndcg": f"{ndcg10(qrels, run):.4f}" if sc and os.path.exists(run) else "",
        }
    rows = [
        ("mbs", "indexing MB/s (wall)"),
        ("cpu", "indexing CPU s per 100 MB"),
        ("size", f"index size MB ({mb:.0f} MB of text)"),
        ("sci", "query p50 / p99 ms, IDs + scores (SciFact set)"),
        ("tit", "query p50 / p99 ms (titles set)"),
        ("rss", "RSS while serving MB"),
        ("ndcg", "SciFact nDCG@10 (native analysis)"),
    ]
    names = list(cols)
    print(f"{exp['chunks']:,} chunks ({mb:.1f} MB of text), k = 10, one client, warm")
    with open(os.path.join(work, "load.txt")) as f:
        print("load average: " + " -> ".join(l.strip() for l in f if l.strip()))
    print()
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for key, label in rows:
        print(f"| {label} | " + " | ".join(cols[n].get(key, "") for n in names) + " |")
    if s_idx:
        print()
        print(f"sagasu engine.Search (hits with text) p50 / p99: {s_idx['latencyMs']['p50']:.2f} / {s_idx['latencyMs']['p99']:.2f} ms (SciFact set)")
        if s_idx.get("coldLatencyMs"):
            c, o = s_idx["coldLatencyMs"], s_idx["oneShotMs"]
            print(f"sagasu cold (as sagasu query) p50 / p99: {c['p50']:.2f} / {c['p99']:.2f} ms; open + query p50 {o['p50']:.2f} ms")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "beir-chunks" and len(sys.argv) == 4:
        beir_chunks(sys.argv[2], sys.argv[3])
    elif cmd == "titles" and len(sys.argv) == 5:
        titles(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "table" and len(sys.argv) == 3:
        table(sys.argv[2])
    else:
        sys.exit(__doc__)
