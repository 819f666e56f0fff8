/** The state diagram in docs/operations.md draws exactly the protocol's table. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { TRANSITIONS, type TransitionName } from './attempt-protocol.js';

describe('docs/operations.md', () => {
  it('draws exactly the table in its state diagram', () => {
    const text = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');
    const section = text.slice(text.indexOf("### The exactly-once protocol: an attempt's states"));
    const diagram = /```mermaid\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const drawn: string[] = [];
    for (const line of diagram.split('\n')) {
      const edge = /^\s*(\[\*\]|\w+) --> (\w+): (.+)$/.exec(line);
      if (edge === null) continue;
      const [, from = '', to = '', names = ''] = edge;
      for (const name of names.split(',')) {
        drawn.push(`${from === '[*]' ? 'none' : from} -> ${to}: ${name.trim()}`);
      }
    }
    const table = (Object.keys(TRANSITIONS) as TransitionName[]).flatMap((name) =>
      TRANSITIONS[name].from.map((from) => `${from} -> ${TRANSITIONS[name].to}: ${name}`),
    );
    expect(drawn.sort()).toEqual(table.sort());
  });
});
