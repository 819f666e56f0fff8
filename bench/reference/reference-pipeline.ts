/**
 * The floor the bridge is measured against (issue 21 §1; bench scenario reference-100ms). One event
 * per order key at a time, up to MAX_IN_FLIGHT at once; per event one POST /api/payments (undici,
 * PAYFLOW_MAX_CONNECTIONS connections, OAuth token first), one INSERT in autocommit, one produce of
 * payment.created (idempotent, acks=all); offsets committed once all before them are done.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel, type Message } from 'kafkajs';
import pg from 'pg';
import { Pool } from 'undici';

const env = (name: string, fallback = ''): string => process.env[name] ?? fallback;
const ms = (text: string): number => Number.parseInt(text, 10) * (/\ds$/.test(text) ? 1000 : 1);
const fail = (error: unknown): never => {
  process.stderr.write(`${JSON.stringify({ level: 60, msg: String(error) })}\n`);
  process.exit(1);
};
const maxInFlight = Number(env('MAX_IN_FLIGHT', '256'));
const [ordersTopic, statusTopic] = [env('TOPIC_ORDERS'), env('TOPIC_PAYMENT_STATUS')];
const kafka = new Kafka({ brokers: env('KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING });
const idempotent = env('KAFKA_PRODUCER_IDEMPOTENT', 'true') !== 'false';
const maxInFlightRequests = idempotent ? 5 : 1;
const createPartitioner = Partitioners.DefaultPartitioner;
const producer = kafka.producer({ idempotent, maxInFlightRequests, createPartitioner });
const maxWaitTimeInMs = ms(env('KAFKA_FETCH_MAX_WAIT', '1s'));
const consumer = kafka.consumer({ groupId: env('KAFKA_GROUP_ID'), maxWaitTimeInMs });
const db = new pg.Pool({ connectionString: env('DATABASE_URL'), max: Number(env('DB_POOL_SIZE')) });
const payflow = new URL(`${env('PAYFLOW_BASE_URL').replace(/\/$/, '')}/api/payments`);
const http = new Pool(payflow.origin, { connections: Number(env('PAYFLOW_MAX_CONNECTIONS')) });

async function token(): Promise<string> {
  const basic = Buffer.from(`${env('PAYFLOW_CLIENT_ID')}:${env('PAYFLOW_CLIENT_SECRET')}`);
  const response = await fetch(`${env('PAYFLOW_PARTNER_BASE_URL')}/auth/token`, {
    ...{ method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }) },
    headers: { authorization: `Basic ${basic.toString('base64')}` },
  });
  if (!response.ok) throw new Error(`token request: HTTP ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}
/** payment.created messages of one event-loop turn go out in one produce request. */
let queued: Message[] = [];
let batch: Promise<void> | undefined;
function produce(message: Message): Promise<void> {
  queued.push(message);
  batch ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    const messages = queued;
    [queued, batch] = [[], undefined];
    await producer.send({ topic: statusTopic, acks: -1, messages });
  });
  return batch;
}
type Line = { description: string; quantity: number; unitPriceNet: string; taxRate: number };
type Vehicle = { numberPlate: string; brand: string; model: string; year: number };
type Order = { orderNumber: string; customer: object; vehicles: Vehicle[]; lines: Line[] };
type Data = Order & { currency: string; dueDate: string };
type OrderEvent = { eventId: string; organizationId: string; orderId: string; data: Data };
async function handle(headers: Record<string, string>, value: Buffer): Promise<void> {
  const { eventId, organizationId, orderId, data } = JSON.parse(value.toString()) as OrderEvent;
  let [net, gross] = [0, 0];
  const items = data.lines.map(({ description, quantity, unitPriceNet, taxRate }) => {
    const lineNet = Math.round(Number(unitPriceNet) * 100) * quantity;
    const lineGross = Math.round(lineNet * (1 + taxRate / 100));
    [net, gross] = [net + lineNet, gross + lineGross];
    const prices = { netTotalPrice: lineNet / 100, grossTotalPrice: lineGross / 100 };
    const vatAmount = (lineGross - lineNet) / 100;
    return { description, quantity, taxRate, lineType: 'regular', vatAmount, ...prices };
  });
  const totals = { totalGrossAmount: gross / 100, totalNetAmount: net / 100 };
  const objects = data.vehicles.map((car) => ({ ...car, type: 'newCar', year: `${car.year}` }));
  const apiKey = randomUUID();
  const response = await http.request({
    ...{ path: payflow.pathname, method: 'POST', headers },
    body: JSON.stringify({
      customer: data.customer,
      order: { orderNumber: data.orderNumber, objects },
      payment: { currency: data.currency, ...totals, dueDate: data.dueDate, items },
      callback: { url: `https://127.0.0.1/webhooks/${randomUUID()}`, api_key: apiKey },
    }),
  });
  const created = (await response.body.json()) as { id: string; _links?: { longGui?: string } };
  if (response.statusCode !== 200) throw new Error(`POST /api/payments: ${response.statusCode}`);
  const [id, link] = [randomUUID(), created._links?.longGui ?? null];
  const secrets = [randomUUID(), createHash('sha256').update(apiKey).digest()];
  await db.query(
    `INSERT INTO payments (id, order_id, event_id, organization_id, payflow_id, state, currency,
       total_gross_minor, total_net_minor, payment_link, webhook_token, api_key_hash)
     VALUES ($1, $2, $3, $4, $5, 'created', $6, $7, $8, $9, $10, $11)`,
    [id, orderId, eventId, organizationId, created.id, data.currency, gross, net, link, ...secrets],
  );
  const head = { eventId: randomUUID(), type: 'payment.created', organizationId, orderId };
  const payload = { sourceEventId: eventId, paymentLink: link, currency: data.currency, ...totals };
  const event = { ...head, occurredAt: new Date().toISOString(), paymentId: id, data: payload };
  await produce({ key: orderId, value: JSON.stringify(event) });
}
const chains = new Map<string, Promise<void>>(); // each order key's last event
const marks = new Map<number, { next: string; done: boolean }[]>(); // per partition, in order
const waiting: (() => void)[] = [];
let inFlight = 0;
function commit(): Promise<void> {
  const offsets = [...marks].flatMap(([partition, list]) => {
    let offset: string | undefined;
    while (list[0]?.done === true) offset = list.shift()?.next;
    return offset === undefined ? [] : [{ topic: ordersTopic, partition, offset }];
  });
  return offsets.length === 0 ? Promise.resolve() : consumer.commitOffsets(offsets);
}
async function main(): Promise<void> {
  const headers = { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' };
  await Promise.all([producer.connect(), consumer.connect()]);
  await consumer.subscribe({ topic: ordersTopic, fromBeginning: true });
  consumer.on(consumer.events.GROUP_JOIN, () => console.log('{"msg":"order events: consuming"}'));
  const committer = setInterval(() => void commit().catch(fail), 200);
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async (payload) => {
      const list = marks.get(payload.batch.partition) ?? [];
      marks.set(payload.batch.partition, list);
      for (const { key, value, offset } of payload.batch.messages) {
        while (inFlight >= maxInFlight && payload.isRunning()) {
          await new Promise<void>((resolve) => waiting.push(resolve));
          await payload.heartbeat();
        }
        if (!payload.isRunning() || value === null) return;
        const [mark, order] = [{ next: `${BigInt(offset) + 1n}`, done: false }, String(key)];
        list.push(mark);
        inFlight++;
        const tail: Promise<void> = (chains.get(order) ?? Promise.resolve())
          .then(() => handle(headers, value))
          .then(() => {
            [mark.done, inFlight] = [true, inFlight - 1];
            if (chains.get(order) === tail) chains.delete(order);
            for (const wake of waiting.splice(0)) wake();
          }, fail);
        chains.set(order, tail);
        payload.resolveOffset(offset);
      }
    },
  });
  process.once('SIGTERM', () => void drain(committer).then(() => process.exit(0), fail));
}
async function drain(committer: NodeJS.Timeout): Promise<void> {
  await consumer.stop();
  await Promise.all(chains.values());
  clearInterval(committer);
  await commit();
  await Promise.all([consumer.disconnect(), producer.disconnect(), db.end(), http.close()]);
}
main().catch(fail);
