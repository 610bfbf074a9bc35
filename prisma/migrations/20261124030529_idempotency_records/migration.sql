-- Idempotency-Key records kept in PostgreSQL as well as Redis (docs/redis.md): a retry after a
-- lossy Redis failover finds the first request's email ids here, and the primary key makes two
-- concurrent first requests with one key create the emails once.

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "teamId" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "bodyHash" TEXT NOT NULL,
    "emailIds" TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyRecord_pkey" PRIMARY KEY ("teamId","key")
);

-- CreateIndex
CREATE INDEX "IdempotencyRecord_createdAt_idx" ON "IdempotencyRecord"("createdAt");
