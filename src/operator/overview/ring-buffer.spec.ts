import { describe, expect, it } from '@jest/globals';
import { RingBuffer } from './ring-buffer.js';

describe('RingBuffer', () => {
  it('holds what was pushed, oldest first, until it is full', () => {
    const ring = new RingBuffer<number>(3);
    expect(ring.toArray()).toEqual([]);
    expect(ring.last()).toBeUndefined();
    ring.push(1);
    ring.push(2);
    expect(ring.toArray()).toEqual([1, 2]);
    expect(ring.length).toBe(2);
    expect(ring.last()).toBe(2);
  });

  it('forgets the oldest samples once full, keeping their order', () => {
    const ring = new RingBuffer<number>(3);
    for (const sample of [1, 2, 3, 4, 5, 6, 7]) ring.push(sample);
    expect(ring.toArray()).toEqual([5, 6, 7]);
    expect(ring.length).toBe(3);
    expect(ring.last()).toBe(7);
  });

  it('refuses a capacity below one', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
    expect(() => new RingBuffer(1.5)).toThrow(RangeError);
  });
});
