# payflow-bridge worker image (also runs the sandbox and the operator CLI with another command).
#
# The build stage compiles the product only (tsconfig.image.json: src and migrations); the
# bench, the demo and the test bed are development tools and stay out, so nothing here may
# import them. test/deploy/dockerfile.test.ts builds this stage from exactly the paths the
# COPY lines below name, and checks that the runtime needs no development dependency.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci's postinstall applies them (patch-package): a fix kafkajs 2.2.4 never released.
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.image.json ./
COPY src ./src
COPY migrations ./migrations
# The console's templates and static files, which tsc does not emit.
COPY scripts/copy-assets.mjs ./scripts/copy-assets.mjs
RUN node node_modules/typescript/bin/tsc -p tsconfig.image.json && node scripts/copy-assets.mjs \
  && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# V8 otherwise lets the old generation grow with the host's memory; with 192 MB the worker
# stays near 220 MB RSS at ~1,500 orders/s (npm run bench, key-100ms-heap192).
ENV NODE_OPTIONS=--max-old-space-size=192
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# 3000: the public listener (HTTP_PORT), webhooks only, for Payflow. 9464: the management
# listener (MANAGEMENT_PORT), /metrics and /health, plain HTTP: publish it to nobody, only
# to the orchestrator's probes and Prometheus on the private network.
EXPOSE 3000 9464
# GET /health/live on the management listener, plain HTTP (src/healthcheck.ts).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "dist/src/healthcheck.js"]
CMD ["node", "dist/src/main.js"]
