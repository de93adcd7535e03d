/** Every rule group that ships with sitehost-exporter, in file order. */
import { COLLECTOR_GROUP } from "./collectorAlerts.js";
import { EVENT_GROUP } from "./eventAlerts.js";
import { EXPORTER_GROUP } from "./exporterAlerts.js";
import type { GroupDef } from "./rule.js";
import { SITE_GROUP } from "./siteAlerts.js";

export const GROUPS: GroupDef[] = [EXPORTER_GROUP, SITE_GROUP, EVENT_GROUP, COLLECTOR_GROUP];
