import { expect, it } from '@jest/globals';
import { DatabaseModule } from './database/database.module.js';

it("the application's feature modules register every table's entity, each once", async () => {
  // Declaring the application's modules registers their entities (DatabaseModule.forFeature);
  // src/entities.ts, which imports the feature modules itself, is read only afterwards.
  await import('./app.module.js');
  const registered = DatabaseModule.registeredEntities();
  const { ENTITIES } = await import('./entities.js');
  // The console registers its audit table's entity itself, and only when it is configured
  // (ConsoleModule.forRoot with CONSOLE_TOKEN); its table exists either way.
  const { OPERATOR_ACTION_ENTITIES } = await import('./operator/audit/operator-action.entity.js');

  expect(registered).toHaveLength(21);
  expect(ENTITIES).toHaveLength(22);
  expect(new Set([...registered, ...OPERATOR_ACTION_ENTITIES])).toEqual(new Set(ENTITIES));
});
