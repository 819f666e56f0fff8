/**
 * Collapses whitespace and control characters (C0, DEL, C1, line and paragraph separators)
 * into single spaces and bounds the length, for log lines, headers and stored reasons.
 */
export function oneLine(text: string, maxLength = 500): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  if (flat.length <= maxLength) return flat;
  let end = Math.max(0, maxLength - 1);
  // Never cut a surrogate pair in half.
  const last = flat.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${flat.slice(0, end)}…`;
}
