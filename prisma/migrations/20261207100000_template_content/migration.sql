-- AlterTable: the visual editor document of a template (editor JSON), rendered into html on save
ALTER TABLE "Template" ADD COLUMN "content" TEXT;
