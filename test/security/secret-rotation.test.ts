/**
 * A rotated Payflow client secret is picked up without a restart (issue 18 §3): the worker
 * reads PAYFLOW_CLIENT_SECRET_FILE (mounted as Kubernetes mounts a secret), the secret is
 * rotated at Payflow (the sandbox's control call) and in the file, and orders keep flowing.
 *
 * The sandbox, like the usual OAuth servers, refuses the old secret at once but lets access
 * tokens already issued live until they expire; so the rotation bites at the client's next
 * token request. The test brings that moment forward by advancing the sandbox's virtual clock
 * past the token lifetime while orders are in flight: their calls get 401 (token expired), the
 * client asks for a new token with the secret it holds, Payflow answers invalid_client, the
 * client reads the file again and asks once more with the new secret.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadCliConfig, loadCliPayflowConfig } from '../../src/cli/cli.config.js';
import { sleep } from '../../src/timing/sleep.js';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import { PayflowError } from '../../src/payflow/payflow.errors.js';
import { payflowClientOptionsFromConfig } from '../../src/payflow/payflow.module.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, paymentRequestedData } from '../support/builders.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { fetchToken, sandboxControl, SANDBOX_CLIENT_ID } from '../support/sandbox.js';
import { capturingLogger, mountedSecret, type MountedSecret } from '../support/secret-rotation.js';

const REREAD = 're-read PAYFLOW_CLIENT_SECRET_FILE';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
}

/** The secret in every form it could leak in: as is, and inside an HTTP Basic header. */
function leakForms(secret: string): string[] {
  return [secret, Buffer.from(`${SANDBOX_CLIENT_ID}:${secret}`).toString('base64')];
}

function rotateAtPayflow(pipeline: Pipeline, clientSecret: string): Promise<unknown> {
  return sandboxControl(pipeline.sandbox, 'POST', `/clients/${SANDBOX_CLIENT_ID}/secret`, {
    clientSecret,
  });
}

