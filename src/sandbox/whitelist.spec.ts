import { describe, expect, it } from '@jest/globals';
import { isWhitelisted } from './whitelist.js';

describe('isWhitelisted', () => {
  it('matches a domain and its subdomains, label by label', () => {
    const list = ['example.com'];
    expect(isWhitelisted('example.com', list)).toBe(true);
    expect(isWhitelisted('a.example.com', list)).toBe(true);
    expect(isWhitelisted('a.b.example.com', list)).toBe(true);
    expect(isWhitelisted('badexample.com', list)).toBe(false);
    expect(isWhitelisted('example.com.evil.test', list)).toBe(false);
    expect(isWhitelisted('com', list)).toBe(false);
  });

  it('ignores case and a trailing dot on either side', () => {
    expect(isWhitelisted('A.Example.COM.', ['example.com'])).toBe(true);
    expect(isWhitelisted('a.example.com', ['EXAMPLE.com.'])).toBe(true);
  });

  it('matches IP addresses exactly, never by suffix', () => {
    expect(isWhitelisted('127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(isWhitelisted('127.0.0.1', ['0.0.1'])).toBe(false);
    expect(isWhitelisted('127.0.0.1', ['0.1'])).toBe(false);
    expect(isWhitelisted('127.0.0.1', ['1'])).toBe(false);
    expect(isWhitelisted('10.127.0.0.1', ['127.0.0.1'])).toBe(false);
    expect(isWhitelisted('127.0.0.10', ['127.0.0.1'])).toBe(false);
  });

  it('compares IPv6 addresses in their canonical form, with or without brackets', () => {
    expect(isWhitelisted('[::1]', ['::1'])).toBe(true);
    expect(isWhitelisted('::1', ['0:0:0:0:0:0:0:1'])).toBe(true);
    expect(isWhitelisted('[::2]', ['::1'])).toBe(false);
  });

  it('never lets a whitelisted host name stand for an address, or the reverse', () => {
    expect(isWhitelisted('127.0.0.1', ['localhost'])).toBe(false);
    expect(isWhitelisted('localhost', ['127.0.0.1'])).toBe(false);
  });
});
