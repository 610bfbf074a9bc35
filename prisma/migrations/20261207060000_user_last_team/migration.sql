-- AlterTable
ALTER TABLE "User" ADD COLUMN     "lastTeamId" INTEGER;
