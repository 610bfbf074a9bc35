import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Any of these means the SDK's default chain can find credentials without us.
const CREDENTIAL_VARS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_PROFILE',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
];

/** The environment variable holding AWS credentials, or null; `file` also looks at ~/.aws/credentials. */
export function awsCredentialsSource(env: NodeJS.ProcessEnv, opts: { file?: boolean } = {}): string | null {
  const variable = CREDENTIAL_VARS.find((v) => env[v]);
  if (variable) return variable;
  if (opts.file) {
    const file = path.join(os.homedir(), '.aws/credentials');
    if (existsSync(file)) return file;
  }
  return null;
}
