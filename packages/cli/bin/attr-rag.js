#!/usr/bin/env node
// The `attr-rag` executable that npm links into node_modules/.bin. It lives outside dist/ because npm links
// bins at install time, before `npm run build` has made dist/main.js: a bin entry pointing into dist/ is
// skipped then, and `npx attr-rag` finds nothing to run.
try {
  await import("../dist/main.js");
} catch (err) {
  if (err?.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes("dist/main.js")) {
    process.stderr.write("attr-rag: not built yet; run `npm run build` at the repository root first\n");
    process.exitCode = 1;
  } else {
    throw err;
  }
}
