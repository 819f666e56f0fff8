#!/usr/bin/env node
// The operator CLI (CONTRACT §6): `npx payflow-bridge <command>` runs the compiled entry
// point; `npm run cli -- <command>` builds first.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'payflow-bridge: not built yet; run `npm run build` (or use `npm run cli -- <command>`)\n',
  );
  process.exit(2);
}
await import(entry.href);
