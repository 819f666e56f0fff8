import { describe, expect, it } from '@jest/globals';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleCookies } from './console-cookies.js';
import { cookiesOf, formField, setCookie } from './console-request.js';

function request(encrypted: boolean, cookie?: string): FastifyRequest {
  return {
    raw: { socket: { encrypted } },
    headers: cookie === undefined ? {} : { cookie },
  } as unknown as FastifyRequest;
}

function reply(): FastifyReply & { set: string[] } {
  const headers = new Map<string, unknown>();
  const fake = {
    get set(): string[] {
      return (headers.get('set-cookie') as string[] | undefined) ?? [];
    },
    getHeader: (name: string) => headers.get(name),
    header(name: string, value: unknown) {
      // As fastify: a Set-Cookie is added to those set before.
      const before = headers.get(name);
      headers.set(
        name,
        name === 'set-cookie' ? [...((before as string[] | undefined) ?? []), value] : value,
      );
      return fake;
    },
  };
  return fake as unknown as FastifyReply & { set: string[] };
}

describe('console cookies', () => {
  it('are HttpOnly, SameSite=Strict and under /console over plain HTTP', () => {
    const plain = reply();
    setCookie(plain, false, 'pfb_console', 'abc', { maxAgeSeconds: 60 });
    expect(plain.set).toEqual([
      'pfb_console=abc; Path=/console; HttpOnly; SameSite=Strict; Max-Age=60',
    ]);
  });

  it('are Secure and __Host- prefixed (Path=/) where the browser sees HTTPS', () => {
    const tls = reply();
    setCookie(tls, true, 'pfb_console', 'abc');
    setCookie(tls, true, 'pfb_console_login', '', { maxAgeSeconds: 0 });
    setCookie(tls, true, 'pfb_console_oidc', 'p', { sameSite: 'Lax' });
    expect(tls.set).toEqual([
      '__Host-pfb_console=abc; Path=/; HttpOnly; SameSite=Strict; Secure',
      '__Host-pfb_console_login=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
      '__Host-pfb_console_oidc=p; Path=/; HttpOnly; SameSite=Lax; Secure',
    ]);
  });

  it('see HTTPS over TLS, or in clear behind a TLS proxy (CONSOLE_BEHIND_TLS_PROXY)', () => {
    const direct = new ConsoleCookies({ behindTlsProxy: false });
    const proxied = new ConsoleCookies({ behindTlsProxy: true });
    expect(direct.https(request(true))).toBe(true);
    expect(direct.https(request(false))).toBe(false);
    expect(proxied.https(request(false))).toBe(true);
    // Each reads the name it writes: a plain cookie is not taken for a __Host- one.
    const both = request(false, 'pfb_console=plain; __Host-pfb_console=host');
    expect(direct.get(both, 'pfb_console')).toBe('plain');
    expect(proxied.get(both, 'pfb_console')).toBe('host');
    const set = reply();
    proxied.set(request(false), set, 'pfb_console', 'v');
    expect(set.set).toEqual(['__Host-pfb_console=v; Path=/; HttpOnly; SameSite=Strict; Secure']);
  });

  it('are read from the Cookie header, ignoring what is not one', () => {
    const cookies = cookiesOf(request(false, 'a=1; pfb_console=x%2By; broken; b=%E0%A4%A'));
    expect([...cookies]).toEqual([
      ['a', '1'],
      ['pfb_console', 'x+y'],
    ]);
  });

  it('reads a form field as text only', () => {
    expect(formField({ _csrf: 't' }, '_csrf')).toBe('t');
    expect(formField({ _csrf: ['t', 'u'] }, '_csrf')).toBe('t');
    expect(formField({ _csrf: 1 }, '_csrf')).toBe('');
    expect(formField(undefined, '_csrf')).toBe('');
  });
});
