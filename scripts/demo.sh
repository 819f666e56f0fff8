#!/usr/bin/env bash
# npm run demo: the whole loop on this machine. Installs what is missing (scripts/ensure-env.sh:
# npm ci, librdkafka1, a running Postgres), builds, then runs the compiled demo (demo/main.ts),
# which starts the Kafka mock cluster, the Payflow sandbox and the worker (on HTTPS, with a
# certificate it makes), plays an ERP and a payer whose webhooks come back as status events,
# pulls last night's settlement file with the paid orders in it, prints what happened and
# stops everything again.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-env.sh
echo "demo: building (npm run build)" >&2
npm run --silent build
# exec: Ctrl-C and SIGTERM reach the demo itself, which stops what it started.
exec node dist/demo/main.js
