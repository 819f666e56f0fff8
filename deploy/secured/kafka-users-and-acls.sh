#!/usr/bin/env bash
# One-shot set-up of the secured broker (docker-compose.secured.yml, service kafka-acl-init),
# as the super user `admin` over SASL_SSL (SCRAM-SHA-512, the broker's certificate verified):
#
# 1. the worker's SCRAM-SHA-512 user (kafka-configs.sh; the password from its secret file,
#    handed over in a private file, never on a command line);
# 2. exactly the worker's ACLs (CONTRACT §9, least privilege), and nothing else:
#      READ on its consumer group KAFKA_GROUP_ID;
#      READ, DESCRIBE on TOPIC_ORDERS;
#      WRITE, DESCRIBE on TOPIC_ORDERS.dlq, TOPIC_PAYMENT_STATUS and TOPIC_SETTLEMENTS
#    (the idempotent producer needs no more: WRITE on a topic implies IdempotentWrite).
#
# Topics are created by the worker's own CLI (`topics create`, service kafka-init) as admin.
# Running this again changes nothing (a user's credentials are replaced, ACLs are a set).
set -euo pipefail

kafka_bin="${INIT_KAFKA_BIN:-/opt/kafka/bin}"
bootstrap="${INIT_BOOTSTRAP_SERVER:?}"
ca_file="${INIT_TLS_CA_FILE:-/etc/payflow-bridge/kafka-ca.pem}"
admin_user="${INIT_ADMIN_USERNAME:-admin}"
admin_password_file="${INIT_ADMIN_PASSWORD_FILE:-/run/secrets/kafka-admin-password}"
worker_user="${INIT_WORKER_USERNAME:?}"
worker_password_file="${INIT_WORKER_PASSWORD_FILE:-/run/secrets/kafka-worker-password}"
: "${KAFKA_GROUP_ID:?}" "${TOPIC_ORDERS:?}" "${TOPIC_PAYMENT_STATUS:?}" "${TOPIC_SETTLEMENTS:?}"

# A password from its secret file (one trailing newline dropped); only characters that need
# no escaping in a JAAS value or in a SCRAM credential (iterations=…,password=…).
password_from() {
  local value
  value="$(<"$1")"
  if [[ ! "$value" =~ ^[A-Za-z0-9._~+/=-]+$ ]]; then
    echo "kafka-acl-init: $1 must hold letters, digits and ._~+/=- only" >&2
    exit 1
  fi
  printf '%s' "$value"
}

umask 077
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

admin_config="$work/admin.properties"
cat >"$admin_config" <<CONFIG
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${admin_user}" password="$(password_from "$admin_password_file")";
ssl.truststore.type=PEM
ssl.truststore.location=${ca_file}
CONFIG

# In a file the credential is written without the brackets --add-config needs on a command line
# (`[iterations=…,password=…]` there; with them here, kafka-configs.sh rejects it and prints it).
worker_scram="$work/worker-scram.properties"
printf 'SCRAM-SHA-512=iterations=8192,password=%s\n' "$(password_from "$worker_password_file")" \
  >"$worker_scram"
"$kafka_bin/kafka-configs.sh" --bootstrap-server "$bootstrap" --command-config "$admin_config" \
  --alter --entity-type users --entity-name "$worker_user" --add-config-file "$worker_scram"

# One ALLOW ACL of the worker: grant <topic|group> <name> <operation>.
grant() {
  "$kafka_bin/kafka-acls.sh" --bootstrap-server "$bootstrap" --command-config "$admin_config" \
    --add --allow-principal "User:${worker_user}" --allow-host '*' \
    --operation "$3" "--$1" "$2" --resource-pattern-type literal
}

grant group "$KAFKA_GROUP_ID" Read
grant topic "$TOPIC_ORDERS" Read
grant topic "$TOPIC_ORDERS" Describe
grant topic "$TOPIC_ORDERS.dlq" Write
grant topic "$TOPIC_ORDERS.dlq" Describe
grant topic "$TOPIC_PAYMENT_STATUS" Write
grant topic "$TOPIC_PAYMENT_STATUS" Describe
grant topic "$TOPIC_SETTLEMENTS" Write
grant topic "$TOPIC_SETTLEMENTS" Describe

"$kafka_bin/kafka-acls.sh" --bootstrap-server "$bootstrap" --command-config "$admin_config" \
  --list --principal "User:${worker_user}"
echo "kafka-acl-init: user ${worker_user} and its ACLs are in place"
