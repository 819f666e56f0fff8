/**
 * `privacy export` (CONTRACT §10): every piece of personal data the bridge holds for the
 * orders of a selection, as one JSON document: the orders' customer numbers, payment links,
 * document file names, and every stored message that holds personal data (dead letters, the
 * outbox's copies and status events, Payflow's webhooks), each as stored. Changes nothing.
 *
 * A stored message is shown as JSON when it is JSON, else as base64; the stores that are
 * kept for bookkeeping (settlement files) and the operators' audit trail are named in
 * docs/privacy.md, not exported here.
 */
import type { Database, Sql } from '../../database/database.js';
import type { PersonalDataStores } from '../personal-data-stores.js';
import { ordersOf } from '../privacy-orders.js';
import type { PrivacySelection } from '../privacy-selection.js';
import { parseJson, scrubBytes, type Json } from '../personal-json.js';

/** A stored message: its JSON, or its bytes in base64 when they are not JSON. */
export type StoredMessage = { readonly json: Json } | { readonly base64: string } | null;

export interface ExportedOrder {
  readonly orderId: string;
  readonly customerNumber: string | null;
  readonly personalDataErasedAt: string | null;
  readonly payments: readonly {
    paymentId: string;
    payflowId: string | null;
    paymentLink: string | null;
  }[];
  readonly documents: readonly { documentRef: string; fileName: string }[];
  readonly unexplainedEffects: readonly {
    kind: string;
    payflowId: string;
    fileName: string | null;
  }[];
  readonly deadLetters: readonly {
    id: string;
    eventId: string | null;
    eventType: string | null;
    reason: string;
    error: string;
    failedAt: string;
    erasedAt: string | null;
    discardReason: string | null;
    headers: Readonly<Record<string, unknown>>;
    message: StoredMessage;
  }[];
  readonly outbox: readonly {
    id: string;
    topic: string;
    createdAt: string;
    publishedAt: string | null;
    headers: Readonly<Record<string, unknown>>;
    message: StoredMessage;
  }[];
  readonly webhooks: readonly {
    id: string;
    kind: string;
    receivedAt: string;
    headers: Readonly<Record<string, unknown>>;
    message: StoredMessage;
  }[];
}

export interface PrivacyExport {
  readonly exportedAt: string;
  readonly selection: { readonly order: string } | { readonly customerNumber: string };
  readonly orders: readonly ExportedOrder[];
}

export class PrivacyExportService {
  constructor(
    private readonly database: Database,
    private readonly stores: PersonalDataStores,
  ) {}

  async export(selection: PrivacySelection, now: Date = new Date()): Promise<PrivacyExport> {
    const sql = this.database.sql;
    const orderIds = await ordersOf(sql, this.stores, selection);
    const orders: ExportedOrder[] = [];
    for (const orderId of orderIds) orders.push(await this.exportOrder(sql, orderId));
    return {
      exportedAt: now.toISOString(),
      selection:
        selection.kind === 'order'
          ? { order: selection.orderId }
          : { customerNumber: selection.customerNumber },
      orders,
    };
  }

  private async exportOrder(sql: Sql, orderId: string): Promise<ExportedOrder> {
    const { stores } = this;
    const order = await stores.orders.personalDataOf(sql, orderId);
    const letters = await stores.letters.personalDataOf(sql, orderId);
    // Outbox rows and webhooks only when they hold something personal (most hold ids only).
    const outbox = (await stores.outbox.personalDataOf(sql, orderId)).filter(
      (row) => scrubBytes(row.value).changed,
    );
    const webhooks = (await stores.webhooks.personalDataOf(sql, orderId)).filter(
      (row) => scrubBytes(row.body).changed,
    );
    return {
      orderId,
      customerNumber: order?.customerNumber ?? null,
      personalDataErasedAt: order?.personalDataErasedAt?.toISOString() ?? null,
      payments: await stores.payments.personalDataOf(sql, orderId),
      documents: (await stores.documents.personalDataOf(sql, orderId)).map((document) => ({
        documentRef: document.documentRef,
        fileName: document.fileName,
      })),
      unexplainedEffects: (await stores.effects.personalDataOf(sql, orderId)).map((effect) => ({
        kind: effect.kind,
        payflowId: effect.payflowId,
        fileName: effect.fileName,
      })),
      deadLetters: letters.map((letter) => ({
        id: letter.id,
        eventId: letter.eventId,
        eventType: letter.eventType,
        reason: letter.reason,
        error: letter.error,
        failedAt: letter.failedAt.toISOString(),
        erasedAt: letter.erasedAt?.toISOString() ?? null,
        discardReason: letter.discardReason,
        headers: letter.headers,
        message: storedMessage(letter.value),
      })),
      outbox: outbox.map((row) => ({
        id: row.id,
        topic: row.topic,
        createdAt: row.createdAt.toISOString(),
        publishedAt: row.publishedAt?.toISOString() ?? null,
        headers: row.headers,
        message: storedMessage(row.value),
      })),
      webhooks: webhooks.map((row) => ({
        id: row.id,
        kind: row.kind,
        receivedAt: row.receivedAt.toISOString(),
        headers: row.headers,
        message: storedMessage(row.body),
      })),
    };
  }
}

function storedMessage(bytes: Buffer | null): StoredMessage {
  if (bytes === null) return null;
  const json = parseJson(bytes);
  return json === undefined ? { base64: bytes.toString('base64') } : { json };
}
