/**
 * A value tied to an AbortSignal, for what the caller of a Payflow call hands the client
 * beside the call without passing it through every handler (the send hook, the trace
 * headers): the handlers already pass the signal on as it is. A WeakMap, not an
 * AsyncLocalStorage: on Node 20 one of those turns on promise hooks for every promise of
 * the process. The value lives as long as its signal.
 */
export class SignalTied<T> {
  private readonly values = new WeakMap<AbortSignal, T>();

  /** Ties `value` to the calls made with `signal`; returns the signal. */
  tie(signal: AbortSignal, value: T): AbortSignal {
    this.values.set(signal, value);
    return signal;
  }

  /** The value tied to the call's signal, if any. */
  of(signal: AbortSignal | undefined): T | undefined {
    return signal === undefined ? undefined : this.values.get(signal);
  }
}
