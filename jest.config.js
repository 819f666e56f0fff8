// Two projects: unit specs beside the code, integration tests under test/ (real Postgres,
// real Apache Kafka from testbed/kafka, the sandbox over HTTP).
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2023',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/** @type {import('jest').Config} */
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      setupFiles: ['reflect-metadata'],
      // Real Apache Kafka (KRaft), started once per run: a 1-node and a 3-node cluster.
      globalSetup: '<rootDir>/test/support/kafka-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/kafka-global-teardown.ts',
    },
    {
      ...common,
      // The end-to-end suites again, against the sandbox's alternate answer shapes.
      displayName: 'alternate-shapes',
      testMatch: [
        '<rootDir>/test/pipeline/{pipeline,webhooks,every-event-type}.test.ts',
        '<rootDir>/test/webhooks/*.test.ts',
        '<rootDir>/test/reconciliation/*.test.ts',
      ],
      setupFiles: ['reflect-metadata', '<rootDir>/test/support/alternate-shapes.setup.ts'],
      globalSetup: '<rootDir>/test/support/kafka-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/kafka-global-teardown.ts',
    },
  ],
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
  testTimeout: 60000,
  maxWorkers: 2,
};
