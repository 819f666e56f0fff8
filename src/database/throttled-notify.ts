/**
 * A Postgres NOTIFY on one channel, sent after the writer's commit and throttled: one at the
 * start of a window of `throttleMs`, one at its end if more calls came, so that a burst of
 * commits costs two statements. Sent outside the writer's transaction on purpose: Postgres
 * serializes the commits of transactions that NOTIFY, which would queue the hot path's
 * commits behind one another. Failures are only logged at debug level: a NOTIFY is a hint,
 * and every listener also probes on its own at a long interval.
 */
import { describeError } from '../errors/app-error.js';
import type { AppLogger } from '../logging/logger.js';
import type { Sql } from './database.js';

export class ThrottledNotify {
  private timer: NodeJS.Timeout | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly channel: string,
    private readonly throttleMs: number,
    private readonly logger: AppLogger,
  ) {}

  notify(): void {
    if (this.stopped) return;
    if (this.timer !== null) {
      this.again = true;
      return;
    }
    this.send();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.again = false;
  }

  private send(): void {
    this.sql.query('SELECT pg_notify($1, $2)', [this.channel, '']).catch((error: unknown) => {
      this.logger.debug({ error: describeError(error), channel: this.channel }, 'NOTIFY failed');
    });
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.send();
      }
    }, this.throttleMs);
    this.timer.unref();
  }
}