describe('a rotated Payflow client secret (PAYFLOW_CLIENT_SECRET_FILE)', () => {
  const firstSecret = `first-${randomUUID()}`;
  let secretFile: MountedSecret;
  let pipeline: Pipeline;
  let status: TopicReader;
  let dlq: TopicReader;

  beforeAll(async () => {
    secretFile = mountedSecret('payflow-client-secret', firstSecret);
    // The secret comes from the file only (an empty variable counts as unset).
    pipeline = await startPipeline('secret-rotation', {
      PAYFLOW_CLIENT_SECRET: '',
      PAYFLOW_CLIENT_SECRET_FILE: secretFile.path,
    });
    await rotateAtPayflow(pipeline, firstSecret);
    [status, dlq] = await Promise.all([
      TopicReader.start(pipeline.kafka, pipeline.topics.status),
      TopicReader.start(pipeline.kafka, pipeline.topics.dlq),
    ]);
  });

  afterAll(async () => {
    await Promise.allSettled([status.stop(), dlq.stop()]);
    await pipeline.stop();
    secretFile.remove();
  });

  it('the configuration holds the file’s secret and keeps the file’s path', () => {
    expect(pipeline.config.PAYFLOW_CLIENT_SECRET).toBe(firstSecret);
    expect(pipeline.config.PAYFLOW_CLIENT_SECRET_FILE).toBe(secretFile.path);
  });

  it('the worker: orders keep flowing across the rotation, none fails, no secret is logged', async () => {
    const capture = capturingLogger();
    const worker: Worker = await startWorker(pipeline.config, capture.logger, {
      relay: { idlePollMs: 100 },
    });
    const secondSecret = `second-${randomUUID()}`;
    const published: string[] = [];
    const publishedAfterExpiry: string[] = [];
    let tokenExpired = false;
    let publishing = true;
    // Orders all along: a few every 100 ms, from before the rotation to after it bit.
    const publisher = (async () => {
      while (publishing) {
        const orderIds = [anOrderId('ROT'), anOrderId('ROT'), anOrderId('ROT')];
        await pipeline.publish(
          orderIds.map((orderId) => ({
            key: orderId,
            value: anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
          })),
        );
        published.push(...orderIds);
        if (tokenExpired) publishedAfterExpiry.push(...orderIds);
        await sleep(100);
      }
    })();
    const createdFor = (orderIds: readonly string[]) => () => {
      const created = new Set(
        status
          .json<StatusEvent>()
          .filter((event) => event.type === 'payment.created')
          .map((event) => event.orderId),
      );
      return orderIds.every((orderId) => created.has(orderId));
    };

    try {
      // Flowing with the first secret.
      await status.waitFor(
        () => published.length >= 9 && createdFor(published.slice(0, 9))(),
        60_000,
      );

      // The rotation: at Payflow first (the old secret is refused at once), then in the file.
      await rotateAtPayflow(pipeline, secondSecret);
      await expect(fetchToken(pipeline.sandbox, SANDBOX_CLIENT_ID, firstSecret)).rejects.toThrow(
        /401.*invalid_client/,
      );
      const beforeFile = published.length;
      await status.waitFor(() => published.length >= beforeFile + 6, 60_000);
      secretFile.update(secondSecret);

      // The token the worker holds expires (Payflow's clock past its lifetime) with orders in flight.
      const beforeExpiry = published.length;
      await status.waitFor(() => published.length >= beforeExpiry + 3, 60_000);
      await sandboxControl(pipeline.sandbox, 'POST', '/clock/advance', { minutes: 61 });
      tokenExpired = true;
      await status.waitFor(() => publishedAfterExpiry.length >= 15, 60_000);
    } finally {
      publishing = false;
      await publisher;
    }

    try {
      await status.waitFor(createdFor(published), 120_000);
    } finally {
      await worker.shutdown();
    }

    // Every order got its payment.created, exactly one payment each at Payflow; nothing failed.
    const statusEvents = status.json<StatusEvent>();
    const ours = new Set(published);
    expect(
      statusEvents.filter((event) => ours.has(event.orderId) && event.type !== 'payment.created'),
    ).toEqual([]);
    const payments = await sandboxControl<{
      payments: { body: { payment: { internalRef?: string } } }[];
    }>(pipeline.sandbox, 'GET', '/payments');
    const refs = payments.payments
      .map((payment) => payment.body.payment.internalRef)
      .filter((ref): ref is string => ref !== undefined && ours.has(ref));
    expect(refs.length).toBe(published.length);
    expect(new Set(refs).size).toBe(published.length);
    expect(dlq.messages).toEqual([]);
    expect(publishedAfterExpiry.length).toBeGreaterThanOrEqual(15);

    // The rotation bit: one re-read of the file, one new secret; never a secret in the logs.
    const rereads = capture.lines.filter(
      (line) => typeof line.msg === 'string' && line.msg.includes('PAYFLOW_CLIENT_SECRET_FILE'),
    );
    expect(rereads).toEqual([
      expect.objectContaining({
        changed: true,
        file: secretFile.path,
        msg: expect.stringContaining(REREAD) as unknown,
      }),
    ]);
    expect(capture.lines.filter((line) => line.msg === 'order event dead-lettered')).toEqual([]);
    const logs = capture.text();
    for (const form of [...leakForms(firstSecret), ...leakForms(secondSecret)]) {
      expect(logs).not.toContain(form);
    }
  }, 300_000);

  it('the CLI’s client (reconcile, settlements pull): the same rule, through the same client', async () => {
    // As `reconcile` and `settlements pull` build it: loadCliConfig → loadCliPayflowConfig.
    const current = `cli-${randomUUID()}`;
    await rotateAtPayflow(pipeline, current);
    secretFile.update(current);
    const capture = capturingLogger();
    const cliConfig = loadCliConfig({
      DATABASE_URL: pipeline.database.url,
      KAFKA_BROKERS: pipeline.cluster.bootstrapServers,
      PAYFLOW_BASE_URL: pipeline.sandbox.url,
      PAYFLOW_PARTNER_BASE_URL: pipeline.sandbox.partnerUrl,
      PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
      PAYFLOW_CLIENT_SECRET_FILE: secretFile.path,
    });
    const client = new PayflowClient(
      payflowClientOptionsFromConfig(loadCliPayflowConfig(cliConfig)),
      capture.logger,
    );
    try {
      expect((await client.listOrganizations()).map((organization) => organization.id)).toEqual([
        'org-1',
      ]);

      // Rotated at Payflow, the file not yet: the refusal stands (after one re-read).
      const next = `cli-next-${randomUUID()}`;
      await rotateAtPayflow(pipeline, next);
      await sandboxControl(pipeline.sandbox, 'POST', '/clock/advance', { minutes: 61 });
      const refused = await client.listOrganizations().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PayflowError);
      expect(refused).toMatchObject({
        code: 'PAYFLOW.UNAUTHORIZED',
        payflowCode: 'invalid_client',
        stage: 'token',
        reached: 'no',
      });
      expect(client.clientSecretRereadCount).toBe(1);

      // The file updated: the next call reads it again and goes through, without a restart.
      secretFile.update(next);
      expect((await client.listOrganizations()).map((organization) => organization.id)).toEqual([
        'org-1',
      ]);
      expect(client.clientSecretRereadCount).toBe(2);
      expect(
        capture.lines
          .filter(
            (line) =>
              typeof line.msg === 'string' && line.msg.includes('PAYFLOW_CLIENT_SECRET_FILE'),
          )
          .map((line) => line.changed),
      ).toEqual([false, true]);
      const logs = capture.text();
      for (const form of [...leakForms(current), ...leakForms(next)]) {
        expect(logs).not.toContain(form);
      }
    } finally {
      await client.close();
    }
  });
});
