/**
 * A one-line progress bar on stderr. On a terminal it redraws in place; in a log (CI, a file) it writes a
 * line at every tenth of the way, so long jobs show life without flooding the log.
 */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr) {
  let lastTenth = -1;
  return {
    update(done: number, total: number, detail = ""): void {
      const fraction = total > 0 ? Math.min(1, done / total) : 1;
      if (stream.isTTY) {
        const width = 30;
        const filled = Math.round(fraction * width);
        stream.write(`\r${label} [${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total} ${detail}`.padEnd(80));
      } else {
        const tenth = Math.floor(fraction * 10);
        if (tenth !== lastTenth) {
          lastTenth = tenth;
          stream.write(`${label}: ${done}/${total} ${detail}\n`);
        }
      }
    },
    done(): void {
      if (stream.isTTY) stream.write("\n");
    },
  };
}
