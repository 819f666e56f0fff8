/**
 * order.payment_requested → POST /api/payments. Every such event creates a new payment.
 *
 * Before the call, in one transaction: the order row, the payment row (state `creating`,
 * its webhook token and the SHA-256 of its api_key) with its planned installments, and the
 * attempt. After it, in one transaction: the payment `created` with Payflow's ids and
 * link, the event processed, `payment.created` in the outbox. A rejection marks the
 * payment `creation_failed` and emits `payment.creation_failed`; an unclear failure leaves
 * it `in_doubt` (never re-sent) until `resolveInDoubt` learns Payflow's id.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Sql } from '../../database/database.js';
import { TransactionBatcher, type BatchSql } from '../../database/transaction-batcher.js';
import { PayflowValidationError, type PayflowError } from '../../payflow/payflow.errors.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type {
  CreatePaymentInput,
  CreatedPayment,
  Installment,
  PayflowApi,
} from '../../payflow/payflow.types.js';
import {
  OrderCommandEngine,
  type CommandSpec,
  type FreshContext,
  type FreshWrites,
  type FreshWritesMany,
  type PrepareContext,
  type Prepared,
} from '../common/command-engine.js';
import type { CommandOutcome, OrderCommand } from '../common/order-command.js';
import { PaymentMethodCatalog } from '../common/payment-methods.js';
import {
  newWebhookCredentials,
  webhookCallback,
  type WebhookCredentials,
} from '../common/webhook-credentials.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import {
  creationFailedEvent,
  paymentCreatedEvent,
  type CreatedInstallmentView,
} from './payment-created.event.js';
import { mapPaymentRequested, type MappedPaymentRequest } from './payment-requested.mapping.js';
import type { PaymentRequestedCommand } from './payment-requested.command.js';

interface CreateState {
  readonly paymentId: string;
  readonly organizationId: string | null;
  readonly mapped: MappedPaymentRequest;
  readonly credentials: WebhookCredentials;
}

/** What a webhook (or an operator) learned about a payment whose creation is in doubt. */
export interface InDoubtResolution {
  /** Payflow's id of the payment. */
  readonly payflowId: string;
  /** `_links.longGui`, when known. */
  readonly paymentLink?: string | null;
  /** Payflow's installments (from GET paymentStatus), matched to the plan by position. */
  readonly installments?: readonly Pick<Installment, 'id' | 'type' | 'status'>[];
}

/**
 * The three statements below write the same order and payment rows (one retried event,
 * one fresh event, many fresh events); they differ in where the values come from. The
 * order is created or brought up to date (organization, number, currency), and touched
 * only when something changed.
 */
const ORDER_UPSERT_CONFLICT = `ON CONFLICT (order_id) DO UPDATE
       SET organization_id = COALESCE(EXCLUDED.organization_id, orders.organization_id),
           order_number = EXCLUDED.order_number, currency = EXCLUDED.currency,
           updated_at = now()
     WHERE (orders.organization_id, orders.order_number, orders.currency)
           IS DISTINCT FROM (COALESCE(EXCLUDED.organization_id, orders.organization_id),
                             EXCLUDED.order_number, EXCLUDED.currency)`;
const PAYMENT_INSERT = `INSERT INTO payments (id, order_id, organization_id, event_id, state,
    currency, total_gross_minor, total_net_minor, webhook_token, api_key_hash, payment_method_id)`;

const BEGIN_SQL = `
  WITH o AS (
    INSERT INTO orders (order_id, organization_id, order_number, currency)
    VALUES ($1, $2, $3, $4)
    ${ORDER_UPSERT_CONFLICT}),
  p AS (
    ${PAYMENT_INSERT}
    VALUES ($5::uuid, $1, $2, $6::uuid, 'creating', $4, $7, $8, $9, $10, $11)
    ON CONFLICT (event_id) DO UPDATE
       SET state = 'creating', organization_id = EXCLUDED.organization_id,
           currency = EXCLUDED.currency, total_gross_minor = EXCLUDED.total_gross_minor,
           total_net_minor = EXCLUDED.total_net_minor, webhook_token = EXCLUDED.webhook_token,
           api_key_hash = EXCLUDED.api_key_hash, payment_method_id = EXCLUDED.payment_method_id,
           payflow_id = NULL, payment_link = NULL, updated_at = now())
  INSERT INTO installments (payment_id, installment_ref, position, due_date, gross_minor)
  SELECT $5::uuid, x.ref, x.position, x.due_date, x.gross_minor
    FROM unnest($12::text[], $13::int[], $14::date[], $15::bigint[])
         AS x (ref, position, due_date, gross_minor)`;

