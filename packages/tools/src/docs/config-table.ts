import { configSchema } from '@mailrail/platform/config/schema';

// The README's configuration table, generated from the schema's descriptions and defaults so the
// two cannot drift (a test compares them): npm run -s docs:config
export function configTableMarkdown(): string {
  const rows = Object.entries(configSchema.shape).map(([name, field]) => {
    const schema = field as unknown as { description?: string; safeParse(v: unknown): { success: boolean; data?: unknown } };
    const parsed = schema.safeParse(undefined);
    const def = parsed.success && parsed.data !== undefined ? `\`${String(parsed.data)}\`` : '—';
    return `| \`${name}\` | ${def} | ${schema.description ?? ''} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

if (require.main === module) console.log(configTableMarkdown());
