// Debian's Chromium driven by playwright-core (never a browser download). CI installs it; a run that
// requires every service (JOBHOUSE_TEST_REQUIRE_ALL=1) fails instead of skipping without it.

import { existsSync } from "node:fs";
import { type Browser, type Page, chromium } from "playwright-core";

export const CHROMIUM = process.env.JOBHOUSE_CHROMIUM ?? "/usr/bin/chromium";
export const browserAvailable = existsSync(CHROMIUM);

if (!browserAvailable && process.env.JOBHOUSE_TEST_REQUIRE_ALL === "1") {
  throw new Error(`Chromium is not installed at ${CHROMIUM}, and JOBHOUSE_TEST_REQUIRE_ALL=1`);
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** What a page did: every request's URL, console errors and uncaught exceptions. */
export interface PageRecord {
  requests: string[];
  errors: string[];
}

export function record(page: Page): PageRecord {
  const log: PageRecord = { requests: [], errors: [] };
  page.on("request", (request) => void log.requests.push(`${request.method()} ${request.url()}`));
  page.on("console", (message) => {
    if (message.type() === "error") log.errors.push(message.text());
  });
  page.on("pageerror", (error) => void log.errors.push(String(error)));
  return log;
}
