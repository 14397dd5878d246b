// `bench occlusion`'s report as it prints without --json: one line per strategy, the APPROXIMATE strategies'
// fidelity, the cost of sentence attribution, the engine's rows and the answers against naive.
import type { OcclusionBenchReport } from "./occlusionBench.js";

export function occlusionBenchText(report: OcclusionBenchReport): string[] {
  const lines: string[] = [];
  const naive = report.strategies.naive;
  lines.push(`model ${report.model}: ${report.n_sets} sets, ${report.prompt_tokens} prompt tokens, ${report.max_tokens} new tokens`);
  lines.push(`single generation of A_full: ${report.single.wall_ms.toFixed(0)} ms, ${report.single.tokens_evaluated} tokens`);
  for (const [name, s] of Object.entries(report.strategies)) {
    const speed = naive ? ` (${(naive.wall_ms / s.wall_ms).toFixed(2)}× naive)` : "";
    const identical = s.sequences_identical === null ? (name === "naive" ? "reference" : "not compared") : `${s.sequences_identical}/${s.sequences_total}`;
    lines.push(
      `${name.padEnd(14)} ${s.wall_ms.toFixed(0).padStart(8)} ms${speed}  evaluated ${s.tokens_evaluated}  reused ${s.tokens_reused}  ` +
        `drafts accepted ${s.draft_accepted}  decode steps ${s.decode_steps}  identical to naive: ${identical}`,
    );
  }
  for (const [name, s] of Object.entries(report.strategies)) {
    const f = s.fidelity;
    if (!s.approximate) continue;
    const screened = s.screened !== undefined ? `, ${s.regenerated} sets regenerated, ${s.screened} screened out` : "";
    if (!f) {
      lines.push(`${name} (APPROXIMATE): no exact strategy ran, fidelity not measured`);
      continue;
    }
    const dAlpha = Object.entries(f.mean_abs_delta_alpha).map(([m, v]) => `${m} ${v.toFixed(3)}`).join(", ");
    lines.push(
      `${name} (APPROXIMATE, vs ${f.reference}): ${(100 * f.occluded_identical).toFixed(0)} % occluded answers identical, ` +
        `first divergence at step ${f.mean_first_divergence === null ? "–" : f.mean_first_divergence.toFixed(1)}, KL ${f.mean_kl === null ? "–" : f.mean_kl.toFixed(4)}, ` +
        `top-1 ${f.top1_agreement === null ? "–" : `${(100 * f.top1_agreement).toFixed(1)} %`}, |Δα| ${dAlpha}, selection ${f.selection_identical ? "identical" : `differs (Jaccard ${f.kept_jaccard.toFixed(2)})`}${screened}`,
    );
  }
  for (const [name, c] of Object.entries(report.sentences ?? {})) {
    lines.push(
      `${name} with sentence attribution (median of ${c.runs}): wall ${c.wall_ratio.toFixed(2)}× (${c.without.wall_ms.toFixed(0)} → ${c.with.wall_ms.toFixed(0)} ms), ` +
        `tokens evaluated ${c.tokens_ratio.toFixed(2)}×, decode steps ${c.decode_steps_ratio.toFixed(2)}×, llama_decode calls ${c.decode_calls_ratio.toFixed(2)}×, answers ${c.answers_identical ? "identical" : "DIFFER"}`,
    );
  }
  lines.push(
    `rows read on the ${report.sampling} path${report.sampling_why ? ` (${report.sampling_why})` : ""}; device ceiling ${report.device_ceiling.tokens_per_s.toFixed(0)} tokens/s (one batch of ${report.device_ceiling.batch_tokens})`,
  );
  for (const [name, s] of Object.entries(report.strategies)) {
    const e = s.engine;
    lines.push(
      `${name.padEnd(14)} ${e.output_rows} rows, ${e.bytes_to_host_per_row.toFixed(0)} bytes and ${e.host_us_per_row.toFixed(1)} µs of host time per row, ` +
        `${(e.decode_share * 100).toFixed(0)} % of the wall in llama_decode at ${e.decode_tokens_per_s.toFixed(0)} tokens/s (${e.ceiling_fraction === null ? "–" : `${(e.ceiling_fraction * 100).toFixed(0)} %`} of the ceiling)`,
    );
  }
  const diverged = Object.values(report.strategies).some((s) => !s.approximate && (s.first_divergences ?? []).length > 0);
  lines.push(
    report.max_divergence_margin === null
      ? report.strategies.naive === undefined
        ? "answers not compared: add naive to --strategies to check them token by token"
        : "no exact strategy but naive ran: add prefix-shared or speculative to --strategies to check them against it"
      : diverged
        ? `exact strategies: largest naive margin at a divergence: ${report.max_divergence_margin.toFixed(4)} (near-tie bound 0.1)`
        : "exact strategies: every answer token-identical to naive's",
  );
  return lines;
}
