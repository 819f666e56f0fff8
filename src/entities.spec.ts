import { expect, it } from '@jest/globals';
import { DatabaseModule } from './database/database.module.js';

it("the application's feature modules register every table's entity, each once", async () => {
  // Declaring the application's modules registers their entities (DatabaseModule.forFeature);
  // src/entities.ts, which imports the feature modules itself, is read only afterwards.
  await import('./app.module.js');
  const registered = DatabaseModule.registeredEntities();
  const { ENTITIES } = await import('./entities.js');

  expect(registered).toHaveLength(16);
  expect(ENTITIES).toHaveLength(16);
  expect(new Set(registered)).toEqual(new Set(ENTITIES));
});
