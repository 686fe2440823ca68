// Reads {"pairs": [{"a": text, "b": text, "language": "python"}], "tokens": [text]} on
// stdin; prints {"similarities": [...], "fragments": [[...]], "tokens": [[...]]}: what Dolos
// (default options) says of each pair, and its token stream of each text.
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
if ((request.tokens || []).length) {
  const language = await new LanguagePicker().findLanguage("python");
  const tokenizer = await language.createTokenizer({ includeComments: false });
  for (const text of request.tokens) out.tokens.push(tokenizer.generateTokens(text).map(t => t.token));
}
process.stdout.write(JSON.stringify(out));
