/**
 * Start-up check of the @EventPattern handlers registered with the inbound-events transport
 * against the event types of the contract: exactly one event handler per type, and none
 * for anything else. Nest chains a second handler for the same event pattern through
 * `handler.next`, which is how a duplicate shows.
 */

/** The parts of a Nest MessageHandler the check reads. */
export interface RegisteredHandler {
  readonly isEventHandler?: boolean;
  readonly next?: unknown;
}

export interface RegistryProblems {
  readonly missing: readonly string[];
  readonly duplicated: readonly string[];
  readonly unknown: readonly string[];
  /** Registered with @MessagePattern (request-response): Kafka order events have no reply. */
  readonly notEventHandlers: readonly string[];
}

export function checkHandlerRegistry(
  handlers: ReadonlyMap<string, RegisteredHandler>,
  expected: readonly string[],
): RegistryProblems {
  const expectedSet = new Set(expected);
  const missing = expected.filter((type) => !handlers.has(type));
  const duplicated: string[] = [];
  const unknown: string[] = [];
  const notEventHandlers: string[] = [];
  for (const [pattern, handler] of handlers) {
    if (!expectedSet.has(pattern)) {
      unknown.push(pattern);
      continue;
    }
    if (handler.isEventHandler !== true) notEventHandlers.push(pattern);
    else if (handler.next !== undefined && handler.next !== null) duplicated.push(pattern);
  }
  return { missing, duplicated, unknown, notEventHandlers };
}

/** Throws one Error naming every problem, or returns when the registry is complete. */
export function assertHandlerRegistry(
  handlers: ReadonlyMap<string, RegisteredHandler>,
  expected: readonly string[],
): void {
  const problems = checkHandlerRegistry(handlers, expected);
  const parts: string[] = [];
  if (problems.missing.length > 0) parts.push(`no handler for ${problems.missing.join(', ')}`);
  if (problems.duplicated.length > 0) {
    parts.push(`more than one handler for ${problems.duplicated.join(', ')}`);
  }
  if (problems.unknown.length > 0) {
    parts.push(`handlers for unknown event types ${problems.unknown.join(', ')}`);
  }
  if (problems.notEventHandlers.length > 0) {
    parts.push(
      `@MessagePattern instead of @EventPattern for ${problems.notEventHandlers.join(', ')}`,
    );
  }
  if (parts.length > 0) {
    throw new Error(`Order event handlers are not registered correctly: ${parts.join('; ')}`);
  }
}
