/**
 * scripts/check-migrations.mjs (run by `npm run check`) refuses a migration newer than the
 * last released one whose `up` would break a worker of the previous version during a
 * rolling upgrade (docs/operations.md "Upgrading"), and lets expand-only ones and a
 * contract step that names a released migration through. Scratch migrations are written
 * into a temporary copy of migrations/, never into the real one.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const ROOT = process.cwd();

function check(dir: string): Promise<{ code: number; output: string }> {
  const script = join(ROOT, 'scripts', 'check-migrations.mjs');
  return new Promise((resolve) => {
    execFile(process.execPath, [script, dir], { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** A copy of migrations/ with one scratch migration, dated after every real one. */
async function withScratch(up: string, header = ''): Promise<{ code: number; output: string }> {
  const copy = mkdtempSync(join(tmpdir(), 'payflow-migrations-'));
  try {
    cpSync(join(ROOT, 'migrations'), copy, { recursive: true });
    writeFileSync(
      join(copy, '9999999999999-Scratch.ts'),
      `${header}
import type { MigrationInterface, QueryRunner } from 'typeorm';
export class Scratch9999999999999 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`${up}\`);
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`ALTER TABLE "payments" DROP COLUMN "scratch"\`);
  }
}
`,
    );
    return await check(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** A copy of migrations/ whose released.json is `released`. */
async function withReleased(
  released: Record<string, unknown>,
): Promise<{ code: number; output: string }> {
  const copy = mkdtempSync(join(tmpdir(), 'payflow-migrations-'));
  try {
    cpSync(join(ROOT, 'migrations'), copy, { recursive: true });
    writeFileSync(join(copy, 'released.json'), JSON.stringify(released));
    return await check(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

const RELEASED = JSON.parse(readFileSync(join(ROOT, 'migrations', 'released.json'), 'utf8')) as {
  lastReleased: string;
  commit: string;
};

describe('released.json: the release before this one', () => {
  it('records its full commit hash, whose newest migration is lastReleased', () => {
    expect(RELEASED.commit).toMatch(/^[0-9a-f]{40}$/);
    const atCommit = execFileSync(
      'git',
      ['ls-tree', '--name-only', `${RELEASED.commit}:migrations`],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter((name) => /^\d+-[\w-]+\.ts$/.test(name))
      .sort();
    expect(atCommit.at(-1)).toBe(`${RELEASED.lastReleased}.ts`);
  });

  it('is refused without a full commit hash', async () => {
    for (const commit of [undefined, RELEASED.commit.slice(0, 12), 'main']) {
      const run = await withReleased({ lastReleased: RELEASED.lastReleased, commit });
      expect(run.code).toBe(1);
      expect(run.output).toContain('"commit" must be');
    }
  });

  it('is refused when lastReleased is not the newest migration of that commit', async () => {
    // The commit that added lastReleased's migration: its parent's newest migration is older.
    const added = execFileSync(
      'git',
      [
        'log',
        '-1',
        '--format=%H',
        '--diff-filter=A',
        '--',
        `migrations/${RELEASED.lastReleased}.ts`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    ).trim();
    const before = execFileSync('git', ['rev-parse', `${added}^`], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    const run = await withReleased({ lastReleased: RELEASED.lastReleased, commit: before });
    expect(run.code).toBe(1);
    expect(run.output).toContain(`the newest migration of commit ${before}`);
  });
});

describe('expand/contract: migrations after the last release', () => {
  it('pass as they are', async () => {
    const run = await check(join(ROOT, 'migrations'));
    expect(run).toEqual({ code: 0, output: expect.stringContaining('all expand-only') });
  });

  it('may add a nullable or defaulted column, a table, an index (a down may drop)', async () => {
    for (const up of [
      'ALTER TABLE "payments" ADD "scratch" text',
      `ALTER TABLE "payments" ADD COLUMN "scratch" int NOT NULL DEFAULT 0`,
      'CREATE TABLE "scratch" ("id" int NOT NULL)',
      'CREATE INDEX "scratch_idx" ON "payments" ("payment_ref")',
    ]) {
      expect(await withScratch(up)).toMatchObject({ code: 0 });
    }
  });

  it('are refused when they would break the release before', async () => {
    const cases: [string, string][] = [
      ['ALTER TABLE "payments" DROP COLUMN "payment_ref"', 'drops a column'],
      ['DROP TABLE "settlement_totals"', 'drops a table'],
      ['ALTER TABLE "payments" RENAME COLUMN "payment_ref" TO "ref"', 'renames'],
      ['ALTER TABLE "payments" ALTER COLUMN "payment_ref" TYPE varchar(50)', 'type'],
      ['ALTER TABLE "payments" ALTER COLUMN "payment_ref" SET NOT NULL', 'NOT NULL'],
      ['ALTER TABLE "payments" ADD "scratch" text NOT NULL', 'without a DEFAULT'],
    ];
    for (const [up, why] of cases) {
      const run = await withScratch(up);
      expect(run.code).toBe(1);
      expect(run.output).toContain('9999999999999-Scratch');
      expect(run.output).toContain(why);
    }
  });

  it('let a contract step through only after a released migration', async () => {
    const drop = 'ALTER TABLE "processed_events" DROP COLUMN "read_at"';
    const released = await withScratch(drop, '// contract-after: 1764118800000-ConsoleIdentity');
    expect(released.code).toBe(0);
    const unreleased = await withScratch(
      drop,
      '// contract-after: 1764126000000-SettlementReconciliation',
    );
    expect(unreleased.code).toBe(1);
    expect(unreleased.output).toContain('not a released migration');
  });
});
