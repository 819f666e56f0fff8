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
// `node scripts/check-migrations.mjs [DIR]` (default: migrations).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'migrations';
const { lastReleased } = JSON.parse(readFileSync(join(dir, 'released.json'), 'utf8'));
const names = readdirSync(dir)
  .filter((name) => /^\d+-[\w-]+\.ts$/.test(name))
  .map((name) => name.replace(/\.ts$/, ''))
  .sort();
if (!names.includes(lastReleased)) {
  console.error(`check-migrations: released.json names ${lastReleased}, which is not in ${dir}`);
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
