/**
 * Which folder of src may import which (issue 11 §3, issue 20 §3). `npm run check` runs
 * `depcruise src --config .dependency-cruiser.cjs` and fails on any violation.
 *
 * Floors, lowest first (FLOORS below; the rules are generated from it). A folder imports
 * only from its own floor or lower ones, so imports run one way and no two folders import
 * each other:
 *
 *    0. errors, logging, money,       errors with stable codes (and zod issues), the logger,
 *       timing, concurrency, memory   minor units, sleep/back-off/calendar, Wakeup and
 *                                     bounded concurrency, the heap limit
 *    1. config                        the one zod parse of the environment
 *    2. database                      connection, transaction batcher, migrations runner
 *    3. payflow, tracing              the Payflow HTTP client and its wire schemas; spans
 *                                     (tracing may import payflow, not the reverse)
 *    4. messaging                     the ports the features use, at its root:
 *                                     messaging.ports.ts, dead-letter.port.ts (the
 *                                     DeadLetterSink it hands failures to) and
 *                                     dead-letter-headers.ts (the DLQ wire format); under
 *                                     it transport/ (the inbound-events transport, free of
 *                                     kafkajs), kafka/ (the adapters) and security/ (TLS,
 *                                     SASL, ACLs)
 *    5. events                        the event registry: every published contract (the
 *                                     ERP order events, the outbound events, their names)
 *    6. outbox                        OutboxWriter, the outbox table and its relay
 *    7. payments                      the payment tables, status sync
 *    8. orders                        the order pipeline: consumer, handlers, engine
 *    9. dead-letters                  the Postgres DeadLetterSink, replay
 *   10. webhooks, reconciliation,     peers that import none of each other
 *       settlements, privacy          (privacy: export, erasure and retention of personal
 *                                     data; it may import webhooks' inbox repository)
 *   11. operator                      the read side (`*.query.ts` and their views)
 *   12. cli, management, console,     the application: src/management (the two listeners,
 *       app                           with health/ and metrics/ under it), src/console (served
 *                                     by the management listener: may import management),
 *                                     app = src/*.ts (app.module, main, worker, entities,
 *                                     cli-data-source, healthcheck: may import management and
 *                                     console), src/cli (may import app: entities.ts); no
 *                                     other direction between them
 *
 * Above messaging, only its port files may be imported (the rest is the Kafka adapters,
 * which the app composes). src/sandbox is a separate process (a fake Payflow) sharing only
 * the bottom floor and the client's wire schemas; nothing in the service imports it.
 *
 * The floors bind production code; a unit spec (`*.spec.ts`) next to the code may use the
 * test builders and drive its code with the real pieces of a higher floor (e.g. the
 * transport with the real order codec).
 *
 * Inside messaging, transport/ knows no Kafka: it imports neither kafkajs nor kafka/ (the
 * adapters plug into it through transport/consumer.port.ts).
 *
 * Packages: kafkajs only in src/messaging (never in its port files); pg and typeorm only in
 * repositories, entities, migrations and src/database (other code takes the `Sql` type from
 * src/database).
 */

/** Each folder of src that takes part in the floors, as a path pattern. */
const FOLDERS = {
  errors: '^src/errors/',
  logging: '^src/logging/',
  money: '^src/money/',
  timing: '^src/timing/',
  concurrency: '^src/concurrency/',
  memory: '^src/memory/',
  config: '^src/config/',
  database: '^src/database/',
  payflow: '^src/payflow/',
  tracing: '^src/tracing/',
  messaging: '^src/messaging/',
  events: '^src/events/',
  outbox: '^src/outbox/',
  payments: '^src/payments/',
  orders: '^src/orders/',
  'dead-letters': '^src/dead-letters/',
  webhooks: '^src/webhooks/',
  reconciliation: '^src/reconciliation/',
  settlements: '^src/settlements/',
  privacy: '^src/privacy/',
  operator: '^src/operator/',
  cli: '^src/cli/',
  management: '^src/management/',
  console: '^src/console/',
  app: '^src/[^/]+\\.ts$',
};

