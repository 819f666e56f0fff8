import { describe, expect, it } from '@jest/globals';
import type { FastifyReply, FastifyRequest } from 'fastify';
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
      headers.set(name, value);
      return fake;
    },
  };
  return fake as unknown as FastifyReply & { set: string[] };
}

describe('console cookies', () => {
  it('are HttpOnly, SameSite=Strict and under /console; Secure only over TLS', () => {
    const plain = reply();
    setCookie(request(false), plain, 'pfb_console', 'abc', { maxAgeSeconds: 60 });
    expect(plain.set).toEqual([
      'pfb_console=abc; Path=/console; HttpOnly; SameSite=Strict; Max-Age=60',
    ]);
    const tls = reply();
    setCookie(request(true), tls, 'pfb_console', 'abc');
    setCookie(request(true), tls, 'pfb_console_login', '', { maxAgeSeconds: 0 });
    expect(tls.set).toEqual([
      'pfb_console=abc; Path=/console; HttpOnly; SameSite=Strict; Secure',
      'pfb_console_login=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0; Secure',
    ]);
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
