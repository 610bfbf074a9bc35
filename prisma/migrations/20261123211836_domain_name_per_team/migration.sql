-- DropIndex
DROP INDEX "Domain_name_key";

-- AlterTable
ALTER TABLE "Domain" ADD COLUMN     "ownershipToken" TEXT;

-- CreateIndex
CREATE INDEX "Domain_name_region_idx" ON "Domain"("name", "region");

-- CreateIndex
CREATE UNIQUE INDEX "Domain_teamId_name_key" ON "Domain"("teamId", "name");
