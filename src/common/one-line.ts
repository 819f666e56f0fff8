/** Collapses whitespace and control characters into single spaces and bounds the length. */
export function oneLine(text: string, maxLength = 500): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length <= maxLength ? flat : `${flat.slice(0, Math.max(0, maxLength - 1))}…`;
}
