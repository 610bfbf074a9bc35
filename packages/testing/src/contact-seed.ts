// Contacts written in one INSERT ... SELECT FROM generate_series, for tests and benches that need a
// big book fast (the API's bulk route caps at 10,000 a request). Ids are time-ordered like the
// API's (by insertion order); emails spread over 10 domains; one in ten is unsubscribed; createdAt
// spreads over two years before `now`; properties hold three JSON types.

/** Runs one parameterized statement (a pg Client's query, an executor's execute). */
type RunSql = (text: string, params: unknown[]) => Promise<unknown>;

export async function seedContacts(run: RunSql, contactBookId: string, count: number, now = new Date()): Promise<void> {
  await run(
    `INSERT INTO "Contact" (id, "contactBookId", email, "firstName", "lastName", properties, subscribed, "unsubscribeReason", "createdAt", "updatedAt")
     SELECT lpad(to_hex(g), 9, '0') || substr(md5($1 || g), 1, 15), $1, 'user' || g || '@d' || (g % 10) || '.example.com',
            'First' || g, 'Last' || g,
            jsonb_build_object('plan', CASE WHEN g % 2 = 0 THEN 'pro' ELSE 'free' END, 'age', g % 90, 'vip', g % 7 = 0,
                               'city', (ARRAY['Oslo','Lima','Rome','Kyiv','Pune','Riga','Doha','Baku','Bern','Nice',
                                             'Accra','Cairo','Dakar','Hanoi','Quito','Sofia','Tunis','Turin','Omaha','Perth'])[1 + g % 20]),
            g % 10 <> 0, CASE WHEN g % 10 = 0 THEN 'UNSUBSCRIBED'::"UnsubscribeReason" END,
            $2::timestamptz - (g % 730) * interval '1 day', $2::timestamptz
     FROM generate_series(1, $3::int) AS g`,
    [contactBookId, now, count],
  );
}
