/**
 * What every CLI command shares: where output goes, and the exit code. Exit codes:
 * 0 ok, 1 failure, 2 usage error; a failure or usage error prints one line on stderr.
 */
import { ConfigError } from '../config/app-config.js';
import { describeError } from '../errors/app-error.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export const CLI_NAME = 'payflow-bridge';

/** Where the CLI writes; the process's streams, or a test's. */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr };
}

/** The command line is wrong: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** commander already printed its message (or help); only the exit code is left to set. */
class CommanderExit extends Error {
  constructor(readonly exitCode: number) {
    super('commander exit');
  }
}

/** commander's CommanderError carries `code` and `exitCode`; read them without importing it. */
function commanderFields(error: Error): { code: string; exitCode: number } {
  const code: unknown = Reflect.get(error, 'code');
  const exitCode: unknown = Reflect.get(error, 'exitCode');
  return {
    code: typeof code === 'string' ? code : '',
    exitCode: typeof exitCode === 'number' ? exitCode : 1,
  };
}

export const CLI_RUNTIME = Symbol('CLI_RUNTIME');

export class CliRuntime {
  private code = EXIT_OK;

  constructor(readonly io: CliIo) {}

  get exitCode(): number {
    return this.code;
  }

  /**
   * commander's exit hook (instead of process.exit): help and --version are fine, any other
   * parse problem (unknown option or command, missing argument) is a usage error. Throws to
   * end the parse; `fail` recognizes the throw and adds nothing.
   */
  readonly onCommanderExit = (error: Error): never => {
    const { code, exitCode } = commanderFields(error);
    const ok = exitCode === 0 || code === 'commander.helpDisplayed' || code === 'commander.version';
    this.code = ok ? EXIT_OK : EXIT_USAGE;
    throw new CommanderExit(this.code);
  };

  /** Records a failure and prints it as one line on stderr. */
  readonly fail = (error: unknown): void => {
    if (error instanceof CommanderExit) return;
    if (error instanceof UsageError) {
      this.code = EXIT_USAGE;
      this.printError(`${error.message} (see ${CLI_NAME} --help)`);
      return;
    }
    this.code = EXIT_FAILURE;
    if (error instanceof ConfigError) this.printError(error.message);
    else this.printError(error instanceof Error ? error.message : describeError(error));
  };

  /** One line, whatever the message held. */
  printError(message: string): void {
    this.io.stderr.write(`${CLI_NAME}: ${message.replace(/\s*\n\s*/g, ' ').trim()}\n`);
  }

  out(text: string): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}
