/** Alerts on the platform's webhook events (webhooks.enabled). */
import { alert, type AlertDef, type GroupDef, type Severity } from "./rule.js";

function eventAlert(
  name: string,
  event: string,
  severity: Severity,
  summary: string,
  rest: string,
): AlertDef {
  return alert({
    alert: name,
    severity,
    expr: (c) => `sum by (${c.by}) (increase(sitehost_events_total{${c.sel}, event="${event}"}[1h])) > 0`,
    summary,
    description: () =>
      `{{ $labels.instance }} received at least one ${event} webhook event in the last hour${rest}`,
  });
}

export const EVENT_GROUP: GroupDef = {
  name: "sitehost-events",
  comment:
    "Webhook events (webhooks.enabled): each alert fires as soon as the platform reports the event and\nstays for an hour. sitehost_events_total has no site labels; the event's log record names the site.",
  rules: [
    eventAlert(
      "SitehostEventRestoreFailed",
      "site_restore_failed",
      "warning",
      "A restore of a site failed.",
      "; the site may be partly restored. The event's log record names the site and the error.",
    ),
    eventAlert(
      "SitehostEventDataTransferFailed",
      "sync_failed",
      "warning",
      "A data transfer between two sites failed.",
      "; the destination site may hold part of the transferred data. The event's log record names the sites and the error.",
    ),
    eventAlert(
      "SitehostEventPluginInstallFailed",
      "plugin_install_failed",
      "warning",
      "A plugin installation on a site failed.",
      ". The event's log record names the site, the plugin and the error.",
    ),
    eventAlert(
      "SitehostEventGitDeployFailed",
      "git_deploy_failed",
      "warning",
      "A git deploy failed.",
      "; the site keeps running the code of its previous deploy.",
    ),
    alert({
      alert: "SitehostWebhookEventsLost",
      severity: "warning",
      expr: (c) =>
        `sum by (${c.by}) (increase(sitehost_exporter_site_state_corrections_total{${c.sel}}[1h])) > 0`,
      summary: "Site states changed without the webhook event that should have said so.",
      description: () =>
        "{{ $labels.instance }} learnt {{ $value | humanize }} maintenance or hacked state change(s) in the last hour from activity logs or the site list that no webhook event had reported: the platform's events are not all arriving.",
    }),
  ],
};
