// Bundles the web console into dist/console/: one script (everything it imports, nothing fetched at run
// time), its page and its stylesheet. The report renderer and the generated message types come from
// @attr-rag/gateway/report and @attr-rag/contracts; gRPC's Node transport is never needed in a browser,
// so @grpc/grpc-js resolves to a stub (the generated files only build client classes from it).
import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const out = here("../dist/console/");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [here("../src/console/main.ts")],
  outfile: `${out}app.js`,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: true,
  legalComments: "none",
  alias: { "@grpc/grpc-js": here("../src/console/grpcStub.ts") },
  logLevel: "warning",
});
for (const file of ["index.html", "console.css"]) copyFileSync(here(`../src/console/${file}`), `${out}${file}`);
console.log(`web: console bundled into ${out}`);
