import { userInfo } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { CommandRunner } from 'nest-commander';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import type { CliConfig } from '../cli.config.js';
import { CliFeatures } from '../cli.features.js';
import { CLI_CONFIG, CliResources } from '../cli.resources.js';
import { CLI_RUNTIME, UsageError, type CliRuntime } from '../cli.runtime.js';

type CommanderCommand = Parameters<CommandRunner['setCommand']>[0];

/**
 * What every command may use, injected once: the runtime (output, exit), the connections
 * opened on first use, the feature modules it composes its services from, the CLI's
 * configuration and the logger.
 */
@Injectable()
export class CliContext {
  constructor(
    @Inject(CLI_RUNTIME) readonly runtime: CliRuntime,
    @Inject(CliResources) readonly resources: CliResources,
    @Inject(CliFeatures) readonly features: CliFeatures,
    @Inject(CLI_CONFIG) readonly config: CliConfig,
    @Inject(APP_LOGGER) readonly logger: AppLogger,
  ) {}
}

/**
 * Base of the CLI's commands. nest-commander builds each (sub)command as its own commander
 * instance and only gives the root our exit hook; this gives it to every command, so that
 * a usage error anywhere exits with 2 instead of commander's process.exit(1). Commands
 * take their dependencies from the one CliContext, so they declare no constructor.
 */
export abstract class CliCommand extends CommandRunner {
  protected readonly runtime: CliRuntime;
  protected readonly resources: CliResources;
  protected readonly features: CliFeatures;
  protected readonly config: CliConfig;
  protected readonly logger: AppLogger;

  constructor(@Inject(CliContext) context: CliContext) {
    super();
    this.runtime = context.runtime;
    this.resources = context.resources;
    this.features = context.features;
    this.config = context.config;
    this.logger = context.logger;
  }

  override setCommand(command: CommanderCommand): this {
    command.exitOverride(this.runtime.onCommanderExit);
    return super.setCommand(command);
  }

  /** For a command that only groups sub-commands: help (usage error) or "unknown command". */
  protected requireSubcommand(args: readonly string[]): never {
    if (args.length > 0) {
      throw new UsageError(`unknown command "${this.command.name()} ${args[0]}"`);
    }
    this.command.help({ error: true });
  }

  protected noExtraArguments(args: readonly string[]): void {
    if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`);
  }
}

/** Runs an option parser, turning its complaint into a usage error. */
export function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** `--by`, else the OS user name: one short line, never anything from the environment. */
export function operatorName(given: string | undefined): string {
  if (given !== undefined) return given;
  try {
    const name = userInfo().username.trim();
    return name.length > 0 ? name.slice(0, 64) : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** A `--by NAME` value: control characters become spaces, 1 to 64 characters. */
export function parseOperatorName(value: string): string {
  return usage(() => {
    const name = value.replace(/[\p{Cc}]/gu, ' ').trim();
    if (name.length === 0 || name.length > 64) throw new Error('--by: 1 to 64 characters');
    return name;
  });
}
