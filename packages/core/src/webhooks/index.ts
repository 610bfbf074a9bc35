export * from './events';
export * from './outbox';
export * from './signing';
export * from './retry-schedule';
export * from './ssrf';
export * from './payloads';
