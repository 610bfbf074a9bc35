import type { Explanation } from '@mailrail/domain/deliverability/explanations';

/** An outcome in plain words: what happened, what mailrail did, and SES's own words for it. */
export function ExplanationText({ explanation, compact = false }: { explanation: Explanation; compact?: boolean }) {
  return (
    <div className="explanation">
      <p>
        <strong>{explanation.title}.</strong> {explanation.sentence}
      </p>
      {!compact && <p className="muted">{explanation.actionSentence}</p>}
      {explanation.code && (
        <p className="small muted">
          Code: <code>{explanation.code}</code>
        </p>
      )}
    </div>
  );
}

/** Where a person finds everything about one address: the "Why didn't this arrive?" page. */
export const addressPagePath = (base: string, address: string) => `${base}/addresses?address=${encodeURIComponent(address)}`;
