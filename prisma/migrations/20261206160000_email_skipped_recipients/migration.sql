-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "skippedRecipients" JSONB;
