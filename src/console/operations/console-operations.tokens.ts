/** Injection tokens of the console's operations pages (apart from the module, to import anywhere). */

/** Wakes the application's outbox relay (after a pull by hand committed events). */
export const RELAY_WAKEUP = Symbol('CONSOLE_RELAY_WAKEUP');
