// Reads {"pairs": [{"a": text, "b": text, "language": "python"}], "tokens": [text],
// "corpora": [{"files": [{"path": p, "text": t}], "maxFingerprintPercentage": f or null,
// "ignore": text or null}]} on stdin; prints {"similarities": [...], "fragments": [[...]],
// "tokens": [[...]], "corpora": [[{"left", "right", "similarity", "fixed", "fragments"}]]}:
// what Dolos (default options) says of each pair, its token stream of each text, and every
// pair of each corpus analysed at once with the options given. "fixed" is the similarity
// with Dolos' upstream fix of Pair (rightIgnored from the right entry; the published
// dolos-core 1.2.1 takes the left one's twice), from the same pair's own fields.
import { Dolos, File, LanguagePicker } from "@dodona/dolos-lib";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = { similarities: [], fragments: [], tokens: [] };
for (const pair of request.pairs || []) {
  const language = pair.language || "python";
  const ext = language === "r" ? "R" : "py";
  const dolos = new Dolos({ language });
  const report = await dolos.analyze([new File(`a.${ext}`, pair.a), new File(`b.${ext}`, pair.b)]);
  const [only] = report.allPairs();
  out.similarities.push(only.similarity);
  out.fragments.push(only.buildFragments().map(f => ({
    a: [f.leftSelection.startRow + 1, f.leftSelection.endRow + 1],
    b: [f.rightSelection.startRow + 1, f.rightSelection.endRow + 1],
  })));
}
out.corpora = [];
for (const corpus of request.corpora || []) {
  const options = { language: corpus.language || "python" };
  if (corpus.maxFingerprintPercentage != null) {
    options.maxFingerprintPercentage = corpus.maxFingerprintPercentage;
  }
  const dolos = new Dolos(options);
  const files = corpus.files.map(f => new File(f.path, f.text));
  const ignored = corpus.ignore != null ? new File("template.py", corpus.ignore) : undefined;
  const report = await dolos.analyze(files, "corpus", ignored);
  out.corpora.push(report.allPairs().map(pair => {
    const denominator = pair.leftTotal + pair.rightTotal
      - pair.leftEntry.ignored.size - pair.rightEntry.ignored.size;
    return {
      left: pair.leftFile.path,
      right: pair.rightFile.path,
      similarity: pair.similarity,
      fixed: denominator > 0 ? (pair.leftCovered + pair.rightCovered) / denominator : 0,
      fragments: pair.buildFragments().map(f => ({
        a: [f.leftSelection.startRow + 1, f.leftSelection.endRow + 1],
        b: [f.rightSelection.startRow + 1, f.rightSelection.endRow + 1],
      })),
    };
  }));
}
if ((request.tokens || []).length) {
  const language = await new LanguagePicker().findLanguage("python");
  const tokenizer = await language.createTokenizer({ includeComments: false });
  for (const text of request.tokens) out.tokens.push(tokenizer.generateTokens(text).map(t => t.token));
}
process.stdout.write(JSON.stringify(out));
