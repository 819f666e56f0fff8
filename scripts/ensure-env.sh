#!/usr/bin/env bash
# Makes this machine ready to run payflow-bridge's tests and demo: the Node packages,
# Apache Kafka's jars (Java and Maven), librdkafka (its mock cluster is the demo's zero-setup
# Kafka and serves narrow transport tests), Debian's chromium (the console's browser tests),
# Debian's prometheus (promtool, the alert rules' tests),
# and a running Postgres. Idempotent and
# quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ldconfig -p 2>/dev/null | grep -q 'librdkafka\.so\.1'; then
  echo "ensure-env: installing librdkafka1 (Kafka mock cluster for tests and the demo)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq librdkafka1 >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq librdkafka1 >/dev/null
  fi
fi

# Debian's chromium, which the console's browser tests drive (playwright-core, no download).
if [ ! -x /usr/bin/chromium ]; then
  echo "ensure-env: installing chromium (the console's browser tests)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null
  fi
fi

# Debian's prometheus: promtool checks the alert rules (test/deploy/alerts.test.ts).
if ! command -v promtool >/dev/null; then
  echo "ensure-env: installing prometheus (promtool, for the alert rules' tests)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  fi
fi

pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if command -v pg_isready >/dev/null && ! pg_ready; then
  echo "ensure-env: starting Postgres"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start || true
  for _ in $(seq 1 30); do pg_ready && break; sleep 1; done
fi

# Apache Kafka for the test bed, the benchmark, the chaos campaign and the demo on real Kafka.
bash scripts/kafka-fetch.sh

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure-env: installing Node packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
