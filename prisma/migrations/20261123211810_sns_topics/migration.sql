-- CreateTable
CREATE TABLE "SnsTopic" (
    "arn" TEXT NOT NULL,
    "region" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SnsTopic_pkey" PRIMARY KEY ("arn")
);
