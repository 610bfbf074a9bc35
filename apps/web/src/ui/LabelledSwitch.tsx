import { Switch } from 'radix-ui';
import { useId } from 'react';

/** An on/off setting that saves at once (Radix Switch: role="switch", keyboard and screen reader support). */
export function LabelledSwitch({
  label,
  checked,
  disabled,
  onChange,
}: {
  label: string;
  checked: boolean;
  disabled?: boolean;
  onChange: (checked: boolean) => void;
}) {
  const id = useId();
  return (
    <div className="switch-row">
      <Switch.Root id={id} className="switch" checked={checked} disabled={disabled} onCheckedChange={onChange}>
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      <label htmlFor={id}>{label}</label>
    </div>
  );
}
