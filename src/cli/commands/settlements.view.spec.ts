import { describe, expect, it } from '@jest/globals';
import type { PullResult } from '../../settlements/pull/pull-settlement.handler.js';
import { describeNights, describePulls } from './settlements.view.js';

const file = (overrides: Partial<NonNullable<PullResult['file']>> = {}): PullResult['file'] => ({
  fileId: '5d0c0000-0000-4000-8000-000000000001',
  organizationId: 'org-1',
  dateFrom: '2026-11-20',
  dateTo: '2026-11-20',
  format: 'standard',
  version: 1,
  previousFileId: null,
  sha256: '4f1c0a9e2b7d'.padEnd(64, '0'),
  sizeBytes: 100,
  rows: 1234,
  badRows: 0,
  firstBadRows: [],
  pulledAt: new Date(),
  ...overrides,
});

describe('settlements view', () => {
  it('prints one line per night, the bad rows of new files and a summary', () => {
    const text = describePulls(
      [
        {
          organizationId: 'org-1',
          date: '2026-11-20',
          format: 'standard',
          result: { outcome: 'stored', file: file(), linkedRows: 12, durationMs: 5 },
        },
        {
          organizationId: 'org-1',
          date: '2026-11-21',
          format: 'standard',
          result: {
            outcome: 'changed',
            file: file({
              version: 2,
              previousFileId: 'prev-id',
              rows: 3,
              badRows: 2,
              firstBadRows: [{ lineNumber: 5, error: 'currency is not an ISO 4217 currency' }],
            }),
            linkedRows: 0,
            durationMs: 5,
          },
        },
        {
          organizationId: 'org-1',
          date: '2026-11-22',
          format: 'standard',
          error: 'PAYFLOW.SERVER_ERROR: 503 from kari@example.com',
        },
      ],
      'payflow.settlements.v1',
    ).split('\n');
    expect(text).toEqual([
      'org-1  2026-11-20  standard  stored     v1  1,234 row(s), 12 of our orders  sha256 4f1c0a9e2b7d  file 5d0c0000-0000-4000-8000-000000000001',
      'org-1  2026-11-21  standard  CHANGED    v2  3 row(s), 2 bad, 0 of our orders  sha256 4f1c0a9e2b7d  file 5d0c0000-0000-4000-8000-000000000001 (kept beside v1 prev-id)',
      'org-1  2026-11-22  standard  FAILED     PAYFLOW.SERVER_ERROR: 503 from [email]',
      'Rows that did not parse in org-1 2026-11-21 (file 5d0c0000-0000-4000-8000-000000000001):',
      '  line 5: currency is not an ISO 4217 currency',
      '  … and 1 more (settlement_file_errors)',
      'Pulled 3 night(s): 1 stored, 1 changed (both versions kept), 0 unchanged, 1 failed; 1,239 event(s) for payflow.settlements.v1.',
    ]);
  });

  it('lists nights with the last error of missing ones', () => {
    expect(
      describeNights([
        {
          organizationId: 'org-1',
          date: '2026-11-20',
          format: 'standard',
          status: 'pulled',
          fileId: 'f1',
          attempts: 1,
          lastAttemptAt: null,
          lastError: null,
        },
        {
          organizationId: 'org-2',
          date: '2026-11-20',
          format: 'standard',
          status: 'missing',
          fileId: null,
          attempts: 2,
          lastAttemptAt: null,
          lastError: 'PAYFLOW.SERVER_ERROR: 503',
        },
      ]),
    ).toBe(
      [
        'org-1  2026-11-20  standard  pulled   attempts 1  file f1',
        'org-2  2026-11-20  standard  missing  attempts 2  last error: PAYFLOW.SERVER_ERROR: 503',
        '2 night(s): 1 pulled, 1 missing.',
      ].join('\n'),
    );
    expect(describeNights([])).toBe('No tracked night matches.');
  });
});
