-- AlterEnum
ALTER TYPE "CampaignEmailStatus" ADD VALUE 'UNSUBSCRIBED';

-- AlterTable
ALTER TABLE "CampaignEmail" ADD COLUMN     "reason" TEXT;
