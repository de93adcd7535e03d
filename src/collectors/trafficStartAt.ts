/**
 * How the traffic request says "the last hour". The platform documents `start_at` only as "a relative
 * phrase such as a past-hours window" (other forms: not shown), so the phrase is a guess that must fail
 * safe: when the platform refuses it (400 or 422) for a site and another form is then taken for the
 * same site, the collector moves to that form for good (a refusal that every form gets is the site's, and
 * moves nothing). `sitehost_exporter_traffic_start_at_form` shows the form in use; doctor tries them.
 */
import { ApiHttpError } from "../api/errors.js";
import type { TrafficQuery } from "../api/endpoints.js";

const HOUR_MS = 3_600_000;

/** The forms tried, in order: the documented kind of phrase, a duration, an absolute time. */
export const START_AT_FORMS = {
  phrase: () => "1 hour ago",
  offset: () => "-1h",
  timestamp: (nowMs: number) => new Date(nowMs - HOUR_MS).toISOString(),
} as const satisfies Record<string, (nowMs: number) => string>;
export type StartAtForm = keyof typeof START_AT_FORMS;
export const START_AT_FORM_NAMES = Object.keys(START_AT_FORMS) as readonly StartAtForm[];

const METRICS = ["requests_persec", "response_bytes_persec"];
const DIMENSIONS = ["page_is_cached"];

/** The traffic request's body for the last hour in `form`. */
export function trafficQuery(form: StartAtForm, nowMs: number): TrafficQuery {
  return { startAt: START_AT_FORMS[form](nowMs), metrics: METRICS, dimensions: DIMENSIONS };
}

/** Whether an answer's status refuses the request's parameters (what a start_at it does not take gets). */
export function refusedStatus(status: number): boolean {
  return status === 400 || status === 422;
}

/** Whether the platform refused the request's parameters. */
export function refusesStartAt(err: unknown): boolean {
  return err instanceof ApiHttpError && refusedStatus(err.status);
}

/** The form in use, moved on only when another one was taken where it was refused. */
export class StartAtChoice {
  private form: StartAtForm = "phrase";

  get current(): StartAtForm {
    return this.form;
  }

  /** The forms to try after `refused`, in order. */
  after(refused: StartAtForm): StartAtForm[] {
    return START_AT_FORM_NAMES.filter((f) => f !== refused);
  }

  /** `taken` answered where `refused` did not: use it from now on (unless another request moved first). */
  use(taken: StartAtForm, refused: StartAtForm): void {
    if (this.form === refused) this.form = taken;
  }
}
