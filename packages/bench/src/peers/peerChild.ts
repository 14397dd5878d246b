// A child process of `attr-rag bench peers`: runs one system on the workload and writes its SystemRun as JSON.
//   node peerChild.js <workload.json> <system> <out.json> <peersDir> [ceiling]
// Its own process so the peak RSS it reports is that system's alone.
import { readFileSync, writeFileSync } from "node:fs";
import { OUR_SYSTEMS, type OurSystem, type PeerWorkload, type SystemRun } from "./peerTypes.js";
import { runOurs } from "./runOurs.js";
import { runNodeLlamaCpp } from "./runNodeLlamaCpp.js";

const [workloadPath, system, outPath, peersDir, ceiling] = process.argv.slice(2);
if (!workloadPath || !system || !outPath || !peersDir) {
  console.error("usage: peerChild.js <workload.json> <system> <out.json> <peersDir> [ceiling]");
  process.exit(2);
}
const workload = JSON.parse(readFileSync(workloadPath, "utf8")) as PeerWorkload;
const run = (OUR_SYSTEMS as readonly string[]).includes(system)
  ? await runOurs(system as OurSystem, workload, ceiling === "ceiling")
  : system === "node-llama-cpp" || system === "node-llama-cpp-serial"
    ? await runNodeLlamaCpp(system === "node-llama-cpp-serial", workload, peersDir)
    : undefined;
if (!run) {
  console.error(`peerChild: unknown system "${system}"`);
  process.exit(2);
}
// maxRSS is in KiB on Linux.
const out: SystemRun = { ...run, peak_rss_mib: process.resourceUsage().maxRSS / 1024 };
writeFileSync(outPath, JSON.stringify(out));