/**
 * The same rows for a fresh event, as CTEs of the engine's guard statement (written only
 * when the attempt was recorded: `FROM started`). $2 order id, $6 payment id, $1 event id.
 */
const FRESH_CTES = `
  fresh_order AS (
    INSERT INTO orders (order_id, organization_id, order_number, currency)
    SELECT $2, $8, $9, $10 FROM started
    ${ORDER_UPSERT_CONFLICT}),
  fresh_payment AS (
    ${PAYMENT_INSERT}
    SELECT $6::uuid, $2, $8, $1::uuid, 'creating', $10, $11, $12, $13, $14, $15 FROM started),
  fresh_installments AS (
    INSERT INTO installments (payment_id, installment_ref, position, due_date, gross_minor)
    SELECT $6::uuid, x.ref, x.position, x.due_date, x.gross_minor
      FROM started,
           unnest($16::text[], $17::int[], $18::date[], $19::bigint[])
           AS x (ref, position, due_date, gross_minor))`;

/**
 * The same rows for several fresh events at once, as CTEs of the engine's shared guard
 * statement: written only for the events in `fresh_rows` (those whose attempt it recorded),
 * matched to their data by `n`. Data from $7 on, installments flattened with their event's
 * `n` from $16 on.
 */
const FRESH_MANY_CTES = `
  fresh_data AS (
    SELECT r.n, r.event_id, r.order_id, r.payment_id, d.organization_id, d.order_number,
           d.currency, d.gross_minor, d.net_minor, d.webhook_token, d.api_key_hash,
           d.payment_method_id
      FROM fresh_rows r
      JOIN unnest($7::int[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::bigint[],
                  $13::text[], $14::bytea[], $15::text[])
           AS d (n, organization_id, order_number, currency, gross_minor, net_minor,
                 webhook_token, api_key_hash, payment_method_id)
        ON d.n = r.n),
  fresh_order AS (
    INSERT INTO orders (order_id, organization_id, order_number, currency)
    SELECT order_id, organization_id, order_number, currency FROM fresh_data ORDER BY n
    ${ORDER_UPSERT_CONFLICT}),
  fresh_payment AS (
    ${PAYMENT_INSERT}
    SELECT payment_id, order_id, organization_id, event_id, 'creating', currency, gross_minor,
           net_minor, webhook_token, api_key_hash, payment_method_id
      FROM fresh_data ORDER BY n),
  fresh_installments AS (
    INSERT INTO installments (payment_id, installment_ref, position, due_date, gross_minor)
    SELECT r.payment_id, i.ref, i.position, i.due_date, i.gross_minor
      FROM unnest($16::int[], $17::text[], $18::int[], $19::date[], $20::bigint[])
           AS i (n, ref, position, due_date, gross_minor)
      JOIN fresh_rows r ON r.n = i.n)`;

/**
 * The payments of a batch `created` with Payflow's ids and links, and their installments
 * bound to Payflow's installment ids by position: one statement for the whole batch.
 */
const COMPLETE_SQL = `
  WITH p AS (
    UPDATE payments p
       SET payflow_id = x.payflow_id, state = 'created', payment_link = x.link,
           status = COALESCE(p.status, 'pending'), updated_at = now()
      FROM unnest($1::uuid[], $2::text[], $3::text[]) AS x (id, payflow_id, link)
     WHERE p.id = x.id AND p.state IN ('creating', 'in_doubt'))
  UPDATE installments i
     SET payflow_installment_id = x.payflow_id, type = x.type, provider_status = x.status,
         updated_at = now()
    FROM unnest($4::uuid[], $5::int[], $6::text[], $7::text[], $8::text[])
         AS x (payment_id, position, payflow_id, type, status)
   WHERE i.payment_id = x.payment_id AND i.position = x.position AND i.removed_at IS NULL`;

interface CreatedRow {
  readonly paymentId: string;
  readonly result: CreatedPayment;
}

@Injectable()
export class PaymentRequestedHandler {
  /** Key of the batch-wide write of created payments. */
  private readonly createdKey = {};
  private readonly spec: CommandSpec<
    'order.payment_requested',
    MappedPaymentRequest,
    CreateState,
    CreatedPayment
  >;

