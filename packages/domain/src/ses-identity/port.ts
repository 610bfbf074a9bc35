// SES domain identities behind a small port: the real SES v2 API in production, a database
// table in development and tests (the local SES emulator does not implement identities).

import type { Db } from '@mailrail/platform/db/client';
import { DomainStatus } from '@mailrail/platform/db/generated/enums';

/** The status vocabulary of identities, DKIM and DNS records: the domain status enum itself. */
export type IdentityStatusValue = DomainStatus;

export interface CreateIdentityInput {
  domain: string;
  region: string;
  dkimSelector: string;
  /** PEM (PKCS#8); adapters convert it to what their backend wants. */
  dkimPrivateKey: string;
  mailFromDomain: string;
}

export interface IdentityRef {
  domain: string;
  region: string;
}

export interface IdentityStatus {
  verificationStatus: IdentityStatusValue;
  dkimStatus: IdentityStatusValue;
  mailFromStatus: IdentityStatusValue;
  /** SES's VerificationInfo.ErrorType, e.g. HOST_NOT_FOUND. */
  errorType?: string;
}

export interface IdentityPort {
  readonly kind: 'ses' | 'local';
  /**
   * `tx`: the transaction that inserts the domain row. The local adapter writes its identity row
   * with it (one connection per add, and rolled back with the domain); SES ignores it.
   */
  createIdentity(input: CreateIdentityInput, tx?: Pick<Db, 'localSesIdentity'>): Promise<void>;
  /** null when the identity does not exist (deleted behind our back, or never created). */
  getIdentityStatus(ref: IdentityRef): Promise<IdentityStatus | null>;
  /** Idempotent: deleting an identity that is gone is not an error. */
  deleteIdentity(ref: IdentityRef): Promise<void>;
}

/** The identity already exists in SES (for example left over from another installation). */
export class IdentityExistsError extends Error {
  constructor(readonly domain: string) {
    super(`An SES identity for ${domain} already exists`);
  }
}

/** SES refused or failed the call; `name` is SES's exception name. */
export class IdentityServiceError extends Error {
  constructor(
    message: string,
    readonly sesErrorName: string,
  ) {
    super(message);
  }
}

const STATUS_VALUES: ReadonlySet<string> = new Set(Object.values(DomainStatus));

export function toIdentityStatusValue(s: string | undefined | null): IdentityStatusValue {
  return s && STATUS_VALUES.has(s) ? (s as IdentityStatusValue) : 'NOT_STARTED';
}
