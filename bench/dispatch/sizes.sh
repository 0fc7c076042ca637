#!/usr/bin/env bash
# Bytes of a typical response of each route on the full demo data, next to what the spec's
# current behaviour sends (approximated by the whole table(s) as JSON, straight from SQL).
# Needs: a running dispatch-api on $BASE over a database loaded by `dispatch-api seed`, and
# DATABASE_URL + JWT_SECRET of that server (for `dispatch-api token`).
set -euo pipefail
BASE=${BASE:-http://127.0.0.1:8080}
BIN=${BIN:-target/release/dispatch-api}
PSQL="psql -X -At ${DATABASE_URL}"
tok() { "$BIN" token --login "$1"; }
ADMIN=$(tok admin); REG=$(tok regulador); FLEET=$(tok frota); TARM=$(tok tarm)
# An incident with a unit on it and one with a prank-calling phone.
DISPATCHED=$($PSQL -c "SELECT id FROM dispatch.incidents WHERE state='dispatched' ORDER BY id LIMIT 1")
size() { curl -s -o /dev/null -w '%{size_download}' -H "Authorization: Bearer $1" "$BASE$2"; }
sql_size() { $PSQL -c "SELECT octet_length(coalesce(json_agg(t)::text, '[]')) FROM ($1) t"; }
row() { printf '| `%s` | %s | %s |\n' "$1" "$2" "$3"; }
echo "| route (new) | bytes | current behaviour, bytes |"
echo "|---|---:|---:|"
row "GET /health-unit?q=sao jose" "$(size "$TARM" '/health-unit?q=sao%20jose')" \
    "$(sql_size 'SELECT * FROM dispatch.health_units') (all 7,458 units)"
row "GET /user (as TARM)" "$(size "$TARM" /user)" \
    "$(sql_size 'SELECT u.*, p.title, p.text FROM dispatch.users u JOIN dispatch.profiles p ON p.id = u.profile_id') (with logins)"
row "GET /user/search?q=ma" "$(size "$TARM" '/user/search?q=ma')" "- (client filtered /user)"
row "GET /employee/search?query=jo" "$(size "$FLEET" '/employee/search?query=jo')" \
    "$(sql_size 'SELECT e.*, u.descriptive_name FROM dispatch.employees e JOIN dispatch.users u ON u.id = e.user_id') (every employee, in possible-values)"
row "GET /incident/mask?q=silva" "$(size "$TARM" '/incident/mask?q=silva')" \
    "$(sql_size 'SELECT * FROM dispatch.incidents') (all incidents)"
row "GET /incident/$DISPATCHED" "$(size "$REG" "/incident/$DISPATCHED")" "-"
row "GET /incident/$DISPATCHED?include_history=true" "$(size "$REG" "/incident/$DISPATCHED?include_history=true")" "-"
row "GET /incident/$DISPATCHED/regulation" "$(size "$REG" "/incident/$DISPATCHED/regulation")" \
    "$(( $(size "$REG" "/incident/$DISPATCHED") + $(size "$REG" "/mobile-unit/incident/$DISPATCHED") + $(size "$REG" "/incident/prank-calls/12991004321") )) (3 requests)"
row "GET /incident/$DISPATCHED/occurrence-view" "$(size "$REG" "/incident/$DISPATCHED/occurrence-view")" "-"
row "GET /incident/$DISPATCHED/unit-selection" "$(size "$FLEET" "/incident/$DISPATCHED/unit-selection")" \
    "$(( $(size "$REG" "/incident/$DISPATCHED") + $(size "$REG" "/technical-decision/incident/$DISPATCHED") )) (2 requests)"
row "GET /incident/$DISPATCHED/fleet-summary" "$(size "$FLEET" "/incident/$DISPATCHED/fleet-summary")" "-"
row "GET /incident/$DISPATCHED/fleet-occurrence" "$(size "$FLEET" "/incident/$DISPATCHED/fleet-occurrence")" \
    "$(( $(size "$FLEET" "/dispatch/bff/dispatch-data/$DISPATCHED") + $(size "$FLEET" "/dispatch/incident/$DISPATCHED") + $(size "$REG" "/incident/$DISPATCHED") )) (3 requests)"
row "GET /shared/default-values" "$(size "$REG" /shared/default-values)" \
    "$(size "$REG" /shared/possible-values) (possible-values, with employee)"
row "GET /mobile-unit/options" "$(size "$FLEET" /mobile-unit/options)" \
    "$(sql_size 'SELECT m.*, t.* FROM dispatch.mobile_units m JOIN dispatch.mobile_unit_types t ON t.id = m.type_id') (full detail objects)"
row "GET /mobile-unit?active_only=true" "$(size "$FLEET" '/mobile-unit?active_only=true')" "-"
row "GET /mobile-unit-type?active=true" "$(size "$FLEET" '/mobile-unit-type?active=true')" "$(size "$ADMIN" /mobile-unit-type) (all types)"
row "GET /technical-decision-action" "$(size "$REG" /technical-decision-action)" \
    "$(sql_size 'SELECT * FROM dispatch.technical_decision_actions') (deleted/inactive included)"
row "GET /intercurrence" "$(size "$FLEET" /intercurrence)" \
    "$(sql_size 'SELECT * FROM dispatch.intercurrences') (deleted/inactive included)"
row "GET /professional-type?active_only=true" "$(size "$ADMIN" '/professional-type?active_only=true')" "$(size "$ADMIN" /professional-type) (all)"
row "GET /unallocated?page_size=20" "$(size "$FLEET" '/unallocated?page_size=20')" "-"
row "GET /incident/prank-calls/12991004321" "$(size "$REG" /incident/prank-calls/12991004321)" "-"
