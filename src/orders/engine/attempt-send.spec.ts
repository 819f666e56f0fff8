/**
 * The call of a fresh creation, whose send hook begins its attempt (begin_sent): a request
 * leaves only after its attempt was recorded started and sent; a hook that began nothing
 * lets nothing leave and says why, so that the runner takes the path of begin first.
 */
import { describe, expect, it } from '@jest/globals';
import type { OrderEvent } from '../../events/order-event.schema.js';
import type { OrdersOptions } from '../orders.options.js';
import type { AttemptBegin, Begun, FreshItem } from './attempt-begin.js';
import { AttemptSend } from './attempt-send.js';
import type { CommandAttemptRepository } from './attempts/command-attempt.repository.js';
import type { CommandSpec, PayflowCallContext } from './command-spec.js';
import { OrderCommand } from './order-command.js';

type Type = 'order.payment_requested';

class Command extends OrderCommand<Type> {}

const command = new Command(
  {
    eventId: 'e-1',
    orderId: 'o-1',
    type: 'order.payment_requested',
  } as unknown as OrderEvent<Type>,
  { topic: 'erp.orders.v1', partition: 0, offset: '7' },
);
const item = { command } as unknown as FreshItem;
const options = { workerId: 'w-1', callDeadlineMs: 5_000 } as OrdersOptions;

/** A Payflow call that runs the send hook `sends` times (a 401 refresh sends again). */
function callThat(
  sent: string[],
  { sends = 1, failBefore }: { sends?: number; failBefore?: Error } = {},
): CommandSpec<Type, string, string> {
  return {
    type: 'order.payment_requested',
    repeatable: false,
    map: () => Promise.reject(new Error('not used')),
    complete: () => Promise.reject(new Error('not used')),
    call: async (state: string, context: PayflowCallContext) => {
      if (failBefore !== undefined) throw failBefore;
      for (let i = 0; i < sends; i++) await context.onSend?.();
      sent.push(state);
      return `created ${state}`;
    },
  };
}

function sender(begin: () => Promise<Begun | undefined>, marked: string[] = []): AttemptSend {
  const attempts = {
    markSent: (ids: readonly string[]) => {
      marked.push(...ids);
      return Promise.resolve(new Set(ids));
    },
  } as unknown as CommandAttemptRepository;
  return new AttemptSend(attempts, { sent: begin } as unknown as AttemptBegin, options);
}

const started: Begun = { kind: 'start', attemptId: '41', paymentId: 'p-1' };

describe('AttemptSend.callFresh', () => {
  it('sends once the hook recorded the attempt started and sent', async () => {
    const sent: string[] = [];
    const call = await sender(() => Promise.resolve(started)).callFresh(
      command,
      callThat(sent),
      'req',
      item,
    );
    expect(sent).toEqual(['req']);
    expect(call).toEqual({
      kind: 'begun',
      attemptId: '41',
      paymentId: 'p-1',
      outcome: { ok: true, result: 'created req' },
    });
  });

  it('sends nothing for an event that is not fresh, and says the hook ran', async () => {
    const sent: string[] = [];
    const call = await sender(() => Promise.resolve(undefined)).callFresh(
      command,
      callThat(sent),
      'req',
      item,
    );
    expect(sent).toEqual([]);
    expect(call).toEqual({ kind: 'not_begun', hookRan: true, unheard: false });
  });

  it('sends nothing when the statement failed, and says its answer may be lost', async () => {
    const sent: string[] = [];
    const call = await sender(() => Promise.reject(new Error('connection lost'))).callFresh(
      command,
      callThat(sent),
      'req',
      item,
    );
    expect(sent).toEqual([]);
    expect(call).toEqual({ kind: 'not_begun', hookRan: true, unheard: true });
  });

  it('begins nothing when the call failed before its hook', async () => {
    let begun = 0;
    const call = await sender(() => {
      begun += 1;
      return Promise.resolve(started);
    }).callFresh(command, callThat([], { failBefore: new Error('refused') }), 'req', item);
    expect(begun).toBe(0);
    expect(call).toEqual({ kind: 'not_begun', hookRan: false, unheard: false });
  });

  it('marks a request sent again (a 401 refresh) without beginning twice', async () => {
    let begun = 0;
    const marked: string[] = [];
    const call = await sender(() => {
      begun += 1;
      return Promise.resolve(started);
    }, marked).callFresh(command, callThat([], { sends: 2 }), 'req', item);
    expect(begun).toBe(1);
    expect(marked).toEqual(['41']);
    expect(call.kind).toBe('begun');
  });
});
