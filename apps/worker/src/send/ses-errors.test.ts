import { classifySesError } from './ses-errors';

// Whether SES may have taken the message decides between a retry and the in-doubt wait.
describe('classifySesError', () => {
  it('calls a call without an answer transient with an unknown outcome, unless it never connected', () => {
    const timeout = Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError', $metadata: {} });
    expect(classifySesError(timeout)).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: {} });
    expect(classifySesError(reset)).toMatchObject({ kind: 'transient', outcomeUnknown: true });
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']) {
      const refused = Object.assign(new Error(`connect ${code}`), { code, $metadata: {} });
      expect(classifySesError(refused)).toEqual({ kind: 'transient', name: code, message: `connect ${code}` });
    }
  });

  it('knows an answered error: throttled, transient (5xx) or permanent (4xx), never of unknown outcome', () => {
    const answered = (name: string, httpStatusCode: number) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode } });
    expect(classifySesError(answered('ThrottlingException', 400))).toMatchObject({ kind: 'throttled' });
    expect(classifySesError(answered('InternalFailure', 500))).toEqual({
      kind: 'transient',
      name: 'InternalFailure',
      message: 'InternalFailure',
    });
    expect(classifySesError(answered('MessageRejected', 400))).toEqual({
      kind: 'permanent',
      name: 'MessageRejected',
      message: 'MessageRejected',
    });
  });
});
