/** PHP and web-server logs: `{total_results, logs, scroll_id}` (no envelope), paged through scrolls. */
import { fail, NOT_FOUND, reply } from "../envelope.js";
import type { SimStream } from "../logs.js";
import { logFilter } from "../scrolls.js";
import { param, siteRoute, type Handler } from "./context.js";

const logs = (stream: SimStream): Handler =>
  siteRoute((p, s, ctx) => {
    p.stats.logPageRequests += 1;
    const scrollId = param(ctx, "scroll_id");
    const t = p.now();
    const src = p.logSource(s);
    let state;
    if (scrollId) {
      state = p.scrolls.get(scrollId, t);
      if (!state || state.siteId !== s.site.id || state.stream !== stream)
        return reply(404, fail(NOT_FOUND, ["The scroll_id has expired or is invalid."]));
    } else {
      const filter = logFilter(stream, {
        status: param(ctx, "status"),
        request_type: param(ctx, "request_type"),
        user_ip: param(ctx, "user_ip"),
      });
      state = p.scrolls.open(src, stream, p.logOrder, p.scrollMode, t, filter);
    }
    const { logScrollIdField, logTotalResultsForm, logScrollLoopPages } = p.faults;
    const entries = p.scrolls.page(src, state, t, logScrollLoopPages);
    const total = p.logs.estimateTotal(src, stream, state.lower, state.upper);
    return reply(200, {
      total_results: logTotalResultsForm === "string" ? String(total) : total,
      logs: p.corruptor.list(entries, stream),
      ...(logScrollIdField === "none" ? {} : { [logScrollIdField]: state.id }),
    });
  });

export const phpLogs = logs("php");
export const serverLogs = logs("server");
