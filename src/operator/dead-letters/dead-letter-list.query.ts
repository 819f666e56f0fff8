/**
 * The console's dead letters: a list filtered by reason, organization and time, newest
 * first, a page at a time; and one letter's message as it was received (headers, key,
 * body, the body as indented JSON where it is JSON). A read model: the SQL is
 * DeadLetterRepository's (dead_letters_failed_at_idx), the organization is the order's.
 *
 * Personal data: a body names the customer. Every personal field (names, addresses, e-mail
 * addresses, phone numbers, VINs, number plates, document contents) is masked by key, and
 * e-mails, phones and VINs inside free text by pattern (personal-data-mask.ts), unless the
 * caller asks for them (the console records that asking). Headers are shown with secrets
 * in URLs and bearer headers masked.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DEAD_LETTER_REASONS, type DeadLetterReason } from '../../errors/app-error.js';
import { Database } from '../../database/database.js';
import {
  DeadLetterRepository,
  type DeadLetterCursor,
  type DeadLetterFilter,
  type ListedDeadLetter,
} from '../../dead-letters/dead-letter.repository.js';
import {
  maskPersonalData,
  maskPersonalText,
  type PersonalDataKind,
} from '../masking/personal-data-mask.js';
import { sanitizeText } from '../masking/sanitize-text.js';
import { deadLetterView, type DeadLetterView } from './dead-letter.view.js';

export type { DeadLetterFilter } from '../../dead-letters/dead-letter.repository.js';

/** A letter of the list: the view `order show` gives, with its order and organization. */
export interface DeadLetterListItem extends DeadLetterView {
  readonly orderId: string | null;
  readonly organizationId: string | null;
}

export interface DeadLetterPage {
  readonly letters: readonly DeadLetterListItem[];
  /** The cursor of the next page, or null on the last one. */
  readonly next: string | null;
}

export interface MessageBody {
  /** Bytes of the stored value (0 when it had none). */
  readonly bytes: number;
  /** The body as text (UTF-8), personal data masked unless revealed; null when binary or absent. */
  readonly text: string | null;
  /** The body indented, when it is JSON; null otherwise. */
  readonly json: string | null;
  /** Base64 of the first 4 KiB, when the body is not UTF-8 text. */
  readonly base64: string | null;
}

export interface DeadLetterMessage extends DeadLetterListItem {
  /** The message's key as text (the order id), or null. */
  readonly key: string | null;
  /** Every header, in name order; `x-dlq-*` are the dead-letter topic's own. */
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  readonly body: MessageBody;
  /** Whether the body holds personal data (masked unless revealed). */
  readonly hasContact: boolean;
  /** The kinds of personal data the body holds (names, addresses, e-mails, …). */
  readonly personalData: readonly PersonalDataKind[];
  readonly contactRevealed: boolean;
}

/** What a filter form asked for, parsed; `problems` names the fields it could not read. */
export interface ParsedDeadLetterFilter {
  readonly filter: DeadLetterFilter;
  readonly problems: readonly string[];
}

/** Letters on one page. */
export const DEAD_LETTER_PAGE_SIZE = 50;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** A date (midnight UTC) or date-time (UTC unless it names an offset) of a form field. */
export function parseFormTime(value: string): Date | null {
  const text = value.trim();
  let parsed: Date | null = null;
  if (ISO_DATE.test(text)) parsed = new Date(`${text}T00:00:00Z`);
  else if (ISO_DATE_TIME.test(text)) {
    const normalized = text.replace(' ', 'T');
    parsed = new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(normalized) ? normalized : `${normalized}Z`);
  }
  return parsed === null || Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** The list's filter from form or query fields (`reason`, `org`, `from`, `to`, `state`). */
export function parseDeadLetterFilter(field: (name: string) => string): ParsedDeadLetterFilter {
  const problems: string[] = [];
  const filter: {
    reason?: DeadLetterReason;
    organizationId?: string;
    from?: Date;
    to?: Date;
    state?: 'waiting' | 'replayed' | 'discarded' | 'all';
  } = {};
  const reason = field('reason').trim();
  if (reason !== '') {
    const known = DEAD_LETTER_REASONS.find((candidate) => candidate === reason);
    if (known === undefined) problems.push('reason');
    else filter.reason = known;
  }
  const organization = field('org').trim();
  if (organization !== '') {
    if (organization.length > 200 || /\s/.test(organization)) problems.push('org');
    else filter.organizationId = organization;
  }
  for (const name of ['from', 'to'] as const) {
    const text = field(name).trim();
    if (text === '') continue;
    const time = parseFormTime(text);
    if (time === null) problems.push(name);
    else filter[name] = time;
  }
  const state = field('state').trim();
  if (state === 'replayed' || state === 'discarded' || state === 'all' || state === 'waiting')
    filter.state = state;
  else if (state !== '') problems.push('state');
  return { filter, problems };
}