  constructor(
    private readonly engine: OrderCommandEngine,
    private readonly batcher: TransactionBatcher,
    private readonly paymentMethods: PaymentMethodCatalog,
    @Inject(PAYFLOW_API) private readonly payflow: PayflowApi,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
  ) {
    this.spec = {
      type: 'order.payment_requested',
      repeatable: false,
      createsPayment: true,
      map: (command) => this.map(command),
      freshWrites: (context) => this.freshWrites(context),
      freshWritesMany: (contexts) => this.freshWritesMany(contexts),
      prepare: (tx, context) => this.prepare(tx, context),
      call: (state, signal) => this.call(state, signal),
      complete: (tx, state, result, command) => this.complete(tx, state, result, command),
      onRejected: (tx, state, error, command) => this.onRejected(tx, state, error, command),
      onInDoubt: (tx, paymentId, cause, command) => this.onInDoubt(tx, paymentId, cause, command),
      onMappingFailed: (_tx, error, command) =>
        Promise.resolve([
          creationFailedEvent(command.eventId, command.orderId, command.event.organizationId, {
            reason: error.reason,
            code: error.code,
            message: error.message,
            validation: [],
          }),
        ]),
    };
  }

  execute(command: PaymentRequestedCommand): Promise<CommandOutcome> {
    return this.engine.run(command, this.spec);
  }

  /**
   * Settles a payment whose creation is in doubt once Payflow's id is known (a webhook on
   * its token, or an operator): the payment becomes `created`, its attempt `resolved`
   * (a replay of the event is then a no-op) and `payment.created` is emitted. Returns false
   * when the payment is not in doubt (unknown, created already, or still being created
   * within its lease).
   */
  resolveInDoubt(paymentId: string, resolution: InDoubtResolution): Promise<boolean> {
    return this.batcher.run(async (tx) => {
      const [payment] = await tx.query<{
        order_id: string;
        organization_id: string | null;
        currency: string;
        total_gross_minor: string;
        total_net_minor: string;
        payment_link: string | null;
        payment_method_id: string | null;
        event_id: string | null;
      }>(
        `UPDATE payments p
            SET payflow_id = $2, state = 'created', payment_link = COALESCE($3, p.payment_link),
                status = COALESCE(p.status, 'pending'), updated_at = now()
          WHERE p.id = $1::uuid
            AND (p.state = 'in_doubt'
                 OR (p.state = 'creating' AND EXISTS (
                       SELECT 1 FROM command_attempts a
                        WHERE a.payment_id = p.id AND a.state = 'started'
                          AND a.lease_until <= clock_timestamp())))
         RETURNING order_id, organization_id, currency, total_gross_minor, total_net_minor,
                   payment_link, payment_method_id, event_id`,
        [paymentId, resolution.payflowId, resolution.paymentLink ?? null],
      );
      if (payment === undefined) return false;
      await tx.execute(
        `UPDATE command_attempts SET state = 'resolved', finished_at = clock_timestamp()
          WHERE payment_id = $1::uuid AND state IN ('in_doubt', 'started')`,
        [paymentId],
      );
      const installments = resolution.installments ?? [];
      if (installments.length > 0) await this.bindInstallments(tx, paymentId, installments);
      const rows = await tx.query<{
        installment_ref: string;
        payflow_installment_id: string | null;
        due_date: string;
        gross_minor: string;
        provider_status: string | null;
      }>(
        `SELECT installment_ref, payflow_installment_id, to_char(due_date, 'YYYY-MM-DD') AS due_date,
                gross_minor, provider_status
           FROM installments WHERE payment_id = $1::uuid AND removed_at IS NULL ORDER BY position`,
        [paymentId],
      );
      const currency = payment.currency.trim();
      this.engine.emit(tx, [
        paymentCreatedEvent({
          sourceEventId: payment.event_id,
          orderId: payment.order_id,
          organizationId: payment.organization_id,
          payflowId: resolution.payflowId,
          paymentLink: payment.payment_link,
          currency,
          totalGrossMinor: Number(payment.total_gross_minor),
          totalNetMinor: Number(payment.total_net_minor),
          paymentMethodId: payment.payment_method_id,
          installments: rows.map((row) => ({
            ref: row.installment_ref,
            payflowId: row.payflow_installment_id,
            date: row.due_date,
            grossMinor: Number(row.gross_minor),
            status: row.provider_status,
          })),
        }),
      ]);
      return true;
    });
  }

  private async map(
    command: OrderCommand<'order.payment_requested'>,
  ): Promise<MappedPaymentRequest> {
    const mapped = mapPaymentRequested(command.event);
    if (mapped.paymentMethodId !== null) {
      await this.paymentMethods.assertKnown(mapped.paymentMethodId, command.event.organizationId);
    }
    return mapped;
  }

