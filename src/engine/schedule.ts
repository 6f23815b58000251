// Cron schedules of registered jobs: 5-field expressions in UTC or an IANA zone (CONTRACT §4).

import { Cron } from "croner";
import { invalid } from "../core/errors.js";

/** The zones this runtime knows, by their name in lower case (ICU's spelling of each). */
let zonesByLowerName: Map<string, string> | undefined;

/**
 * The zone as given, with its letters in the case the time zone database writes them
 * ("europe/paris" → "Europe/Paris": a registration stored and showed the spelling it was given);
 * throws `invalid` for an unknown zone. Only the case changes: ICU's own name for a zone can be an
 * older one (Asia/Kolkata is Asia/Calcutta to it), and a zone's name is the caller's choice.
 */
export function canonicalTimezone(timezone: string): string {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw invalid(`timezone "${timezone}" is not an IANA time zone`);
  }
  zonesByLowerName ??= new Map(Intl.supportedValuesOf("timeZone").map((zone) => [zone.toLowerCase(), zone]));
  // The list leaves out UTC and the Etc/ zones ("utc" stayed "utc"): ICU's own name serves there
  // when it differs only in case.
  const sameLetters = resolved.toLowerCase() === timezone.toLowerCase() ? resolved : undefined;
  return zonesByLowerName.get(timezone.toLowerCase()) ?? sameLetters ?? timezone;
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
