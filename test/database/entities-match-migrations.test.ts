/**
 * The entities describe exactly the schema the migrations build: TypeORM's schema builder
 * (what `npm run migration:generate` runs) finds nothing to change.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source.js';
import { ENTITIES } from '../../src/entities.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let dataSource: DataSource;

beforeAll(async () => {
  database = await createTestDatabase('entities_match');
  dataSource = createDataSource({ url: database.url, poolSize: 1, entities: ENTITIES });
  await dataSource.initialize();
});

afterAll(async () => {
  await dataSource.destroy();
  await database.drop();
});

it('leave nothing for migration:generate to generate', async () => {
  const pending = await dataSource.driver.createSchemaBuilder().log();
  expect(pending.upQueries.map((query) => query.query)).toEqual([]);
});

it('see every table the migrations build, one entity each (22)', async () => {
  const tables = await dataSource.query<{ name: string }[]>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'migrations'`,
  );
  const entityTables = dataSource.entityMetadatas.map((metadata) => metadata.tableName);
  expect(entityTables).toHaveLength(22);
  expect([...entityTables].sort()).toEqual(tables.map((table) => table.name).sort());
});
