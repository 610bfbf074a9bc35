-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "sesCallStartedAt" TIMESTAMPTZ(3);
