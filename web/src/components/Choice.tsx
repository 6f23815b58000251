// A labelled select of a filter: "any" (the empty value) and the choices, each written as it is sent.

export function Choice({ label, value, anyLabel, choices, onChange }: { label: string; value: string; anyLabel: string; choices: readonly string[]; onChange(value: string): void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{anyLabel}</option>
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}
