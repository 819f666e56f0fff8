/**
 * Statements assembled from several repositories' parts. Each part binds its own values
 * and gets their placeholders back, so no part knows another's numbering (nothing is
 * spliced by parameter position), and each table's SQL stays in its own repository while
 * the writes of one step still cost one round trip.
 */
import type { Sql } from './database.js';

/** Adds a value to the statement and returns its placeholder (`$n`). */
export type Bind = (value: unknown) => string;

/** A repository's part of a statement, rendered with the statement's placeholders. */
export type Part = (bind: Bind) => string;

export interface Rendered {
  readonly text: string;
  readonly params: readonly unknown[];
}

/** Renders `build` with fresh placeholders from $1. */
export function render(build: Part): Rendered {
  const params: unknown[] = [];
  const bind: Bind = (value) => {
    params.push(value);
    return `$${params.length}`;
  };
  const text = build(bind);
  return { text, params };
}

/**
 * Several single-statement writes as one statement: all but the last become CTEs (which
 * Postgres runs whether or not they are referenced), the last is the statement itself.
 * The parts must not depend on each other's effects (they share one snapshot).
 */
export function together(parts: readonly Part[]): Part {
  return (bind) => {
    const texts = parts.map((part) => part(bind));
    const last = texts.pop();
    if (last === undefined) throw new Error('a statement needs at least one part');
    if (texts.length === 0) return last;
    return `WITH ${texts.map((text, index) => `w${index} AS (${text})`).join(',\n')}\n${last}`;
  };
}

/** Runs the parts as one statement; returns the rows it touched (the last part's count). */
export async function executeTogether(tx: Sql, parts: readonly Part[]): Promise<number> {
  const { text, params } = render(together(parts));
  return tx.execute(text, params);
}
