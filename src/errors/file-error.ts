/**
 * The error code of a failed file read (ENOENT, EACCES, …), for one-line messages that name
 * the variable and the cause, never the content. Duck-typed: an fs error from another realm
 * (a test's VM context) is no `Error` here.
 */
export function fileErrorCode(error: unknown): string {
  return typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string'
    ? error.code
    : 'unreadable';
}
