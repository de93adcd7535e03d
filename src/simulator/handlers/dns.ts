/** DNS zones, a zone's records, and SSL details of A records (400 for other types or no data). */
import { fail, notFound, reply, success } from "../envelope.js";
import { sslDetails } from "../dns.js";
import type { Handler } from "./context.js";

export const zones: Handler = (p) =>
  success(
    p.corruptor.list(
      p.dns.list().map((z) => ({ id: z.id, name: z.name, created: z.created })),
      "zone",
    ),
  );

export const zoneRecords: Handler = (p, ctx) => {
  const zone = p.dns.zone(Number(ctx.params.zone_id));
  if (!zone) return notFound();
  return success({ ...zone, records: p.corruptor.list(zone.records, "record") });
};

export const ONLY_A_RECORDS = "Only A records are supported";
export const NO_INFORMATION = "No information found";

export const recordSsl: Handler = (p, ctx) => {
  const zone = p.dns.zone(Number(ctx.params.zone_id));
  const id = Number(ctx.params.record_id);
  const record = zone?.records.find((r) => r.id === id);
  if (!record) return notFound();
  p.stats.sslRecordTypes[record.type] = (p.stats.sslRecordTypes[record.type] ?? 0) + 1;
  if (record.type !== "A") return reply(400, fail(ONLY_A_RECORDS));
  const cert = p.dns.certificate(id);
  if (!cert) return reply(400, fail(NO_INFORMATION));
  return success(p.corruptor.one(sslDetails(cert, p.behaviour.certificateTimeForm), "ssl"));
};
