/**
 * A SASL exchange without a broker: runs a kafkajs mechanism's authenticator against a
 * `saslAuthenticate` that answers `challenge` (as Kafka BYTES: a length, then the bytes) to
 * each request, and returns every request the client sent, encoded.
 */
import type { Logger, Mechanism, SaslAuthenticateArgs } from 'kafkajs';

export async function saslExchange(mechanism: Mechanism, challenge = ''): Promise<Buffer[]> {
  const sent: Buffer[] = [];
  const payload = Buffer.from(challenge);
  const answer = Buffer.concat([Buffer.alloc(4), payload]);
  answer.writeInt32BE(payload.length);
  await mechanism
    .authenticationProvider({
      host: '127.0.0.1',
      port: 9093,
      logger: undefined as unknown as Logger,
      saslAuthenticate: async <T>(args: SaslAuthenticateArgs<T>): Promise<T | void> => {
        sent.push(await args.request.encode());
        return args.response?.parse(await args.response.decode(answer));
      },
    })
    .authenticate();
  return sent;
}
