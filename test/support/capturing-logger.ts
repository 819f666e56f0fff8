/**
 * A logger (debug and up, unless told a level) whose lines the test reads: `lines` parsed, `text()` all of them as
 * written (to check that a secret appears nowhere).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { AppLogger } from '../../src/logging/logger.js';

export interface CapturedLogs {
  readonly logger: AppLogger;
  readonly lines: Record<string, unknown>[];
  text(): string;
}

export function capturingLogger(level: 'debug' | 'info' = 'debug'): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const written = chunk.toString('utf8');
      raw.push(written);
      for (const line of written.split('\n')) {
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: pino({ level }, stream), lines, text: () => raw.join('') };
}
