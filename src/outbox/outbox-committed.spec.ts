import 'reflect-metadata';
import { describe, expect, it, jest } from '@jest/globals';
import { Inject, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { CommittedBatch } from '../database/transaction-batcher.js';
import { OutboxCommitted, OutboxCommittedModule } from './outbox-committed.js';

@Injectable()
class WritesOutboxRows {
  constructor(@Inject(OutboxCommitted) readonly outboxCommitted: OutboxCommitted) {}
}

describe('OutboxCommitted', () => {
  it("wakes the application's relay after each commit", () => {
    const relay = { notify: jest.fn() };
    const committed = OutboxCommitted.ofRelay(relay);
    committed.committed();
    committed.committed();
    expect(relay.notify).toHaveBeenCalledTimes(2);
    expect(committed.publishedBy).toBe('this-relay');
  });

  it('wakes it after every batch the batcher commits, and stops when unsubscribed', () => {
    const relay = { notify: jest.fn() };
    const listeners = new Set<(batch: CommittedBatch) => void>();
    const batcher = {
      onCommit: (listener: (batch: CommittedBatch) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const sizes: number[] = [];
    const off = OutboxCommitted.ofRelay(relay).afterEachCommitOf(batcher, (units) =>
      sizes.push(units),
    );
    for (const listener of listeners) listener({ units: 3 });
    off();
    for (const listener of listeners) listener({ units: 5 });
    expect(relay.notify).toHaveBeenCalledTimes(1);
    expect(sizes).toEqual([3]);
  });

  it('fails at boot when a producer of outbox rows does not import a module providing it', async () => {
    await expect(
      Test.createTestingModule({ providers: [WritesOutboxRows] }).compile(),
    ).rejects.toThrow(/OutboxCommitted/);
  });

  it('is provided, explicitly, without a relay (the CLI)', async () => {
    const module = await Test.createTestingModule({
      imports: [OutboxCommittedModule.withoutRelay()],
      providers: [WritesOutboxRows],
    }).compile();
    const { outboxCommitted } = module.get(WritesOutboxRows);
    expect(outboxCommitted.publishedBy).toBe('notified-relays');
    expect(() => outboxCommitted.committed()).not.toThrow();
    await module.close();
  });
});
