/**
 * The operator CLI: `npx payflow-bridge <command>` (bin/payflow-bridge.js) or
 * `npm run cli -- <command>`. See `payflow-bridge --help`.
 */
import { createCliProducer } from './cli.producer.js';
import { runCli } from './run-cli.js';

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  createProducer: createCliProducer,
});
process.exitCode = exitCode;
// Everything was closed; should a library still hold the event loop, do not hang.
setTimeout(() => process.exit(exitCode), 2_000).unref();
