#!/usr/bin/env bash
# Starts the secured broker of docker-compose.secured.yml (apache/kafka image, run as its
# command instead of the image's own start script, whose TLS set-up wants JKS stores with
# passwords, which Kafka refuses together with PEM).
#
# 1. Writes the broker's properties (private, 0600): every KAFKA_* variable of the service,
#    named as the image names them (KAFKA_ dropped, `___` → `-`, `__` → `_`, `_` → `.`, lower
#    case), then the PEM key and trust stores read from files: the certificate chain and the
#    key (ssl.keystore.*) and the CA (ssl.truststore.certificates).
# 2. Formats the storage on first start, with the SCRAM-SHA-512 credentials of the super user
#    (StorageTool --add-scram), read from its secret file: nobody could create the first SCRAM
#    user over SASL otherwise.
# 3. Runs Kafka.
#
# BROKER_RENDER_ONLY=1 stops after step 1 (the tests read the properties it writes).
set -euo pipefail

kafka_home="${BROKER_KAFKA_HOME:-/opt/kafka}"
config="${BROKER_CONFIG:-/opt/kafka/config/secured.properties}"
cert_file="${BROKER_TLS_CERT_FILE:-/etc/payflow-bridge/kafka.pem}"
key_file="${BROKER_TLS_KEY_FILE:-/run/secrets/kafka-tls-key}"
ca_file="${BROKER_TLS_CA_FILE:-/etc/payflow-bridge/kafka-ca.pem}"
admin_user="${BROKER_ADMIN_USERNAME:-admin}"
admin_password_file="${BROKER_ADMIN_PASSWORD_FILE:-/run/secrets/kafka-admin-password}"

# Variables of the start scripts, not broker properties.
not_properties=' KAFKA_OPTS KAFKA_HEAP_OPTS KAFKA_JVM_PERFORMANCE_OPTS KAFKA_GC_LOG_OPTS KAFKA_LOG4J_OPTS KAFKA_JMX_OPTS KAFKA_JMX_PORT KAFKA_JMX_HOSTNAME KAFKA_DEBUG KAFKA_VERSION KAFKA_HOME '

property_name() {
  local name="${1#KAFKA_}"
  name="${name//___/-}"
  name="${name//__/%}"
  name="${name//_/.}"
  name="${name//%/_}"
  printf '%s' "${name,,}"
}

# A PEM file as one property value: its lines joined by `\n` (Java properties unescape it).
pem_value() {
  awk 'NF { printf "%s%s", separator, $0; separator = "\\n" }' "$1"
}

for file in "$cert_file" "$key_file" "$ca_file"; do
  if [[ ! -s "$file" ]]; then
    echo "kafka-broker: $file is missing or empty (run deploy/secured/make-certs.sh)" >&2
    exit 1
  fi
done

umask 077
mkdir -p "$(dirname "$config")"
{
  echo '# Written by deploy/secured/kafka-broker.sh at start-up.'
  while IFS= read -r variable; do
    [[ "$not_properties" == *" $variable "* ]] && continue
    printf '%s=%s\n' "$(property_name "$variable")" "${!variable}"
  done < <(compgen -e | grep '^KAFKA_' | LC_ALL=C sort)
  printf 'ssl.keystore.certificate.chain=%s\n' "$(pem_value "$cert_file")"
  printf 'ssl.keystore.key=%s\n' "$(pem_value "$key_file")"
  printf 'ssl.truststore.certificates=%s\n' "$(pem_value "$ca_file")"
} >"$config"

if [[ "${BROKER_RENDER_ONLY:-}" == 1 ]]; then
  echo "kafka-broker: wrote $config"
  exit 0
fi

admin_password="$(<"$admin_password_file")"
if [[ ! "$admin_password" =~ ^[A-Za-z0-9._~+/=-]+$ ]]; then
  echo "kafka-broker: $admin_password_file must hold letters, digits and ._~+/=- only" >&2
  exit 1
fi
"$kafka_home/bin/kafka-storage.sh" format --ignore-formatted --cluster-id "${CLUSTER_ID:?}" \
  --config "$config" \
  --add-scram "SCRAM-SHA-512=[name=${admin_user},password=${admin_password}]"
unset admin_password

exec "$kafka_home/bin/kafka-server-start.sh" "$config"
