import { describe, expect, it } from '@jest/globals';
import { ConnectionLimiter, clientOf } from './connection-limiter.js';

describe('clientOf', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:203.0.113.7', '203.0.113.7'],
    ['2001:db8:0:1::5', '2001:db8:0:1::/64'],
    ['2001:0db8:0000:0001:ffff:0:0:9', '2001:db8:0:1::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s belongs to %s', (address, client) => {
    expect(clientOf(address)).toBe(client);
  });

  it('puts the addresses of one IPv6 /64 together, and another /64 apart', () => {
    expect(clientOf('2001:db8:0:1::a')).toBe(clientOf('2001:db8:0:1:ffff:ffff:ffff:ffff'));
    expect(clientOf('2001:db8:0:1::a')).not.toBe(clientOf('2001:db8:0:2::a'));
  });

  it('lets what is no IP address stand for itself', () => {
    expect(clientOf('1:2:3')).toBe('1:2:3');
    expect(clientOf('1::2::3')).toBe('1::2::3');
    expect(clientOf('')).toBe('');
  });
});

describe('ConnectionLimiter', () => {
  it('admits up to the limit per client, refuses beyond it, and admits again after a release', () => {
    const limiter = new ConnectionLimiter(2);
    expect([1, 2, 3].map(() => limiter.tryAdmit('198.51.100.1'))).toEqual([true, true, false]);
    // Another client is not affected; the IPv4-mapped spelling is the same client.
    expect(limiter.tryAdmit('198.51.100.2')).toBe(true);
    expect(limiter.tryAdmit('::ffff:198.51.100.1')).toBe(false);
    limiter.release('198.51.100.1');
    expect(limiter.openFrom('198.51.100.1')).toBe(1);
    expect(limiter.tryAdmit('::ffff:198.51.100.1')).toBe(true);
    expect(limiter.tryAdmit('198.51.100.1')).toBe(false);
  });

  it('counts an IPv6 /64 as one client', () => {
    const limiter = new ConnectionLimiter(1);
    expect(limiter.tryAdmit('2001:db8:0:1::1')).toBe(true);
    expect(limiter.tryAdmit('2001:db8:0:1::2')).toBe(false);
    expect(limiter.tryAdmit('2001:db8:0:2::1')).toBe(true);
  });

  it('forgets a client once its last connection is released, and never goes below zero', () => {
    const limiter = new ConnectionLimiter(3);
    limiter.tryAdmit('192.0.2.1');
    limiter.tryAdmit('192.0.2.1');
    limiter.release('192.0.2.1');
    limiter.release('192.0.2.1');
    limiter.release('192.0.2.1');
    expect(limiter.clients).toBe(0);
    expect(limiter.openFrom('192.0.2.1')).toBe(0);
    expect([1, 2, 3, 4].map(() => limiter.tryAdmit('192.0.2.1'))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
