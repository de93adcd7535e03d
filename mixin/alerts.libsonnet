// prometheusAlerts: the rules of config/alerts (lib/alerts.json, written by `npm run alerts` from
// config/alerts/src), each text's %(name)s holes filled from _config the way the Helm chart's
// templates/prometheusrule.yaml fills them.
local definitions = import 'lib/alerts.json';

// A threshold as PromQL, as JavaScript and Go print it: integers without a fraction, others in the
// fewest digits that read back as the same number (std.toString writes 0.1 as 0.10000000000000001).
local promNumber(v) =
  if v == std.floor(v) then std.toString(std.floor(v))
  else [s for s in [std.format('%.' + d + 'g', v) for d in std.range(1, 17)] if std.parseJson(s) == v][0];

local fill(text, subst) = std.foldl(
  function(t, k) std.strReplace(t, '%(' + k + ')s', subst[k]),
  std.objectFields(subst),
  text,
);

// One grouping clause: the grouping labels less its `without`, then its `extra`, each label once.
local clause(labels, g) = std.join(', ', std.foldl(
  function(out, l) if std.member(out, l) then out else out + [l],
  g.extra,
  [l for l in labels if !std.member(g.without, l)],
));

local isSetting(k) = !std.member(['enabled', 'severity', 'for', 'labels', 'annotations'], k);

local rendered(r, config) =
  local name = if std.objectHas(r, 'alert') then r.alert else r.record;
  local s = r.defaults + std.get(config.rules, name, {});
  local refValue(ref) =
    local at = std.split(ref, '.');
    local other = std.get(config.rules, at[0], {});
    if std.objectHas(other, at[1]) then other[at[1]] else r.refs[ref];
  local subst = {
    selector: config.selector,
    collectorSelector: config.collectorSelector,
    'for': std.get(s, 'for', ''),
  } + {
    [k]: promNumber(s[k])
    for k in std.objectFields(r.defaults)
    if isSetting(k)
  } + {
    [hole]: clause(config.groupingLabels, r.grouping[hole])
    for hole in std.objectFields(r.grouping)
  } + {
    [ref]: promNumber(refValue(ref))
    for ref in std.objectFields(r.refs)
  };
  local labels =
    (if std.objectHas(r, 'alert') then config.additionalRuleLabels + { severity: s.severity } else {})
    + std.get(s, 'labels', {});
  if !s.enabled then null
  else
    (if std.objectHas(r, 'alert') then { alert: name } else { record: name })
    + { expr: fill(r.expr, subst) }
    + (if std.objectHas(r, 'alert') && std.get(s, 'for', '') != '' then { 'for': s['for'] } else {})
    + (if std.length(labels) > 0 then { labels: labels } else {})
    + (if std.objectHas(r, 'alert') then {
         annotations: { [k]: fill(r.annotations[k], subst) for k in std.objectFields(r.annotations) }
                      + std.get(s, 'annotations', {}),
       } else {});

{
  prometheusAlerts+:: {
    local config = $._config,
    groups+: [
      g
      for g in [
        { name: group.name, rules: [x for x in [rendered(r, config) for r in group.rules] if x != null] }
        for group in definitions.groups
      ]
      if std.length(g.rules) > 0
    ],
  },
}
