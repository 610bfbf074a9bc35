import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import type { Campaign, CampaignScheduleDryRun } from '../api/types';
import { teamKey } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime } from '../ui/format';
import { useFormDialog } from '../ui/useFormDialog';
import { PreSendCheckPanel, usePreSendCheck } from './PreSendCheck';

type Mode = 'now' | 'at' | 'words';

/**
 * Now, at a time, or in plain words ("tomorrow 9am"): a time is first resolved by the server
 * (schedule with dryRun, in the team's time zone) and shown; the campaign is scheduled on confirm.
 */
export function ScheduleDialog({ campaign }: { campaign: Campaign }) {
  const { team, base } = useTeam();
  const [mode, setMode] = useState<Mode>('now');
  const [at, setAt] = useState('');
  const [words, setWords] = useState('');
  const scheduledAt = mode === 'at' ? (at ? new Date(at).toISOString() : '') : mode === 'words' ? words.trim() : undefined;
  const path = `${base}/v1/campaigns/${campaign.id}/schedule`;
  const check = useMutation({
    mutationFn: () => api.post<CampaignScheduleDryRun>(path, { scheduledAt, dryRun: true }),
  });
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () => api.post(path, scheduledAt ? { scheduledAt } : {}),
    toast: () => (mode === 'now' ? 'Campaign started' : 'Campaign scheduled'),
    invalidate: [teamKey(team.id, 'campaigns')],
    reset: () => check.reset(),
  });
  const resolved = check.data;
  const needsCheck = mode !== 'now' && !resolved;
  const preSend = usePreSendCheck(campaign.id, dialog.open);
  // Errors block here as on the server; warnings are shown and the send goes ahead.
  const blocked = !preSend.data?.ready;
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          {campaign.status === 'PAUSED' ? 'Reschedule' : campaign.status === 'SCHEDULED' ? 'Change schedule' : 'Schedule'}
        </button>
      }
      title={`Send "${campaign.name}"`}
      description="The recipients are fixed when the campaign starts: the subscribed contacts of its book or segment at that moment."
    >
      <form className="stack" onSubmit={submit()}>
        <PreSendCheckPanel check={preSend} />
        <fieldset className="radio-group">
          <legend>When</legend>
          {(
            [
              ['now', 'Now'],
              ['at', 'At a date and time'],
              ['words', 'In words (e.g. "tomorrow 9am")'],
            ] as const
          ).map(([m, label]) => (
            <label key={m}>
              <input
                type="radio"
                name="when"
                checked={mode === m}
                onChange={() => {
                  setMode(m);
                  check.reset();
                }}
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        {mode === 'at' && (
          <Field label="Date and time" hint="In your browser's time zone.">
            <input
              type="datetime-local"
              value={at}
              onChange={(e) => {
                setAt(e.target.value);
                check.reset();
              }}
              required
            />
          </Field>
        )}
        {mode === 'words' && (
          <Field label="When, in words" hint="Read in the team's time zone.">
            <input
              value={words}
              onChange={(e) => {
                setWords(e.target.value);
                check.reset();
              }}
              required
              maxLength={200}
              placeholder="tomorrow 9am"
            />
          </Field>
        )}
        <ErrorNotice error={check.error} />
        {resolved && (
          <p className="notice notice-info" role="status" data-testid="resolved-time">
            Starts{' '}
            <strong>
              {new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short', timeZone: resolved.timeZone }).format(
                new Date(resolved.scheduledAt),
              )}
            </strong>{' '}
            in the team's time zone ({resolved.timeZone}); {formatDateTime(resolved.scheduledAt)} in yours.
          </p>
        )}
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          {needsCheck ? (
            <button
              type="button"
              className="btn btn-primary"
              disabled={blocked || check.isPending || !scheduledAt}
              onClick={() => check.mutate()}
            >
              {check.isPending ? 'Checking…' : 'Check the time'}
            </button>
          ) : (
            <button type="submit" className="btn btn-primary" disabled={blocked || mutation.isPending}>
              {mode === 'now' ? 'Send now' : 'Confirm schedule'}
            </button>
          )}
        </div>
      </form>
    </FormDialog>
  );
}
