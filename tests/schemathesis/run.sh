#!/usr/bin/env bash
# Generated API testing of both services with schemathesis, driven by their own
# /openapi.json: no 5xx, documented status codes and content types only, bodies that match
# their schemas. Every route is called with credentials that reach it:
#   dispatch-api        once per profile (admin, tarm, regulador, frota)
#   proposal-callback   admin routes with a tenant admin JWT, /callback/* with an insurer's
#                       JWT obtained from /callback/auth, /callback/auth with a Basic token.
# Expects the stack of `./dev up --detach` (it starts one when none answers).
# EXAMPLES=N sets the examples per operation (default 25).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
LOCAL="$ROOT/.local"
DISPATCH="http://${DISPATCH_BIND:-127.0.0.1:8080}"
CALLBACK="http://${CALLBACK_BIND:-127.0.0.1:8081}"
EXAMPLES="${EXAMPLES:-25}"

command -v st >/dev/null || pip install --quiet --disable-pip-version-check schemathesis
curl -fsS "$DISPATCH/readyz" >/dev/null 2>&1 && curl -fsS "$CALLBACK/readyz" >/dev/null 2>&1 \
  || ./dev up --detach >/dev/null

bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug"
export DATABASE_URL="${DATABASE_URL:-$(./dev pg 2>/dev/null | sed 's#/[^/]*$#/emergency_demo#')}"

CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance
total=0
run() {
  local label="$1"; shift
  local log; log="$(mktemp)"
  printf '\n--- %s\n' "$label"
  if ! st run --max-examples "$EXAMPLES" --checks "$CHECKS" --phases examples,coverage,fuzzing \
       --suppress-health-check all --warnings off --no-color "$@" >"$log" 2>&1; then
    cat "$log"; echo "schemathesis found failures in: $label" >&2; exit 1
  fi
  local n; n="$(grep -Eo '[0-9]+ generated' "$log" | head -n1 | grep -Eo '[0-9]+' || echo 0)"
  total=$((total + n))
  grep -E 'generated|passed|failed' "$log" | tail -n 2
}

# --- dispatch-api, once per profile ---------------------------------------------------------
for login in admin tarm regulador frota; do
  token="$(JWT_SECRET="$(cat "$LOCAL/secrets/dispatch-jwt")" "$bin/dispatch-api" token --login "$login" --ttl 30m)"
  run "dispatch-api as $login" "$DISPATCH/openapi.json" -H "Authorization: Bearer $token"
done

# --- proposal-callback ----------------------------------------------------------------------
basic="$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(next(i["token"] for i in d["integrations"] if i["tenant"]=="demo-a" and i["insurer"]=="porto" and i.get("token")))' "$LOCAL/callback-seed.json" 2>/dev/null || true)"
if [ -z "$basic" ]; then
  basic="$(JWT_SECRET="$(cat "$LOCAL/secrets/callback-jwt")" "$bin/proposal-callback" seed --rotate-tokens \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(i["token"] for i in d["integrations"] if i["tenant"]=="demo-a" and i["insurer"]=="porto"))')"
fi
insurer_jwt="$(curl -fsS -X POST -H "Authorization: Basic $basic" "$CALLBACK/callback/auth" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
admin_jwt="$(python3 - "$(cat "$LOCAL/secrets/callback-jwt")" <<'PY'
import base64, hashlib, hmac, json, sys, time
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
key = sys.argv[1].encode()
now = int(time.time())
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = b64(json.dumps({"sub": "ops", "tenant": "demo-a", "role": "admin", "aud": "proposal-callback-admin", "iat": now, "exp": now + 1800}).encode())
sig = b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
print(f"{head}.{body}.{sig}")
PY
)"
# Pausing is left out: a demo integration paused by a generated request would stay paused in
# the local stack (its callbacks answered 202 until someone resumes it).
run "proposal-callback admin routes" "$CALLBACK/openapi.json" --include-path-regex '^/(admin|healthz|readyz|metrics|openapi)' \
  --exclude-path-regex 'register-callback$|/pause$' -H "Authorization: Bearer $admin_jwt"
# The local stack configures no insurer, so registration answers its documented 502
# `not_configured`: every check but "no 5xx" applies.
CHECKS=status_code_conformance,content_type_conformance,response_schema_conformance \
  run "proposal-callback registration" "$CALLBACK/openapi.json" --include-path-regex 'register-callback$' \
  -H "Authorization: Bearer $admin_jwt"
run "proposal-callback callbacks" "$CALLBACK/openapi.json" --include-path-regex '^/callback/\{' \
  -H "Authorization: Bearer $insurer_jwt"
run "proposal-callback auth" "$CALLBACK/openapi.json" --include-path '/callback/auth' \
  -H "Authorization: Basic $basic"

echo
echo "schemathesis: $total generated requests, 0 failed"
