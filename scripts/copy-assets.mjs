// Copies what tsc does not emit but the compiled code reads at run time into dist/: the
// console's templates (src/**/*.eta) and static files (src/console/assets/*.css, *.js).
// Run after tsc by `npm run build` and by the Dockerfile's build stage.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(root, process.argv[2] ?? 'dist');

/** Files under `dir` whose path matches `wanted`. */
function* files(dir, wanted) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path, wanted);
    else if (wanted(relative(root, path))) yield path;
  }
}

const isAsset = (path) =>
  path.endsWith('.eta') || /^src\/console\/assets\/[^/]+\.(css|js)$/.test(path);

let copied = 0;
if (existsSync(join(root, 'src'))) {
  for (const path of files(join(root, 'src'), isAsset)) {
    cpSync(path, join(outDir, relative(root, path)));
    copied += 1;
  }
}
console.log(`copy-assets: ${copied} files to ${relative(root, outDir) || '.'}`);
