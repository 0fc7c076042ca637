#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png (1366x768): each console screen and both /docs pages.
# It is the browser test (tests/tests/browser.rs) run with SCREENSHOTS_DIR set: the services
# on a fresh database with the demo data, a local fake insurer, and the screens captured at
# the moments the test checks them (sign-in, integrations after a registration that worked
# and one the insurer refused, the callback log filtered, a raw body, a proposal's story).
# Needs what `./dev test` needs, plus node and chromium (see tests/README.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/docs/screenshots"
mkdir -p "$OUT"
rm -f "$OUT"/*.png
cd "$ROOT"
SCREENSHOTS_DIR="$OUT" ./dev test --test browser
ls -1 "$OUT"
