// A filter's select. A value from the address that is none of the choices (?status=NOPE) is shown
// as what it is, so the list's refusal of it can be seen to come from this filter and changed here.

export function Choice({ label, value, anyLabel, choices, onChange }: { label: string; value: string; anyLabel: string; choices: readonly string[]; onChange(value: string): void }) {
  const unknown = value !== "" && !choices.includes(value);
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={unknown || undefined}>
        <option value="">{anyLabel}</option>
        {unknown && <option value={value}>{`${value} (not a ${label.toLowerCase()})`}</option>}
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}
