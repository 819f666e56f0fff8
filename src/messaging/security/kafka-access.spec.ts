import { describe, expect, it } from '@jest/globals';
import { isClosedByBrokers, securityProtocolMismatch } from './kafka-access.js';

const kafkajsError = (name: string, message: string, extra: object = {}): Error =>
  Object.assign(new Error(message), { name, ...extra });

describe('isClosedByBrokers', () => {
  it('recognises a connection the brokers closed, also inside kafkajs wrappers', () => {
    expect(
      isClosedByBrokers(kafkajsError('KafkaJSConnectionClosedError', 'Closed connection')),
    ).toBe(true);
    const inner = kafkajsError('KafkaJSConnectionError', 'Connection closed by the server');
    expect(
      isClosedByBrokers(
        kafkajsError('KafkaJSNumberOfRetriesExceeded', inner.message, { cause: inner }),
      ),
    ).toBe(true);
  });

  it('leaves refused and timed-out connections alone (a broker down is worth retrying)', () => {
    expect(
      isClosedByBrokers(
        kafkajsError(
          'KafkaJSConnectionError',
          'Connection error: connect ECONNREFUSED 127.0.0.1:9',
          {
            code: 'ECONNREFUSED',
          },
        ),
      ),
    ).toBe(false);
    expect(isClosedByBrokers(kafkajsError('KafkaJSConnectionError', 'Connection timeout'))).toBe(
      false,
    );
    expect(isClosedByBrokers('Closed connection')).toBe(false);
  });
});

describe('securityProtocolMismatch', () => {
  it('asks whether the listener expects TLS or SASL, naming who we are', () => {
    const error = securityProtocolMismatch('PLAINTEXT, no authentication', 4);
    expect(error.code).toBe('kafka.security_protocol_mismatch');
    expect(error.retriable).toBe(false);
    expect(error.message).toBe(
      'Kafka: the brokers closed the connection as soon as it opened, 4 times ' +
        '(PLAINTEXT, no authentication): does their listener expect TLS (KAFKA_SSL) or SASL ' +
        '(KAFKA_SASL_MECHANISM)?',
    );
  });
});
