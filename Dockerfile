# Two stages. "build" installs every dependency, generates the Prisma client and compiles the
# apps (`npm run build` → dist/); docker-compose.yml also runs the one-off tools from it (the
# migrations, through the Prisma 6 CLI, and the local SES emulator), which are dev dependencies.
# The last stage is the production image for the three processes (API, worker, SMTP relay): the compiled output and the
# production dependencies only, no TypeScript, tsx or Prisma CLI.
#
# `npm install` from the lockfile, not `npm ci`: the lockfile cannot list other platforms'
# optional binaries (our registry mirror has none), so npm ci calls it out of sync (see .ci/run);
# npm install still installs exactly the locked versions.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY apps/api/package.json apps/api/package.json
COPY apps/worker/package.json apps/worker/package.json
COPY apps/smtp/package.json apps/smtp/package.json
COPY packages/platform/package.json packages/platform/package.json
COPY packages/domain/package.json packages/domain/package.json
COPY packages/testing/package.json packages/testing/package.json
COPY packages/tools/package.json packages/tools/package.json
COPY scripts scripts
COPY prisma prisma
COPY packages packages
COPY apps apps
# The postinstall script generates the Prisma client into packages/platform/src/db/generated.
RUN npm install --no-audit --no-fund && npm cache clean --force
RUN npm run build
USER node

FROM node:24-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY apps/api/package.json apps/api/package.json
COPY apps/worker/package.json apps/worker/package.json
COPY apps/smtp/package.json apps/smtp/package.json
COPY packages/platform/package.json packages/platform/package.json
COPY packages/domain/package.json packages/domain/package.json
COPY packages/testing/package.json packages/testing/package.json
COPY packages/tools/package.json packages/tools/package.json
# --omit=optional as well: Prisma's CLI and TypeScript are optional peers of @prisma/client and
# would otherwise come along (about 250 MB). --ignore-scripts: no install script is needed (our
# postinstall generates the Prisma client for development; dist/ has it compiled in, and loads its
# WebAssembly query compiler from @prisma/client/runtime at run time).
RUN npm install --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
# ...but @node-rs/argon2 (dashboard passwords) ships its native binary as an optional dependency
# per platform: take the one the build stage installed for this very base image.
COPY --from=build /app/node_modules/@node-rs node_modules/@node-rs
# Likewise @napi-rs/nice, with which the preview render threads lower their own priority.
COPY --from=build /app/node_modules/@napi-rs node_modules/@napi-rs
COPY --from=build /app/dist dist
# The dashboard's static build, served by the API at `/`.
COPY --from=build /app/apps/web/dist apps/web/dist
USER node
EXPOSE 3000 2587 2465
# node itself is PID 1 (not npm), so SIGTERM reaches the process and shutdown is graceful.
CMD ["node", "--max-semi-space-size=16", "dist/api/main.js"]
