-- CreateEnum
CREATE TYPE "ContactPropertyType" AS ENUM ('STRING', 'NUMBER', 'BOOLEAN', 'DATE');

-- CreateTable
CREATE TABLE "ContactProperty" (
    "contactBookId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" "ContactPropertyType" NOT NULL DEFAULT 'STRING',
    "fallback" TEXT,
    "position" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ContactProperty_pkey" PRIMARY KEY ("contactBookId","name")
);

-- AddForeignKey
ALTER TABLE "ContactProperty" ADD CONSTRAINT "ContactProperty_contactBookId_fkey" FOREIGN KEY ("contactBookId") REFERENCES "ContactBook"("id") ON DELETE CASCADE ON UPDATE CASCADE;
