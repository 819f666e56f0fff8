import { CommandRunner } from 'nest-commander';
import { UsageError, type CliRuntime } from '../cli.runtime.js';

type CommanderCommand = Parameters<CommandRunner['setCommand']>[0];

/**
 * Base of the CLI's commands. nest-commander builds each (sub)command as its own commander
 * instance and only gives the root our exit hook; this gives it to every command, so that
 * a usage error anywhere exits with 2 instead of commander's process.exit(1).
 */
export abstract class CliCommand extends CommandRunner {
  protected constructor(protected readonly runtime: CliRuntime) {
    super();
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
