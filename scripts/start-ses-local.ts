// The local SES emulator (aws-ses-v2-local): accepts SES v2 SendEmail and shows sent mail at /.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export function startSesLocal(port: number): ChildProcess {
  const cli = path.join(__dirname, '../node_modules/aws-ses-v2-local/dist/cli.js');
  return spawn(process.execPath, [cli, '--port', String(port), '--host', '127.0.0.1'], { stdio: ['ignore', 'inherit', 'inherit'] });
}

if (require.main === module) {
  const child = startSesLocal(Number(process.env.SES_LOCAL_PORT ?? 8005));
  const stop = () => child.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => process.exit(code ?? 0));
}
