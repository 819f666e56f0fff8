/**
 * OutboxModule in a Nest application: the relay starts at bootstrap and, at shutdown,
 * flushes what is pending and releases its bucket locks.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { MESSAGE_PRODUCER, type OutboundMessage } from '../../src/messaging/messaging.ports.js';
import { OutboxModule } from '../../src/outbox/outbox.module.js';
import { OutboxRelay } from '../../src/outbox/outbox.relay.js';
import { OutboxRepository } from '../../src/outbox/outbox.repository.js';
import { RELAY_LOCK_NAMESPACE } from '../../src/outbox/relay-locks.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  openDatabase,
  pendingCount,
  waitFor,
  writeOutbox,
  type OpenDatabase,
} from './outbox-test-kit.js';

describe('OutboxModule', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  const sent: OutboundMessage[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase('outbox_module');
    db = await openDatabase(testDb.url);
  });

  afterAll(async () => {
    await db?.close();
    await testDb?.drop();
  });

  const relayLocks = async (): Promise<number> => {
    const [row] = await db.database.sql.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM pg_locks
        WHERE locktype = 'advisory' AND classid IN ($1::int::oid, $2::int::oid)
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [RELAY_LOCK_NAMESPACE.BUCKET_OWNER, RELAY_LOCK_NAMESPACE.MEMBERS],
    );
    return row?.count ?? 0;
  };

  it('starts the relay with the application and flushes and unlocks on shutdown', async () => {
    @Global()
    @Module({
      providers: [
        { provide: DataSource, useValue: db.dataSource },
        {
          provide: MESSAGE_PRODUCER,
          useValue: {
            connect: () => Promise.resolve(),
            disconnect: () => Promise.resolve(),
            send: (messages: readonly OutboundMessage[]) => {
              sent.push(...messages);
              return Promise.resolve();
            },
          },
        },
      ],
      exports: [DataSource, MESSAGE_PRODUCER],
    })
    class InfrastructureModule {}

    const message = (n: number): OutboundMessage => ({
      topic: 'module.test',
      key: `K-${n % 3}`,
      value: String(n),
    });
    await writeOutbox(db.database, [1, 2, 3].map(message));

    const moduleRef = await Test.createTestingModule({
      imports: [
        InfrastructureModule,
        // A long idle pause: rows written without notify() wait for the shutdown flush.
        OutboxModule.forRoot({ relay: { idlePollMs: 60_000, rebalanceIntervalMs: 60_000 } }),
      ],
    }).compile();
    const app = await moduleRef.init();
    const relay = app.get(OutboxRelay);
    expect(relay.isRunning).toBe(true);
    expect(relay.ownedBuckets()).toHaveLength(16);
    expect(app.get(OutboxRepository)).toBeInstanceOf(OutboxRepository);
    await waitFor(
      'the rows from before start',
      async () => (await pendingCount(db.database)) === 0,
    );
    expect(await relayLocks()).toBe(17);

    await writeOutbox(db.database, [4, 5, 6, 7].map(message));
    expect(await pendingCount(db.database)).toBe(4);

    await app.close();
    expect(relay.isRunning).toBe(false);
    expect(await pendingCount(db.database)).toBe(0);
    const values = sent.map((m) => Number(m.value));
    expect([...values].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const key of ['K-0', 'K-1', 'K-2']) {
      const ofKey = sent.filter((m) => m.key === key).map((m) => Number(m.value));
      expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
    }
    expect(await relayLocks()).toBe(0);
  });
});
