/** Where each alert's runbook section is: the alert rules' runbook_url and the status page's links. */
export const RUNBOOK_BASE =
  "https://github.com/sitehost-exporter/sitehost-exporter/blob/main/docs/runbook.md#";

export function runbookUrl(alertName: string): string {
  return RUNBOOK_BASE + alertName.toLowerCase();
}
