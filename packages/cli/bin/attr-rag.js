#!/usr/bin/env node
// The `attr-rag` executable that npm links into node_modules/.bin. It lives outside dist/ because npm links
// bins at install time, before `npm run build` has made dist/main.js: a bin entry pointing into dist/ is
// skipped then, and `npx attr-rag` finds nothing to run.
const main = new URL("../dist/main.js", import.meta.url);
try {
  await import(main.href);
} catch (err) {
  // Only the entry point itself missing means "not built"; a module missing further in is a real error.
  if (err?.code === "ERR_MODULE_NOT_FOUND" && err.url === main.href) {
    process.stderr.write("attr-rag: not built yet; run `npm run build` at the repository root first\n");
    process.exitCode = 1;
  } else {
    throw err;
  }
}
