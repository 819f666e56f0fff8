/**
 * Conformance, group A (payment management): every endpoint's happy path, the 422 shape,
 * and the business rules of the spec and docs/assumptions.md.
 */
import { createHash } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { fetchToken, startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import {
  call,
  control,
  createPayment,
  paymentBody,
  type CreatedPayment,
  type ErrorBody,
  type InstallmentRecord,
  type PaymentStatusBody,
  type ValidationBody,
} from './helpers.js';
import { useTestSandbox } from './sandbox-setup.js';

const HEX24 = /^[0-9a-f]{24}$/;

describe('sandbox group A', () => {
  let sandbox: SandboxHandle;
  let token: string;
  let api: string;

  useTestSandbox({
    started: (started) => {
      sandbox = started;
    },
    token: (fresh) => {
      token = fresh;
    },
  });
  beforeAll(() => {
    api = `${sandbox.url}/api`;
  });

  const post = <T = ValidationBody>(path: string, body: unknown) =>
    call<T>('POST', `${api}${path}`, { token, body });

  describe('POST /api/payments', () => {
    it('creates a payment: 24-hex id, longGui on the link domain, deprecated gui path', async () => {
      const answer = await post<CreatedPayment>('/payments', paymentBody());
      expect(answer.status).toBe(200);
      const { id, _links, installments } = answer.body;
      expect(id).toMatch(HEX24);
      expect(_links.longGui).toBe(`https://pay.payflow.test/p/${id}`);
      expect(_links.gui).toBe(`/p/${id}`);
      expect(_links.longGui.endsWith(_links.gui)).toBe(true);
      expect(installments).toBeNull();
    });

    it('uses the organization link domain for longGui', async () => {
      await control(sandbox, 'POST', '/organizations', {
        id: 'org-1',
        linkDomain: 'pay.example.no',
      });
      const created = await createPayment(sandbox, token);
      expect(created._links.longGui).toBe(`https://pay.example.no/p/${created.id}`);
    });

    it('selects the payment link (24 zeros) for a null or absent paymentMethodId', async () => {
      for (const paymentMethodId of [null, undefined, '000000000000000000000000']) {
        const created = await createPayment(sandbox, token, { paymentMethodId });
        const { body } = await control<{ paymentMethodId: string }>(
          sandbox,
          'GET',
          `/payments/${created.id}`,
        );
        expect(body.paymentMethodId).toBe('000000000000000000000000');
      }
      const unknown = await post(
        '/payments',
        paymentBody({ paymentMethodId: 'ffffffffffffffffffffffff' }),
      );
      expect(unknown.status).toBe(422);
      expect(unknown.body.detail).toEqual([
        {
          loc: ['body', 'paymentMethodId'],
          msg: expect.any(String),
          type: 'business.unknown_payment_method',
        },
      ]);
    });

    it('answers 422 with one detail entry per failing field, several at once', async () => {
      const answer = await post('/payments', {
        customer: { email: 'not-an-email' },
        order: { objects: [{ type: 'plane' }] },
        payment: { totalGrossAmount: '12', totalNetAmount: 10, dueDate: '31.01.2030' },
      });
      expect(answer.status).toBe(422);
      const byLoc = new Map(answer.body.detail.map((entry) => [entry.loc.join('.'), entry]));
      expect([...byLoc.keys()].sort()).toEqual(
        [
          'body.customer.email',
          'body.order.orderNumber',
          'body.order.objects.0.type',
          'body.payment.totalGrossAmount',
          'body.payment.dueDate',
        ].sort(),
      );
      for (const entry of answer.body.detail) {
        expect(typeof entry.msg).toBe('string');
        expect(entry.msg.length).toBeGreaterThan(0);
        expect(typeof entry.type).toBe('string');
      }
      expect(byLoc.get('body.order.orderNumber')?.type).toBe('value_error.missing');
    });

    it('answers 422 at loc ["body"] to a missing body', async () => {
      const answer = await call<ValidationBody>('POST', `${api}/payments`, { token });
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]?.loc).toEqual(['body']);
    });

    it('refuses amounts with more decimals than the currency allows', async () => {
      const nok = await post('/payments', paymentBody({ total: 100.555, net: 80 }));
      expect(nok.status).toBe(422);
      expect(nok.body.detail).toEqual([
        {
          loc: ['body', 'payment', 'totalGrossAmount'],
          msg: expect.any(String),
          type: 'value_error.decimal_places',
        },
      ]);
      const jpy = await post(
        '/payments',
        paymentBody({ currency: 'JPY', total: 1000.5, net: 800 }),
      );
      expect(jpy.body.detail[0]?.type).toBe('value_error.decimal_places');
      expect(
        (await post('/payments', paymentBody({ currency: 'JPY', total: 1000, net: 800 }))).status,
      ).toBe(200);
      expect(
        (await post('/payments', paymentBody({ currency: 'KWD', total: 10.125, net: 8.1 }))).status,
      ).toBe(200);
    });

    it('refuses installments that do not sum to the gross total', async () => {
      const answer = await post(
        '/payments',
        paymentBody({
          total: 1000,
          installments: [
            { date: '2030-01-01', grossAmount: 500 },
            { date: '2030-02-01', grossAmount: 499.99 },
          ],
        }),
      );
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toEqual([
        {
          loc: ['body', 'payment', 'installments'],
          msg: expect.any(String),
          type: 'business.installments_sum_mismatch',
        },
      ]);
    });

    it('creates installments: first initial, the rest scheduled, all CREATED', async () => {
      const created = await createPayment(sandbox, token, {
        total: 1000,
        installments: [
          { date: '2030-01-01', grossAmount: 333.34 },
          { date: '2030-02-01', grossAmount: 333.33 },
          { date: '2030-03-01', grossAmount: 333.33 },
        ],
      });
      expect(created.installments).toHaveLength(3);
      expect(created.installments?.map((entry) => entry.type)).toEqual([
        'initial',
        'scheduled',
        'scheduled',
      ]);
      expect(created.installments?.[0]).toEqual({
        id: expect.stringMatching(HEX24),
        date: '2030-01-01',
        type: 'initial',
        grossAmount: 333.34,
        status: 'CREATED',
        numTried: 0,
        successfullyChargedAt: null,
        numFailed: 0,
        lastFailedAt: null,
      });
    });

    it('checks item totals against the payment totals', async () => {
      const items = [
        {
          description: 'Service',
          grossUnitPrice: 125,
          netUnitPrice: 100,
          quantity: 2,
          taxRate: 25,
        },
        {
          description: 'Part',
          grossTotalPrice: 62.5,
          netTotalPrice: 50,
          vatAmount: 12.5,
          taxRate: 25,
        },
      ];
      expect((await post('/payments', paymentBody({ total: 312.5, net: 250, items }))).status).toBe(
        200,
      );
      const wrong = await post('/payments', paymentBody({ total: 312.5, net: 249.99, items }));
      expect(wrong.status).toBe(422);
      expect(wrong.body.detail).toEqual([
        {
          loc: ['body', 'payment', 'totalNetAmount'],
          msg: expect.any(String),
          type: 'business.totals_mismatch',
        },
      ]);
    });

    it('answers 422 (not 500) to an item quantity too large to price', async () => {
      for (const quantity of [1e21, 1e200]) {
        const items = [{ description: 'Bolt', grossUnitPrice: 1, netUnitPrice: 0.8, quantity }];
        const answer = await post('/payments', paymentBody({ total: 1, net: 0.8, items }));
        expect(answer.status).toBe(422);
        expect(answer.body.detail).toEqual([
          {
            loc: ['body', 'payment', 'items', 0, 'quantity'],
            msg: expect.any(String),
            type: 'value_error.number',
          },
        ]);
      }
      // item totals that are each an amount but add up past a safe integer: a mismatch
      const huge = { description: 'Yacht', grossTotalPrice: 5e13, netTotalPrice: 4e13 };
      const sum = await post('/payments', paymentBody({ total: 1, net: 1, items: [huge, huge] }));
      expect(sum.status).toBe(422);
      expect(sum.body.detail.map((entry) => entry.type)).toEqual([
        'business.totals_mismatch',
        'business.totals_mismatch',
      ]);
      const installmentItems = [{ description: 'Bolt', grossUnitPrice: 1, quantity: 1e21 }];
      const body = paymentBody({ total: 1 });
      body.payment = {
        ...(body.payment as object),
        installments: [{ date: '2030-01-01', grossAmount: 1, items: installmentItems }],
      };
      const inInstallment = await post('/payments', body);
      expect(inInstallment.status).toBe(422);
      expect(inInstallment.body.detail[0]?.loc).toEqual([
        'body',
        'payment',
        'installments',
        0,
        'items',
        0,
        'quantity',
      ]);
    });

    describe('the profile rule', () => {
      beforeEach(async () => {
        await control(sandbox, 'POST', '/organizations', {
          id: 'org-1',
          profiles: [
            { id: 'p-sales', department: 'sales' },
            { id: 'p-workshop', department: 'workshop' },
          ],
        });
      });

      it('needs profileId or paymentDepartment when the organization has two profiles', async () => {
        const answer = await post('/payments', paymentBody());
        expect(answer.status).toBe(422);
        expect(answer.body.detail).toEqual([
          {
            loc: ['body', 'payment', 'profileId'],
            msg: expect.any(String),
            type: 'business.profile_required',
          },
        ]);
      });

      it('accepts a known profileId or department, refuses unknown ones', async () => {
        const byProfile = await createPayment(sandbox, token, { profileId: 'p-workshop' });
        const byDepartment = await createPayment(sandbox, token, { paymentDepartment: 'sales' });
        const payments = await control<{ payments: { id: string; profileId: string }[] }>(
          sandbox,
          'GET',
          '/payments',
        );
        const profiles = new Map(
          payments.body.payments.map((payment) => [payment.id, payment.profileId]),
        );
        expect(profiles.get(byProfile.id)).toBe('p-workshop');
        expect(profiles.get(byDepartment.id)).toBe('p-sales');
        const badProfile = await post('/payments', paymentBody({ profileId: 'nope' }));
        expect(badProfile.body.detail[0]?.type).toBe('business.unknown_profile');
        const badDepartment = await post('/payments', paymentBody({ paymentDepartment: 'bakery' }));
        expect(badDepartment.body.detail[0]).toEqual({
          loc: ['body', 'payment', 'paymentDepartment'],
          msg: expect.any(String),
          type: 'business.unknown_department',
        });
      });
    });
  });

  describe('GET /api/payments/{id}/paymentStatus and DELETE /api/payments/{id}', () => {
    it('reports the status, and cancelling makes it REJECTED with cancelled installments', async () => {
      const created = await createPayment(sandbox, token, {
        total: 1000,
        installments: [
          { date: '2030-01-01', grossAmount: 400 },
          { date: '2030-02-01', grossAmount: 600 },
        ],
      });
      const status = await call<PaymentStatusBody>(
        'GET',
        `${api}/payments/${created.id}/paymentStatus`,
        { token },
      );
      expect(status.status).toBe(200);
      expect(status.body).toEqual({
        totalAmount: 1000,
        // the payment link went out right after creation
        installments: created.installments?.map((entry) => ({ ...entry, status: 'SENT' })),
        paymentId: created.id,
        paymentNumber: 1000,
        paymentStatus: { paymentStatus: 'DRAFT' },
        merchantId: 'org-1',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        dueDate: '2030-01-31',
        files: [],
        currency: 'NOK',
      });
      const cancelled = await call<PaymentStatusBody>('DELETE', `${api}/payments/${created.id}`, {
        token,
      });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.paymentStatus.paymentStatus).toBe('REJECTED');
      expect(cancelled.body.installments?.map((entry) => entry.status)).toEqual([
        'CANCELLED',
        'CANCELLED',
      ]);
      const again = await call<ValidationBody>('DELETE', `${api}/payments/${created.id}`, {
        token,
      });
      expect(again.status).toBe(422);
      expect(again.body.detail[0]?.type).toBe('business.payment_final');
    });

    it('answers 404 not_found to an unknown payment', async () => {
      const answer = await call<ErrorBody>(
        'GET',
        `${api}/payments/ffffffffffffffffffffffff/paymentStatus`,
        { token },
      );
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('not_found');
    });
  });

  describe('POST /api/refund', () => {
    const refund = (crossPayment: string, gross: number, net = gross * 0, currency = 'NOK') =>
      post<Record<string, unknown>>('/refund', {
        crossPayment,
        currency,
        totalGrossAmount: gross,
        totalNetAmount: net,
      });

    it('refunds what was collected, partial then full, and refuses more', async () => {
      const created = await createPayment(sandbox, token, { total: 1249.5, net: 999.6 });
      const early = await refund(created.id, 1);
      expect(early.status).toBe(422);
      expect((early.body as unknown as ValidationBody).detail[0]).toEqual({
        loc: ['body', 'totalGrossAmount'],
        msg: expect.any(String),
        type: 'business.refund_exceeds_remaining',
      });
      await control(sandbox, 'POST', `/payments/${created.id}/simulate`, { action: 'paid' });
      const partial = await refund(created.id, 249.5, 199.6);
      expect(partial.status).toBe(200);
      expect(partial.body).toEqual({
        refundType: 'partial',
        debtorAccountNumber: '',
        originalAmount: 1249.5,
        originalCurrency: 'NOK',
        grossRefundedAmount: 249.5,
        netRefundedAmount: 199.6,
        remainingAmount: 1000,
        refundId: expect.stringMatching(HEX24),
      });
      const tooMuch = await refund(created.id, 1000.01);
      expect(tooMuch.status).toBe(422);
      const full = await refund(created.id, 1000, 800);
      expect(full.body.refundType).toBe('full');
      expect(full.body.remainingAmount).toBe(0);
      const wrongCurrency = await refund(created.id, 1, 1, 'EUR');
      expect((wrongCurrency.body as unknown as ValidationBody).detail[0]?.type).toBe(
        'business.currency_mismatch',
      );
    });

    it('refuses a refund whose net exceeds its gross', async () => {
      const created = await createPayment(sandbox, token, { total: 1249.5, net: 999.6 });
      await control(sandbox, 'POST', `/payments/${created.id}/simulate`, { action: 'paid' });
      const answer = await refund(created.id, 100, 100.01);
      expect(answer.status).toBe(422);
      expect((answer.body as unknown as ValidationBody).detail).toEqual([
        {
          loc: ['body', 'totalNetAmount'],
          msg: expect.any(String),
          type: 'value_error.number.not_le',
        },
      ]);
      const listed = await control<{ refunds: unknown[] }>(
        sandbox,
        'GET',
        `/payments/${created.id}`,
      );
      expect(listed.body.refunds).toEqual([]);
      expect((await refund(created.id, 100, 100)).status).toBe(200);
    });

    it('only paid installments are refundable before the payment succeeds', async () => {
      const created = await createPayment(sandbox, token, {
        total: 1000,
        installments: [
          { date: '2030-01-01', grossAmount: 400 },
          { date: '2030-02-01', grossAmount: 600 },
        ],
      });
      await control(sandbox, 'POST', `/payments/${created.id}/simulate`, {
        action: 'installment_paid',
      });
      expect((await refund(created.id, 400.01)).status).toBe(422);
      expect((await refund(created.id, 400)).body.refundType).toBe('full');
    });
  });

  describe('installments', () => {
    let payment: CreatedPayment;
    beforeEach(async () => {
      payment = await createPayment(sandbox, token, {
        total: 1000,
        installments: [
          { date: '2030-01-01', grossAmount: 400 },
          { date: '2030-02-01', grossAmount: 600 },
        ],
      });
    });
    const total = async () =>
      (
        await call<PaymentStatusBody>('GET', `${api}/payments/${payment.id}/paymentStatus`, {
          token,
        })
      ).body.totalAmount;

    it('create, get, put and delete an installment; the total follows', async () => {
      const created = await post<InstallmentRecord>(`/payments/${payment.id}/installments/create`, {
        date: '2030-03-01',
        grossAmount: 250.25,
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        type: 'scheduled',
        status: 'CREATED',
        grossAmount: 250.25,
      });
      expect(await total()).toBe(1250.25);

      const url = `${api}/payments/${payment.id}/installments/${created.body.id}`;
      const got = await call<InstallmentRecord>('GET', url, { token });
      expect(got.body).toEqual(created.body);

      const put = await call<InstallmentRecord>('PUT', url, {
        token,
        body: { grossAmount: 300, date: '2030-04-01' },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ grossAmount: 300, date: '2030-04-01' });
      expect(await total()).toBe(1300);

      const empty = await call<ValidationBody>('PUT', url, { token, body: {} });
      expect(empty.status).toBe(422);
      expect(empty.body.detail[0]?.loc).toEqual(['body']);

      const deleted = await call<InstallmentRecord>('DELETE', url, { token });
      expect(deleted.status).toBe(200);
      expect(deleted.body.status).toBe('CANCELLED');
      expect(await total()).toBe(1000);
      const again = await call<ValidationBody>('DELETE', url, { token });
      expect(again.body.detail[0]?.type).toBe('business.installment_final');
      expect((await call('GET', `${url}x`, { token })).status).toBe(404);
    });

    it('refuses installments on a payment created without them, and on a final payment', async () => {
      const plain = await createPayment(sandbox, token);
      const answer = await post(`/payments/${plain.id}/installments/create`, {
        date: '2030-03-01',
        grossAmount: 1,
      });
      expect(answer.body.detail[0]?.type).toBe('business.not_installment_payment');
      await call('DELETE', `${api}/payments/${payment.id}`, { token });
      const final = await post(`/payments/${payment.id}/installments/create`, {
        date: '2030-03-01',
        grossAmount: 1,
      });
      expect(final.body.detail[0]?.type).toBe('business.payment_final');
    });

    it('refuses deleting an installment of a payment in a final status; the total stays', async () => {
      const second = payment.installments?.[1]?.id ?? '';
      const paid = await call('POST', `${sandbox.partnerUrl}/payments/${payment.id}/manual-paid`, {
        token,
        body: {},
      });
      expect(paid.status).toBe(200);
      const url = `${api}/payments/${payment.id}/installments/${second}`;
      const answer = await call<ValidationBody>('DELETE', url, { token });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toEqual([
        { loc: ['path', 'payflow_id'], msg: expect.any(String), type: 'business.payment_final' },
      ]);
      expect(await total()).toBe(1000);
      const kept = await call<InstallmentRecord>('GET', url, { token });
      expect(kept.body.status).not.toBe('CANCELLED');
    });

    it('refuses changing a paid installment', async () => {
      const first = payment.installments?.[0]?.id ?? '';
      await control(sandbox, 'POST', `/payments/${payment.id}/simulate`, {
        action: 'installment_paid',
        installmentId: first,
      });
      const answer = await call<ValidationBody>(
        'PUT',
        `${api}/payments/${payment.id}/installments/${first}`,
        {
          token,
          body: { grossAmount: 1 },
        },
      );
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]?.type).toBe('business.installment_final');
    });
  });

  describe('documents', () => {
    it('uploads a document, lists it in files[], deletes it', async () => {
      const payment = await createPayment(sandbox, token);
      const upload = await post<Record<string, unknown>>('/payments/uploadDocument', {
        paymentId: payment.id,
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        contentBase64: Buffer.from('%PDF-1.7 hello').toString('base64'),
      });
      expect(upload.status).toBe(200);
      expect(upload.body).toEqual({
        id: expect.stringMatching(HEX24),
        paymentId: payment.id,
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        size: 14,
        uploadedAt: expect.any(String),
      });
      const status = await call<PaymentStatusBody>(
        'GET',
        `${api}/payments/${payment.id}/paymentStatus`,
        { token },
      );
      expect(status.body.files).toEqual([upload.body]);
      const url = `${api}/payments/uploadDocument/${payment.id}/${String(upload.body.id)}`;
      const deleted = await call('DELETE', url, { token });
      expect(deleted.body).toEqual({ id: upload.body.id, deleted: true });
      expect((await call('DELETE', url, { token })).status).toBe(404);
    });

    describe('as multipart/form-data (paymentId, file)', () => {
      const upload = (form: FormData) =>
        fetch(`${api}/payments/uploadDocument`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
      const form = (fields: { paymentId?: string; file?: Blob; fileName?: string }) => {
        const data = new FormData();
        if (fields.paymentId !== undefined) data.append('paymentId', fields.paymentId);
        if (fields.file !== undefined) data.append('file', fields.file, fields.fileName);
        return data;
      };
      const pdf = Buffer.from('%PDF-1.7 multipart hello');

      it('uploads the file part like the JSON shape does', async () => {
        const payment = await createPayment(sandbox, token);
        const response = await upload(
          form({
            paymentId: payment.id,
            file: new Blob([pdf], { type: 'application/pdf' }),
            fileName: 'invoice.pdf',
          }),
        );
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body).toEqual({
          id: expect.stringMatching(HEX24),
          paymentId: payment.id,
          fileName: 'invoice.pdf',
          contentType: 'application/pdf',
          size: pdf.length,
          uploadedAt: expect.any(String),
        });
        const stored = await control<{ documents: { id: string; sha256: string }[] }>(
          sandbox,
          'GET',
          `/payments/${payment.id}`,
        );
        expect(stored.body.documents).toEqual([
          expect.objectContaining({
            id: body.id,
            sha256: createHash('sha256').update(pdf).digest('hex'),
          }),
        ]);
      });

      it('answers 422 for a missing field and 404 for an unknown payment', async () => {
        const payment = await createPayment(sandbox, token);
        const noFile = await upload(form({ paymentId: payment.id }));
        expect(noFile.status).toBe(422);
        expect(((await noFile.json()) as ValidationBody).detail).toEqual([
          { loc: ['body', 'file'], msg: 'field required', type: 'value_error.missing' },
        ]);
        const noPayment = await upload(form({ file: new Blob([pdf]), fileName: 'a.pdf' }));
        expect(noPayment.status).toBe(422);
        expect(((await noPayment.json()) as ValidationBody).detail[0]?.loc).toEqual([
          'body',
          'paymentId',
        ]);
        const unknown = await upload(
          form({ paymentId: 'ffffffffffffffffffffffff', file: new Blob([pdf]), fileName: 'a.pdf' }),
        );
        expect(unknown.status).toBe(404);
        const broken = await fetch(`${api}/payments/uploadDocument`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data' },
          body: 'no boundary, no parts',
        });
        expect(broken.status).toBe(400);
        expect(((await broken.json()) as ErrorBody).code).toBe('bad_request');
      });

      it('is described in the OpenAPI document beside the JSON shape', async () => {
        const doc = await control<{
          paths: Record<string, { post?: { requestBody?: { content: Record<string, unknown> } } }>;
        }>(sandbox, 'GET', '/openapi.json');
        const content = doc.body.paths['/api/payments/uploadDocument']?.post?.requestBody?.content;
        expect(Object.keys(content ?? {}).sort()).toEqual([
          'application/json',
          'multipart/form-data',
        ]);
        expect(content?.['multipart/form-data']).toMatchObject({
          schema: {
            type: 'object',
            properties: { paymentId: { type: 'string' }, file: { type: 'string' } },
            required: ['paymentId', 'file'],
          },
        });
      });

      it('is taken by uploadDocument only: another endpoint answers 415', async () => {
        const response = await fetch(`${api}/payments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form({ paymentId: 'x' }),
        });
        expect(response.status).toBe(415);
      });
    });

    it('refuses invalid base64; bodies above 16 MiB are 413', async () => {
      const payment = await createPayment(sandbox, token);
      const upload = (contentBase64: string) =>
        post('/payments/uploadDocument', {
          paymentId: payment.id,
          fileName: 'a',
          contentType: 'b',
          contentBase64,
        });
      expect((await upload('not base64!')).body.detail[0]?.type).toBe('value_error.base64');
      expect((await upload(Buffer.alloc(8 * 1024 * 1024).toString('base64'))).status).toBe(200);
      const huge = await upload(Buffer.alloc(13 * 1024 * 1024).toString('base64'));
      expect(huge.status).toBe(413);
      expect((huge.body as unknown as ErrorBody).code).toBe('payload_too_large');
    });

    it('refuses a document above 10 MiB with business.document_too_large', async () => {
      const roomy = await startTestSandbox();
      try {
        const roomyToken = await fetchToken(roomy);
        const payment = await createPayment(roomy, roomyToken);
        const answer = await call<ValidationBody>(
          'POST',
          `${roomy.url}/api/payments/uploadDocument`,
          {
            token: roomyToken,
            body: {
              paymentId: payment.id,
              fileName: 'big.bin',
              contentType: 'application/octet-stream',
              contentBase64: Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64'),
            },
          },
        );
        expect(answer.status).toBe(422);
        expect(answer.body.detail[0]).toEqual({
          loc: ['body', 'contentBase64'],
          msg: expect.any(String),
          type: 'business.document_too_large',
        });
      } finally {
        await roomy.close();
      }
    });
  });

  describe('malformed requests', () => {
    it('answers 400 bad_request to unparseable JSON, without a stack trace', async () => {
      const answer = await call<ErrorBody>('POST', `${api}/payments`, {
        token,
        body: '{"customer":',
      });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('bad_request');
      expect(answer.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
    });

    it('takes an empty body with content-type application/json as no body', async () => {
      const payment = await createPayment(sandbox, token);
      const answer = await call('DELETE', `${api}/payments/${payment.id}`, {
        token,
        headers: { 'content-type': 'application/json' },
      });
      expect(answer.status).toBe(200);
      const poisoned = await call<ErrorBody>('POST', `${api}/payments`, {
        token,
        body: '{"__proto__":{"polluted":true}}',
      });
      expect(poisoned.status).toBe(400);
    });

    it('answers 404 not_found to an unknown route', async () => {
      const answer = await call<ErrorBody>('GET', `${sandbox.url}/api/nothing`, { token });
      expect(answer.status).toBe(404);
      expect(answer.body.code).toBe('not_found');
    });
  });
});
