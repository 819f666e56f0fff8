/**
 * The open reconciliation findings as Prometheus series, read from `settlement_findings` at
 * scrape time, so that a finding acknowledged through the CLI or the console (another
 * process) leaves the series at once, and the age of the oldest grows between nights:
 *
 * - `payflow_bridge_settlement_findings_open{kind}`: open findings of each kind;
 * - `payflow_bridge_settlement_finding_oldest_open_seconds{kind}`: how long the oldest
 *   open finding of each kind has been open (0: none). The alert
 *   `PayflowBridgeSettlementFindingOpen` (deploy/prometheus/alerts.yaml) fires above a day.
 *
 * One query per scrape (the first gauge's collect reads, both gauges are set from it); a
 * failed read leaves the series as they were and is not the scrape's failure.
 */
import { Gauge, type Registry } from 'prom-client';
import { FINDING_KINDS, type FindingKind } from './settlement-match.js';

/** The open findings of one kind. */
export interface OpenFindings {
  readonly kind: FindingKind;
  readonly count: number;
  /** When the oldest of them opened. */
  readonly oldestOpenedAt: Date;
}

export class PromFindingsMetrics {
  constructor(
    registry: Registry,
    read: () => Promise<readonly OpenFindings[]>,
    now: () => number = Date.now,
  ) {
    // Registered first: a scrape collects in registration order, and this read sets both.
    new Gauge<'kind'>({
      name: 'payflow_bridge_settlement_findings_open',
      help: 'Open settlement reconciliation findings, by kind (amount_mismatch, unknown_payment, not_settled, settled_twice, refund_mismatch)',
      labelNames: ['kind'],
      registers: [registry],
      async collect() {
        let open: readonly OpenFindings[];
        try {
          open = await read();
        } catch {
          return;
        }
        for (const kind of FINDING_KINDS) {
          const found = open.find((entry) => entry.kind === kind);
          this.set({ kind }, found?.count ?? 0);
          const age = found === undefined ? 0 : (now() - found.oldestOpenedAt.getTime()) / 1000;
          oldest.set({ kind }, Math.max(0, age));
        }
      },
    });
    const oldest = new Gauge<'kind'>({
      name: 'payflow_bridge_settlement_finding_oldest_open_seconds',
      help: 'How long the oldest open settlement reconciliation finding of each kind has been open (0: none)',
      labelNames: ['kind'],
      registers: [registry],
    });
  }
}
