// How a result file's run record reads in the docs: command, commit (and uncommitted changes), date, machine.
// Shared by the tables (readme-tables.mjs) and the demo transcripts (demo-transcript.mjs).

/** `\`COMMAND\` (commit abc1234, 2026-11-26; CPU, N cores, Node vX)`; throws when the file has no run record. */
export function describeRunRecord(file, data) {
  const r = data.run;
  if (!r?.command || !r?.machine) throw new Error(`bench/results/${file} has no run record (command, commit, machine)`);
  const commit = r.commit ? `commit ${r.commit.slice(0, 7)}${r.dirty ? " + uncommitted changes" : ""}` : "no commit recorded";
  return `\`${r.command}\` (${commit}, ${r.date.slice(0, 10)}; ${r.machine.cpu}, ${r.machine.cores} cores, Node ${r.machine.node})`;
}
