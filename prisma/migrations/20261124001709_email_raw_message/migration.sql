-- AlterTable
ALTER TABLE "Email" ADD COLUMN     "rawMessage" BYTEA;
