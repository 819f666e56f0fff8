import { describe, expect, it } from '@jest/globals';
import { toYaml } from './yaml.js';

describe('toYaml', () => {
  it('writes block YAML, quoting what could read as something else', () => {
    expect(
      toYaml({
        asyncapi: '3.0.0',
        plain: 'application/json',
        words: 'a: b # c',
        reserved: ['no', 'true', 'null'],
        numbers: [1, 2.5],
        flags: { on: true, off: null },
        empty: { list: [], map: {} },
        'x-dlq-reason': { $ref: '#/components/x' },
        items: [{ a: 1, b: [{ c: 'd' }] }, ['nested']],
      }),
    ).toBe(
      [
        'asyncapi: "3.0.0"',
        'plain: application/json',
        'words: "a: b # c"',
        'reserved:',
        '  - "no"',
        '  - "true"',
        '  - "null"',
        'numbers:',
        '  - 1',
        '  - 2.5',
        'flags:',
        '  "on": true',
        '  "off": null',
        'empty:',
        '  list: []',
        '  map: {}',
        'x-dlq-reason:',
        '  $ref: "#/components/x"',
        'items:',
        '  - a: 1',
        '    b:',
        '      - c: d',
        '  - - nested',
        '',
      ].join('\n'),
    );
  });
});
