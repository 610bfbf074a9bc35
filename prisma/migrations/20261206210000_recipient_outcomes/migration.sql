-- AlterEnum
ALTER TYPE "CampaignEmailStatus" ADD VALUE 'UNSUBSCRIBED';

-- AlterTable
ALTER TABLE "CampaignEmail" ADD COLUMN     "reason" TEXT;

-- AlterTable
ALTER TABLE "ContactImport" ADD COLUMN     "suppressed" INTEGER NOT NULL DEFAULT 0;
