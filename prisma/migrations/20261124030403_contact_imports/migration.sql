-- CreateEnum
CREATE TYPE "ContactImportStatus" AS ENUM ('UPLOADING', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED');

-- CreateEnum
CREATE TYPE "ContactImportOnExisting" AS ENUM ('SKIP', 'UPDATE');

-- CreateTable
CREATE TABLE "ContactImport" (
    "id" TEXT NOT NULL,
    "contactBookId" TEXT NOT NULL,
    "fileName" TEXT NOT NULL,
    "status" "ContactImportStatus" NOT NULL DEFAULT 'UPLOADING',
    "onExisting" "ContactImportOnExisting" NOT NULL DEFAULT 'SKIP',
    "columns" JSONB NOT NULL DEFAULT '[]',
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "rowsRead" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "updated" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "rejected" INTEGER NOT NULL DEFAULT 0,
    "checkpointRecords" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ContactImport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ContactImportChunk" (
    "importId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "data" BYTEA NOT NULL,

    CONSTRAINT "ContactImportChunk_pkey" PRIMARY KEY ("importId","seq")
);

-- CreateTable
CREATE TABLE "ContactImportReject" (
    "importId" TEXT NOT NULL,
    "line" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "row" TEXT NOT NULL,

    CONSTRAINT "ContactImportReject_pkey" PRIMARY KEY ("importId","line")
);

-- CreateIndex
CREATE INDEX "ContactImport_contactBookId_createdAt_idx" ON "ContactImport"("contactBookId", "createdAt");

-- AddForeignKey
ALTER TABLE "ContactImport" ADD CONSTRAINT "ContactImport_contactBookId_fkey" FOREIGN KEY ("contactBookId") REFERENCES "ContactBook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ContactImportChunk" ADD CONSTRAINT "ContactImportChunk_importId_fkey" FOREIGN KEY ("importId") REFERENCES "ContactImport"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ContactImportReject" ADD CONSTRAINT "ContactImportReject_importId_fkey" FOREIGN KEY ("importId") REFERENCES "ContactImport"("id") ON DELETE CASCADE ON UPDATE CASCADE;
