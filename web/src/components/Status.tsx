// A status written as text; its colour (by class) only adds to it (CONTRACT §11).

export function Status({ value }: { value: string }) {
  return <span className={`status status-${value.toLowerCase()}`}>{value}</span>;
}