  private freshWrites(
    context: FreshContext<'order.payment_requested', MappedPaymentRequest>,
  ): FreshWrites<CreateState> {
    const { command, mapped, newPaymentId } = context;
    const { event } = command;
    if (newPaymentId === null) throw new Error('payment_requested needs a new payment id');
    const credentials = newWebhookCredentials();
    const plan = mapped.installments ?? [];
    return {
      state: {
        paymentId: newPaymentId,
        organizationId: event.organizationId,
        mapped,
        credentials,
      },
      ctes: FRESH_CTES,
      params: [
        event.organizationId,
        event.data.orderNumber,
        mapped.currency,
        mapped.totalGrossMinor,
        mapped.totalNetMinor,
        credentials.token,
        credentials.apiKeyHash,
        mapped.paymentMethodId,
        plan.map((entry) => entry.ref),
        plan.map((entry) => entry.position),
        plan.map((entry) => entry.date),
        plan.map((entry) => entry.grossMinor),
      ],
    };
  }

  private freshWritesMany(
    contexts: readonly FreshContext<'order.payment_requested', MappedPaymentRequest>[],
  ): FreshWritesMany<CreateState> {
    const states: CreateState[] = [];
    const data = {
      n: [] as number[],
      organizationId: [] as (string | null)[],
      orderNumber: [] as string[],
      currency: [] as string[],
      grossMinor: [] as number[],
      netMinor: [] as number[],
      token: [] as string[],
      apiKeyHash: [] as Buffer[],
      paymentMethodId: [] as (string | null)[],
    };
    const plan = {
      n: [] as number[],
      ref: [] as string[],
      position: [] as number[],
      date: [] as string[],
      grossMinor: [] as number[],
    };
    contexts.forEach(({ command, mapped, newPaymentId }, index) => {
      if (newPaymentId === null) throw new Error('payment_requested needs a new payment id');
      const n = index + 1;
      const { event } = command;
      const credentials = newWebhookCredentials();
      states.push({
        paymentId: newPaymentId,
        organizationId: event.organizationId,
        mapped,
        credentials,
      });
      data.n.push(n);
      data.organizationId.push(event.organizationId);
      data.orderNumber.push(event.data.orderNumber);
      data.currency.push(mapped.currency);
      data.grossMinor.push(mapped.totalGrossMinor);
      data.netMinor.push(mapped.totalNetMinor);
      data.token.push(credentials.token);
      data.apiKeyHash.push(credentials.apiKeyHash);
      data.paymentMethodId.push(mapped.paymentMethodId);
      for (const entry of mapped.installments ?? []) {
        plan.n.push(n);
        plan.ref.push(entry.ref);
        plan.position.push(entry.position);
        plan.date.push(entry.date);
        plan.grossMinor.push(entry.grossMinor);
      }
    });
    return {
      states,
      ctes: FRESH_MANY_CTES,
      params: [
        data.n,
        data.organizationId,
        data.orderNumber,
        data.currency,
        data.grossMinor,
        data.netMinor,
        data.token,
        data.apiKeyHash,
        data.paymentMethodId,
        plan.n,
        plan.ref,
        plan.position,
        plan.date,
        plan.grossMinor,
      ],
    };
  }

  private async prepare(
    tx: Sql,
    context: PrepareContext<'order.payment_requested', MappedPaymentRequest>,
  ): Promise<Prepared<CreateState>> {
    const { command, mapped } = context;
    const { event } = command;
    let paymentId: string = context.newPaymentId ?? randomUUID();
    if (context.retry) {
      // An earlier attempt failed without effect: its payment row is reused.
      const [existing] = await tx.query<{ id: string }>(
        `SELECT id FROM payments WHERE event_id = $1::uuid`,
        [event.eventId],
      );
      if (existing !== undefined) {
        paymentId = existing.id;
        await tx.execute(`DELETE FROM installments WHERE payment_id = $1::uuid`, [paymentId]);
      }
    }
    const credentials = newWebhookCredentials();
    const plan = mapped.installments ?? [];
    await tx.execute(BEGIN_SQL, [
      event.orderId,
      event.organizationId,
      event.data.orderNumber,
      mapped.currency,
      paymentId,
      event.eventId,
      mapped.totalGrossMinor,
      mapped.totalNetMinor,
      credentials.token,
      credentials.apiKeyHash,
      mapped.paymentMethodId,
      plan.map((entry) => entry.ref),
      plan.map((entry) => entry.position),
      plan.map((entry) => entry.date),
      plan.map((entry) => entry.grossMinor),
    ]);
    return {
      paymentId,
      state: { paymentId, organizationId: event.organizationId, mapped, credentials },
    };
  }

