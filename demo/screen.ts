/**
 * The one screen the demo prints: per order, each event the ERP published (→) and what
 * came back for it (← a status event, ✗ a dead letter), then what the payer did in the
 * sandbox (→ payer, with the worker's answers to the webhooks) and the status events those
 * webhooks caused; then the nightly settlements (the night booked in the sandbox, the
 * file event and its lines, each with its order when it is one of ours) and their
 * reconciliation (the night's totals, its findings, and what a person runs next); then
 * where everything ran. Plain text; colours only when asked to (a terminal without NO_COLOR).
 */
import { TOPICS, type ReceivedMessage } from './kafka.js';
import { describePaid, type Paid, type WebhookResult } from './payer.js';
import type { DemoOrder, ErpMessage, Expected } from './scenario.js';
import {
  DEFAULT_SCHEDULE,
  DEMO_SCHEDULE,
  lineSums,
  type DemoNight,
  type NightResult,
  type SettlementExceptionEvent,
  type SettlementLineEvent,
  type SettlementReconciledEvent,
} from './settlements.js';
import { formatMinorUnits } from '../src/money/money.js';

export interface StatusEnvelope {
  readonly eventId: string;
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

/** What came back for the demo, sorted by order. */
export interface Outcome {
  readonly orderId: string | null;
  /** The ERP event it answers (data.sourceEventId, or the dead letter's original eventId). */
  readonly sourceEventId: string | null;
  readonly message: ReceivedMessage;
  readonly status: StatusEnvelope | null;
}

/** Status events (deduplicated on eventId) and dead letters (on their original offset). */
export function outcomesOf(messages: readonly ReceivedMessage[]): Outcome[] {
  const seen = new Set<string>();
  const outcomes: Outcome[] = [];
  for (const message of messages) {
    if (message.topic === TOPICS.status) {
      const status = parseStatus(message.value);
      if (status === null || seen.has(`s:${status.eventId}`)) continue;
      seen.add(`s:${status.eventId}`);
      const source = status.data['sourceEventId'];
      outcomes.push({
        orderId: status.orderId,
        sourceEventId: typeof source === 'string' ? source : null,
        message,
        status,
      });
    } else if (message.topic === TOPICS.dlq) {
      const id = `d:${message.headers['x-dlq-original-partition']}:${message.headers['x-dlq-original-offset']}`;
      if (seen.has(id)) continue;
      seen.add(id);
      outcomes.push({
        orderId: message.key,
        sourceEventId: eventIdOf(message.value),
        message,
        status: null,
      });
    }
  }
  return outcomes;
}

/** True when `outcome` is what `expected` describes. */
export function matches(outcome: Outcome, expected: Expected): boolean {
  if (expected.topic === 'dlq') {
    return outcome.status === null && outcome.message.headers['x-dlq-reason'] === expected.reason;
  }
  const status = outcome.status;
  if (status?.type !== expected.type) return false;
  return Object.entries(expected.data ?? {}).every(([key, value]) => status.data[key] === value);
}

/** "payment.status_changed (status paid, source webhook)", "dead letter invalid_json". */
export function describeExpected(expected: Expected): string {
  if (expected.topic === 'dlq') return `dead letter ${expected.reason}`;
  const data = Object.entries(expected.data ?? {});
  return data.length === 0
    ? expected.type
    : `${expected.type} (${data.map(([key, value]) => `${key} ${value}`).join(', ')})`;
}

/** Expected outcomes still missing, as "SO-1: payment.created" lines. */
export function missingOutcomes(
  orders: readonly DemoOrder[],
  outcomes: readonly Outcome[],
): string[] {
  const missing: string[] = [];
  for (const order of orders) {
    const mine = outcomes.filter((outcome) => outcome.orderId === order.orderId);
    const used = new Set<Outcome>();
    for (const expected of order.expected) {
      const found = mine.find((outcome) => !used.has(outcome) && matches(outcome, expected));
      if (found === undefined) {
        missing.push(`${order.orderId}: ${describeExpected(expected)}`);
      } else {
        used.add(found);
      }
    }
  }
  return missing;
}

/**
 * Outcomes that mean something went wrong: a dead letter or a payment.creation_failed that
 * no order expects. Other extra status events (a payment.status_changed, say) are shown
 * on the screen but fail nothing.
 */
export function failedOutcomes(
  orders: readonly DemoOrder[],
  outcomes: readonly Outcome[],
): Outcome[] {
  const failed: Outcome[] = [];
  const known = new Set(orders.map((order) => order.orderId));
  for (const order of orders) {
    const remaining = [...order.expected];
    for (const outcome of outcomes.filter((o) => o.orderId === order.orderId)) {
      const index = remaining.findIndex((expected) => matches(outcome, expected));
      if (index !== -1) remaining.splice(index, 1);
      else if (isFailure(outcome)) failed.push(outcome);
    }
  }
  return [
    ...failed,
    ...outcomes.filter((o) => (o.orderId === null || !known.has(o.orderId)) && isFailure(o)),
  ];
}

function isFailure(outcome: Outcome): boolean {
  return outcome.status === null || outcome.status.type === 'payment.creation_failed';
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  cyan(text: string): string;
}

const PLAIN: Style = {
  bold: (t) => t,
  dim: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  red: (t) => t,
  cyan: (t) => t,
};

const ansi =
  (open: number, close: number) =>
  (text: string): string =>
    `\u001b[${open}m${text}\u001b[${close}m`;

const COLOURS: Style = {
  bold: ansi(1, 22),
  dim: ansi(2, 22),
  green: ansi(32, 39),
  yellow: ansi(33, 39),
  red: ansi(31, 39),
  cyan: ansi(36, 39),
};

export function styleFor(colour: boolean): Style {
  return colour ? COLOURS : PLAIN;
}

export interface Placement {
  /** Which Kafka: `librdkafka mock cluster` or `Apache Kafka 3.9.1 (KRaft)`. */
  readonly kafka: string;
  readonly bootstrapServers: string;
  readonly brokers: number;
  readonly sandboxUrl: string;
  readonly sandboxPid: number;
  readonly workerPid: number;
  /** The public listener: webhooks only. */
  readonly workerUrl: string;
  /** The management listener: /health, /metrics. */
  readonly managementUrl: string;
  readonly databaseUrl: string;
}

/** The night the demo booked in the sandbox and what came back for it. */
export interface SettlementsShown {
  readonly night: DemoNight;
  /** What the payer paid and the demo booked on the night (empty when it did not get there). */
  readonly paid: readonly Paid[];
  readonly result: NightResult;
}

export interface ScreenInput {
  readonly orders: readonly DemoOrder[];
  readonly outcomes: readonly Outcome[];
  /** What the payer paid in the sandbox, per order. */
  readonly paid: readonly Paid[];
  readonly settlements: SettlementsShown;
  readonly placement: Placement;
  readonly elapsedMs: number;
  readonly style: Style;
}

const INDENT = ' '.repeat(24);
/** Bad rows of a settlement file listed by line number (the rest are counted). */
const BAD_ROWS_SHOWN = 3;
/** Settlement lines listed (the rest are counted). */
const LINES_SHOWN = 10;
/** Long values (an x-dlq-error) are wrapped to keep lines within this many columns. */
const WIDTH = 100;

export function renderScreen(input: ScreenInput): string[] {
  const { orders, outcomes, placement, style: s } = input;
  const published = orders.reduce((n, order) => n + order.messages.length, 0);
  const statusCount = outcomes.filter((o) => o.status !== null).length;
  const letters = outcomes.length - statusCount;
  const payments = input.paid.length;
  const lines: string[] = [
    s.bold('payflow-bridge demo') +
      s.dim(' · ERP → Kafka → payflow-bridge → Payflow (sandbox) → webhooks → Kafka'),
    `${published} ERP events and ${payments} payment${payments === 1 ? '' : 's'} by the payer; ` +
      `back came ${statusCount} status events and ${letters} dead letters ` +
      `in ${(input.elapsedMs / 1000).toFixed(1)} s.`,
    '',
  ];
  const shown = new Set<Outcome>();
  for (const order of orders) {
    lines.push(`${s.bold(order.orderId)}  ${order.title}`);
    const mine = outcomes.filter((outcome) => outcome.orderId === order.orderId);
    for (const message of order.messages) {
      lines.push(`  ${s.cyan('→')} ${message.summary}`);
      const answers = mine.filter((outcome) => answersMessage(outcome, message));
      for (const outcome of answers) {
        shown.add(outcome);
        lines.push(...renderOutcome(outcome, s));
      }
      if (answers.length === 0) lines.push(`  ${s.red('… nothing came back for it')}`);
    }
    const paid = input.paid.find((payment) => payment.orderId === order.orderId);
    if (paid !== undefined) lines.push(renderPaid(paid, s));
    else if (order.payer !== undefined) lines.push(`  ${s.red('… the payer did not get to pay')}`);
    // The rest (what the payer's webhooks caused): an order's installment changes on one line.
    const rest = mine.filter((o) => !shown.has(o));
    const installments = rest.filter((o) => o.status?.type === 'installment.status_changed');
    for (const outcome of rest) {
      shown.add(outcome);
      if (installments.length < 2 || !installments.includes(outcome)) {
        lines.push(...renderOutcome(outcome, s));
      } else if (outcome === installments[0]) {
        lines.push(renderInstallmentChanges(installments, s));
      }
    }
  }
  const strays = outcomes.filter((outcome) => !shown.has(outcome));
  if (strays.length > 0) {
    lines.push(s.bold('not from this demo'));
    for (const outcome of strays) lines.push(...renderOutcome(outcome, s));
  }
  lines.push('', ...renderSettlements(input.settlements, s));
  if (input.settlements.result.file !== null) {
    lines.push('', ...renderReconciliation(input.settlements, s));
  }
  lines.push(
    '',
    s.bold('Where it ran'),
    `  Kafka     ${placement.kafka}, ${placement.brokers} broker${placement.brokers === 1 ? '' : 's'}: ${placement.bootstrapServers}`,
    `  Payflow   sandbox ${placement.sandboxUrl} (pid ${placement.sandboxPid}), client sandbox-client`,
    `  worker    node dist/src/main.js, pid ${placement.workerPid}, ${placement.workerUrl} (/webhooks), ${placement.managementUrl} (/health, /metrics)`,
    `  Postgres  ${placement.databaseUrl} (kept until the next run)`,
    `  look      DATABASE_URL=${placement.databaseUrl} npx payflow-bridge order show SO-10043`,
  );
  return lines;
}

/**
 * The nightly settlements: the schedule, what the sandbox holds for the night (→), the
 * file event (←, with its bad rows ✗) and its lines, one each, in columns.
 */
function renderSettlements(shown: SettlementsShown, s: Style): string[] {
  const { night, result } = shown;
  const paid = shown.paid.length;
  const ours = paid === 0 ? s.red('; the payer paid nothing') : `; then ${paid} the payer paid`;
  const lines = [
    `${s.bold('Nightly settlements')}  ${s.dim('cron')} ${DEMO_SCHEDULE.says} in this demo ` +
      s.dim(`(${DEMO_SCHEDULE.cron} ${DEMO_SCHEDULE.timeZone}); by default ${DEFAULT_SCHEDULE}`),
    `  ${s.cyan('→')} ${'sandbox'.padEnd(20)}${night.summary}${ours}`,
  ];
  const file = result.file;
  if (file === null) {
    lines.push(
      `  ${s.red(`… no settlement.file_available for ${night.organizationId} ${night.date}`)}`,
    );
    return lines;
  }
  lines.push(
    `  ${s.green('←')} ${s.green('settlement.file_available')}  ` +
      `${file.organizationId} ${file.dateFrom}${file.dateTo === file.dateFrom ? '' : ` – ${file.dateTo}`}` +
      `, format ${file.format}, version ${file.version}`,
    `${INDENT}${plural(file.rows, 'row')}, ${plural(file.badRows, 'bad row')}, ` +
      `${size(file.sizeBytes)} stored, ${s.dim('sha256')} ${file.sha256.slice(0, 16)}…`,
  );
  const shownBad = file.badRowSamples.slice(0, BAD_ROWS_SHOWN);
  for (const bad of shownBad) {
    const label = `${s.yellow('✗')} line ${bad.lineNumber}  `;
    const labelWidth = `✗ line ${bad.lineNumber}  `.length;
    lines.push(
      ...wrap(bad.error, WIDTH - INDENT.length - labelWidth).map(
        (part, index) => `${INDENT}${index === 0 ? label : ' '.repeat(labelWidth)}${part}`,
      ),
    );
  }
  if (file.badRows > shownBad.length) {
    lines.push(
      `${INDENT}${s.dim(`and ${plural(file.badRows - shownBad.length, 'more bad row')}`)}`,
    );
  }
  if (result.lines.length > 0) {
    lines.push(
      ...renderSettlementLines(result.lines.slice(0, LINES_SHOWN), result.lines.length, s),
    );
  }
  if (result.lines.length > LINES_SHOWN) {
    lines.push(`${INDENT}${s.dim(`and ${result.lines.length - LINES_SHOWN} more`)}`);
  }
  if (result.lines.length < file.rows) {
    lines.push(
      `  ${s.red(`… ${result.lines.length} of ${plural(file.rows, 'settlement.line')} came`)}`,
    );
  }
  return lines;
}

/** Findings listed (the rest are counted). */
const FINDINGS_SHOWN = 3;

/**
 * The night's reconciliation: its totals per currency (each checked against the sum of
 * the night's lines, in minor units), its findings (kind, payment, expected vs settled),
 * and the commands and console page a person uses next.
 */
function renderReconciliation(shown: SettlementsShown, s: Style): string[] {
  const { night, result } = shown;
  const lines = [
    `${s.bold('Reconciliation')}  ${night.organizationId} ${night.date}, by the worker after ` +
      `the pull ${s.dim('(docs/finance.md)')}`,
  ];
  if (result.reconciled.length === 0) {
    lines.push(
      `  ${s.red(`… no settlement.reconciled for ${night.organizationId} ${night.date}`)}`,
    );
  }
  for (const totals of result.reconciled) lines.push(...renderTotals(totals, result, s));
  const findings = result.reconciled.reduce((n, totals) => n + totals.findings, 0);
  for (const exception of result.exceptions.slice(0, FINDINGS_SHOWN)) {
    lines.push(...renderException(exception, s));
  }
  if (result.exceptions.length > FINDINGS_SHOWN) {
    lines.push(`${INDENT}${s.dim(`and ${result.exceptions.length - FINDINGS_SHOWN} more`)}`);
  }
  if (result.exceptions.length < findings) {
    lines.push(
      `  ${s.red(`… ${result.exceptions.length} of ${plural(findings, 'settlement.exception')} came`)}`,
    );
  }
  const finding = result.exceptions[0]?.findingId ?? 'ID';
  lines.push(
    `  ${s.cyan('next'.padEnd(22))}npx payflow-bridge settlements reconcile --csv FILE ` +
      s.dim('(lines, totals)'),
    `${INDENT}npx payflow-bridge settlements acknowledge ${finding} --reason TEXT`,
    `${INDENT}/console/reconciliation ${s.dim('(management port, with CONSOLE_TOKEN set)')}`,
  );
  return lines;
}

/** "← settlement.reconciled  NOK: 3 lines, 2 matched, 1 finding", then the amounts. */
function renderTotals(totals: SettlementReconciledEvent, result: NightResult, s: Style): string[] {
  const { currency } = totals;
  const mine = result.lines.filter((line) => line.currency === currency);
  const sums = lineSums(mine, currency);
  const stated = `gross ${totals.grossAmount}, fee ${totals.feeAmount}, net ${totals.netAmount} ${currency}`;
  const summed =
    sums === null
      ? null
      : `gross ${formatMinorUnits(sums.grossAmount, currency)}, ` +
        `fee ${formatMinorUnits(sums.feeAmount, currency)}, ` +
        `net ${formatMinorUnits(sums.netAmount, currency)} ${currency}`;
  const findings =
    totals.findings === 0 ? plural(0, 'finding') : s.yellow(plural(totals.findings, 'finding'));
  const lines = [
    `  ${s.green('←')} ${s.green('settlement.reconciled')}  ${currency}: ` +
      `${plural(totals.lines, 'line')}, ${totals.linesMatched} matched, ${findings}`,
  ];
  if (summed === stated && mine.length === totals.lines) {
    lines.push(`${INDENT}${stated} ${s.dim(`= the sum of its ${plural(mine.length, 'line')}`)}`);
  } else {
    lines.push(
      `${INDENT}${stated}`,
      `${INDENT}${s.red(`≠ the ${plural(mine.length, 'line')}: ${summed ?? 'amounts that do not parse'}`)}`,
    );
  }
  return lines;
}

/** "← settlement.exception  finding 1: unknown_payment, payment 6b02…, not ours". */
function renderException(exception: SettlementExceptionEvent, s: Style): string[] {
  const owner =
    exception.orderId === null ? s.dim('not ours') : s.green(`order ${exception.orderId}`);
  const installment =
    exception.installmentId === null ? '' : `, installment ${exception.installmentId}`;
  return [
    `  ${s.yellow('←')} ${s.yellow('settlement.exception')}  ${s.dim('finding')} ` +
      `${exception.findingId}: ${s.yellow(exception.kind)}, ${s.dim('payment')} ` +
      `${exception.paymentId}${installment}, ${owner}`,
    `${INDENT}${s.dim('expected')} ${exception.expectedAmount ?? '– (none due)'}, ` +
      `${s.dim('settled')} ${exception.settledAmount} ${exception.currency}`,
  ];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * One line per settlement.line, in columns under a header: Payflow's payment id (shortened
 * to its end), type, amounts, and the order when the payment is one of payflow-bridge's;
 * `total` is how many came.
 */
function renderSettlementLines(
  events: readonly SettlementLineEvent[],
  total: number,
  s: Style,
): string[] {
  const rows = events.map((event) => ({
    line: `line ${event.lineNumber}`,
    payment: event.paymentId === null ? '–' : shortId(event.paymentId),
    type: event.transactionType,
    gross: event.grossAmount,
    fee: event.feeAmount,
    net: event.netAmount,
    currency: event.currency,
    order: event.orderId,
  }));
  const width = (key: 'payment' | 'type' | 'gross' | 'fee' | 'net') =>
    Math.max(key.length, ...rows.map((row) => row[key].length));
  const w = {
    payment: width('payment'),
    type: width('type'),
    gross: width('gross'),
    fee: width('fee'),
    net: width('net'),
  };
  const head = `  ${s.green('←')} ${s.green(`settlement.line ×${total}`.padEnd(20))}`;
  const header =
    `${'payment'.padEnd(w.payment)}  ${'type'.padEnd(w.type)}  ` +
    `${'gross'.padStart(w.gross)}  ${'fee'.padStart(w.fee)}  ${'net'.padStart(w.net)}`;
  return [
    `${head}${s.dim(header)}`,
    ...rows.map(
      (row) =>
        `    ${s.dim(row.line.padEnd(INDENT.length - 4))}` +
        `${row.payment.padEnd(w.payment)}  ${row.type.padEnd(w.type)}  ` +
        `${row.gross.padStart(w.gross)}  ${row.fee.padStart(w.fee)}  ${row.net.padStart(w.net)} ` +
        `${row.currency}  ${row.order === null ? s.dim('not ours') : s.green(`order ${row.order}`)}`,
    ),
  ];
}

/** The end of a Payflow id (24 hex digits: the last ones differ between neighbours). */
function shortId(id: string): string {
  return id.length > 9 ? `…${id.slice(-8)}` : id;
}

function size(bytes: number): string {
  return bytes < 10_000 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** "→ payer pays 550940.50 NOK in full; HTTPS webhooks: payment-update 200, …". */
function renderPaid(paid: Paid, s: Style): string {
  const webhooks =
    paid.webhooks.length === 0
      ? s.red('no webhook')
      : `HTTPS webhooks: ${paid.webhooks.map((webhook) => renderWebhook(webhook, s)).join(', ')}`;
  return `  ${s.cyan('→')} payer ${describePaid(paid)}; ${webhooks}`;
}

function renderWebhook(webhook: WebhookResult, s: Style): string {
  if (webhook.delivered) return `${webhook.kind} ${String(webhook.status)}`;
  const what =
    webhook.status === null || webhook.status === 0
      ? (webhook.problem ?? (webhook.status === null ? 'not sent' : 'no connection'))
      : `${webhook.status}${webhook.problem === null ? '' : ` ${webhook.problem}`}`;
  return s.red(`${webhook.kind} ${what}`);
}

/** The order's ERP messages that nothing has answered yet (no status event, no dead letter). */
export function unanswered(order: DemoOrder, outcomes: readonly Outcome[]): ErpMessage[] {
  const mine = outcomes.filter((outcome) => outcome.orderId === order.orderId);
  return order.messages.filter(
    (message) => !mine.some((outcome) => answersMessage(outcome, message)),
  );
}

/** Whether `outcome` answers the ERP message `message`. */
function answersMessage(outcome: Outcome, message: ErpMessage): boolean {
  const eventId = eventIdOf(message.value);
  if (eventId !== null) return outcome.sourceEventId === eventId;
  return outcome.status === null && outcome.message.value === message.value;
}

function renderOutcome(outcome: Outcome, s: Style): string[] {
  const status = outcome.status;
  if (status === null) {
    const headers = outcome.message.headers;
    return [
      `  ${s.yellow('✗ dead letter')}         ${s.dim('on')} ${TOPICS.dlq}`,
      `${INDENT}${s.dim('x-dlq-reason')} ${s.yellow(headers['x-dlq-reason'] ?? '?')}`,
      ...wrap(headers['x-dlq-error'] ?? '?', WIDTH - INDENT.length - 13).map(
        (part, index) => `${INDENT}${index === 0 ? s.dim('x-dlq-error ') : ' '.repeat(12)} ${part}`,
      ),
    ];
  }
  const head = `  ${s.green('←')} ${s.green(status.type.length < 20 ? status.type.padEnd(20) : `${status.type}  `)}`;
  const data = status.data;
  const currency = text(data['currency']);
  switch (status.type) {
    case 'payment.created': {
      const installments = Array.isArray(data['installments'])
        ? (data['installments'] as unknown[]).filter(isRecord)
        : [];
      const total =
        `${INDENT}${s.dim('total')} ${text(data['totalGrossAmount'])} ${currency} = ` +
        `${s.dim('net')} ${text(data['totalNetAmount'])} + ${s.dim('VAT')} ${text(data['vatAmount'])}`;
      const lines = [
        `${head}${s.dim('payment')} ${status.paymentId ?? '?'}`,
        `${INDENT}${s.dim('link')} ${text(data['paymentLink'])}`,
      ];
      if (installments.length === 0) {
        lines.push(`${total}, one payment`);
      } else {
        lines.push(
          total,
          `${INDENT}${s.dim('installments')} ` +
            installments
              .map((i) => `${text(i['installmentRef'])}: ${text(i['date'])} ${text(i['amount'])}`)
              .join(' · ') +
            ` ${currency}`,
        );
      }
      return lines;
    }
    case 'installment.added':
    case 'installment.changed':
      return [
        `${head}${text(data['installmentRef'])}: ${text(data['date'])} ${text(data['amount'])} ` +
          `${currency} ${s.dim(`(Payflow ${text(data['status'])})`)}`,
      ];
    case 'payment.cancelled':
      return [
        `${head}${s.dim('status')} ${text(data['status'])} ${s.dim(`(Payflow ${providerChange(data)})`)}`,
      ];
    case 'payment.status_changed':
      return [
        `${head}${s.dim('status')} ${text(data['status'])} ` +
          s.dim(`(Payflow ${providerChange(data)}; from the ${text(data['source'])})`),
      ];
    case 'installment.status_changed':
      return [
        `${head}${text(data['installmentRef'])}: ${s.dim(`Payflow ${providerChange(data)}`)}`,
      ];
    case 'payment.creation_failed':
      return [`${head}${s.red(text(data['reason']))}: ${text(data['message'])}`];
    default:
      return [`${head}${truncate(JSON.stringify(data), 70)}`];
  }
}

/** "← installment.status_changed ×3  1: CREATED → PAID · 2: CREATED → SENT · …". */
function renderInstallmentChanges(outcomes: readonly Outcome[], s: Style): string {
  // Per installment, its statuses in order: "1: CREATED → SENT → PAID".
  const chains = new Map<string, string[]>();
  for (const outcome of outcomes) {
    const data = outcome.status?.data ?? {};
    const ref = text(data['installmentRef']);
    const previous = data['previousProviderStatus'];
    const chain = chains.get(ref) ?? [];
    chains.set(ref, chain);
    if (typeof previous === 'string' && chain.at(-1) !== previous) chain.push(previous);
    chain.push(text(data['providerStatus']));
  }
  const changes = [...chains].map(([ref, chain]) => `${ref}: ${chain.join(' → ')}`);
  return (
    `  ${s.green('←')} ${s.green(`installment.status_changed ×${outcomes.length}`)}  ` +
    changes.join(s.dim(' · '))
  );
}

/** "OPENED → SUCCESS" (or just "SUCCESS" without a previous status). */
function providerChange(data: Readonly<Record<string, unknown>>): string {
  const previous = data['previousProviderStatus'];
  return typeof previous === 'string'
    ? `${previous} → ${text(data['providerStatus'])}`
    : text(data['providerStatus']);
}

function parseStatus(value: string): StatusEnvelope | null {
  try {
    const parsed: unknown = JSON.parse(value);
    if (!isRecord(parsed)) return null;
    const { eventId, type, orderId, paymentId, data } = parsed;
    if (typeof eventId !== 'string' || typeof type !== 'string' || typeof orderId !== 'string') {
      return null;
    }
    return {
      eventId,
      type,
      orderId,
      paymentId: typeof paymentId === 'string' ? paymentId : null,
      data: isRecord(data) ? data : {},
    };
  } catch {
    return null;
  }
}

function eventIdOf(value: string): string | null {
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) && typeof parsed['eventId'] === 'string' ? parsed['eventId'] : null;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '–';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Splits `value` at spaces into pieces of at most `width` characters (longer words stay whole). */
export function wrap(value: string, width: number): string[] {
  const parts: string[] = [];
  let current = '';
  for (const word of value.split(' ')) {
    if (current !== '' && current.length + 1 + word.length > width) {
      parts.push(current);
      current = word;
    } else {
      current = current === '' ? word : `${current} ${word}`;
    }
  }
  parts.push(current);
  return parts;
}

function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}
