-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "recipientsCursor" TEXT,
ADD COLUMN     "pausedReason" TEXT;
