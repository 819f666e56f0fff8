/**
 * Error answers of the sandbox, in the shapes of docs/assumptions.md: 422
 * `{ detail: [{ loc, msg, type }] }` for validation and business rules, `{ code, message }`
 * for everything else. Handlers throw ApiError; the server's error handler writes it.
 */
import type { z } from 'zod';

export type Loc = (string | number)[];
export interface Detail {
  loc: Loc;
  msg: string;
  type: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(typeof body === 'object' && body && 'message' in body ? String(body.message) : 'error');
    this.name = 'ApiError';
  }
}

export function unprocessable(details: Detail[]): ApiError {
  return new ApiError(422, { detail: details });
}

export function businessError(loc: Loc, type: string, msg: string): ApiError {
  return unprocessable([{ loc, msg, type: `business.${type}` }]);
}

export function codeError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): ApiError {
  return new ApiError(status, { code, message }, headers);
}

export function notFound(message: string): ApiError {
  return codeError(404, 'not_found', message);
}

/** 409 for control-API requests that make no sense in the current state. */
export function conflict(message: string): ApiError {
  return codeError(409, 'invalid_state', message);
}

export type Where = 'body' | 'query' | 'path' | 'header';

/** Parses `input` or throws a 422 with one detail entry per zod issue. */
export function parseOr422<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: Where,
): z.output<S> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw unprocessable(result.error.issues.map((issue) => issueToDetail(issue, where)));
}

export function issueToDetail(issue: z.core.$ZodIssue, where: Where): Detail {
  const type = issueType(issue);
  return {
    loc: [where, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))],
    msg: type === 'value_error.missing' ? 'field required' : issue.message,
    type,
  };
}

/** pydantic-v1-like error types, which the spec's FastAPI-style 422 suggests. */
function issueType(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return 'input' in issue && issue.input !== undefined
        ? `type_error.${issue.expected}`
        : 'value_error.missing';
    case 'invalid_value':
      return 'type_error.enum';
    case 'invalid_format':
      return `value_error.${issue.format}`;
    case 'too_small':
      return `value_error.${issue.origin}.too_small`;
    case 'too_big':
      return `value_error.${issue.origin}.too_big`;
    case 'not_multiple_of':
      return 'value_error.number.not_multiple';
    case 'unrecognized_keys':
      return 'value_error.extra';
    case 'invalid_union':
      return 'value_error.union';
    case 'invalid_key':
    case 'invalid_element':
      return 'value_error';
    case 'custom':
      // A refinement may name its pydantic-like type: params: { type: 'value_error.date' }.
      return typeof issue.params?.type === 'string' ? issue.params.type : 'value_error';
    default:
      return 'value_error';
  }
}
