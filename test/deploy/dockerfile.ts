/**
 * Just enough of a Dockerfile reader for test/deploy: stages, their COPY lines, RUN
 * commands, EXPOSE, CMD and HEALTHCHECK (exec form). Continuation lines are joined first.
 */
export interface DockerCopy {
  /** The stage it copies from (`--from=`), or undefined for the build context. */
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly destination: string;
}

export interface DockerStage {
  readonly name: string | undefined;
  readonly copies: DockerCopy[];
  readonly runs: string[];
  /** The ports EXPOSE names, as written (`3000`, `9464/tcp`). */
  readonly exposes: string[];
  cmd: string[] | undefined;
  healthcheck: string[] | undefined;
}

function execForm(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string')) {
    throw new Error(`not an exec-form command: ${text}`);
  }
  return parsed;
}

export function parseDockerfile(text: string): DockerStage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: DockerStage[] = [];
  for (const line of lines) {
    const [instruction = '', ...rest] = line.split(/\s+/);
    const args = line.slice(instruction.length).trim();
    if (instruction === 'FROM') {
      const as = rest.findIndex((word) => word.toUpperCase() === 'AS');
      stages.push({
        name: as >= 0 ? rest[as + 1] : undefined,
        copies: [],
        runs: [],
        exposes: [],
        cmd: undefined,
        healthcheck: undefined,
      });
      continue;
    }
    const current = stages.at(-1);
    if (current === undefined) throw new Error(`${instruction} before FROM`);
    switch (instruction) {
      case 'COPY': {
        const from = rest.find((word) => word.startsWith('--from='))?.slice('--from='.length);
        const paths = rest.filter((word) => !word.startsWith('--'));
        const destination = paths.pop();
        if (destination === undefined || paths.length === 0) throw new Error(`bad COPY: ${line}`);
        current.copies.push({ from, sources: paths, destination });
        break;
      }
      case 'RUN':
        current.runs.push(args);
        break;
      case 'EXPOSE':
        current.exposes.push(...rest);
        break;
      case 'CMD':
        current.cmd = execForm(args);
        break;
      case 'HEALTHCHECK': {
        const cmd = args.indexOf('CMD ');
        if (cmd < 0) throw new Error(`HEALTHCHECK without CMD: ${line}`);
        current.healthcheck = execForm(args.slice(cmd + 'CMD '.length).trim());
        break;
      }
      default:
        break;
    }
  }
  return stages;
}
