/**
 * The console's Reconciliation page (CONTRACT §10, issue 29 §2): the totals of the
 * settlement nights by organization and currency (newest night first), and the findings,
 * open ones first (newest first in each), a page at a time by keyset. A read model: it holds
 * no SQL, it composes the reconciliation's repositories (settlement_totals by its key,
 * settlement_findings).
 */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { SettlementFindingsRepository } from '../../settlements/reconcile/settlement-findings.repository.js';
import { SettlementTotalsRepository } from '../../settlements/reconcile/settlement-totals.repository.js';
import {
  findingView,
  nightTotalsView,
  type FindingView,
  type NightTotalsView,
} from './reconciliation.view.js';

/** Which nights and findings: an organization (or all) and a range of settlement dates. */
export interface ReconciliationFilter {
  readonly organizationId: string | null;
  /** Settlement dates of the totals, inclusive (YYYY-MM-DD). */
  readonly from: string;
  readonly to: string;
}

export interface ReconciliationPage {
  /** Newest night first; at most TOTALS_LIMIT. */
  readonly totals: readonly NightTotalsView[];
  /** More totals than shown: narrow the range. */
  readonly moreTotals: boolean;
  /** Open first, then closed, newest first in each; at most FINDINGS_PAGE. */
  readonly findings: readonly FindingView[];
  readonly openFindings: number;
  /** The cursor of the next page of findings, or null on the last. */
  readonly next: string | null;
}

export const TOTALS_LIMIT = 200;
export const FINDINGS_PAGE = 50;

/** A page's keyset: `o-<id>` (the last row was open) or `c-<id>` (closed). */
export function parseFindingCursor(
  cursor: string,
): { readonly open: boolean; readonly id: string } | null {
  const match = /^([oc])-(\d{1,18})$/.exec(cursor);
  return match === null ? null : { open: match[1] === 'o', id: match[2]! };
}

@Injectable()
export class ReconciliationQuery {
  private readonly totals = new SettlementTotalsRepository();
  private readonly findings = new SettlementFindingsRepository();

  constructor(@Inject(Database) private readonly database: Pick<Database, 'sql'>) {}

  /** The totals of the filter's nights and a page of findings after `cursor` ('' first). */
  async page(
    filter: ReconciliationFilter,
    cursor: string,
    pageSize: number = FINDINGS_PAGE,
  ): Promise<ReconciliationPage> {
    const sql = this.database.sql;
    const [totals, findings, openFindings] = await Promise.all([
      this.totals.listNewestFirst(sql, filter, TOTALS_LIMIT + 1),
      this.findings.listOpenFirst(
        sql,
        filter.organizationId,
        parseFindingCursor(cursor),
        pageSize + 1,
      ),
      this.findings.countOpen(sql, filter.organizationId),
    ]);
    const shown = findings.slice(0, pageSize).map(findingView);
    const last = shown.at(-1);
    return {
      totals: totals.slice(0, TOTALS_LIMIT).map(nightTotalsView),
      moreTotals: totals.length > TOTALS_LIMIT,
      findings: shown,
      openFindings,
      next:
        findings.length > pageSize && last !== undefined
          ? `${last.open ? 'o' : 'c'}-${last.id}`
          : null,
    };
  }

  /** One finding, or null (the answer after an acknowledgement). */
  async finding(id: string): Promise<FindingView | null> {
    if (!/^\d{1,18}$/.test(id)) return null;
    const row = await this.findings.byId(this.database.sql, id);
    return row === null ? null : findingView(row);
  }
}