  private call(state: CreateState, signal: AbortSignal): Promise<CreatedPayment> {
    const input: CreatePaymentInput = {
      ...state.mapped.input,
      callback: webhookCallback(this.options.webhookBaseUrl, state.credentials),
    };
    return this.payflow.createPayment(input, {
      signal,
      ...(state.organizationId === null ? {} : { organizationId: state.organizationId }),
    });
  }

  private complete(
    tx: BatchSql,
    state: CreateState,
    result: CreatedPayment,
    command: OrderCommand<'order.payment_requested'>,
  ): Promise<StatusEvent[]> {
    const created = result.installments ?? [];
    tx.defer(this.createdKey, [{ paymentId: state.paymentId, result }], (sql, rows) =>
      this.markCreated(sql, rows),
    );
    const installments: CreatedInstallmentView[] = (state.mapped.installments ?? []).map(
      (planned) => {
        const answer = created[planned.position - 1];
        return {
          ref: planned.ref,
          payflowId: answer?.id ?? null,
          date: planned.date,
          grossMinor: planned.grossMinor,
          status: answer?.status ?? null,
        };
      },
    );
    return Promise.resolve([
      paymentCreatedEvent({
        sourceEventId: command.eventId,
        orderId: command.orderId,
        organizationId: state.organizationId,
        payflowId: result.id,
        paymentLink: result.paymentLink ?? null,
        currency: state.mapped.currency,
        totalGrossMinor: state.mapped.totalGrossMinor,
        totalNetMinor: state.mapped.totalNetMinor,
        paymentMethodId: state.mapped.paymentMethodId,
        installments,
      }),
    ]);
  }

  private async markCreated(tx: Sql, rows: readonly CreatedRow[]): Promise<void> {
    const installments = rows.flatMap(({ paymentId, result }) =>
      (result.installments ?? []).map((installment, index) => ({
        paymentId,
        position: index + 1,
        installment,
      })),
    );
    await tx.execute(COMPLETE_SQL, [
      rows.map((row) => row.paymentId),
      rows.map((row) => row.result.id),
      rows.map((row) => row.result.paymentLink ?? null),
      installments.map((entry) => entry.paymentId),
      installments.map((entry) => entry.position),
      installments.map((entry) => entry.installment.id),
      installments.map((entry) => entry.installment.type),
      installments.map((entry) => entry.installment.status),
    ]);
  }

  private async onRejected(
    tx: Sql,
    state: CreateState,
    error: PayflowError,
    command: OrderCommand<'order.payment_requested'>,
  ): Promise<StatusEvent[]> {
    await tx.execute(
      `UPDATE payments SET state = 'creation_failed', updated_at = now()
        WHERE id = $1::uuid AND state = 'creating'`,
      [state.paymentId],
    );
    return [
      creationFailedEvent(command.eventId, command.orderId, state.organizationId, {
        reason: 'rejected_by_payflow',
        code: error.code,
        message: error.message,
        validation: error instanceof PayflowValidationError ? error.detail : [],
      }),
    ];
  }

  private async onInDoubt(
    tx: Sql,
    paymentId: string | null,
    cause: string,
    command: OrderCommand<'order.payment_requested'>,
  ): Promise<StatusEvent[]> {
    if (paymentId !== null) {
      await tx.execute(
        `UPDATE payments SET state = 'in_doubt', updated_at = now()
          WHERE id = $1::uuid AND state = 'creating'`,
        [paymentId],
      );
    }
    return [
      creationFailedEvent(command.eventId, command.orderId, command.event.organizationId, {
        reason: 'in_doubt',
        code: 'EVENT.IN_DOUBT',
        message: `the payment may or may not exist at Payflow: ${cause}`,
        validation: [],
      }),
    ];
  }

  private async bindInstallments(
    tx: Sql,
    paymentId: string,
    installments: readonly Pick<Installment, 'id' | 'type' | 'status'>[],
  ): Promise<void> {
    await tx.execute(
      `UPDATE installments i
          SET payflow_installment_id = x.payflow_id, type = x.type, provider_status = x.status,
              updated_at = now()
         FROM unnest($2::int[], $3::text[], $4::text[], $5::text[])
              AS x (position, payflow_id, type, status)
        WHERE i.payment_id = $1::uuid AND i.position = x.position`,
      [
        paymentId,
        installments.map((_, index) => index + 1),
        installments.map((installment) => installment.id),
        installments.map((installment) => installment.type),
        installments.map((installment) => installment.status),
      ],
    );
  }
}
