/**
 * YAML of a JSON value, in block style, for the generated AsyncAPI document: every string
 * that could read as something else is double-quoted (JSON escapes are YAML escapes), so
 * the output parses back to the same value.
 */
export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

const PLAIN = /^[A-Za-z_$][A-Za-z0-9_$./-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n)$/i;

function scalar(value: string | number | boolean | null): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

function isEmpty(value: JsonValue): boolean {
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function inline(value: JsonValue): string | undefined {
  if (value === null || typeof value !== 'object') return scalar(value);
  if (isEmpty(value)) return Array.isArray(value) ? '[]' : '{}';
  return undefined;
}

function lines(value: JsonValue, indent: string): string[] {
  if (Array.isArray(value)) {
    const items: readonly JsonValue[] = value;
    return items.flatMap((item) => {
      const text = inline(item);
      if (text !== undefined) return [`${indent}- ${text}`];
      const [first = '', ...rest] = lines(item, `${indent}  `);
      return [`${indent}- ${first.slice(indent.length + 2)}`, ...rest];
    });
  }
  if (value === null || typeof value !== 'object') return [`${indent}${scalar(value)}`];
  return Object.entries(value).flatMap(([key, item]) => {
    const name = scalar(key);
    const text = inline(item);
    return text !== undefined
      ? [`${indent}${name}: ${text}`]
      : [`${indent}${name}:`, ...lines(item, `${indent}  `)];
  });
}

export function toYaml(value: JsonValue): string {
  return `${lines(value, '').join('\n')}\n`;
}
