/**
 * docs/walkthrough.md follows one order event through the code by its file paths: every
 * `src/…`, `test/…` and `migrations/…` path it names must exist, and be written in
 * backticks, so that a file moved or split without the walkthrough fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../', import.meta.url);
const text = readFileSync(new URL('docs/walkthrough.md', root), 'utf8');

/** Every path under src/, test/ or migrations/ named in the text, with what precedes it. */
function namedPaths(markdown: string): { path: string; backticked: boolean }[] {
  const found: { path: string; backticked: boolean }[] = [];
  const pattern = /(?<![\w./-])((?:src|test|migrations)\/(?:[\w./-]*[\w/])?)/g;
  for (const match of markdown.matchAll(pattern)) {
    const path = match[1] ?? '';
    const before = markdown.slice(0, match.index);
    // Inside a code span: an odd number of backticks on the line before it.
    const line = before.slice(before.lastIndexOf('\n') + 1);
    const backticked = (line.match(/`/g) ?? []).length % 2 === 1;
    found.push({ path, backticked });
  }
  return found;
}

describe('docs/walkthrough.md', () => {
  const paths = namedPaths(text);

  it('names the files of the walk', () => {
    expect(paths.length).toBeGreaterThan(20);
  });

  it('names only paths that exist', () => {
    const missing = [...new Set(paths.map((named) => named.path))].filter(
      (path) => !existsSync(new URL(path, root)),
    );
    expect(missing).toEqual([]);
  });

  it('writes every path in backticks', () => {
    expect(paths.filter((named) => !named.backticked).map((named) => named.path)).toEqual([]);
  });
});

describe('the path extraction', () => {
  it('finds paths in and out of backticks, and not inside other words', () => {
    expect(
      namedPaths('see `src/a/b.ts` and test/c.test.ts, not docs/src/x.ts nor `migrations/`'),
    ).toEqual([
      { path: 'src/a/b.ts', backticked: true },
      { path: 'test/c.test.ts', backticked: false },
      { path: 'migrations/', backticked: true },
    ]);
  });
});
