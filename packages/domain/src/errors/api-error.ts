// The error vocabulary of the wire format: {"error": {"code", "message", "issues"?}}.
export const errorStatus = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_UNIQUE: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface Issue {
  path: (string | number)[];
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues?: Issue[],
  ) {
    super(message);
    this.status = errorStatus[code];
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) } };
  }
}

export const badRequest = (message: string, issues?: Issue[]) => new ApiError('BAD_REQUEST', message, issues);
export const notFound = (message: string) => new ApiError('NOT_FOUND', message);
export const forbidden = (message: string) => new ApiError('FORBIDDEN', message);
export const conflict = (message: string) => new ApiError('NOT_UNIQUE', message);
