import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  errorMessage,
  FakePostgres,
  notificationMessage,
  readyMessages,
  type FakeSession,
} from '../../test/support/fake-postgres.js';
import { LISTEN_RETRY, PgListener, type ListenHandle } from './pg-listener.js';

let server: FakePostgres | undefined;
const handles: ListenHandle[] = [];

afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.close();
  await server?.close();
  server = undefined;
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function poolOn(fake: FakePostgres): pg.Pool {
  // The listener only reads the pool's settings; the pool itself never connects here.
  return new pg.Pool({ host: '127.0.0.1', port: fake.port, user: 'postgres' });
}

function sessionOf(fake: FakePostgres, index: number): FakeSession {
  const session = fake.sessions[index];
  if (session === undefined) throw new Error(`no session ${index}`);
  return session;
}

describe('PgListener', () => {
  it('reopens a LISTEN connection that Postgres ended (57P01), LISTENs again and says so', async () => {
    server = await FakePostgres.start();
    const notified: string[] = [];
    let reconnects = 0;
    const handle = await PgListener.of(poolOn(server)).subscribe({
      channel: 'restart_spec',
      onNotify: (payload) => notified.push(payload),
      onReconnect: () => (reconnects += 1),
    });
    handles.push(handle);
    expect(handle.listening).toBe(true);
    expect(sessionOf(server, 0).statements).toEqual(['LISTEN restart_spec']);

    const lostAt = performance.now();
    sessionOf(server, 0).terminate();
    await until(() => !handle.listening, 1_000);
    // Back after the first step of the back-off (250 ms ± 20 %), not after seconds.
    await until(() => reconnects === 1, 1_000);
    expect(performance.now() - lostAt).toBeLessThan(LISTEN_RETRY.initialMs * 1.2 + 500);
    expect(handle.listening).toBe(true);
    expect(sessionOf(server, 1).statements).toEqual(['LISTEN restart_spec']);

    sessionOf(server, 1).write(notificationMessage('restart_spec', 'rows'));
    await until(() => notified.length === 1, 1_000);
    expect(notified).toEqual(['rows']);
  });

  it('keeps trying while Postgres refuses connections, and is back soon after it accepts', async () => {
    server = await FakePostgres.start();
    let reconnects = 0;
    const handle = await PgListener.of(poolOn(server)).subscribe({
      channel: 'restart_spec',
      onNotify: () => undefined,
      onReconnect: () => (reconnects += 1),
    });
    handles.push(handle);

    // Restarting: every new connection is refused as Postgres does while it starts up.
    const fake = server;
    fake.whenConnected((session) =>
      session.write(errorMessage('57P03', 'the database system is starting up')),
    );
    sessionOf(fake, 0).terminate();
    await until(() => fake.sessions.length >= 4, 5_000);
    expect(handle.listening).toBe(false);
    expect(reconnects).toBe(0);

    const acceptedAt = performance.now();
    fake.whenConnected((session) => session.write(readyMessages()));
    await until(() => reconnects === 1, 5_000);
    // Within one capped back-off step of Postgres accepting again.
    expect(performance.now() - acceptedAt).toBeLessThan(LISTEN_RETRY.maxMs * 1.2 + 500);
    expect(handle.listening).toBe(true);
  });
});
