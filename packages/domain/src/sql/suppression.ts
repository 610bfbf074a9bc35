// The one SQL test "is this address suppressed for this team": suppressions are stored bare and
// lower-cased (normaliseAddress), so a stored contact or recipient address is compared lower-cased.
// Campaigns ask it when their audience is fixed and again when each recipient's email is written;
// a suppression after that withdraws the written email (../emails/suppress-addresses.ts).

/** A LEFT JOIN of the team's suppression of `addressSql` as `alias` (alias.reason is null when not suppressed). */
export function suppressionJoinSql(alias: string, teamIdSql: string, addressSql: string): string {
  return `LEFT JOIN "Suppression" ${alias} ON ${alias}."teamId" = ${teamIdSql} AND ${alias}.email = lower(${addressSql})`;
}
