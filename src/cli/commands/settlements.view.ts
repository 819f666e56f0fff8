/**
 * What `settlements pull` and `settlements status` print: one line per night, then the
 * bad rows of the files stored now, then a summary. Pure, so it is tested as text.
 */
import type { NightRow } from '../../settlements/settlement.repository.js';
import type { PullResult } from '../../settlements/pull/pull-settlement.handler.js';
import { sanitizeText } from '../../operator/masking/sanitize-text.js';

export interface NightPulled {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
  readonly result?: PullResult;
  readonly error?: string;
}

const grouped = (n: number): string => n.toLocaleString('en-US');

function describeNight(night: NightPulled): string {
  const where = `${night.organizationId}  ${night.date}  ${night.format}`;
  if (night.result === undefined) return `${where}  FAILED     ${sanitizeText(night.error ?? '')}`;
  const { outcome, file, linkedRows } = night.result;
  if (file === null) return `${where}  ${outcome}`;
  const rows = `${grouped(file.rows)} row(s)`;
  const bad = file.badRows > 0 ? `, ${grouped(file.badRows)} bad` : '';
  const linked = outcome === 'unchanged' ? '' : `, ${grouped(linkedRows)} of our orders`;
  const label = {
    stored: 'stored    ',
    changed: 'CHANGED   ',
    unchanged: 'unchanged ',
    skipped: 'skipped   ',
  }[outcome];
  const replaces =
    outcome === 'changed' && file.previousFileId !== null
      ? ` (kept beside v${file.version - 1} ${file.previousFileId})`
      : '';
  return (
    `${where}  ${label} v${file.version}  ${rows}${bad}${linked}  ` +
    `sha256 ${file.sha256.slice(0, 12)}  file ${file.fileId}${replaces}`
  );
}

export function describePulls(nights: readonly NightPulled[], topic: string): string {
  const lines = nights.map(describeNight);
  for (const night of nights) {
    const file = night.result?.file;
    if (file === undefined || file === null || night.result?.outcome === 'unchanged') continue;
    if (file.badRows === 0) continue;
    lines.push(
      `Rows that did not parse in ${night.organizationId} ${night.date} (file ${file.fileId}):`,
    );
    for (const bad of file.firstBadRows) {
      lines.push(`  line ${bad.lineNumber}: ${sanitizeText(bad.error)}`);
    }
    if (file.badRows > file.firstBadRows.length) {
      lines.push(
        `  … and ${file.badRows - file.firstBadRows.length} more (settlement_file_errors)`,
      );
    }
  }
  const count = (outcome: string): number =>
    nights.filter((night) => night.result?.outcome === outcome).length;
  const failed = nights.filter((night) => night.result === undefined).length;
  const published = nights.reduce((sum, night) => {
    const result = night.result;
    if (result === undefined || result.file === null) return sum;
    return result.outcome === 'stored' || result.outcome === 'changed'
      ? sum + result.file.rows + 1
      : sum;
  }, 0);
  lines.push(
    `Pulled ${nights.length} night(s): ${count('stored')} stored, ${count('changed')} changed ` +
      `(both versions kept), ${count('unchanged')} unchanged, ${failed} failed; ` +
      `${grouped(published)} event(s) for ${topic}.`,
  );
  return lines.join('\n');
}

export function describeNights(nights: readonly NightRow[]): string {
  if (nights.length === 0) return 'No tracked night matches.';
  const lines = nights.map((night) => {
    const base = `${night.organizationId}  ${night.date}  ${night.format}  ${night.status.padEnd(7)}  attempts ${night.attempts}`;
    const file = night.fileId === null ? '' : `  file ${night.fileId}`;
    const error =
      night.status === 'missing' && night.lastError !== null
        ? `  last error: ${sanitizeText(night.lastError)}`
        : '';
    return `${base}${file}${error}`;
  });
  const missing = nights.filter((night) => night.status === 'missing').length;
  const forgotten = nights.filter((night) => night.status === 'forgotten').length;
  const pulled = nights.length - missing - forgotten;
  const given = forgotten > 0 ? `, ${forgotten} forgotten` : '';
  lines.push(`${nights.length} night(s): ${pulled} pulled, ${missing} missing${given}.`);
  return lines.join('\n');
}

/** What `settlements forget` did to each tracked night of `date`. */
export function describeForgotten(
  date: string,
  organizationId: string | null,
  nights: readonly { night: NightRow; forgotten: boolean }[],
): string {
  if (nights.length === 0) {
    const whose = organizationId === null ? '' : ` of ${organizationId}`;
    return `No night${whose} is tracked for ${date}: nothing to forget.`;
  }
  const lines = nights.map(({ night, forgotten }) => {
    const where = `${night.organizationId}  ${night.date}  ${night.format}`;
    if (forgotten) {
      const error =
        night.lastError === null ? '' : `; last error: ${sanitizeText(night.lastError)}`;
      return `${where}  forgotten (was missing after ${night.attempts} attempt(s)${error})`;
    }
    if (night.status === 'forgotten') return `${where}  already forgotten`;
    return `${where}  left as it is: ${night.status}, not missing`;
  });
  const changed = nights.filter((entry) => entry.forgotten).length;
  lines.push(`Forgot ${changed} night(s); no run asks Payflow for them again.`);
  return lines.join('\n');
}
