import { describe, expect, it } from '@jest/globals';
import { sparkline } from './sparkline.js';

function points(svg: string): [number, number][] {
  const match = /points="([^"]*)"/.exec(svg);
  return (match?.[1] ?? '')
    .split(' ')
    .map((pair) => pair.split(',').map(Number) as [number, number]);
}

describe('sparkline', () => {
  it('draws one point per value, left to right, the highest at the top', () => {
    const svg = sparkline([0, 5, 10], { width: 100, height: 20 });
    expect(svg).toMatch(/^<svg [^>]*viewBox="0 0 100 20"[^>]*aria-hidden="true"/);
    const drawn = points(svg);
    expect(drawn).toEqual([
      [3, 17],
      [50, 10],
      [97, 3],
    ]);
    expect(svg).toContain('<circle cx="97" cy="3"');
  });

  it('draws a flat series at the bottom, and an empty one as a base line', () => {
    expect(points(sparkline([0, 0, 0], { width: 100, height: 20 })).map(([, y]) => y)).toEqual([
      17, 17, 17,
    ]);
    expect(sparkline([])).toContain('class="spark-empty"');
    expect(sparkline([Number.NaN])).toContain('class="spark-empty"');
  });

  it('puts nothing but numbers into the markup', () => {
    const svg = sparkline([1, 2, 3]);
    expect(svg.replace(/<\/?[a-z]+|[A-Za-z-]+="[^"]*"|\/?>|\s/g, '')).toBe('');
    expect(
      points(svg)
        .flat()
        .every((value) => Number.isFinite(value)),
    ).toBe(true);
  });
});
