import { prepareTemplateDatabase } from './databases';

export default async function globalSetup(): Promise<void> {
  await prepareTemplateDatabase();
}
