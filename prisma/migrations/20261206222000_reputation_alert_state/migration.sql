-- CreateEnum
CREATE TYPE "ReputationLevel" AS ENUM ('HEALTHY', 'REVIEW', 'PAUSE');

-- CreateTable
CREATE TABLE "ReputationAlertState" (
    "teamId" INTEGER NOT NULL,
    "bounceLevel" "ReputationLevel" NOT NULL DEFAULT 'HEALTHY',
    "complaintLevel" "ReputationLevel" NOT NULL DEFAULT 'HEALTHY',
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ReputationAlertState_pkey" PRIMARY KEY ("teamId")
);

-- AddForeignKey
ALTER TABLE "ReputationAlertState" ADD CONSTRAINT "ReputationAlertState_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
