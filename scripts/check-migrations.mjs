#!/usr/bin/env node
// Expand/contract (docs/operations.md "Upgrading"), run by `npm run check`: during a rolling
// upgrade the previous version's workers keep running against the database this version
// migrated. So a migration newer than migrations/released.json's `lastReleased` may only
// expand (new tables, new nullable or defaulted columns, new indexes); a statement of its
// `up` that would break a worker of the previous version is refused:
// DROP TABLE / DROP COLUMN, RENAME, a column's type changed, SET NOT NULL, and a NOT NULL
// column added without a DEFAULT. The contract step comes in a later release, once no worker
// reads the old shape; it says so with a comment `contract-after: <released migration>`
// naming the released migration whose expand it completes.
// released.json also records the release's `commit` (a full hash): the two-version test
// (test/deploy/rolling-upgrade.test.ts) builds that release's worker from it. When the
// commit is in this clone, its newest migration must be `lastReleased`.
// `node scripts/check-migrations.mjs [DIR]` (default: migrations).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'migrations';
const { lastReleased, commit } = JSON.parse(readFileSync(join(dir, 'released.json'), 'utf8'));
const isMigration = (name) => /^\d+-[\w-]+\.ts$/.test(name);
const names = readdirSync(dir)
  .filter(isMigration)
  .map((name) => name.replace(/\.ts$/, ''))
  .sort();
if (!names.includes(lastReleased)) {
  console.error(`check-migrations: released.json names ${lastReleased}, which is not in ${dir}`);
  process.exit(1);
}
if (typeof commit !== 'string' || !/^[0-9a-f]{40}$/.test(commit)) {
  console.error(
    `check-migrations: released.json's "commit" must be the release's full commit hash (40 hex digits), not ${JSON.stringify(commit)}`,
  );
  process.exit(1);
}

/** The release's migrations as its commit holds them; undefined when git or the commit is missing. */
function migrationsAtCommit() {
  try {
    return execFileSync('git', ['ls-tree', '--name-only', `${commit}:migrations`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(isMigration)
      .map((name) => name.replace(/\.ts$/, ''))
      .sort();
  } catch {
    return undefined;
  }
}
const released = migrationsAtCommit();
if (released === undefined) {
  console.warn(`check-migrations: commit ${commit} is not in this clone (shallow?): not compared`);
} else if (released.at(-1) !== lastReleased) {
  console.error(
    `check-migrations: released.json names ${lastReleased}, but the newest migration of commit ${commit} is ${released.at(-1) ?? 'none'}`,
  );
  process.exit(1);
}

const BREAKING = [
  [/\bDROP\s+TABLE\b/i, 'drops a table'],
  [/\bDROP\s+COLUMN\b/i, 'drops a column'],
  [/\bRENAME\b/i, 'renames'],
  [/\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i, "changes a column's type"],
  [/\bSET\s+NOT\s+NULL\b/i, 'makes a column NOT NULL'],
  [
    /\bADD\s+(COLUMN\s+)?(?![^,;`]*\bDEFAULT\b)[^,;`]*\bNOT\s+NULL\b/i,
    'adds a NOT NULL column without a DEFAULT',
  ],
];

const problems = [];
for (const name of names.filter((candidate) => candidate > lastReleased)) {
  const text = readFileSync(join(dir, `${name}.ts`), 'utf8');
  const start = text.search(/\basync\s+up\s*\(/);
  const end = text.search(/\basync\s+down\s*\(/);
  const up = start < 0 ? text : text.slice(start, end > start ? end : undefined);
  const contract = /contract-after:\s*([\w-]+)/.exec(text)?.[1];
  if (contract !== undefined) {
    if (names.includes(contract) && contract <= lastReleased) continue;
    problems.push(`${name}: contract-after names ${contract}, which is not a released migration`);
    continue;
  }
  for (const [pattern, what] of BREAKING) {
    if (pattern.test(up)) problems.push(`${name}: its up ${what}, which breaks the release before`);
  }
}
if (problems.length > 0) {
  console.error(
    `check-migrations (expand/contract, docs/operations.md "Upgrading"):\n  ${problems.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(
  `check-migrations: ${names.filter((n) => n > lastReleased).length} migration(s) after ${lastReleased}, all expand-only`,
);
