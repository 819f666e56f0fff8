#!/usr/bin/env bash
# Makes the files docker-compose.secured.yml mounts, with openssl:
#
#   certs/ca.pem          a CA made for this deployment (what the worker and the tools trust)
#   certs/ca.key          its private key (used here only, to sign; mounted nowhere)
#   certs/kafka.pem       the broker's certificate, for kafka, localhost and 127.0.0.1
#   certs/kafka.key       its private key (PKCS#8 PEM; a compose secret of the broker)
#   secrets/kafka-admin-password    SCRAM-SHA-512 password of the Kafka super user `admin`
#   secrets/kafka-worker-password   SCRAM-SHA-512 password of the worker's Kafka user
#   secrets/database-password       the password of Postgres's user `postgres`
#   secrets/payflow-client-secret   the Payflow client secret (the sandbox's built-in client
#                                    takes it too; put the real one here for a real Payflow)
#
#   deploy/secured/make-certs.sh [directory]     (default: the directory of this script)
#
# Passwords are random (32 bytes, hex). A file that exists is kept, so running this again
# changes nothing (Postgres keeps its password in its volume). To rotate a secret, replace its
# file and restart what reads it. The directories are private to you (0700); the files in
# them are readable (0644, the CA key 0600) because compose bind-mounts them into containers
# whose users (node, appuser, postgres) are not you.
set -euo pipefail

out="${1:-$(cd "$(dirname "$0")" && pwd)}"
certs="$out/certs"
secrets="$out/secrets"
days=825

umask 077
mkdir -p "$certs" "$secrets"
chmod 700 "$certs" "$secrets"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ ! -s "$certs/ca.pem" || ! -s "$certs/ca.key" ]]; then
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -days "$days" -subj '/CN=payflow-bridge compose CA' \
    -addext 'basicConstraints=critical,CA:TRUE' \
    -addext 'keyUsage=critical,keyCertSign,cRLSign' \
    -keyout "$certs/ca.key" -out "$certs/ca.pem" 2>/dev/null
  rm -f "$certs/kafka.pem" "$certs/kafka.key"
  echo "made $certs/ca.pem"
fi

if [[ ! -s "$certs/kafka.pem" || ! -s "$certs/kafka.key" ]]; then
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -subj '/CN=kafka' -keyout "$certs/kafka.key" -out "$work/kafka.csr" 2>/dev/null
  cat >"$work/kafka.ext" <<'EXT'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:kafka,DNS:localhost,IP:127.0.0.1
EXT
  openssl x509 -req -sha256 -days "$days" -in "$work/kafka.csr" \
    -CA "$certs/ca.pem" -CAkey "$certs/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -extfile "$work/kafka.ext" -out "$certs/kafka.pem" 2>/dev/null
  echo "made $certs/kafka.pem"
fi

# A secret file: kept when it exists, else `value` (random when none is given).
secret() {
  local file="$secrets/$1"
  if [[ -s "$file" ]]; then return; fi
  printf '%s\n' "${2:-$(openssl rand -hex 32)}" >"$file"
  echo "made $file"
}
secret kafka-admin-password
secret kafka-worker-password
secret database-password
secret payflow-client-secret

chmod 644 "$certs/ca.pem" "$certs/kafka.pem" "$certs/kafka.key" "$secrets"/*
chmod 600 "$certs/ca.key"
