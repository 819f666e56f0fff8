/**
 * The progress bar the CLI draws on a terminal's stderr, in one style for every command
 * that reports progress (replay, settlement pulls); only what it counts differs.
 */
import cliProgress from 'cli-progress';
import type { CliIo } from '../cli.runtime.js';

/** A bar on `io.stderr` with this format (cli-progress placeholders). */
export function stderrBar(io: CliIo, format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    { stream: io.stderr, format, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
}
