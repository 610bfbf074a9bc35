# Production image for both processes (api: npm run start:api, worker: npm run start:worker).
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json tsconfig.json ./
COPY apps/api/package.json apps/api/package.json
COPY apps/worker/package.json apps/worker/package.json
COPY packages/core/package.json packages/core/package.json
COPY scripts scripts
COPY prisma prisma
COPY packages packages
COPY apps apps
# Dev dependencies stay: tsx runs the TypeScript sources and the Prisma 6 CLI applies migrations.
RUN npm ci --include=dev --no-audit --no-fund && npm cache clean --force
USER node
EXPOSE 3000
# node itself is PID 1 (not npm), so SIGTERM reaches the process and shutdown is graceful.
CMD ["node", "--import", "tsx", "apps/api/src/main.ts"]
