export * from './events';
export * from './outbox';
export * from './signing';
export * from './ssrf';
export * from './payloads';
export * from './email-outbox-sql';
