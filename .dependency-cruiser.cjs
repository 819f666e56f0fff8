/**
 * Which module of src may import which (issue 11 §3). `npm run check` runs
 * `depcruise src --config .dependency-cruiser.cjs` and fails on any violation.
 *
 * Layers, lowest first; a module imports only from its own layer or lower ones:
 *
 *   0. src/common          errors, money, calendar, logger: imports no other src folder
 *   1. src/config          the one zod parse of the environment
 *      src/database        connection, transaction batcher, migrations runner (may read config)
 *   2. src/payflow         the Payflow HTTP client and its wire schemas
 *   3. features            src/orders, payments, webhooks, settlements, dead-letters, outbox,
 *                          reconciliation, events: may import each other (without cycles);
 *                          of src/messaging only the ports file messaging.ports.ts, which is
 *                          how they publish without knowing Kafka
 *   4. src/messaging       the Kafka adapters: consumer transport, producer, delivery engine;
 *                          generic: it imports nothing from src/orders (the order codec is
 *                          injected through messaging.ports.ts)
 *   5. src/operator        the read side (`*.query.ts` composing the features' repositories,
 *                          and their views): order show, in-doubt list; serves the CLI now and
 *                          the console later. It may import the features, database, payflow,
 *                          common and config; no feature (nor messaging) imports it
 *   6. app                 src/app.module.ts, main.ts, worker.ts, src/cli, src/health,
 *                          src/metrics, src/management (the two listeners): compose everything below; src/entities.ts lists
 *                          every feature's tables for DatabaseModule.forRoot and
 *                          src/cli-data-source.ts (the TypeORM CLI's data source)
 *
 * src/sandbox is a separate process (a fake Payflow) sharing only common and the client's
 * wire schemas; nothing in the service imports it.
 *
 * Packages: kafkajs only in src/messaging; pg and typeorm only in repositories, entities,
 * migrations and src/database (other code takes the `Sql` type from src/database).
 */

const FEATURES =
  '^src/(orders|payments|webhooks|settlements|dead-letters|outbox|reconciliation|events)/';
const OPERATOR = '^src/operator/';
const APP =
  '^src/(app\\.module|main|worker|entities|cli-data-source)\\.ts$|^src/(cli|health|metrics|management)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules cannot be understood (or tested) one without the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-not-to-tests',
      severity: 'error',
      comment:
        'Production code never depends on tests, benchmarks or the testbed (unit specs next to ' +
        'the code may use the test builders).',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^(test|bench|testbed)/' },
    },
    {
      name: 'kafkajs-only-in-messaging',
      severity: 'error',
      comment: 'kafkajs stays behind the ports in src/messaging/messaging.ports.ts.',
      from: { path: '^src/', pathNot: '^src/messaging/' },
      to: { path: '(^|/)node_modules/kafkajs/' },
    },
    {
      name: 'pg-typeorm-only-in-persistence',
      severity: 'error',
      comment:
        'The database driver and the ORM belong to repositories, entities, migrations and ' +
        'src/database; the rest uses the Sql type and the repositories.',
      from: {
        path: '^src/',
        pathNot: [
          '^src/database/',
          '\\.repository\\.ts$',
          '\\.entity\\.ts$',
          '^src/.*migrations?/',
        ],
      },
      to: { path: '(^|/)node_modules/(pg|typeorm)/' },
    },
    {
      name: 'common-imports-nothing',
      severity: 'error',
      comment: 'src/common is the bottom layer.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'config-only-common',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'database-only-common-config',
      severity: 'error',
      comment: 'Entities are registered by the feature modules, not listed in src/database.',
      from: { path: '^src/database/' },
      to: { path: '^src/', pathNot: '^src/(common|config|database)/' },
    },
    {
      name: 'payflow-no-feature',
      severity: 'error',
      from: { path: '^src/payflow/' },
      to: { path: '^src/', pathNot: '^src/(common|config|database|payflow)/' },
    },
    {
      name: 'features-only-messaging-ports',
      severity: 'error',
      comment: 'Features publish through messaging.ports.ts, never through the Kafka adapters.',
      from: { path: FEATURES },
      to: { path: '^src/messaging/', pathNot: '^src/messaging/messaging\\.ports\\.ts$' },
    },
    {
      name: 'features-not-to-app',
      severity: 'error',
      from: { path: FEATURES },
      to: { path: APP },
    },
    {
      name: 'features-not-to-operator',
      severity: 'error',
      comment:
        'src/operator is the read side above the features: a feature that needs a read of it ' +
        'names a port (as src/orders/in-doubt/in-doubt-calls.port.ts) that the query implements.',
      from: { path: FEATURES },
      to: { path: OPERATOR },
    },
    {
      name: 'operator-not-to-app-or-messaging',
      severity: 'error',
      comment:
        'The read side composes the features, database, payflow, common and config; it never ' +
        'imports the app (src/cli, …) that uses it, nor the Kafka adapters.',
      from: { path: OPERATOR },
      to: { path: [APP, '^src/messaging/(?!messaging\\.ports\\.ts$)'] },
    },
    {
      name: 'messaging-knows-no-order',
      severity: 'error',
      comment:
        'The Kafka transport is generic: src/orders injects the event codec (INBOUND_EVENT_CODEC, ' +
        'messaging.ports.ts) that knows the order envelope, its types and context. Unit specs ' +
        'may drive the transport with the real order codec.',
      from: { path: '^src/messaging/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/orders/' },
    },
    {
      name: 'messaging-not-to-app',
      severity: 'error',
      from: { path: '^src/messaging/' },
      to: { path: [APP, OPERATOR] },
    },
    {
      name: 'sandbox-apart',
      severity: 'error',
      comment:
        'The sandbox is another process: it shares common and the Payflow wire schemas only.',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/', pathNot: '^src/(common|payflow|sandbox)/' },
    },
    {
      name: 'nothing-to-sandbox',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/sandbox/' },
      to: { path: '^src/sandbox/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json', '.d.ts'],
    },
  },
};
