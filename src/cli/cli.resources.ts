/**
 * The CLI's connections, opened on first use (so that --help and usage errors touch
 * neither Postgres nor Kafka) and closed when the command ends.
 */
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { AppError } from '../errors/app-error.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { openDataSource } from '../database/data-source.js';
import { Database } from '../database/database.js';
import { ENTITIES } from '../entities.js';
import type { MessageProducer } from '../messaging/messaging.ports.js';
import { OutboxRelay } from '../outbox/outbox.relay.js';
import { OutboxRepository } from '../outbox/outbox.repository.js';
import type { CliConfig } from './cli.config.js';

/** The ORM's data source, named without importing the ORM here. */
type DataSource = Awaited<ReturnType<typeof openDataSource>>;

export const CLI_CONFIG = Symbol('CLI_CONFIG');
export const CLI_PRODUCER_FACTORY = Symbol('CLI_PRODUCER_FACTORY');

/** Makes the Kafka producer (not yet connected) from the CLI's configuration. */
export type CliProducerFactory = (config: CliConfig, logger: AppLogger) => MessageProducer;

/** A failure to reach a dependency, said without the connection string. */
export class CliConnectionError extends Error {
  constructor(what: string, cause: unknown) {
    super(`cannot connect to ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'CliConnectionError';
  }
}

@Injectable()
export class CliResources implements OnApplicationShutdown {
  private opened: DataSource | null = null;
  private connecting: Promise<DataSource> | null = null;
  private db: Promise<Database> | null = null;
  private messageProducer: MessageProducer | null = null;
  private connected: Promise<MessageProducer> | null = null;

  constructor(
    @Inject(CLI_CONFIG) private readonly config: CliConfig,
    @Inject(CLI_PRODUCER_FACTORY) private readonly createProducer: CliProducerFactory,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** The ORM's data source, connected on first use; one pool for the whole command. */
  dataSource(): Promise<DataSource> {
    this.connecting ??= (async () => {
      let dataSource: DataSource;
      try {
        dataSource = await openDataSource({
          database: this.config,
          poolSize: Math.min(this.config.DB_POOL_SIZE, 4),
          applicationName: 'payflow-bridge-cli',
          entities: ENTITIES,
        });
      } catch (error) {
        // A DatabaseConnectionError (TLS, password, certificate) or a ConfigError (sslmode, CA
        // file) already says what failed in one line, without secrets.
        if (error instanceof AppError) throw error;
        throw new CliConnectionError('the database', error);
      }
      this.opened = dataSource;
      return dataSource;
    })();
    return this.connecting;
  }

  database(): Promise<Database> {
    this.db ??= this.dataSource().then((dataSource) => new Database(dataSource));
    return this.db;
  }

  producer(): Promise<MessageProducer> {
    this.connected ??= (async () => {
      const producer = this.createProducer(this.config, this.logger);
      this.messageProducer = producer;
      try {
        await producer.connect();
      } catch (error) {
        throw new CliConnectionError(`Kafka (${this.config.KAFKA_BROKERS.join(',')})`, error);
      }
      return producer;
    })();
    return this.connected;
  }

  /**
   * A relay over the CLI's producer, to publish what a command wrote to the outbox. It owns
   * no bucket: `flush` publishes, fenced like any relay. Its retry warnings show with
   * LOG_LEVEL=debug; a failure ends in one line either way.
   */
  async outboxRelay(): Promise<OutboxRelay> {
    const [database, producer] = await Promise.all([this.database(), this.producer()]);
    const logger = this.logger.isLevelEnabled('debug') ? this.logger : silentLogger();
    return new OutboxRelay(database, producer, new OutboxRepository(), {}, undefined, logger);
  }

  async onApplicationShutdown(): Promise<void> {
    const producer = this.messageProducer;
    const dataSource = this.opened;
    this.messageProducer = null;
    this.opened = null;
    await Promise.allSettled([
      producer?.disconnect(),
      dataSource?.isInitialized ? dataSource.destroy() : undefined,
    ]);
  }
}
