/**
 * What stops a console request before its handler: no session (to the sign-in page), a
 * POST without its CSRF token (403), too many wrong tokens (429). The console's exception
 * filter answers each.
 */
import { AppError } from '../../common/app-error.js';

export class SignInRequired extends AppError {
  readonly code = 'CONSOLE.SIGN_IN_REQUIRED';
  readonly transient = false;

  constructor(readonly next: string) {
    super('sign in to the console first');
  }
}

export class CsrfRejected extends AppError {
  readonly code = 'CONSOLE.CSRF_REJECTED';
  readonly transient = false;

  constructor() {
    super('the form was not sent by this console session (missing or wrong CSRF token)');
  }
}

export class SignInThrottled extends AppError {
  readonly code = 'CONSOLE.SIGN_IN_THROTTLED';
  readonly transient = true;

  constructor(readonly retryAfterSeconds: number) {
    super('too many wrong tokens from this address; wait a minute');
  }
}
