// Cron schedules of registered jobs: 5-field expressions in UTC or an IANA zone (CONTRACT §4).

import { Cron } from "croner";
import { invalid } from "../core/errors.js";

/**
 * The zone's IANA name as the time zone database spells it ("europe/paris" → "Europe/Paris": a
 * registration stored and showed the spelling it was given); throws `invalid` for an unknown zone.
 */
export function canonicalTimezone(timezone: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw invalid(`timezone "${timezone}" is not an IANA time zone`);
  }
}

/** Validates a schedule and returns its first fire time strictly after `afterMs`. */
export function nextFireTime(schedule: string, timezone: string | null, afterMs: number): number | null {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 5) throw invalid(`schedule "${schedule}" must be a 5-field cron expression (minute hour day month weekday)`);
  if (timezone) canonicalTimezone(timezone);
  let cron: Cron;
  try {
    cron = new Cron(fields.join(" "), { timezone: timezone ?? "UTC", paused: true, mode: "5-part" } as never);
  } catch (error) {
    throw invalid(`schedule "${schedule}" is not a valid cron expression: ${(error as Error).message}`);
  }
  const next = cron.nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}
