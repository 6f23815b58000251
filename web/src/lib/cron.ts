// A 5-field cron expression in words ("every day at 02:30"), for the registered jobs view. Forms it
// does not recognise fall back to the expression itself: a wrong sentence is worse than none.

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const MACROS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const isNumber = (field: string) => /^\d+$/.test(field);
const pad = (n: string) => n.padStart(2, "0");

function dayName(field: string): string {
  return DAYS[Number(field) % 7] ?? field;
}

/** "Monday", "Monday through Friday", "Monday and Friday"; null when the field is not of those forms. */
function describeDays(field: string): string | null {
  if (isNumber(field)) return dayName(field);
  const range = /^(\d)-(\d)$/.exec(field);
  if (range) return `${dayName(range[1]!)} through ${dayName(range[2]!)}`;
  if (/^\d(,\d)+$/.test(field)) {
    const names = field.split(",").map(dayName);
    return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  }
  return null;
}

function describeTime(minute: string, hour: string): string | null {
  if (minute === "*" && hour === "*") return "every minute";
  const stepMin = /^\*\/(\d+)$/.exec(minute);
  if (stepMin && hour === "*") return `every ${stepMin[1]} minutes`;
  if (isNumber(minute) && hour === "*") return `every hour at minute ${Number(minute)}`;
  const stepHour = /^\*\/(\d+)$/.exec(hour);
  if (isNumber(minute) && stepHour) return `every ${stepHour[1]} hours at minute ${Number(minute)}`;
  if (isNumber(minute) && isNumber(hour)) return `at ${pad(hour)}:${pad(minute)}`;
  if (isNumber(minute) && /^\d+(,\d+)+$/.test(hour)) return `at ${hour.split(",").map((h) => `${pad(h)}:${pad(minute)}`).join(", ")}`;
  return null;
}

export function describeCron(expression: string | null): string {
  if (expression === null) return "manual only";
  const fields = (MACROS[expression.trim()] ?? expression).trim().split(/\s+/);
  if (fields.length !== 5) return expression;
  const [minute, hour, dayOfMonth, month, dayOfWeek] = fields as [string, string, string, string, string];
  const time = describeTime(minute, hour);
  if (time === null) return expression;
  const atFixedTime = time.startsWith("at ");
  const parts: string[] = [];
  if (dayOfMonth === "*" && dayOfWeek === "*") parts.push(atFixedTime ? `every day ${time}` : time);
  else if (dayOfMonth === "*") {
    const days = describeDays(dayOfWeek);
    if (days === null) return expression;
    parts.push(atFixedTime ? `${time} on ${days}` : `${time} on ${days}`);
  } else if (dayOfWeek === "*" && isNumber(dayOfMonth)) {
    parts.push(`${time} on day ${Number(dayOfMonth)} of the month`);
  } else return expression;
  if (month !== "*") {
    if (!isNumber(month)) return expression;
    parts.push(`in ${MONTHS[Number(month) - 1] ?? month}`);
  }
  return parts.join(" ");
}
