-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "sendJobId" TEXT;
