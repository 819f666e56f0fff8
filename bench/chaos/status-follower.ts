/**
 * The campaign's payer: follows the status topic as it grows and, for chosen orders whose
 * payment.created arrives, makes the sandbox act as the payer would (POST
 * /sandbox/payments/{id}/simulate: opened, paid), so that Payflow's webhooks flow back to
 * the workers. Notes which of those payments got their payment.status_changed.
 */
import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import pg from 'pg';
import { tokenOfCallback } from '../../testbed/invariants.js';
import { testbedKafka } from '../../testbed/kafka-io.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';

export type PayerAction = 'paid' | 'opened';

interface StatusValue {
  readonly type?: string;
  readonly orderId?: string;
  readonly paymentId?: string | null;
}

export class StatusFollower {
  /** Payflow payment id → what the payer did. */
  private readonly simulated = new Map<string, PayerAction>();
  /** Payments whose creation was in doubt (their webhook settles the doubt instead). */
  private readonly inDoubt = new Set<string>();
  /** Payflow payment ids with a payment.status_changed. */
  private readonly changed = new Set<string>();
  private readonly decided = new Set<string>();
  private readonly queue: { paymentId: string; action: PayerAction }[] = [];
  private running = 0;
  simulateFailures = 0;

  private constructor(
    private readonly consumer: Consumer,
    private readonly sandboxUrl: string,
  ) {}

  static async start(
    brokers: readonly string[],
    topic: string,
    sandboxUrl: string,
    decide: (orderId: string) => PayerAction | undefined,
  ): Promise<StatusFollower> {
    const consumer = testbedKafka(brokers, 'chaos-payer').consumer({
      groupId: `chaos-payer-${randomUUID()}`,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: 500,
    });
    const follower = new StatusFollower(consumer, sandboxUrl);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        let value: StatusValue;
        try {
          value = JSON.parse(message.value?.toString('utf8') ?? '') as StatusValue;
        } catch {
          return;
        }
        const paymentId = value.paymentId;
        if (typeof paymentId !== 'string') return;
        if (value.type === 'payment.status_changed') follower.changed.add(paymentId);
        if (value.type === 'payment.created' && value.orderId !== undefined) {
          if (follower.decided.has(paymentId)) return;
          follower.decided.add(paymentId);
          const action = decide(value.orderId);
          if (action !== undefined) follower.enqueue(paymentId, action);
        }
        await Promise.resolve();
      },
    });
    return follower;
  }

  /**
   * Creations still in doubt whose payment exists at Payflow: the payer opens it there, so
   * that its webhook settles the doubt. Returns how many.
   */
  async simulateInDoubt(databaseUrl: string): Promise<number> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    let tokens: Set<string>;
    try {
      const { rows } = await client.query<{ token: string }>(
        `SELECT webhook_token AS token FROM payments WHERE state = 'in_doubt'`,
      );
      tokens = new Set(rows.map((row) => row.token));
    } finally {
      await client.end();
    }
    if (tokens.size === 0) return 0;
    const payments = await allSandboxPayments<{
      id: string;
      body: { callback?: { url?: string } };
    }>(this.sandboxUrl);
    let found = 0;
    for (const payment of payments) {
      const token = tokenOfCallback(payment.body.callback?.url);
      if (token !== undefined && tokens.has(token) && !this.simulated.has(payment.id)) {
        found++;
        this.inDoubt.add(payment.id);
        this.enqueue(payment.id, 'opened');
      }
    }
    return found;
  }

  /** Waits until every simulated payment has its status event (or the time is up). */
  async waitWebhooks(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (
      Date.now() < deadline &&
      (this.running > 0 || this.queue.length > 0 || this.summary().missing > 0)
    ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /**
   * Payments the payer acted on (apart from those in doubt, whose webhook settles the doubt:
   * the invariants count how), and how many of them got their payment.status_changed.
   */
  summary(): {
    simulated: number;
    seen: number;
    missing: number;
    simulateFailures: number;
    inDoubtOpened: number;
  } {
    let simulated = 0;
    let seen = 0;
    for (const paymentId of this.simulated.keys()) {
      if (this.inDoubt.has(paymentId)) continue;
      simulated++;
      if (this.changed.has(paymentId)) seen++;
    }
    return {
      simulated,
      seen,
      missing: simulated - seen,
      simulateFailures: this.simulateFailures,
      inDoubtOpened: this.inDoubt.size,
    };
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
  }

  private enqueue(paymentId: string, action: PayerAction): void {
    this.queue.push({ paymentId, action });
    this.pump();
  }

  /** At most 8 simulate calls at once (each waits for its webhook deliveries). */
  private pump(): void {
    while (this.running < 8 && this.queue.length > 0) {
      const next = this.queue.shift();
      if (next === undefined) return;
      this.running++;
      void this.simulate(next.paymentId, next.action).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async simulate(paymentId: string, action: PayerAction): Promise<void> {
    try {
      const response = await fetch(`${this.sandboxUrl}/sandbox/payments/${paymentId}/simulate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action }),
        signal: AbortSignal.timeout(60_000),
      });
      await response.arrayBuffer();
      if (response.ok) this.simulated.set(paymentId, action);
      else this.simulateFailures++;
    } catch {
      this.simulateFailures++;
    }
  }
}
