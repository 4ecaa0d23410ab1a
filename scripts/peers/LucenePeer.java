// Lucene 9.12.3 as a peer of scripts/peers.sh: one stored text field
// analysed with EnglishAnalyzer (stopwords, Porter stemming), BM25 with its
// defaults, documents added from two threads, merged to one segment;
// queries through the classic query parser over the query's words. The
// commands and the JSON they print are those of common.py:
//
//   java LucenePeer index CHUNKS.jsonl DIR
//   java LucenePeer serve DIR NAME=QUERIES.jsonl ... [--run FILE]
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.FSDirectory;

public class LucenePeer {
  static final int K = 10, WARM = 20;

  public static void main(String[] args) throws Exception {
    if (args.length >= 3 && args[0].equals("index")) {
      index(Paths.get(args[1]), Paths.get(args[2]));
    } else if (args.length >= 3 && args[0].equals("serve")) {
      serve(Paths.get(args[1]), Arrays.copyOfRange(args, 2, args.length));
    } else {
      System.err.println("usage: LucenePeer index CHUNKS.jsonl DIR | serve DIR NAME=QUERIES.jsonl... [--run FILE]");
      System.exit(2);
    }
  }

  static void index(Path chunks, Path out) throws Exception {
    List<String> ids = new ArrayList<>(), texts = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(chunks, StandardCharsets.UTF_8)) {
      for (String line; (line = r.readLine()) != null; ) {
        if (line.isBlank()) continue;
        Map<String, String> c = flatJSON(line);
        StringBuilder t = new StringBuilder();
        for (String k : new String[] {"title", "heading", "text"}) {
          String v = c.getOrDefault(k, "");
          if (!v.isEmpty()) {
            if (t.length() > 0) t.append('\n');
            t.append(v);
          }
        }
        ids.add(c.get("id"));
        texts.add(t.toString());
      }
    }
    long t0 = System.nanoTime(), c0 = cpuNanos();
    try (FSDirectory dir = FSDirectory.open(out);
        IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(new EnglishAnalyzer()))) {
      AtomicInteger next = new AtomicInteger();
      Thread[] threads = new Thread[2];
      IOException[] failed = new IOException[1];
      for (int i = 0; i < threads.length; i++) {
        threads[i] = new Thread(() -> {
          try {
            for (int j; (j = next.getAndIncrement()) < ids.size(); ) {
              Document d = new Document();
              d.add(new StringField("id", ids.get(j), Field.Store.YES));
              d.add(new TextField("text", texts.get(j), Field.Store.YES));
              w.addDocument(d);
            }
          } catch (IOException e) {
            failed[0] = e;
          }
        });
        threads[i].start();
      }
      for (Thread t : threads) t.join();
      if (failed[0] != null) throw failed[0];
      w.forceMerge(1);
      w.commit();
    }
    double secs = (System.nanoTime() - t0) / 1e9, cpu = (cpuNanos() - c0) / 1e9;
    System.out.printf("{\"seconds\": %f, \"cpuSeconds\": %f, \"chunks\": %d, \"bytes\": %d}%n", secs, cpu, ids.size(), dirBytes(out));
  }

  static void serve(Path d, String[] args) throws Exception {
    String runPath = null;
    List<String> names = new ArrayList<>();
    List<List<String[]>> sets = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--run")) {
        runPath = args[++i];
        continue;
      }
      int eq = args[i].indexOf('=');
      names.add(args[i].substring(0, eq));
      List<String[]> qs = new ArrayList<>();
      for (String line : Files.readAllLines(Paths.get(args[i].substring(eq + 1)), StandardCharsets.UTF_8)) {
        if (line.isBlank()) continue;
        Map<String, String> q = flatJSON(line);
        qs.add(new String[] {q.get("_id"), q.get("text")});
      }
      sets.add(qs);
    }
    try (FSDirectory dir = FSDirectory.open(d); DirectoryReader reader = DirectoryReader.open(dir)) {
      IndexSearcher s = new IndexSearcher(reader);
      QueryParser parser = new QueryParser("text", new EnglishAnalyzer());
      StringBuilder out = new StringBuilder("{\"sets\": {");
      StringBuilder run = new StringBuilder();
      for (int n = 0; n < sets.size(); n++) {
        List<String[]> qs = sets.get(n);
        for (int i = 0; i < Math.min(WARM, qs.size()); i++) search(s, parser, qs.get(i)[1]);
        double[][] passes = new double[2][qs.size()];
        for (int p = 0; p < 2; p++) {
          for (int i = 0; i < qs.size(); i++) {
            long t0 = System.nanoTime();
            TopDocs top = search(s, parser, qs.get(i)[1]);
            passes[p][i] = (System.nanoTime() - t0) / 1e6;
            if (n == 0 && p == 0 && runPath != null) {
              int rank = 1;
              for (ScoreDoc sd : top.scoreDocs) {
                String id = s.storedFields().document(sd.doc).get("id");
                run.append(qs.get(i)[0]).append(" Q0 ").append(id).append(' ').append(rank++).append(' ').append(sd.score).append(" lucene\n");
              }
            }
          }
        }
        if (n > 0) out.append(", ");
        out.append(String.format("\"%s\": {\"queries\": %d, \"p50\": %f, \"p99\": %f, \"p50Second\": %f, \"p99Second\": %f}",
            names.get(n), qs.size(), pct(passes[0], 50), pct(passes[0], 99), pct(passes[1], 50), pct(passes[1], 99)));
      }
      out.append(String.format("}, \"rssMb\": %f}", rssMB()));
      if (runPath != null) Files.writeString(Paths.get(runPath), run.toString());
      System.out.println(out);
    }
  }

  static TopDocs search(IndexSearcher s, QueryParser parser, String q) throws Exception {
    String plain = q.replaceAll("[^\\p{L}\\p{N}_\\s]", " ").toLowerCase();
    if (plain.isBlank()) return new TopDocs(null, new ScoreDoc[0]);
    return s.search(parser.parse(plain), K);
  }

  // pct is common.py's percentile: the value at rank round(p/100*n + 0.5).
  static double pct(double[] ms, double p) {
    double[] s = ms.clone();
    Arrays.sort(s);
    if (s.length == 0) return 0;
    int i = (int) Math.min(s.length - 1, Math.max(0, Math.round(p / 100 * s.length + 0.5) - 1));
    return s[i];
  }

  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  static double rssMB() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.split("\\s+")[1]) * 1024 / 1e6;
    }
    return 0;
  }

  static long dirBytes(Path d) throws IOException {
    try (Stream<Path> files = Files.walk(d)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  // flatJSON reads one JSON object of string (or number) values, the only
  // shape the chunk and query files have.
  static Map<String, String> flatJSON(String s) {
    Map<String, String> m = new LinkedHashMap<>();
    int[] pos = {s.indexOf('{') + 1};
    while (true) {
      skipSpace(s, pos);
      if (pos[0] >= s.length() || s.charAt(pos[0]) == '}') return m;
      String key = string(s, pos);
      skipSpace(s, pos);
      pos[0]++; // ':'
      skipSpace(s, pos);
      String val;
      if (s.charAt(pos[0]) == '"') {
        val = string(s, pos);
      } else {
        int start = pos[0];
        while (",} \t".indexOf(s.charAt(pos[0])) < 0) pos[0]++;
        val = s.substring(start, pos[0]);
      }
      m.put(key, val);
      skipSpace(s, pos);
      if (s.charAt(pos[0]) == ',') pos[0]++;
    }
  }

  static void skipSpace(String s, int[] pos) {
    while (pos[0] < s.length() && Character.isWhitespace(s.charAt(pos[0]))) pos[0]++;
  }

  static final Map<Character, Character> ESCAPES = new HashMap<>(Map.of('"', '"', '\\', '\\', '/', '/', 'b', '\b', 'f', '\f', 'n', '\n', 'r', '\r', 't', '\t'));

  static String string(String s, int[] pos) {
    StringBuilder b = new StringBuilder();
    int i = pos[0] + 1; // past the opening quote
    for (char c; (c = s.charAt(i)) != '"'; i++) {
      if (c != '\\') {
        b.append(c);
        continue;
      }
      char e = s.charAt(++i);
      if (e == 'u') {
        b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
        i += 4;
      } else {
        b.append(ESCAPES.get(e));
      }
    }
    pos[0] = i + 1;
    return b.toString();
  }
}
