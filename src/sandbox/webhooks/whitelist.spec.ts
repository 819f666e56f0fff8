import { describe, expect, it } from '@jest/globals';
import { isWhitelisted } from './whitelist.js';

/** Which of `hosts` the whitelist lets through, in their order. */
function admitted(list: readonly string[], hosts: readonly string[]): string[] {
  return hosts.filter((host) => isWhitelisted(host, list));
}

describe('isWhitelisted', () => {
  it('matches a domain and its subdomains, label by label', () => {
    const subdomains = ['example.com', 'a.example.com', 'a.b.example.com'];
    const lookalikes = ['badexample.com', 'example.com.evil.test', 'com'];
    expect(admitted(['example.com'], [...subdomains, ...lookalikes])).toEqual(subdomains);
  });

  it('ignores case and a trailing dot on either side', () => {
    expect(isWhitelisted('A.Example.COM.', ['example.com'])).toBe(true);
    expect(isWhitelisted('a.example.com', ['EXAMPLE.com.'])).toBe(true);
  });

  it('matches IP addresses exactly, never by suffix', () => {
    const hosts = ['127.0.0.1', '10.127.0.0.1', '127.0.0.10'];
    expect(admitted(['127.0.0.1'], hosts)).toEqual(['127.0.0.1']);
    for (const suffix of ['0.0.1', '0.1', '1']) {
      expect(admitted([suffix], ['127.0.0.1'])).toEqual([]);
    }
  });

  it('compares IPv6 addresses in their canonical form, with or without brackets', () => {
    expect(admitted(['::1'], ['[::1]', '[::2]'])).toEqual(['[::1]']);
    expect(isWhitelisted('::1', ['0:0:0:0:0:0:0:1'])).toBe(true);
  });

  it('never lets a whitelisted host name stand for an address, or the reverse', () => {
    expect(isWhitelisted('127.0.0.1', ['localhost'])).toBe(false);
    expect(isWhitelisted('localhost', ['127.0.0.1'])).toBe(false);
  });
});
