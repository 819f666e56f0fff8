import type { z } from 'zod';

/**
 * One line naming the failing fields and rules ("data.lines.0.taxRate: must be a percentage
 * from 0 to 100; …"). zod's messages state the rule, never the value, so no personal data
 * from the event reaches the line.
 */
export function summarizeIssues(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
): string {
  const parts = error.issues.slice(0, 5).map((issue) => {
    const path = [...prefix, ...issue.path.map((segment) => String(segment))].join('.');
    // zod says "Invalid input: expected string, received undefined" for a missing field.
    const message =
      issue.code === 'invalid_type' && /received undefined$/.test(issue.message)
        ? 'is required'
        : issue.message;
    return path ? `${path}: ${message}` : message;
  });
  const more = error.issues.length > 5 ? `; and ${error.issues.length - 5} more` : '';
  return `${parts.join('; ')}${more}`;
}
