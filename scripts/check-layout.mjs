#!/usr/bin/env node
// The house's size rules (issue 28), run by `npm run check`: no TypeScript file under src/
// over 450 lines (specs included: a long spec hides what it checks as well), and no folder
// of src/ holding more than 20 source files (specs not counted): past that, a folder is a
// heap, and its files want subfolders by concern.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 450;
const MAX_FILES = 20;
const problems = [];

function walk(dir) {
  let sources = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      walk(path);
      continue;
    }
    if (!entry.name.endsWith('.ts')) continue;
    const lines = readFileSync(path, 'utf8').split('\n').length - 1;
    if (lines > MAX_LINES) problems.push(`${path}: ${lines} lines (at most ${MAX_LINES})`);
    if (!entry.name.endsWith('.spec.ts')) sources += 1;
  }
  if (sources > MAX_FILES) problems.push(`${dir}/: ${sources} source files (at most ${MAX_FILES})`);
}

walk('src');
if (problems.length > 0) {
  console.error(`check-layout:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `check-layout: every file under src/ within ${MAX_LINES} lines, every folder within ${MAX_FILES} source files`,
);
