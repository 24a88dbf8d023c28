# syntax=docker/dockerfile:1
# The gateway's image: `docker build -t model-gateway .` (or `podman build --format docker`, which keeps HEALTHCHECK).
# Run: docker run -p 8080:8080 -v gateway-data:/data model-gateway   (README.md, "Run with Docker")

# --- build: dev dependencies, TypeScript, the console bundle --------------------------------------------------------
FROM node:20-bookworm-slim AS build
# better-sqlite3 is a native addon: its prebuilt binary is downloaded when the build can reach it; otherwise it is
# compiled, against the headers the node image carries under /usr/local (so node-gyp downloads nothing).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local npm_config_update_notifier=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY plugins ./plugins
COPY console ./console
# then the production dependencies only (better-sqlite3 keeps its compiled addon, not its sources and objects)
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf dist/test dist/bench dist/.build-stamp \
 && b=node_modules/better-sqlite3 && mv $b/build/Release/better_sqlite3.node /tmp/ \
 && rm -rf $b/build $b/deps $b/src && mkdir -p $b/build/Release && mv /tmp/better_sqlite3.node $b/build/Release/ \
 && find dist -name '*.map' -delete \
 && npm cache clean --force

# --- run: node, the production dependencies, dist/ ------------------------------------------------------------------
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    GATEWAY_CONFIG=/etc/gateway/gateway.yaml \
    MALLOC_ARENA_MAX=2
WORKDIR /app
# the app's files belong to root and are read-only to the gateway's user; only /data is its to write
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY deploy/gateway.container.yaml /etc/gateway/gateway.yaml
RUN mkdir -p /data && chown 1000:1000 /data
VOLUME ["/data"]
# the official image's user node (1000:1000), by number so that runAsNonRoot can verify it
USER 1000:1000
EXPOSE 8080
# /ready: 503 while the store is unreachable (and while draining on SIGTERM); no curl in the slim image: node's fetch
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form, node as PID 1: SIGTERM reaches the gateway itself, which drains (server.shutdown_grace_ms) and exits 0.
# Give the engine longer than the grace to wait (docker stop -t 15, terminationGracePeriodSeconds: 30).
# Other commands: docker run --rm model-gateway check | keys create ... | help
ENTRYPOINT ["node", "dist/src/cli.js"]
CMD ["start"]
