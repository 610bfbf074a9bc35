// The home of raw SQL: the executor every statement runs through, and the fragments that more
// than one statement shares (see docs/data.md).
export * from './executor';
export * from './time';
export * from './contact';
export * from './email-outbox';
