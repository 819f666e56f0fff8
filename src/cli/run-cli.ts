/**
 * Runs one operator command and returns its exit code (0 ok, 1 failure, 2 usage error).
 * The entry point (main.ts) passes the process's arguments, environment and streams;
 * tests pass their own.
 */
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { CommandFactory, CommandRunnerService } from 'nest-commander';
import { pino } from 'pino';
import { REDACTED_PATHS, type AppLogger } from '../logging/logger.js';
import { loadCliConfig, type CliConfig } from './cli.config.js';
import { CliModule } from './cli.module.js';
import type { CliProducerFactory } from './cli.resources.js';
import { CLI_NAME, CliRuntime, processIo, type CliIo } from './cli.runtime.js';

export interface RunCliOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly createProducer: CliProducerFactory;
  readonly io?: CliIo;
  readonly logger?: AppLogger;
}

/** Log lines (warnings by default) go to stderr, redacted like the worker's. */
function cliLogger(config: CliConfig, io: CliIo): AppLogger {
  return pino(
    {
      name: CLI_NAME,
      level: config.LOG_LEVEL,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    io.stderr,
  );
}

export async function runCli(argv: readonly string[], options: RunCliOptions): Promise<number> {
  const io = options.io ?? processIo();
  const runtime = new CliRuntime(io);
  let config: CliConfig;
  try {
    config = loadCliConfig(options.env);
  } catch (error) {
    runtime.fail(error);
    return runtime.exitCode;
  }

  let app: INestApplicationContext | undefined;
  try {
    app = await CommandFactory.createWithoutRunning(
      CliModule.forRoot({
        config,
        logger: options.logger ?? cliLogger(config, io),
        runtime,
        createProducer: options.createProducer,
      }),
      {
        logger: false,
        cliName: CLI_NAME,
        errorHandler: runtime.onCommanderExit,
        serviceErrorHandler: runtime.fail,
        outputConfiguration: {
          writeOut: (text) => io.stdout.write(text),
          writeErr: (text) => io.stderr.write(text),
        },
      },
    );
    await app.get(CommandRunnerService).run(['node', CLI_NAME, ...argv]);
  } catch (error) {
    runtime.fail(error);
  } finally {
    await app?.close().catch(runtime.fail);
  }
  return runtime.exitCode;
}
