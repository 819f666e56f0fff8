/**
 * docs/contracts is generated from the zod schemas (`npm run docs:contracts`): this fails
 * when a schema changed and the published files were not regenerated, or when a file is
 * there that no schema makes.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import * as prettier from 'prettier';
import { CONTRACTS_DIR, renderContracts } from '../../src/events/contracts.js';

const ROOT = process.cwd();

async function format(content: string, path: string): Promise<string> {
  const filepath = join(ROOT, path);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  return prettier.format(content, { ...options, filepath });
}

async function filesOnDisk(directory: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory()
        ? filesOnDisk(join(directory, entry.name), `${prefix}${entry.name}/`)
        : Promise.resolve([`${prefix}${entry.name}`]),
    ),
  );
  return nested.flat().sort();
}

describe(`${CONTRACTS_DIR} (npm run docs:contracts)`, () => {
  it('holds exactly what the schemas generate', async () => {
    const generated = await renderContracts(format);
    const directory = join(ROOT, CONTRACTS_DIR);
    expect(await filesOnDisk(directory)).toEqual(generated.map((file) => file.path).sort());
    const stale: string[] = [];
    for (const file of generated) {
      const onDisk = await readFile(join(directory, file.path), 'utf8');
      if (onDisk !== file.content) stale.push(file.path);
    }
    expect({ stale, fix: 'npm run docs:contracts' }).toEqual({
      stale: [],
      fix: 'npm run docs:contracts',
    });
  });

  it('has a JSON Schema 2020-12 for every event type and AsyncAPI 3.0 for the topics', async () => {
    const generated = await renderContracts();
    const paths = generated.map((file) => file.path);
    expect(paths).toContain('events/order.payment_requested.schema.json');
    expect(paths).toContain('events/payment.created.schema.json');
    expect(paths).toContain('events/settlement.file_available.schema.json');
    expect(paths).toContain('events/dead_letter.headers.schema.json');
    for (const file of generated.filter((each) => each.path.endsWith('.json'))) {
      const schema = JSON.parse(file.content) as { $schema?: string };
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
    const asyncApi = generated.find((file) => file.path === 'asyncapi.yaml')?.content ?? '';
    expect(asyncApi).toMatch(/^asyncapi: "3\.0\.0"$/m);
    for (const address of [
      'erp.orders.v1',
      'erp.orders.v1.dlq',
      'payflow.payment-status.v1',
      'payflow.settlements.v1',
    ]) {
      expect(asyncApi).toContain(`address: ${address}\n`);
    }
  });
});
