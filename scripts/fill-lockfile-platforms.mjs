#!/usr/bin/env node
// The npm registry this project is built against serves only some platform builds of
// packages with native binaries (@swc/core-*, @unrs/resolver-binding-*). `npm install`
// then leaves the other platforms' optional packages out of package-lock.json, and
// `npm ci` refuses the lock file as out of sync. This adds a lock entry for every
// declared platform package that is missing, with the os/cpu/libc its name states, so that
// `npm ci` sees a complete tree and skips them on this platform as it should.
// Run after changing dependencies: node scripts/fill-lockfile-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openharmony',
  'netbsd',
  'openbsd',
  'sunos',
  'aix',
];
const CPU = ['arm64', 'arm', 'x64', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.find((part) => CPU.includes(part));
  if (!os || !cpu) return null;
  const libc = os === 'linux' ? (parts.some((p) => p.startsWith('musl')) ? 'musl' : 'glibc') : null;
  return { os, cpu, libc };
}

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const added = [];
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[`${location}/${key}`]) continue;
    const platform = platformOf(name);
    if (!platform) continue;
    lock.packages[key] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added.push(`${name}@${version}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === '' ? -1 : b === '' ? 1 : a.localeCompare(b),
  ),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  added.length
    ? `added ${added.length} platform entries: ${added.join(', ')}`
    : 'lock file complete',
);