function encodeCursor(cursor: string): string {
  return Buffer.from(cursor, 'utf8').toString('base64url');
}

/** A cursor this query gave out, or null for anything else (a first page then). */
export function decodeCursor(text: string): DeadLetterCursor | null {
  if (text === '' || text.length > 100) return null;
  const [failedAt, id, extra] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || failedAt === undefined || id === undefined) return null;
  if (!/^\d{1,19}$/.test(id) || Number.isNaN(Date.parse(failedAt))) return null;
  return { failedAt, id };
}

function item(row: ListedDeadLetter): DeadLetterListItem {
  return { ...deadLetterView(row), orderId: row.orderId, organizationId: row.organizationId };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function bodyOf(
  value: Buffer | null,
  reveal: boolean,
): { body: MessageBody; found: readonly PersonalDataKind[] } {
  if (value === null)
    return { body: { bytes: 0, text: null, json: null, base64: null }, found: [] };
  let text: string;
  try {
    text = utf8.decode(value);
  } catch {
    const base64 = value.subarray(0, 4096).toString('base64');
    return { body: { bytes: value.length, text: null, json: null, base64 }, found: [] };
  }
  let parsed: unknown;
  let isJson = false;
  try {
    parsed = JSON.parse(text);
    isJson = true;
  } catch {
    // Not JSON: shown as text.
  }
  if (isJson) {
    const { masked, found } = maskPersonalData(parsed);
    const shown = reveal ? parsed : masked;
    return {
      body: {
        bytes: value.length,
        text: reveal ? text : JSON.stringify(masked),
        json: JSON.stringify(shown, null, 2),
        base64: null,
      },
      found,
    };
  }
  const { masked, found } = maskPersonalText(text);
  return {
    body: { bytes: value.length, text: reveal ? text : masked, json: null, base64: null },
    found,
  };
}

function headerText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

@Injectable()
export class DeadLetterListQuery {
  private readonly letters = new DeadLetterRepository();

  constructor(@Inject(Database) private readonly database: Pick<Database, 'sql'>) {}

  /** One page of the letters the filter selects, newest first; `cursor` from the last page. */
  async list(
    filter: DeadLetterFilter,
    cursor: string,
    pageSize = DEAD_LETTER_PAGE_SIZE,
  ): Promise<DeadLetterPage> {
    const size = Math.min(200, Math.max(1, Math.trunc(pageSize)));
    const rows = await this.letters.page(this.database.sql, filter, decodeCursor(cursor), size + 1);
    const shown = rows.slice(0, size);
    const last = shown.at(-1);
    return {
      letters: shown.map(item),
      next: rows.length > size && last !== undefined ? encodeCursor(last.cursor) : null,
    };
  }

  /** The letter with its message as received; personal data masked unless `revealContact`. */
  async message(id: string, revealContact = false): Promise<DeadLetterMessage | null> {
    const row = await this.letters.stored(this.database.sql, id);
    if (row === null) return null;
    const { body, found } = bodyOf(row.value, revealContact);
    const contact = found.length > 0;
    let key: string | null = null;
    if (row.key !== null) {
      try {
        key = utf8.decode(row.key);
      } catch {
        key = `0x${row.key.toString('hex').slice(0, 200)}`;
      }
    }
    const headers = Object.entries(row.headers)
      .map(([name, value]) => ({ name, value: sanitizeText(headerText(value)) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return {
      ...item(row),
      key,
      headers,
      body,
      hasContact: contact,
      personalData: found,
      contactRevealed: revealContact && contact,
    };
  }

  /** The order's letters that wait (neither replayed nor discarded), oldest first. */
  async waitingOfOrder(orderId: string): Promise<DeadLetterView[]> {
    const rows = await this.letters.listForOrder(this.database.sql, orderId);
    return rows.map(deadLetterView).filter((letter) => letter.waiting);
  }

  /**
   * The orders a replay of this filter replays (their letters still wait), oldest failure
   * first, at most `limit`.
   */
  waitingOrders(filter: DeadLetterFilter, limit: number): Promise<string[]> {
    return this.letters.waitingOrders(this.database.sql, filter, limit);
  }
}
