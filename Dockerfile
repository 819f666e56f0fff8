# payflow-bridge worker image (also runs the sandbox with a different command).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# V8 otherwise lets the old generation grow with the host's memory; with 192 MB the worker
# stays near 220 MB RSS at ~2,000 orders/s (npm run bench, key-100ms-heap192).
ENV NODE_OPTIONS=--max-old-space-size=192
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
CMD ["node", "dist/src/main.js"]
