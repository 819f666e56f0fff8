/**
 * The demo's database: `payflow_bridge_demo`, dropped and created empty on every run (the
 * worker migrates it at start-up). No other database is ever changed: the admin
 * connection only issues DROP/CREATE for that one name, and holds an advisory lock so that
 * two demos on one Postgres never drop each other's database.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';

export const DEMO_DATABASE = 'payflow_bridge_demo';
/** Advisory lock key of "a demo is running" (any other project on the server is unaffected). */
const DEMO_LOCK_KEY = 7_447_201;

export class DemoDatabase {
  private constructor(
    private readonly admin: pg.Client,
    /** The worker's DATABASE_URL. */
    readonly url: string,
  ) {}

  /**
   * Connects to the server's `postgres` database, takes the demo lock and recreates the
   * demo database. Throws a DemoDatabaseError with one readable line.
   */
  static async open(server: string): Promise<DemoDatabase> {
    const base = server.replace(/\/+$/, '');
    const admin = new pg.Client({ connectionString: `${base}/postgres` });
    admin.on('error', () => undefined);
    try {
      await admin.connect();
    } catch (error) {
      throw new DemoDatabaseError(
        `cannot connect to Postgres at ${redact(base)} (${messageOf(error)}); ` +
          'scripts/ensure-env.sh starts the local cluster',
      );
    }
    try {
      // A demo killed a moment ago may still hold it until Postgres notices: retry briefly.
      let locked = false;
      for (let attempt = 0; attempt < 25 && !locked; attempt++) {
        if (attempt > 0) await delay(200);
        const { rows } = await admin.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock($1) AS locked',
          [DEMO_LOCK_KEY],
        );
        locked = rows[0]?.locked === true;
      }
      if (!locked) {
        throw new DemoDatabaseError(
          `another demo is running against this Postgres (it uses ${DEMO_DATABASE}); ` +
            'let it finish or stop it first',
        );
      }
      await admin.query(`DROP DATABASE IF EXISTS "${DEMO_DATABASE}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${DEMO_DATABASE}"`);
    } catch (error) {
      await admin.end().catch(() => undefined);
      if (error instanceof DemoDatabaseError) throw error;
      throw new DemoDatabaseError(`cannot recreate ${DEMO_DATABASE}: ${messageOf(error)}`);
    }
    return new DemoDatabase(admin, `${base}/${DEMO_DATABASE}`);
  }

  /** Releases the lock. The database stays, for a look afterwards. */
  async close(): Promise<void> {
    await this.admin.end().catch(() => undefined);
  }
}

export class DemoDatabaseError extends Error {
  override readonly name = 'DemoDatabaseError';
}

/** The URL without a password. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