/** The floors, lowest first: a folder imports its own folder and the floors below it. */
const FLOORS = [
  ['errors', 'logging', 'money', 'timing', 'concurrency', 'memory'],
  ['config'],
  ['database'],
  ['payflow', 'tracing'],
  ['messaging'],
  ['events'],
  ['outbox'],
  ['payments'],
  ['orders'],
  ['dead-letters'],
  ['webhooks', 'reconciliation', 'settlements', 'privacy'],
  ['operator'],
  ['cli', 'management', 'console', 'app'],
];

/** The one allowed direction between peers of a floor (importer: imported); none else. */
const PEER_IMPORTS = {
  // Amounts refuse bad input with the house's ValidationError.
  money: ['errors'],
  tracing: ['payflow'],
  cli: ['app'],
  console: ['management'],
  app: ['management', 'console'],
  // Privacy reads and erases the personal data of every store, the webhooks' included,
  // through the repository that owns each table.
  privacy: ['webhooks'],
};

/** What the folders above messaging may import of it: its ports, free of kafkajs. */
const MESSAGING_PORTS =
  '^src/messaging/(messaging\\.ports|dead-letter\\.port|dead-letter-headers)\\.ts$';

/** The concerns inside messaging. */
const MESSAGING_TRANSPORT = '^src/messaging/transport/';
const MESSAGING_KAFKA = '^src/messaging/kafka/';

const SPEC = '\\.spec\\.ts$';

/** One rule per folder: nothing from a higher floor, nor from a peer it may not import. */
const floorRules = FLOORS.flatMap((floor, level) =>
  floor.flatMap((folder) => {
    const above = FLOORS.slice(level + 1).flat();
    const peers = floor.filter(
      (peer) => peer !== folder && !(PEER_IMPORTS[folder] ?? []).includes(peer),
    );
    const forbidden = [...above, ...peers];
    if (forbidden.length === 0) return [];
    return {
      name: `floor-${folder}`,
      severity: 'error',
      comment:
        `src/${folder} (floor ${level}) imports only its floor or lower ones; not ` +
        `${forbidden.join(', ')}.`,
      from: { path: FOLDERS[folder], pathNot: SPEC },
      to: { path: forbidden.map((name) => FOLDERS[name]) },
    };
  }),
);

const ABOVE_MESSAGING = FLOORS.slice(FLOORS.findIndex((floor) => floor.includes('messaging')) + 1)
  .flat()
  .filter((folder) => !FLOORS.at(-1).includes(folder))
  .map((folder) => FOLDERS[folder]);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...floorRules,
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
      from: { path: '^src/', pathNot: SPEC },
      to: { path: '^(test|bench|testbed)/' },
    },
    {
      name: 'features-only-messaging-ports',
      severity: 'error',
      comment:
        'Above messaging, code publishes and dead-letters through the port files ' +
        '(messaging.ports.ts, dead-letter.port.ts, dead-letter-headers.ts), never through ' +
        'the Kafka adapters; only the app composes those.',
      from: { path: ABOVE_MESSAGING },
      to: { path: '^src/messaging/', pathNot: MESSAGING_PORTS },
    },
    {
      name: 'messaging-ports-only-ports',
      severity: 'error',
      comment:
        'The port files of src/messaging stay free of kafkajs and of the adapters, so that ' +
        'importing them brings no Kafka client along.',
      from: { path: MESSAGING_PORTS },
      to: { path: ['(^|/)node_modules/kafkajs/', '^src/messaging/'], pathNot: MESSAGING_PORTS },
    },
    {
      name: 'messaging-transport-knows-no-kafka',
      severity: 'error',
      comment:
        'src/messaging/transport is the broker-agnostic core (sequencing, commits, retry or ' +
        'dead letter); the Kafka adapters plug into its consumer port, never the reverse.',
      from: { path: MESSAGING_TRANSPORT, pathNot: SPEC },
      to: { path: ['(^|/)node_modules/kafkajs/', MESSAGING_KAFKA] },
    },
    {
      name: 'kafkajs-only-in-messaging',
      severity: 'error',
      comment: 'kafkajs stays behind the ports of src/messaging.',
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
      name: 'sandbox-apart',
      severity: 'error',
      comment:
        'The sandbox is another process: it shares the bottom floor (errors, logging, money, timing...) and the Payflow wire schemas only.',
      from: { path: '^src/sandbox/' },
      to: {
        path: '^src/',
        pathNot: '^src/(errors|logging|money|timing|concurrency|memory|payflow|sandbox)/',
      },
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
