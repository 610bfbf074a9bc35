import { Client } from 'pg';
import { testServerUrl } from '@mailrail/testing/databases';
import { textArrayLiteral } from './text-array';

// PostgreSQL itself reads the literal back: whatever the elements hold, the same strings come out.
it('reads back as the same strings in PostgreSQL, whatever the elements hold', async () => {
  const client = new Client({ connectionString: `${testServerUrl}/postgres` });
  await client.connect();
  try {
    for (const values of [
      [],
      ['ada@example.org'],
      ['Ada <ada@example.org>', '"Lovelace, Ada" <a@b.example>'],
      ['back\\slash', 'quote"inside', '{braces}', 'a,b', ' spaced ', '', 'NULL', 'null', 'Zoë 🎉'],
      ['\\"', '\\\\', '"'],
    ]) {
      const { rows } = await client.query<{ a: string[] }>('SELECT $1::text[] AS a', [textArrayLiteral(values)]);
      expect(rows[0].a).toEqual(values);
    }
  } finally {
    await client.end();
  }
});
