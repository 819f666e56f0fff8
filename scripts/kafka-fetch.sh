#!/usr/bin/env bash
# Fetches Apache Kafka (kafka_2.13 and its runtime dependencies, as testbed/kafka/pom.xml lists them)
# from Maven Central into testbed/kafka/libs, once: later runs find testbed/kafka/libs/.complete and return
# at once, and Maven's local repository (~/.m2) lets a deleted testbed/kafka/libs come back offline.
# Installs Java and Maven from Debian's packages when the machine lacks them.
set -euo pipefail
cd "$(dirname "$0")/../testbed/kafka"

version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' pom.xml)
if [ -f libs/.complete ] && [ "$(cat libs/.complete)" = "$version" ]; then
  exit 0
fi

if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  echo "kafka-fetch: installing Java 17 and Maven"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq openjdk-17-jre-headless maven >/dev/null
fi

echo "kafka-fetch: Apache Kafka $version from Maven Central into testbed/kafka/libs"
rm -rf libs.partial
fetch() {
  mvn -q -B "$@" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=libs.partial
}
# Offline first (everything may be in ~/.m2 already), then from Maven Central.
fetch -o >/dev/null 2>&1 || fetch
rm -rf libs
mv libs.partial libs
echo "$version" >libs/.complete
echo "kafka-fetch: $(ls libs/*.jar | wc -l) jars"
