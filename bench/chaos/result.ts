/**
 * How the campaign's verdict reads: the invariant report made short for the result file, and
 * the rows of the late-effect phase and the effects check printed under the report's table.
 */
import type { InvariantReport } from '../../testbed/invariants.js';
import type { EffectFigures, EffectsVerdict } from './effects-verdict.js';
import type { HeldAttempts, LateEffectMetrics } from './late-effect-figures.js';
import {
  LATE_PHASE,
  type LatePhaseFigures,
  type SandboxLateApplications,
} from './payflow-faults.js';

/** Everything the run learnt about late effects, as written to the result file. */
export interface LateEffectFigures {
  readonly phase: LatePhaseFigures;
  /** The sandbox's late applications at the end (GET /sandbox/stats). */
  readonly sandbox: SandboxLateApplications;
  /** Attempts held in the window (null: the ledger has no such columns). */
  readonly heldAttempts: HeldAttempts | null;
  readonly workerMetrics: LateEffectMetrics;
}

/** The report without the per-creation list (kept short: how each creation in doubt ended). */
export function summarize(report: InvariantReport): Record<string, unknown> {
  const ended: Record<string, number> = {};
  for (const creation of report.inDoubt.creations)
    ended[creation.ended] = (ended[creation.ended] ?? 0) + 1;
  return {
    ...report,
    inDoubt: {
      creations: report.inDoubt.creations.length,
      ended,
      neverLeftProcess: report.inDoubt.neverLeftProcess,
      neverLeftSample: report.inDoubt.creations
        .filter((creation) => creation.leftProcess === false)
        .slice(0, 30),
      otherCommands: report.inDoubt.otherCommands,
      byType: report.inDoubtByType,
      startedLeft: report.inDoubt.startedLeft,
      sample: report.inDoubt.creations.slice(0, 10),
    },
  };
}

function effectRow(figures: EffectFigures): string {
  return (
    `${figures.held} / ${figures.asked} / ${figures.doubled} ` +
    `(unreported ${figures.unreported}, told but not held ${figures.reportedNotHeld}, ` +
    `topic vs table ${figures.topicVsDatabase})`
  );
}

/** The rows printed under the invariant table: the late phase, what was held, what doubled. */
export function lateEffectRows(
  effects: EffectsVerdict,
  late: LateEffectFigures,
): [string, string][] {
  const { phase, sandbox, heldAttempts, workerMetrics } = late;
  const metricNames = Object.keys(workerMetrics.samples);
  const rows: [string, string][] = [
    [
      'late phase (installments, documents)',
      phase.startedAtS === null
        ? 'did not run'
        : `at ${phase.startedAtS} s for ${phase.seconds} s: ${LATE_PHASE.latencyMs / 1000} s latency ` +
          `on ${phase.latencyHeld} call(s), 504 then applied ${LATE_PHASE.applyDelayMs / 1000} s ` +
          `later on ${phase.answeredThenApplied}`,
    ],
    [
      '  late applications at the sandbox',
      `applied ${sandbox.applied}, failed ${sandbox.failed}, still pending ${sandbox.pending}`,
    ],
    [
      'calls held for a late effect (attempts)',
      heldAttempts === null
        ? 'not recorded by this build'
        : `${heldAttempts.held}${
            heldAttempts.held === 0
              ? ''
              : ` (${Object.entries(heldAttempts.byCommand)
                  .map(([command, count]) => `${command} ${count}`)
                  .join(', ')})`
          }`,
    ],
    [
      '  time held p50 / p99 / max (ledger)',
      heldAttempts?.heldMs == null
        ? '–'
        : `${heldAttempts.heldMs.p50} / ${heldAttempts.heldMs.p99} / ${heldAttempts.heldMs.max} ms`,
    ],
    [
      '  worker metrics *late_effect*',
      metricNames.length === 0
        ? 'none exposed'
        : metricNames
            .filter((name) => !/_bucket$/.test(name))
            .map((name) => `${name} ${workerMetrics.samples[name]}`)
            .join(', '),
    ],
    ...Object.entries(workerMetrics.histograms).map(([name, histogram]): [string, string] => [
      `  ${name} p50 / p99`,
      `${histogram.p50} / ${histogram.p99} (${histogram.count} observed)`,
    ]),
    [`payments compared with Payflow`, String(effects.paymentsCompared)],
    ['installments held / asked / doubled', effectRow(effects.installments)],
    ['documents held / asked / doubled', effectRow(effects.documents)],
    ['effects doubled at Payflow', String(effects.doubled)],
    ...effects.doubledSample.map((sample): [string, string] => ['  e.g.', sample]),
    ['status events told twice (order, type, source)', String(effects.toldTwice)],
    ...effects.toldTwiceSample.map((sample): [string, string] => ['  e.g.', sample]),
  ];
  return rows;
}
