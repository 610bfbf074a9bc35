-- Gradual sending (docs/campaigns.md "Ramp"): the ramp of a campaign and the window the engine
-- opened last. All nullable: existing campaigns have no ramp, and a running one opens its next
-- window with number 0 (its current window keeps batchSize as its size).

-- AlterTable
ALTER TABLE "Campaign" ADD COLUMN     "rampFactor" DOUBLE PRECISION,
ADD COLUMN     "rampStart" INTEGER,
ADD COLUMN     "windowNumber" INTEGER,
ADD COLUMN     "windowSize" INTEGER;
