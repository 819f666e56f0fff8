// `npm run docs:contracts`: writes docs/contracts/ (AsyncAPI 3.0 and one JSON Schema per
// event type) from the zod schemas, through the build (dist/) and formatted by prettier
// like every file of the repository. Files of docs/contracts/events that no schema makes
// any more are removed. test/contracts fails when the files are stale.
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { CONTRACTS_DIR, renderContracts } from '../dist/src/events/contracts.js';

const root = fileURLToPath(new URL('..', import.meta.url));

async function format(content, path) {
  const filepath = join(root, path);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(content, { ...options, filepath });
}

const files = await renderContracts(format);
const directory = join(root, CONTRACTS_DIR);
for (const file of files) {
  const target = join(directory, file.path);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, file.content);
}
const wanted = new Set(files.map((file) => file.path));
for (const name of await readdir(join(directory, 'events'))) {
  if (!wanted.has(`events/${name}`)) await rm(join(directory, 'events', name));
}
console.log(`${files.length} files in ${CONTRACTS_DIR}`);
