/** bench/results/scale.md from the scale bench's results. */
import type { StepResult, StepSettings } from './step.js';

interface ScaleOutput {
  readonly date: string;
  readonly settings: Omit<StepSettings, 'workers'> & { readonly kafkaNodes: number };
  readonly machineBusyBeforePct: number;
  readonly totalSeconds: number;
  readonly steps: readonly StepResult[];
}

const ms = (value: number | null): string =>
  value === null ? '-' : `${(value / 1000).toFixed(1)} s`;

export function scaleMarkdown(output: ScaleOutput): string {
  const { settings } = output;
  const lines = [
    '# Scale: workers in one consumer group (real Kafka, 12 partitions)',
    '',
    `${output.date}; ${settings.kafkaNodes}-node KRaft cluster; sandbox at ${settings.latencyMs} ms; ` +
      `${settings.events} orders per backlog; MAX_IN_FLIGHT ${settings.maxInFlight}; DB_POOL_SIZE ` +
      `${settings.dbPoolSize}; KAFKA_SESSION_TIMEOUT ${settings.sessionTimeout ?? 'default'}; ` +
      `machine ${output.machineBusyBeforePct} % busy before; ${output.totalSeconds} s in all. ` +
      'One run: a 2-core host, so ratios and limits matter, not absolute speed-ups.',
    '',
    '| workers | orders/s | per worker | CPU % of a core: workers / Postgres / brokers / sandbox / bench / other | machine busy % | CPU ms per order: workers / Postgres / all | CPU ceiling orders/s | tx/order | statements/order | round trips/order | rows written/order | peak connections | limited by |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const step of output.steps) {
    const p = step.postgres;
    const c = step.cpuPct;
    const m = step.cpuMsPerOrder;
    lines.push(
      `| ${step.workers} | ${step.ordersPerSecond} | ${step.perWorker.map((w) => w.ordersPerSecond).join(' / ')} | ` +
        `${c.workers} / ${c.postgres} / ${c.brokers} / ${c.sandbox} / ${c.bench} / ${c.other} | ${c.machineBusy} | ` +
        `${m.workers} / ${m.postgres} / ${m.total} | ${step.cpuCeilingOrdersPerSecond} | ` +
        `${p.transactionsPerOrder} | ${p.statementsPerOrder} | ${p.roundTripsPerOrder} | ${p.rowsWrittenPerOrder} | ` +
        `${p.peakConnections} | ${step.limitedBy}${step.disturbed === null ? '' : ` (DISTURBED: ${step.disturbed})`} |`,
    );
  }
  lines.push(
    '',
    '## Postgres per order at a steady rate (small batches)',
    '',
    '| workers | orders/s | tx/order | statements/order | round trips/order |',
    '|---|---|---|---|---|',
    ...output.steps.flatMap((step) =>
      step.steady === undefined
        ? []
        : [
            `| ${step.workers} | ${step.steady.rate} | ${step.steady.transactionsPerOrder} | ` +
              `${step.steady.statementsPerOrder} | ${step.steady.roundTripsPerOrder} |`,
          ],
    ),
  );
  lines.push(
    '',
    '## Membership changes under a steady load',
    '',
    'From the change (spawn, SIGKILL, SIGTERM) to: another member seeing the rebalance, every ' +
      'moved partition assigned again, every moved partition consumed again (an attempt begun).',
    '',
    '| step | change | members | partitions moved | rebalance seen | group paused | assigned | consumed again | joiner start |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const step of output.steps) {
    for (const change of step.changes) {
      lines.push(
        `| ${step.workers} | ${change.kind} | ${change.membersBefore} → ${change.membersAfter} | ` +
          `${change.moved.length} | ${ms(change.toRebalanceMs)} | ${ms(change.pauseMs)} | ${ms(change.toAssignedMs)} | ` +
          `${ms(change.toConsumedMs)} | ${change.joinerStartMs === undefined ? '' : ms(change.joinerStartMs)} |`,
      );
    }
  }
  lines.push('', "## Duplicates (the sandbox's payments per order)", '');
  lines.push(
    '| step | orders | exactly one | more than one | none (of which in doubt) | dead letters in doubt / other | duplicate payment.created |',
  );
  lines.push('|---|---|---|---|---|---|---|');
  for (const step of output.steps) {
    const d = step.duplicates;
    lines.push(
      `| ${step.workers} | ${d.orders} | ${d.ordersWithOnePayment} | ${d.ordersWithMoreThanOne} | ` +
        `${d.ordersWithoutPayment} (${d.ordersWithoutPaymentInDoubt}) | ${d.deadLettersInDoubt} / ${d.deadLettersOther} | ${d.duplicateStatusEvents} |`,
    );
  }
  lines.push(
    '',
    '## Reading',
    '',
    '- orders/s: a backlog produced at once, from the first send to the last payment.created ' +
      'read back; per worker: its processed counter over the same time.',
    '- CPU ms per order: CPU time of each party over the window / orders. The CPU ceiling (all ' +
      'cores / total ms per order) is where this host runs out: more workers on the same two ' +
      'cores only add per-batch overhead (smaller batches: more transactions and statements per ' +
      'order), so on one host they pay off only up to one per core; the speed-up is for hosts ' +
      'with spare cores (each worker is one Node thread).',
    '- Postgres: transactions from pg_stat_database; statements (Execute or Query messages) and ' +
      'round trips (Sync or Query) counted by a proxy in front of the server; connections: the ' +
      'most open at once through it (DB_POOL_SIZE + 1 per worker).',
    '- A SIGKILL is noticed by the coordinator when the session times out; the bound is ' +
      'KAFKA_SESSION_TIMEOUT + 5 s (test/worker/recovery.test.ts). A SIGTERM drains and leaves ' +
      'the group at once. Creations in doubt after a SIGKILL are dead-lettered for an operator, ' +
      'by design (never sent twice).',
  );
  const problems = output.steps.flatMap((step) =>
    step.problems.map((p) => `- ${step.workers} worker(s): ${p}`),
  );
  if (problems.length > 0) lines.push('', '## Problems', '', ...problems);
  return `${lines.join('\n')}\n`;
}
