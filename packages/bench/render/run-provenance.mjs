// How a result file's run record reads in the docs: command, commit (and uncommitted changes), date, machine.
// Shared by the tables (readme-tables.mjs) and the demo transcripts (demo-transcript.mjs).

/** `\`COMMAND\` (commit abc1234, 2026-11-26; CPU, N cores, Node vX)`; throws when the file has no run record. */
export function describeRunRecord(file, data) {
  const r = data.run;
  if (!r?.command || !r?.machine) throw new Error(`bench/results/${file} has no run record (command, commit, machine)`);
  const commit = r.commit ? `commit ${r.commit.slice(0, 7)}${r.dirty ? " + uncommitted changes" : ""}` : "no commit recorded";
  // A GPU in the record is named: "2 cores" alone would hide that the run was not on a CPU.
  const gpus = (r.machine.devices ?? []).filter((d) => d.startsWith("gpu:") && !/llvmpipe|lavapipe|swiftshader/i.test(d)).map((d) => d.slice(4));
  const where = `${r.machine.cpu}, ${r.machine.cores} cores${gpus.length > 0 ? `, ${gpus.join(", ")}` : ""}`;
  // A note says what the record alone cannot (how the run was set up, where its record misleads).
  return `\`${r.command}\` (${commit}, ${r.date.slice(0, 10)}; ${where}, Node ${r.machine.node})${r.note ? `; ${r.note}` : ""}`;
}
